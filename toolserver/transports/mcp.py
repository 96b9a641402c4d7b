"""The MCP transport (official ``mcp`` SDK, low-level ``Server``): stdio and streamable HTTP.

One MCP connection is one run: the run is created when the client's ``initialize``
succeeds, bound to the connection by the transport (``ConnectionRuns``), and ended (sessions
closed, trace finalised) when the connection closes — stdin closing (once the requests already
read are answered: ``stdin_end``), the HTTP session deleted or idle too long, the server stopping
(for stdio: SIGTERM, SIGINT, SIGHUP). Only the SDK's public API is used. Every
``tools/call`` goes through ``Run.call``, the same dispatcher and trace as HTTP;
only the run header's ``transport`` differs.

    tools/list  the contract in order: pydantic input schemas, titles, annotations
                (``toolserver.formats``)
    tools/call  ok      -> structuredContent = the HTTP API's result; text content an LLM reads
                           (a snapshot's own text, compact JSON otherwise)
                failed  -> isError: true, structuredContent = the same {type, message} error
                unknown tool -> recorded by the dispatcher, then a protocol error (-32602)
    prompts     ``task``: the pack's prompt for the run's site key (a run with a pack)

Errors: a refused ``initialize`` (an unknown pack or run, a bad run name, too many runs) is a
JSON-RPC error whose ``data.type`` is the HTTP API's error type, with the code ``INVALID_PARAMS``
(-32602), or ``SERVER_BUSY`` (-32010) for a full server (retry later); any other unexpected
exception is ``INTERNAL_ERROR`` (-32603, ``data.type`` ``server_fault``), logged with its traceback,
never the SDK's catch-all code 0.

The run id is in the ``initialize`` result's ``_meta`` (``sandbox/run_id``) and, over HTTP,
in the ``Mcp-Run-Id`` header of every response of the session. The sandbox serves the
``initialize`` handshake (sessions carry browser state); a stateless 2026-07-28 request is
refused with the versions it does serve, so ``mode="auto"`` clients fall back to it.

Streamable HTTP is served on the aiohttp server by ``toolserver.transports.mcp_http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from toolserver import __version__
from toolserver.api import Sandbox
from toolserver.contract.events import event_of
from toolserver.contract.policy import PolicyMode
from toolserver.contract.trace import wall_now
from toolserver.contract.validation import fields_said
from toolserver.errors import NoTask, RequestError
from toolserver.floods import cut_text
from toolserver.formats import tool_definitions
from toolserver.run import Run
from toolserver.stopping import StopSignals
from toolserver.transports.messages import odd_arguments, unsupported_version
from toolserver.transports.pipes import LINE_START, stdio_pipes
from toolserver.transports.stdin_end import answer_before_end

log = logging.getLogger("toolserver.transports.mcp")
SERVER_NAME = "browser-tool-sandbox"
RUN_ID_META = "sandbox/run_id"
RUN_ID_HEADER = "Mcp-Run-Id"
SESSION_HEADER = "mcp-session-id"
TASK_PROMPT = "task"
SERVER_BUSY = -32010  # JSON-RPC's implementation-defined server-error band (-32000..-32019; the SDK uses -32000/-32001)


class ConnectionRuns(Protocol):
    """Which run a connection drives. The SDK's low-level handlers do not see their connection
    (only its per-request session), so each transport keeps the binding itself: stdio has one
    connection per process, streamable HTTP names its session in a header."""

    transport: str  # as trace events name it: mcp-stdio, mcp-http

    def open(self, ctx: ServerRequestContext) -> tuple[Run, bool]:
        """The run for the connection ``ctx``'s ``initialize`` opens, and whether the
        connection owns it (ends it when it closes); a ``RequestError`` if refused."""
        ...

    def bound(self, ctx: ServerRequestContext) -> Run | None:
        """The run of ``ctx``'s connection, once its ``initialize`` succeeded."""
        ...


def bound_run(runs: ConnectionRuns, ctx: ServerRequestContext) -> Run:
    run = runs.bound(ctx)
    if run is None:  # unreachable after a successful initialize; never a silent None
        raise MCPError(types.INVALID_REQUEST, "this connection has no run: send initialize first")
    return run


