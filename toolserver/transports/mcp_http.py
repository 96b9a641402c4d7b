"""MCP over streamable HTTP on the aiohttp server (``/mcp``): the SDK's session manager (an
ASGI app) behind ``asgi_bridge``: aiohttp hands over one request, the SDK does all MCP work.
The pack is chosen per connection (``/mcp?pack=ID``), or a run made elsewhere is joined
(``/mcp?run=ID``); every response of a session names its run in ``Mcp-Run-Id``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from multidict import CIMultiDict

from toolserver.api import Sandbox
from toolserver.errors import UnknownPack, UnknownRun
from toolserver.run import Run
from toolserver.transports.mcp import RUN_ID_HEADER, SESSION_HEADER, connection_of, create_server, end_run

log = logging.getLogger("toolserver.transports.mcp_http")


class StreamableHttp:
    """``/mcp`` on the HTTP server: the pack is chosen per connection (``/mcp?pack=ID``)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox, self.poll_s = sandbox, sandbox.config.mcp_disconnect_poll_s
        self.run_by_session: dict[str, tuple[str, bool]] = {}  # MCP session id -> (run id, owned)
        host = sandbox.config.host
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{host}:*", "127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=[f"http://{host}:*", "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
        self.server = create_server(sandbox, self.new_run)
        self.manager = StreamableHTTPSessionManager(
            self.server,
            json_response=True,
            security_settings=security,
            session_idle_timeout=sandbox.config.mcp_session_idle_s,
        )

    def new_run(self, ctx) -> tuple[Run, bool]:
        """``?pack=ID`` (or nothing): a new run owned by the session; ``?run=ID``: join a run
        someone else created and ends (``sandbox run`` gives ``cmd:`` agents this URL)."""
        query = ctx.request.query_params
        unknown = set(query) - {"pack", "run"}
        if unknown or ("pack" in query and "run" in query):
            raise UnknownPack(f"/mcp takes ?pack=PACK_ID or ?run=RUN_ID (got {sorted(query)})")
        if "run" in query:
            try:
                run, owned = self.sandbox.get_run(query["run"]), False
            except UnknownRun as exc:
                raise UnknownPack(str(exc)) from exc
        else:
            run, owned = self.sandbox.open_run(query.get("pack"), transport="mcp-http"), True
        connection = connection_of(ctx)
        self.run_by_session[connection.session_id] = (run.id, owned)
        connection.exit_stack.callback(self.run_by_session.pop, connection.session_id, None)
        return run, owned

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
        yield
        stopping.set()
        await holder

    async def handle(self, request: web.Request) -> web.StreamResponse:
        return await asgi_bridge(request, self.manager.handle_request, self.poll_s, self.response_start)

    async def response_start(self, request: web.Request, status: int, headers: list) -> list:
        """Every response of a session names its run; a successful DELETE ends the run before it
        is answered, so the trace is final when the client has its answer."""
        session = next(
            (v.decode("latin-1") for k, v in headers if k.lower() == SESSION_HEADER.encode()),
            request.headers.get(SESSION_HEADER, ""),
        )
        run_id, owned = self.run_by_session.get(session, ("", False))
        run = self.sandbox.runs.get(run_id)
        if run is None:
            return headers
        if request.method == "DELETE" and status < 300 and owned:
            await end_run(run)
        return headers + [(RUN_ID_HEADER.encode(), run.id.encode())]


async def asgi_bridge(
    request: web.Request, asgi_app, poll_s: float, on_start: Callable[[web.Request, int, list], Awaitable[list]]
) -> web.StreamResponse:
    """Serve one aiohttp request with an ASGI app (the request body is read first; the
    response, streamed or not, is written as the app sends it). ``on_start`` sees the status
    and headers before they are sent and returns the headers to send."""
    body = await request.read()
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
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
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
        while request.transport is not None and not request.transport.is_closing():
            await asyncio.sleep(poll_s)
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal response, start
        if message["type"] == "http.response.start":
            start = (message["status"], await on_start(request, message["status"], list(message.get("headers", []))))
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

    await asgi_app(scope, receive, send)
    if response is None:  # the app answered nothing (or only a start line)
        raise web.HTTPInternalServerError(text="the MCP app sent no response")
    return response


def decoded(headers: list[tuple[bytes, bytes]]) -> CIMultiDict:
    return CIMultiDict((key.decode("latin-1"), value.decode("latin-1")) for key, value in headers)
