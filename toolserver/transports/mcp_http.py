"""MCP over streamable HTTP on the aiohttp server (``/mcp``): the SDK's session manager (an
ASGI app) behind ``asgi_bridge``: aiohttp hands over one request, the SDK does all MCP work.
The pack is chosen per connection (``/mcp?pack=ID``), or a run made elsewhere is joined
(``/mcp?run=ID``); every response of a session names its run in ``Mcp-Run-Id``.

The body is read here, within the HTTP API's time and size bounds. An ``initialize`` that
opens a session has its run opened here too, before the SDK sees the request: a refusal (an
unknown pack or run, a bad run name, too many runs) is answered with the HTTP API's status and
a JSON-RPC error, and the SDK never makes a session for it. One the SDK refuses (its params)
keeps no session either: the SDK answers it with HTTP 200 and keeps one, which is ended here.

The SDK does not show a handler its connection, so the binding of session to run is kept
here, from what passes through the bridge: the ``initialize`` request that opens a run is
marked with an exchange header of ours, its answer carries the new session id, later
requests name that session. A session ends its run when it is deleted, when it has had no
request in flight for ``mcp_session_idle_s`` (the SDK reaps it at the same age) or when the
server stops. A request naming a session not open is answered 404 here, saying why (expired,
closed, never opened: ``session_gone``), and one reusing the id of a request of its session
still running is refused (the SDK gave it the first's answer, and the first none)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from aiohttp import web
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from multidict import MultiMapping

from toolserver.api import Sandbox
from toolserver.errors import MalformedHttp, RequestError, RunsGiven, UnknownPack
from toolserver.run import Run
from toolserver.transports.asgi import EXCHANGE_HEADER, asgi_bridge, asgi_request
from toolserver.transports.guards import read_body
from toolserver.transports.mcp import (
    RUN_ID_HEADER,
    SESSION_HEADER,
    create_server,
    end_run,
    record_unreadable,
    refusal,
)
from toolserver.transports.messages import (
    ID_IN_USE,
    http_refusal,
    id_in_use,
    initialize_of,
    request_id_of,
)
from toolserver.transports.pipes import LINE_START

log = logging.getLogger("toolserver.transports.mcp_http")
VERSION_HEADER = "mcp-protocol-version"
ENDED_KEPT = 10_000  # ended sessions whose 404 says how they ended


@dataclass
class Opening:
    """The run an ``initialize`` opens, made before the SDK saw the request."""

    run: Run
    owned: bool
    claimed: bool = False  # the server's initialize took it (else it ends unused)
    session: str = ""  # the SDK's session for it, named in the answer's headers


@dataclass
class Binding:
    """A session's run, and how busy the session is (for the idle sweep)."""

    run: Run
    owned: bool
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)
    running: set[str] = field(default_factory=set)  # the ids of its requests in flight ("7" and 7 are one)