def result_text(name: str, reply: dict) -> list[dict]:
    """What an LLM reads: a snapshot's text as itself, first (clients that keep only the first
    block still see every ref), then its page facts; anything else as compact JSON."""
    if reply["ok"] and name == "browser_snapshot" and isinstance(reply["result"].get("snapshot"), str):
        facts = {k: v for k, v in reply["result"].items() if k != "snapshot"}
        return [{"type": "text", "text": reply["result"]["snapshot"]}, {"type": "text", "text": compact(facts)}]
    return [{"type": "text", "text": compact(reply["result"] if reply["ok"] else reply["error"])}]


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def create_server(sandbox: Sandbox, runs: ConnectionRuns) -> Server:
    """A low-level MCP server whose connections are runs of ``sandbox``, opened and found by ``runs``."""

    async def list_tools(ctx, params) -> Any:
        return {"tools": tool_definitions("mcp", sandbox.registry.schemas())}

    async def call_tool(ctx, params: types.CallToolRequestParams) -> Any:
        run = bound_run(runs, ctx)
        # Shielded: a client that disconnects (or cancels) mid-call, even while the call waits
        # for the browser's start, must not cut the call short of its trace line; the call
        # finishes in the server and is recorded.
        reply = await asyncio.shield(run.call(params.name, params.arguments if params.arguments is not None else {}))
        return called(params.name, reply)

    async def list_prompts(ctx, params) -> Any:
        try:
            task = sandbox.task(bound_run(runs, ctx))
        except NoTask:
            return {"prompts": []}
        return {
            "prompts": [
                {
                    "name": TASK_PROMPT,
                    "title": f"Task: {task['pack']}",
                    "description": f"The {task['pack']} pack's task for this run (site key "
                    f"{task['site_key']}, time limit {task['time_limit_seconds']} s)",
                }
            ]
        }

    async def get_prompt(ctx, params: types.GetPromptRequestParams) -> Any:
        if params.name != TASK_PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; this server offers {TASK_PROMPT!r}")
        try:
            task = sandbox.task(bound_run(runs, ctx))
        except NoTask as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        return {
            "description": f"The {task['pack']} task",
            "messages": [{"role": "user", "content": {"type": "text", "text": task["prompt"]}}],
        }

    async def discover(ctx, params) -> None:
        raise handshake_only(ctx.protocol_version)

    async def bind_run(ctx, call_next):
        """The transport's error boundary. Refuse the stateless era; on ``initialize``, open the
        connection's run. Before it, a method served is refused saying so (the SDK said only "Invalid
        request parameters"); one not served has the SDK's -32601, which probing clients rely on."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise handshake_only(ctx.protocol_version)
        if ctx.method != "initialize":
            run = runs.bound(ctx)  # a stdio connection whose initialize failed has its run (ended), not initialized
            served = server.get_request_handler(ctx.method) is not None and ctx.method != "ping"
            if served and (run is None or ctx.session.client_params is None):
                raise MCPError(types.INVALID_REQUEST, f"{ctx.method} before initialize: send initialize first")
            try:
                with answered(ctx.method):
                    if ctx.method == "tools/call" and run is not None and (odd := odd_arguments(ctx.params)):
                        return called(odd[0], await asyncio.shield(run.call(*odd)))  # refused and traced, as over HTTP
                    return await call_next(ctx)
            except MCPError as exc:  # params of no shape (a tools/call with no name): no call ran, traced
                if run is not None and isinstance(exc.__cause__, ValidationError):
                    said = json.dumps(ctx.params, default=repr)[:LINE_START]
                    record_unreadable(run, runs.transport, exc.error.code, exc.error.message, said)
                raise
        with answered(ctx.method):  # an unknown pack, a bad run name, too many runs, ...
            run, owned = runs.open(ctx)
        try:
            with answered(ctx.method):
                result = await call_next(ctx)
        except BaseException:
            if owned:
                await end_run(run, "initialize_failed")
            raise
        return {**result, "_meta": {**(result.get("_meta") or {}), RUN_ID_META: run.id}}

    server = Server(
        SERVER_NAME,
        version=__version__,
        title="Browser-tool sandbox",
        description="The benchmark's browser tools on a real headless Chromium over offline mirrors; "
        "one connection is one traced run.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    server.add_request_handler("server/discover", types.RequestParams, discover)
    # Only our middleware: the SDK's default OpenTelemetry one costs time on every call and this
    # server exports no spans (the trace is the record).
    server.middleware = [bind_run]
    return server


def called(name: str, reply: dict) -> dict:
    """A tool call's MCP result (an unknown tool: a protocol error, recorded in the trace first)."""
    if not reply["ok"] and reply["error"]["type"] == "unknown_tool":
        raise MCPError(types.INVALID_PARAMS, reply["error"]["message"], data={"type": "unknown_tool"})
    return {
        "content": result_text(name, reply),
        "isError": not reply["ok"],
        "structuredContent": reply["result"] if reply["ok"] else reply["error"],
    }


@contextlib.contextmanager
def answered(method: str) -> Iterator[None]:
    """What a request raises, as the JSON-RPC error it is answered with: a ``RequestError`` is its
    ``refusal``; an unexpected exception (e.g. a trace line the disk refused) a logged
    ``INTERNAL_ERROR``, never the SDK's catch-all code 0."""
    try:
        yield
    except MCPError:  # answered by the SDK as what it is
        raise
    except ValidationError as exc:  # the params' shape (the SDK's answer says only "Invalid request parameters")
        raise MCPError(types.INVALID_PARAMS, f"{method}: {fields_said(exc, whole='params')}") from exc
    except RequestError as exc:
        raise refusal(exc) from exc
    except Exception as exc:
        log.exception("server fault in %s", method)
        message = f"server_fault: internal error in {method}: {exc!r}"
        raise MCPError(types.INTERNAL_ERROR, message, data={"type": "server_fault"}) from exc


