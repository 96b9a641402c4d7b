"""MCP over streamable HTTP on the aiohttp server (``/mcp``): the SDK's session manager (an
ASGI app) behind ``asgi_bridge``: aiohttp hands over one request, the SDK does all MCP work.
The pack is chosen per connection (``/mcp?pack=ID``), or a run made elsewhere is joined
(``/mcp?run=ID``); every response of a session names its run in ``Mcp-Run-Id``.

The body is read here, within the HTTP API's time and size bounds. An ``initialize`` that
opens a session has its run opened here too, before the SDK sees the request: a refusal (an
unknown pack or run, a bad run name, too many runs) is answered with the HTTP API's status and
a JSON-RPC error, and the SDK never makes a session for it.

The SDK does not show a handler its connection, so the binding of session to run is kept
here, from what passes through the bridge: the ``initialize`` request that opens a run is
marked with an exchange header of ours, its answer carries the new session id, later
requests name that session. A session ends its run when it is deleted, when it has had no
request in flight for ``mcp_session_idle_s`` (the SDK reaps it at the same age) or when the
server stops."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from aiohttp import web
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from multidict import CIMultiDict, MultiMapping

from toolserver.api import Sandbox
from toolserver.errors import MalformedHttp, RequestError, UnknownPack
from toolserver.run import Run
from toolserver.transports.guards import read_body
from toolserver.transports.mcp import (
    RUN_ID_HEADER,
    SESSION_HEADER,
    create_server,
    end_run,
    record_unreadable,
    refusal,
)
from toolserver.transports.messages import http_refusal, initialize_of
from toolserver.transports.pipes import LINE_START

log = logging.getLogger("toolserver.transports.mcp_http")
EXCHANGE_HEADER = "x-sandbox-exchange"  # set by the bridge on every request; a client's own is dropped
VERSION_HEADER = "mcp-protocol-version"


@dataclass
class Opening:
    """The run an ``initialize`` opens, made before the SDK saw the request."""

    run: Run
    owned: bool
    claimed: bool = False  # the server's initialize took it (else it ends unused)


@dataclass
class Binding:
    """A session's run, and how busy the session is (for the idle sweep)."""

    run: Run
    owned: bool
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)


