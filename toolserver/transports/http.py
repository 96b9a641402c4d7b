"""The HTTP transport (aiohttp): a thin layer over ``Sandbox``/``Run``; one error boundary.

    POST   /runs                      {"pack"?, "policy"?, "block_state_changes"?, "site_key"?, "name"?} -> {"run_id"}
    GET    /runs                      -> {"runs": [...]}, live and recently ended
    GET    /runs/{id}/tools           -> {"tools": [...]}
    POST   /runs/{id}/tools/{name}    JSON arguments -> {"ok": true, "result"} | {"ok": false, "error"}
    GET    /runs/{id}/trace           -> the JSONL trace
    GET    /runs/{id}/task            -> the pack's prompt, site key, allowed URLs, time limit
    POST   /runs/{id}/answer          {"output"} -> ends the run; the score report and gates
    DELETE /runs/{id}                 ends the run, closes its sessions
    GET    /health
    *      /mcp?pack=ID[&name=NAME]   MCP over streamable HTTP (one MCP session = one run, or a named run)

Every route is guarded by ``local_only``: loopback Host names only (plus ``allowed_hosts``),
no foreign Origin, JSON bodies only, and the bearer token when one is configured. Request
bodies are read within ``request_body_timeout_s`` and refused unless they are UTF-8 JSON of
bounded size and depth; a refused tool call is still one trace line (not one refused for its
Host, Origin or token: who may not reach the server writes nothing into a run's trace). A Host
or Origin that is not one (a broken bracket, a port that is none) is refused as foreign. NaN, Infinity and a number
beyond a double's range (1e400) are read, and refused where they stand: as a tool call's
``invalid_arguments`` naming the argument (as over MCP), as a field of another body.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from toolserver.api import PolicyResolver, Sandbox, TaskProvider
from toolserver.config import ServerConfig
from toolserver.contract.site_keys import check_site_key
from toolserver.contract.validation import fields_said
from toolserver.errors import InvalidBody, MalformedHttp, RequestError, RunsGiven, ToolError, UnknownRun
from toolserver.run import Run
from toolserver.run_traces import run_header
from toolserver.transports.guards import CONFIG, SANDBOX, local_only, read_json
from toolserver.transports.mcp_http import StreamableHttp, jsonrpc_refusal

MCP_SESSIONS = web.AppKey("mcp_sessions", StreamableHttp)  # /mcp: its sessions and their runs
RUNS_GIVEN = web.AppKey("runs_given", bool)  # a batch's server: no run listed or made (``RunsGiven``)
MCP_PATH = "/mcp"
INVALID_REQUEST, INTERNAL_ERROR = -32600, -32603  # JSON-RPC

log = logging.getLogger("toolserver.transports.http")
# An error type's HTTP status when a tool call answers with it (the tool errors' own, by type).
TOOL_ERROR_STATUS = {
    **{cls.type: cls.status for cls in RequestError.__subclasses__()},
    **{cls.type: cls.status for cls in ToolError.__subclasses__()},  # invalid_arguments: a tool's, 200
}


def error_response(type_: str, message: str, status: int) -> web.Response:
    return web.json_response({"ok": False, "error": {"type": type_, "message": message}}, status=status)


@web.middleware
async def error_boundary(request: web.Request, handler: Any) -> web.StreamResponse:
    """The one place a request's failure becomes the one JSON error shape with its status; on
    ``/mcp`` (the guards refuse its requests too) a JSON-RPC error whose ``data.type`` is that type."""
    try:
        return await handler(request)
    except RequestError as exc:
        if request.path == MCP_PATH:
            return jsonrpc_refusal(exc, None, INVALID_REQUEST)
        response = error_response(exc.type, exc.message, exc.status)
        if isinstance(exc, MalformedHttp):  # the connection's framing is lost: nothing after this can be read
            response.force_close()
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        said = f"{exc.status} {exc.reason}: {request.method} {request.path}"
        if request.path == MCP_PATH:  # e.g. the SDK's app answered nothing
            log.error("%s (%s)", said, exc.text)
            return jsonrpc_fault(f"server_fault: {said}", exc.status)
        return error_response("http_error", said, exc.status)
    except Exception as exc:  # never a bare 500 page; log with traceback
        log.exception("unexpected error on %s %s", request.method, request.path)
        if request.path == MCP_PATH:
            return jsonrpc_fault(f"internal error: {exc!r}", 500)
        return error_response("server_fault", f"internal error: {exc!r}", 500)


def jsonrpc_fault(message: str, status: int) -> web.Response:
    """A server fault on ``/mcp``, as a JSON-RPC error (id null: the request's id is not known here)."""
    said = {"code": INTERNAL_ERROR, "message": message, "data": {"type": "server_fault"}}
    return web.json_response({"jsonrpc": "2.0", "id": None, "error": said}, status=status)


class CreateRunBody(BaseModel):
    """The body of `POST /runs`; every field optional."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    pack: str | None = Field(default=None, description="The pack whose allow-list and task the run gets.")
    policy: Literal["enforce", "observe"] | None = Field(default=None, description="Refuse or only record.")
    block_state_changes: bool | None = Field(default=None, description="Prevent state changes.")
    site_key: Annotated[str, AfterValidator(check_site_key)] | None = Field(
        default=None, description="The run's site key (else a new one)."
    )
    name: str | None = Field(
        default=None, description="Join the live run of this name, or start it (for clients that reconnect per call)."
    )


class AnswerBody(BaseModel):
    """The body of `POST /runs/{id}/answer`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    output: str = Field(description="The agent's final answer.")


def parse_body(model: type[BaseModel], body: Any, usage: str) -> Any:
    """``body`` as ``model``, or ``InvalidBody`` naming what is wrong and the shape to send."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise InvalidBody(f"{usage} ({fields_said(exc, whole='body')})") from None


async def create_run(request: web.Request) -> web.Response:
    """Create a run. Body: `{"pack"?, "policy"?: "enforce"|"observe", "block_state_changes"?, "site_key"?,
    "name"?}` (all optional; without `site_key` a pack's run gets a new one; a site key is a non-empty
    string of printable characters without quotes, backslashes or white space, as
    `browser_start_session` takes it). Reply 201: `{"run_id", "pack", "policy", "block_state_changes",
    "site_key"}`, and a `note` for a run
    without a pack (it has no allow-list and no task). With `name`: the live run of that name
    (reply 200, the same fields and `name`), else a new run by that name (201); 409 if the
    name is taken by a run of another pack, or of another `site_key`, `policy` or
    `block_state_changes` than the body names (what it leaves out joins as the run has it). A
    run with no tool call for `http_run_idle_s` (a named one: `named_run_idle_s`) ends with the
    reason `idle_timeout`."""
    refuse_if_runs_given(request)
    sandbox = request.app[SANDBOX]
    body, _raw = await read_json(request)
    asked = parse_body(CreateRunBody, body, 'POST /runs takes a JSON object like {"pack": "bid-intake"}')
    joined = asked.name is not None and sandbox.named_run(asked.name) is not None
    run = sandbox.open_run(
        asked.pack,
        transport="http",
        site_key=asked.site_key,
        mode=asked.policy,
        block_state_changes=asked.block_state_changes,
        name=asked.name,
        idle_s=sandbox.config.http_run_idle_s,  # no connection ends it: its client may vanish
    )
    reply = {
        "run_id": run.id,
        "pack": run.policy.pack,
        "policy": run.trace_policy,
        "block_state_changes": run.policy.block_state_changes,
        "site_key": run_header(run).get("site_key"),
    }
    if asked.name is not None:
        reply["name"] = asked.name
    if run.trace_policy == "none":
        reply["note"] = (
            "no pack, so no allow-list: every mirrored URL may be opened and nothing is scored; "
            'create the run with {"pack": ...} to enforce a pack\'s allowed URLs'
        )
    return web.json_response(reply, status=200 if joined else 201)


async def list_runs(request: web.Request) -> web.Response:
    """The runs the server holds, oldest first: the live ones and the recently ended ones
    (`{"runs": [{"run_id", "pack", "name", "transport", "site_key", "live", "calls"}]}`), so a
    client can find a run it knows by name or transport."""
    refuse_if_runs_given(request)
    runs = []
    for run in request.app[SANDBOX].runs.values():
        header = run_header(run)
        runs.append(
            {
                "run_id": run.id,
                "pack": run.policy.pack,
                "name": header.get("name"),
                "transport": header.get("transport"),
                "site_key": header.get("site_key"),
                "live": not run.closed,
                "calls": run.seq,
            }
        )
    return web.json_response({"runs": runs})


def refuse_if_runs_given(request: web.Request) -> None:
    if request.app[RUNS_GIVEN]:
        raise RunsGiven("this server runs a batch's attempts: it lists and makes no runs; use yours ($SANDBOX_RUN_ID)")


async def get_task(request: web.Request) -> web.Response:
    """The run's task: the pack's prompt for the run's site key, the site key, the allowed URLs
    and the time limit."""
    sandbox = request.app[SANDBOX]
    return web.json_response(sandbox.task(ended_or_open_run(request)))


async def post_answer(request: web.Request) -> web.Response:
    """Body: `{"output": "<the final answer>"}`. Ends the run and replies with the reviewed
    scoring pack's report on its trace (`qualified_pass`, fields, gates); elapsed time counts
    from the run's creation to the answer's arrival (on a monotonic clock; closing the run is not
    counted). One answer per run: the same output again gets the same report (a
    client's retry), another output `409 already_answered`."""
    body, _raw = await read_json(request)
    answer = parse_body(AnswerBody, body, 'POST /runs/{id}/answer takes {"output": "<the agent\'s final answer>"}')
    return web.json_response(await request.app[SANDBOX].answer(ended_or_open_run(request), answer.output))


def ended_or_open_run(request: web.Request) -> Run:
    run = request.app[SANDBOX].runs.get(request.match_info["run_id"])  # ended runs keep their trace
    if run is None:
        raise UnknownRun(f"no run {request.match_info['run_id']!r}")
    return run


async def list_tools(request: web.Request) -> web.Response:
    """`{"tools": [...]}`: every tool's name, title, description, side effect and input schema."""
    run = request.app[SANDBOX].get_run(request.match_info["run_id"])
    return web.json_response({"tools": run.tools()})


async def call_tool(request: web.Request) -> web.Response:
    """Call a tool. Body: its JSON arguments. Reply: `{"ok": true, "result": {...}}` or
    `{"ok": false, "error": {"type", "message"}}` (200; 404 for an unknown tool). Every call,
    also a refused one, is one trace line; one refused after its run ended (while its body was
    read) is `404 unknown_run`, with none."""
    run = request.app[SANDBOX].get_run(request.match_info["run_id"])
    name = request.match_info["name"]
    try:
        body, _raw = await read_json(request)
    except RequestError as exc:
        await run.record_rejected(name, exc.raw, exc.to_json())
        raise
    reply = await run.call(name, body)
    status = 200 if reply["ok"] else TOOL_ERROR_STATUS.get(reply["error"]["type"], 200)
    return web.json_response(reply, status=status)


async def get_trace(request: web.Request) -> web.Response:
    """The run's JSONL trace (`application/x-ndjson`), also after the run ended (`404 unknown_run` if its file was
    deleted meanwhile, saying so)."""
    sandbox, run_id = request.app[SANDBOX], request.match_info["run_id"]
    # Read (ended runs keep their trace) and encoded in a thread: a long trace must not hold up every other run.
    body = await asyncio.to_thread(lambda: sandbox.trace_text(run_id).encode())
    return web.Response(body=body, content_type="application/x-ndjson", charset="utf-8")


async def delete_run(request: web.Request) -> web.Response:
    """End the run: its sessions close, its trace gets its `run_end` line. Reply `{"run_id", "closed": true}`."""
    run = await request.app[SANDBOX].end_run(request.match_info["run_id"])
    return web.json_response({"run_id": run.id, "closed": True})


async def health(request: web.Request) -> web.Response:
    """The server's state: `{"ok", "runs", "ended_runs", "chromium", "browser": {"connected", "responsive",
    "launches", "crashes"}, "mirrored_urls"}`; 503 while the browser is down (it is relaunched for the next
    session) or does not answer within 2 s (`responsive` false: frozen or starved)."""
    sandbox = request.app[SANDBOX]
    host = sandbox.host
    live = sum(not run.closed for run in sandbox.runs.values())
    connected = host.connected
    responsive = connected and await host.responsive()
    return web.json_response(
        {
            "ok": responsive,
            "runs": live,
            "ended_runs": len(sandbox.runs) - live,
            "chromium": host.executable,
            "browser": {
                "connected": connected,
                "responsive": responsive,
                "launches": host.launches,
                "crashes": host.crashes,
            },
            "mirrored_urls": len(host.store),
        },
        status=200 if responsive else 503,
    )


# The HTTP API, in the order the reference lists it (the handlers' docstrings describe each route).
ROUTES = (
    ("POST", "/runs", create_run),
    ("GET", "/runs", list_runs),
    ("GET", "/runs/{run_id}/tools", list_tools),
    ("POST", "/runs/{run_id}/tools/{name}", call_tool),
    ("GET", "/runs/{run_id}/task", get_task),
    ("POST", "/runs/{run_id}/answer", post_answer),
    ("GET", "/runs/{run_id}/trace", get_trace),
    ("DELETE", "/runs/{run_id}", delete_run),
    ("GET", "/health", health),
)


def create_app(
    config: ServerConfig | None = None,
    sandbox: Sandbox | None = None,
    *,
    policies: PolicyResolver | None = None,
    tasks: TaskProvider | None = None,
    runs_given: bool = False,
) -> web.Application:
    """Application factory. Pass a started ``sandbox`` to share it (tests), else one is
    started (with ``policies`` resolving the packs of ``POST /runs``, ``tasks`` their tasks).
    The HTTP limits and guards come from ``config`` (default: the sandbox's). Serve it with
    ``toolserver.transports.serving`` (``AppRunner``, ``run_app``), whose server answers a request
    that is not readable HTTP in JSON too. ``runs_given``: a batch's server, whose clients use
    only the runs they were given (``RunsGiven``)."""
    owned = sandbox is None
    sandbox = sandbox or Sandbox(config, policies=policies, tasks=tasks)
    config = config or sandbox.config
    app = web.Application(middlewares=[error_boundary, local_only], client_max_size=config.max_body_bytes)
    app[SANDBOX] = sandbox
    app[CONFIG] = config
    app[RUNS_GIVEN] = runs_given

    async def lifecycle(app: web.Application):
        if owned:
            await app[SANDBOX].start()
        yield
        if owned:
            await app[SANDBOX].stop()

    app.cleanup_ctx.append(lifecycle)
    if owned:  # on shutdown, before aiohttp waits for requests in flight: their runs end, so they answer
        app.on_shutdown.append(lambda app: app[SANDBOX].end_runs("server_stopped"))
    for method, path, handler in ROUTES:
        app.router.add_route(method, path, handler)

    # MCP over streamable HTTP on the same port: /mcp?pack=ID (toolserver/transports/mcp.py)
    mcp_http = app[MCP_SESSIONS] = StreamableHttp(app[SANDBOX], runs_given=runs_given)
    app.on_shutdown.append(mcp_http.close_streams)
    app.cleanup_ctx.append(mcp_http.lifecycle)
    app.router.add_route("*", MCP_PATH, mcp_http.handle)
    return app