class StreamableHttp:
    """``/mcp`` on the HTTP server: the pack is chosen per connection (``/mcp?pack=ID``)."""

    transport = "mcp-http"

    def __init__(self, sandbox: Sandbox, *, runs_given: bool = False) -> None:
        self.sandbox, self.poll_s = sandbox, sandbox.config.mcp_disconnect_poll_s
        self.runs_given = runs_given  # only ?run=ID (a batch's server: ``RunsGiven``)
        self.idle_s = sandbox.config.mcp_session_idle_s
        self.opening: dict[str, Opening] = {}  # exchange -> the run its initialize opens
        self.closing = asyncio.Event()  # the server stops: open event streams end (``close_streams``)
        self.sessions: dict[str, Binding] = {}  # MCP session id -> its run
        self.ended: dict[str, str] = {}  # MCP session id -> how it ended (the last ENDED_KEPT), for its 404
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
            max_request_body_size=sandbox.config.max_body_bytes,  # read_body's bound: the SDK's own is 4 MiB
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
        if self.runs_given:
            raise RunsGiven("this server runs a batch's attempts: connect to your run's /mcp?run=ID ($SANDBOX_MCP_URL)")
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
                    self.forget(session, f"expired: it had no request for {self.idle_s:g} s (mcp_session_idle_s)")
                    if binding.owned:
                        await end_run(binding.run, "mcp_idle_timeout")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        exchange = uuid.uuid4().hex
        named = request.headers.get(SESSION_HEADER)
        try:
            body = await read_body(request, self.sandbox.config)
        except RequestError as exc:  # late, too large, or the client left
            return self.refuse(
                named, types.INVALID_REQUEST, str(exc), "", jsonrpc_refusal(exc, None, types.INVALID_REQUEST)
            )
        line = body[: LINE_START * 4].decode("utf-8", "backslashreplace")[:LINE_START]
        version = request.headers.get(VERSION_HEADER)
        refused = http_refusal(request.method, version, body, self.sandbox.config.max_json_depth)
        if refused is not None:  # what the SDK reads wrongly, or answers otherwise than stdio
            said = {"code": refused.code, "message": refused.message} | ({"data": refused.data} if refused.data else {})
            answer = web.json_response({"jsonrpc": "2.0", "id": refused.request_id, "error": said}, status=400)
            return self.refuse(named, refused.code, refused.message, line, answer)
        request_id = request_id_of(body, requests_only=True) if request.method == "POST" else None
        if named is not None and named not in self.sessions and named in self.ended:  # the SDK may not know yet
            return self.session_gone(named, request_id)
        binding = self.sessions.get(named or "")
        running = binding is not None and request_id is not None
        if binding is not None and request_id is not None:  # the SDK ran both and answered the id twice
            if str(request_id) in binding.running:
                said = {"code": types.INVALID_REQUEST, "message": id_in_use(request_id), "data": ID_IN_USE}
                answer = web.json_response({"jsonrpc": "2.0", "id": request_id, "error": said}, status=400)
                return self.refuse(named, types.INVALID_REQUEST, id_in_use(request_id), line, answer)
            binding.running.add(str(request_id))
        initialize = initialize_of(body) if request.method == "POST" else None
        opening = None if named is not None else initialize
        if opening is not None:
            try:
                run, owned = self.open_run(request.query)
            except RequestError as exc:  # refused before the SDK makes a session for it
                return jsonrpc_refusal(exc, opening.get("id"))
            self.opening[exchange] = Opening(run, owned)
        if binding is not None:
            binding.in_flight += 1
        gone, response = False, None
        try:
            on_start = functools.partial(self.response_start, exchange)
            hidden = (VERSION_HEADER,) if initialize is not None else ()  # its body's version is negotiated
            response = await asgi_bridge(
                request, body, self.manager.handle_request, self.poll_s, on_start, exchange, self.closing, hidden
            )
            if named is not None and response.status == 404 and type(response) is web.Response:
                gone = True  # the SDK said only "Session not found"
                return self.session_gone(named, request_id)
            return response
        finally:
            if binding is not None:
                binding.in_flight -= 1
                if not gone:  # a client retrying a session the SDK reaped first does not keep its run
                    binding.last_seen = time.monotonic()
                if running:
                    binding.running.discard(str(request_id))
            if opening is not None:
                await self.settle(exchange, response)

    async def response_start(self, exchange: str, request: web.Request, status: int, headers: list) -> list:
        """Binds a session to the run its ``initialize`` opened; every response of a session
        names its run; a successful DELETE ends the run before it is answered, so the trace is
        final when the client has its answer."""
        session = next(
            (v.decode("latin-1") for k, v in headers if k.lower() == SESSION_HEADER.encode()),
            request.headers.get(SESSION_HEADER, ""),
        )
        opening = self.opening.get(exchange)
        if opening is not None:  # bound once its answer is read (``settle``)
            opening.session = session
            return headers + [(RUN_ID_HEADER.encode(), opening.run.id.encode())]
        binding = self.sessions.get(session)
        if binding is None:
            return headers
        if request.method == "DELETE" and status < 300:
            del self.sessions[session]
            self.forget(session, "was closed by its client (DELETE)")
            if binding.owned:
                await end_run(binding.run)
        return headers + [(RUN_ID_HEADER.encode(), binding.run.id.encode())]

    async def settle(self, exchange: str, response: web.StreamResponse | None) -> None:
        """Binds the session an ``initialize`` opened to its run if the SDK answered it with a
        result (one JSON body: ``json_response``). Else its run, if owned, ends, and so does the
        SDK's session: the SDK answers an error with HTTP 200 and keeps the session, as for any
        status below 400."""
        opening = self.opening.pop(exchange, None)
        if opening is None:
            return
        # A named run another client ended meanwhile is bound all the same: the session's calls then
        # say the run ended (not "send initialize first").
        if opening.claimed and opening.session and is_result(response) and not (opening.owned and opening.run.closed):
            self.sessions[opening.session] = Binding(opening.run, opening.owned)
            return
        if opening.session:
            if response is not None and not response.prepared:
                response.headers.popall(SESSION_HEADER, None)  # no session to name
            # As a client ends a session: the SDK's manager has no public way
            await asgi_request(self.manager.handle_request, "DELETE", [(SESSION_HEADER, opening.session)])
        if opening.owned:
            await end_run(opening.run, "initialize_failed")

    def forget(self, session: str, how: str) -> None:
        self.ended[session] = how
        while len(self.ended) > ENDED_KEPT:
            del self.ended[next(iter(self.ended))]

    def refuse(self, session: str | None, code: int, error: str, line: str, answer: web.Response) -> web.Response:
        """``answer``, a refusal made before the SDK saw the request: traced, and naming its run, if
        ``session`` is bound to one."""
        if (binding := self.sessions.get(session or "")) is not None:
            record_unreadable(binding.run, "mcp-http", code, error, line)
            answer.headers[RUN_ID_HEADER] = binding.run.id
        return answer

    def session_gone(self, session: str, request_id: str | int | None) -> web.Response:
        """The 404 of a request naming a session that is not open (as the MCP spec has it: the
        client must initialize a new session), saying why: expired, closed, or never opened."""
        if session in self.sessions:  # the SDK reaped it at its idle age; the sweep ends its run soon
            how = f"expired: it had no request for {self.idle_s:g} s (mcp_session_idle_s)"
        else:
            how = self.ended.get(session, "is unknown: this server never opened it (or not since it restarted)")
        said = f"MCP session {session[:64]!r} {how}; send initialize again, without an Mcp-Session-Id header"
        error = {"code": types.INVALID_REQUEST, "message": said, "data": {"type": "unknown_mcp_session"}}
        answer = web.json_response({"jsonrpc": "2.0", "id": request_id, "error": error}, status=404)
        if session in self.sessions:
            answer.headers[RUN_ID_HEADER] = self.sessions[session].run.id
        return answer