def refusal(exc: RequestError) -> MCPError:
    """A refused ``initialize`` as a JSON-RPC error: ``SERVER_BUSY`` for a full server, else
    ``INVALID_PARAMS`` (the client asked for something it cannot have); ``data.type`` is the HTTP
    API's error type."""
    code = SERVER_BUSY if exc.status == 429 else types.INVALID_PARAMS  # too_many_runs, server_at_capacity
    return MCPError(code, exc.message, data={"type": exc.type})


def handshake_only(version: str) -> MCPError:
    said, data = unsupported_version(version)
    return MCPError(types.UNSUPPORTED_PROTOCOL_VERSION, said, data=data)


def record_unreadable(run: Run, transport: str, code: int, error: str, line: str) -> None:
    """A client's message that could not be read, as an ``unreadable_message`` of no call (not the one running)."""
    if run.closed:
        return
    said = {"transport": transport, "code": code, "error": error, "line": line}
    data = cut_text(said, run.config.max_page_text_chars)
    event = event_of({"kind": "unreadable_message", "t": run.trace.now(), "wall": wall_now(), "data": data})
    try:
        run.trace.write(event.model_dump(mode="json", exclude={"escaped"}))
    except OSError as exc:
        log.error("run %s: an unreadable message could not be traced: %s", run.id, exc)


async def end_run(run: Run, reason: str = "mcp_disconnected") -> None:
    if not run.closed:
        await run.close(reason)
        log.info("MCP connection closed; run %s ended (%s)", run.id, reason)


# --- stdio -------------------------------------------------------------------------------
async def serve_stdio(
    sandbox: Sandbox,
    *,
    pack: str | None,
    mode: PolicyMode | None = None,
    block_state_changes: bool | None = None,
) -> None:
    """Serve one MCP connection on stdin/stdout with a sandbox that is not started yet: the
    browser starts while the client connects (``initialize`` is answered at once, tool calls
    wait for the browser); returns, with the sandbox stopped, when the client disconnects."""

    starting = asyncio.ensure_future(sandbox.start())
    starting.add_done_callback(log_failed_start)

    def open_run() -> Run:
        run = sandbox.open_run(pack, transport="mcp-stdio", mode=mode, block_state_changes=block_state_changes)
        run.browser_start = starting  # tool calls wait for it; everything else is answered at once
        return run

    runs = StdioRun(open_run)
    server = create_server(sandbox, runs)
    stopped = StopSignals()

    def told(code: int, error: str, line: str) -> None:  # before initialize: logged only, there is no run
        if runs.run is not None:
            record_unreadable(runs.run, "mcp-stdio", code, error, line)

    try:
        # serve_loop (not Server.run): the handshake era only, as on streamable HTTP.
        async with (
            stdio_pipes(sandbox.config.max_body_bytes, told, sandbox.config.max_json_depth) as pipes,
            stdio_server(*(pipes or ())) as streams,  # the pipes are duck-typed files
            server.lifespan(server) as state,
        ):
            read, write = streams
            await serve_loop(server, *answer_before_end(read, write, told=told), lifespan_state=state)
    except asyncio.CancelledError:
        if not stopped.taken():
            raise
    finally:
        stopped.restore()
        # The run ends before the browser's start is waited for, unless a call waits for it: a
        # client that left kills the server within seconds (the TypeScript SDK: 4 s).
        if runs.run is not None and runs.run.current is not None:
            await asyncio.wait([starting])  # the call goes on to its line first
        if runs.run is not None:
            if starting.done():
                await sandbox.host.abandon_if_frozen()  # not waited on by the run's close
            await end_run(runs.run, "server_stopped" if stopped.by else "mcp_disconnected")
        await asyncio.wait([starting])
        await sandbox.stop()


def log_failed_start(start: asyncio.Future) -> None:
    if not start.cancelled() and start.exception() is not None:
        log.error("the browser could not start", exc_info=start.exception())


class StdioRun:
    """The one connection of a stdio server and its run."""

    transport = "mcp-stdio"

    def __init__(self, new_run: Callable[[], Run]) -> None:
        self.new_run = new_run
        self.run: Run | None = None

    def open(self, ctx: ServerRequestContext) -> tuple[Run, bool]:
        # A second run would leave the first's session open, unreachable; after an initialize
        # that failed (its run ended), the next one opens a run of its own.
        if self.run is not None and self.run.ended_at is None:
            raise MCPError(
                types.INVALID_REQUEST,
                f"this connection is initialized already (run {self.run.id}); one stdio connection is one run",
            )
        self.run = self.new_run()
        return self.run, True

    def bound(self, ctx: ServerRequestContext) -> Run | None:
        return self.run