class StreamableHttp:
    """``/mcp`` on the HTTP server: the pack is chosen per connection (``/mcp?pack=ID``)."""

    transport = "mcp-http"

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox, self.poll_s = sandbox, sandbox.config.mcp_disconnect_poll_s
        self.idle_s = sandbox.config.mcp_session_idle_s
        self.opening: dict[str, Opening] = {}  # exchange -> the run its initialize opens
        self.closing = asyncio.Event()  # the server stops: open event streams end (``close_streams``)
        self.sessions: dict[str, Binding] = {}  # MCP session id -> its run
        # Host and Origin are checked for every route, /mcp too, by the server's guard
        # (guards.local_only); the SDK's stricter list refused names the guard takes (localhost
        # with no port, *.localhost, --allowed-hosts).
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.server = create_server(sandbox, self)
        self.manager = StreamableHTTPSessionManager(
            self.server,
            json_response=True,
            security_settings=security,
            session_idle_timeout=sandbox.config.mcp_session_idle_s,
        )

    def open_run(self, query: MultiMapping[str]) -> tuple[Run, bool]:
        """``?pack=ID`` (or nothing): a new run owned by the session; ``?run=ID``: join a run
        someone else created and ends (``sandbox run`` gives ``cmd:`` agents this URL);
        ``?pack=ID&name=NAME``: the named run, started by the first session that names it and
        joined by the others (for clients that open a session per tool call). A ``RequestError``
        if refused."""
        unknown = set(query) - {"pack", "run", "name"}
        if unknown or len(query) > len(set(query)) or ("run" in query and len(query) > 1):
            raise UnknownPack(f"/mcp takes ?pack=PACK_ID[&name=RUN_NAME] or ?run=RUN_ID (got {sorted(query)})")
        if "run" in query:
            return self.sandbox.get_run(query["run"]), False
        if "name" in query:  # a named run outlives its connections
            return self.sandbox.open_run(query.get("pack"), transport="mcp-http", name=query["name"]), False
        return self.sandbox.open_run(query.get("pack"), transport="mcp-http"), True

    def open(self, ctx: ServerRequestContext) -> tuple[Run, bool]:
        """The run ``handle`` opened for this ``initialize`` before the SDK saw it."""
        opening = self.opening.get(http_request(ctx).headers.get(EXCHANGE_HEADER, ""))
        if opening is None or opening.claimed:
            raise MCPError(
                types.INVALID_REQUEST, "initialize opens a new session: send it without an mcp-session-id header"
            )
        opening.claimed = True
        return opening.run, opening.owned

    def bound(self, ctx: ServerRequestContext) -> Run | None:
        binding = self.sessions.get(http_request(ctx).headers.get(SESSION_HEADER, ""))
        return binding.run if binding is not None else None

    async def close_streams(self, app: web.Application) -> None:
        """On shutdown: the event streams clients hold open end now (each is answered as its client
        gone), or aiohttp would wait for them (a client holding one kept the server up for minutes)."""
        self.closing.set()

    async def lifecycle(self, app: web.Application):
        """aiohttp cleanup context. The session manager's task group lives in a task of its own,
        as aiohttp may start and clean up the app in different tasks."""
        started, stopping = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with self.manager.run():
                started.set()
                await stopping.wait()

        holder = asyncio.create_task(hold())
        await asyncio.wait([holder, asyncio.create_task(started.wait())], return_when=asyncio.FIRST_COMPLETED)
        if holder.done():
            holder.result()  # the manager failed to start: raise its error
        sweeper = asyncio.create_task(self.sweep())
        yield
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        sessions, self.sessions = self.sessions, {}
        await asyncio.gather(*(end_run(b.run) for b in sessions.values() if b.owned))
        stopping.set()
        await holder

    async def sweep(self) -> None:
        """End the runs of sessions that have had no request in flight for ``idle_s``."""
        while True:
            await asyncio.sleep(min(max(self.idle_s / 4, 0.05), 30.0))
            now = time.monotonic()
            for session, binding in list(self.sessions.items()):
                run = binding.run  # its calls may come over the HTTP API too: those count as activity
                quiet = binding.in_flight == 0 and run.current is None
                if quiet and now - max(binding.last_seen, run.last_active) >= self.idle_s:
                    del self.sessions[session]
                    log.info("MCP session %s idle for %.0f s", session, now - binding.last_seen)
                    if binding.owned:
                        await end_run(binding.run, "mcp_idle_timeout")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        exchange = uuid.uuid4().hex
        try:
            body = await read_body(request, self.sandbox.config)
        except RequestError as exc:  # late, too large, or the client left
            if (bound := self.sessions.get(request.headers.get(SESSION_HEADER, ""))) is not None:
                record_unreadable(bound.run, "mcp-http", types.INVALID_REQUEST, str(exc), "")
            return jsonrpc_refusal(exc, None, types.INVALID_REQUEST)
        line = body[: LINE_START * 4].decode("utf-8", "backslashreplace")[:LINE_START]
        version = request.headers.get(VERSION_HEADER)
        refused = http_refusal(request.method, version, body, self.sandbox.config.max_json_depth)
        if refused is not None:  # what the SDK reads wrongly, or answers otherwise than stdio
            if (bound := self.sessions.get(request.headers.get(SESSION_HEADER, ""))) is not None:
                record_unreadable(bound.run, "mcp-http", refused.code, refused.message, line)
            said = {"code": refused.code, "message": refused.message} | ({"data": refused.data} if refused.data else {})
            return web.json_response({"jsonrpc": "2.0", "id": refused.request_id, "error": said}, status=400)
        initialize = initialize_of(body) if request.method == "POST" else None
        opening = None if SESSION_HEADER in request.headers else initialize
        if opening is not None:
            try:
                run, owned = self.open_run(request.query)
            except RequestError as exc:  # refused before the SDK makes a session for it
                return jsonrpc_refusal(exc, opening.get("id"))
            self.opening[exchange] = Opening(run, owned)
        binding = self.sessions.get(request.headers.get(SESSION_HEADER, ""))
        if binding is not None:
            binding.in_flight += 1
        try:
            on_start = functools.partial(self.response_start, exchange)
            hidden = (VERSION_HEADER,) if initialize is not None else ()  # its body's version is negotiated
            return await asgi_bridge(
                request, body, self.manager.handle_request, self.poll_s, on_start, exchange, self.closing, hidden
            )
        finally:
            if binding is not None:
                binding.in_flight -= 1
                binding.last_seen = time.monotonic()
            unanswered = self.opening.pop(exchange, None)  # an initialize that was never answered
            if unanswered is not None and unanswered.owned:
                await end_run(unanswered.run, "initialize_failed")

    async def response_start(self, exchange: str, request: web.Request, status: int, headers: list) -> list:
        """Binds a session to the run its ``initialize`` opened; every response of a session
        names its run; a successful DELETE ends the run before it is answered, so the trace is
        final when the client has its answer."""
        session = next(
            (v.decode("latin-1") for k, v in headers if k.lower() == SESSION_HEADER.encode()),
            request.headers.get(SESSION_HEADER, ""),
        )
        opening = self.opening.pop(exchange, None)
        if opening is not None:
            # A named run another client ended meanwhile is bound all the same: the SDK's 200 is on its
            # way, and the session's calls then say the run ended (not "send initialize first").
            if opening.claimed and status < 300 and session and not (opening.owned and opening.run.closed):
                self.sessions[session] = Binding(opening.run, opening.owned)
            elif opening.owned:
                await end_run(opening.run, "initialize_failed")
        binding = self.sessions.get(session)
        if binding is None:
            return headers
        if request.method == "DELETE" and status < 300:
            del self.sessions[session]
            if binding.owned:
                await end_run(binding.run)
        return headers + [(RUN_ID_HEADER.encode(), binding.run.id.encode())]