def jsonrpc_refusal(refused: RequestError, request_id: object, code: int | None = None) -> web.Response:
    """A request refused before the SDK saw it: the HTTP API's status, a JSON-RPC error body
    (``refusal``'s code unless ``code`` is given; ``data.type`` is the HTTP API's error type)."""
    error = refusal(refused).error.model_dump(mode="json", exclude_none=True) | ({"code": code} if code else {})
    valid_id = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    response = web.json_response({"jsonrpc": "2.0", "id": valid_id, "error": error}, status=refused.status)
    if isinstance(refused, MalformedHttp):  # the connection's framing is lost: nothing after this can be read
        response.force_close()
    return response


def is_result(response: web.StreamResponse | None) -> bool:
    """Whether ``response`` is a whole JSON-RPC answer with a result (not an error)."""
    body = response.body if type(response) is web.Response else None
    try:
        answer = json.loads(body) if isinstance(body, bytes | bytearray) else None
    except ValueError:
        return False
    return isinstance(answer, dict) and "result" in answer


def http_request(ctx: ServerRequestContext) -> Any:
    """The HTTP request (Starlette's) an MCP message came in; always there on this transport."""
    if ctx.request is None:
        raise MCPError(types.INTERNAL_ERROR, "an MCP message over HTTP arrived without its HTTP request")
    return ctx.request