def jsonrpc_refusal(refused: RequestError, request_id: object, code: int | None = None) -> web.Response:
    """A request refused before the SDK saw it: the HTTP API's status, a JSON-RPC error body
    (``refusal``'s code unless ``code`` is given; ``data.type`` is the HTTP API's error type)."""
    error = refusal(refused).error.model_dump(mode="json", exclude_none=True) | ({"code": code} if code else {})
    valid_id = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    response = web.json_response({"jsonrpc": "2.0", "id": valid_id, "error": error}, status=refused.status)
    if isinstance(refused, MalformedHttp):  # the connection's framing is lost: nothing after this can be read
        response.force_close()
    return response


def http_request(ctx: ServerRequestContext) -> Any:
    """The HTTP request (Starlette's) an MCP message came in; always there on this transport."""
    if ctx.request is None:
        raise MCPError(types.INTERNAL_ERROR, "an MCP message over HTTP arrived without its HTTP request")
    return ctx.request


async def asgi_bridge(
    request: web.Request,
    body: bytes,
    asgi_app,
    poll_s: float,
    on_start: Callable[[web.Request, int, list], Awaitable[list]],
    exchange: str,
    closing: asyncio.Event,
    hidden: tuple[str, ...] = (),
) -> web.StreamResponse:
    """Serve one aiohttp request, whose ``body`` was read already, with an ASGI app (the
    response, streamed or not, is written as the app sends it). The app sees ``exchange`` in
    the request's ``EXCHANGE_HEADER``; ``on_start`` sees the status and headers before they
    are sent and returns the headers to send; it does not see the ``hidden`` headers. Once
    ``closing`` is set, a long request (an event stream) is told its client went away."""
    dropped = {EXCHANGE_HEADER.lower(), *(name.lower() for name in hidden)}
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "root_path": "",
        "raw_path": request.raw_path.split("?", 1)[0].encode("latin-1"),
        "query_string": request.query_string.encode(),
        "headers": [(k.lower(), v) for k, v in request.raw_headers if k.lower().decode("latin-1") not in dropped]
        + [(EXCHANGE_HEADER.encode(), exchange.encode())],
        "client": (request.remote, 0),
        "server": (request.host.rsplit(":", 1)[0], request.url.port),
    }
    delivered = False
    response: web.StreamResponse | None = None
    start: tuple[int, list] | None = None

    async def receive() -> dict:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # After the body, ASGI's receive() only reports the client going away (a long SSE stream).
        while request.transport is not None and not request.transport.is_closing() and not closing.is_set():
            await asyncio.sleep(poll_s)
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal response, start
        if type(response) is web.Response:  # answered whole already: a second answer has no place
            log.debug("a second response to %s %s dropped (%s)", request.method, request.path, message["type"])
            return
        if message["type"] == "http.response.start":
            start = (message["status"], await on_start(request, message["status"], list(message.get("headers", []))))
            if dict(start[1]).get(b"content-type", b"").startswith(b"text/event-stream"):
                # An event stream's headers go at once, as an ASGI server sends them: its first
                # event (a keep-alive ping) may be 15 s away, and a client waits for the headers.
                response = web.StreamResponse(status=start[0], headers=decoded(start[1]))
                await response.prepare(request)
        elif message["type"] == "http.response.body" and start is not None:
            chunk, more = message.get("body", b""), message.get("more_body", False)
            if response is None and not more:  # a whole JSON answer: headers and body in one write
                response = web.Response(status=start[0], body=chunk, headers=decoded(start[1]))
                return
            try:
                if response is None:  # an event stream: sent as the app writes it
                    response = web.StreamResponse(status=start[0], headers=decoded(start[1]))
                    await response.prepare(request)
                await response.write(chunk)
                if not more:
                    await response.write_eof()
            except ConnectionResetError:  # the client left (e.g. closed its event stream): nothing to tell it
                log.debug("client gone during %s %s", request.method, request.path)

    try:
        await asgi_app(scope, receive, send)
    except anyio.ClosedResourceError:  # its session ended (a DELETE) while the SDK handled this request
        if response is None:
            error = {"code": types.INVALID_REQUEST, "message": "the MCP session ended while this request was handled"}
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": error}, status=404)
    if response is None:  # the app answered nothing (or only a start line)
        raise web.HTTPInternalServerError(text="the MCP app sent no response")
    return response


def decoded(headers: list[tuple[bytes, bytes]]) -> CIMultiDict:
    return CIMultiDict((key.decode("latin-1"), value.decode("latin-1")) for key, value in headers)
