"""Serving the HTTP app (the HTTP API and ``/mcp``): aiohttp's runner, with one change: a request
aiohttp cannot parse is answered in the one JSON error shape, not in aiohttp's plain text.

aiohttp parses each request before any of the app's code runs. A request it cannot parse (a
malformed request line or header, a line over 8190 bytes, a malformed chunked body, or the extra
bytes of a body longer than its Content-Length, which it reads as the next request) is answered
by the connection's protocol, ``web.RequestHandler.handle_error``: no middleware, signal or
``handler_args`` reaches that answer (aio-libs/aiohttp#3287). The one seam is the protocol's
class. ``AppRunner`` gives the server aiohttp made for the app ``JsonErrorServer``'s protocol
factory, which gives each connection's protocol ``JsonErrorProtocol``'s ``handle_error``. Both
classes only add a method (no state; ``__slots__ = ()``, so their layouts are aiohttp's), so the
objects aiohttp made can take them. One private attribute is read, with a fallback: the
connection's request count, as aiohttp reads it to log non-HTTP on a first request at debug.

The request could not be read, so which endpoint it was for is unknown: the answer is the HTTP
API's error shape and a JSON-RPC error (``id`` null) at once, which an MCP client of ``/mcp``
reads as one. Serve the app with ``AppRunner`` or ``run_app`` (``web.run_app`` and aiohttp's
``TestServer`` use aiohttp's runner, which answers in plain text).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong

from toolserver.errors import MalformedHttp

log = logging.getLogger("toolserver.transports.serving")
INVALID_REQUEST = -32600  # JSON-RPC
INTERNAL_ERROR = -32603


class JsonErrorProtocol(web.RequestHandler):
    """A connection's protocol whose own error answers are JSON."""

    __slots__ = ()  # the layout of aiohttp's protocol, so one made by aiohttp can take this class

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status != 400 or not isinstance(exc, HttpProcessingError):  # not the parser's: aiohttp's logging
            super().handle_error(request, status, exc, message)  # (with the traceback) and its checks
            if status == 504:  # a TimeoutError the app's handler let out (aiohttp gives no exception)
                said = "the request's handler timed out (a TimeoutError it did not answer); try again"
                return json_error("handler_timeout", f"{status} {said}", status, INTERNAL_ERROR)
            said = "internal error: the request was not answered"
            return json_error("server_fault", f"{status} {said}", status, INTERNAL_ERROR)
        if request.writer.output_size > 0:  # as aiohttp: an answer begun cannot be replaced
            raise ConnectionError("a response was sent already; the request that followed is not readable HTTP")
        refused = MalformedHttp(not_http(exc))
        # A client's error: one line, no traceback. Not HTTP at all on a connection's first request (a TLS
        # hello, a port scanner) is noise aiohttp logs at debug on purpose; later, it is a client's bug.
        first = getattr(self, "_request_count", 1) <= 1  # aiohttp's own test; 1 if that attribute goes
        level = logging.DEBUG if first and isinstance(exc, BadHttpMethod) else logging.WARNING
        log.log(level, "%s: %s", request.remote, refused.message)
        return json_error(refused.type, refused.message, refused.status, INVALID_REQUEST)


def json_error(type_: str, message: str, status: int, code: int) -> web.Response:
    """The HTTP API's ``{"ok": false, "error": {"type", "message"}}`` that is a JSON-RPC error too."""
    error = {"type": type_, "message": message, "code": code, "data": {"type": type_}}
    response = web.json_response({"ok": False, "error": error, "jsonrpc": "2.0", "id": None}, status=status)
    response.force_close()  # the connection's framing is lost: nothing after this can be read
    return response


def not_http(exc: HttpProcessingError) -> str:
    """aiohttp's parse error in one line (its text spreads over several, with a caret under the
    byte), with what to do."""
    lines = [line.strip().rstrip(":") for line in (exc.message or "").splitlines() if line.strip() not in ("", "^")]
    said = ": ".join(lines) or type(exc).__name__
    if isinstance(exc, BadHttpMethod):
        hint = (
            "if the request before it on this connection had a body longer than its Content-Length, "
            "these are that body's extra bytes: send a Content-Length that is the body's length in bytes"
        )
    elif isinstance(exc, LineTooLong):
        hint = "send a request line and headers of at most 8190 bytes each"
    else:
        hint = "check the request line, the headers and the body's framing (Content-Length, or chunked)"
    return f"the request is not readable HTTP ({said}); {hint}; the connection is closed"


class JsonErrorServer(web.Server):
    """The server aiohttp made for the app, whose connections' protocols answer in JSON."""

    __slots__ = ()  # the layout of aiohttp's server, so the one aiohttp made can take this class

    def __call__(self) -> web.RequestHandler:
        protocol = super().__call__()
        protocol.__class__ = JsonErrorProtocol
        return protocol


class AppRunner(web.AppRunner):
    """``web.AppRunner`` whose server answers a request that is not readable HTTP in JSON."""

    async def setup(self) -> None:
        await super().setup()
        assert self.server is not None, "setup made the server"
        self.server.__class__ = JsonErrorServer


class CannotListen(Exception):
    """The server's port could not be bound once the app had started (taken meanwhile): the app is
    stopped again; ``errno`` and ``strerror`` are the bind's."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.errno, self.strerror = error.errno, error.strerror or str(error)


def run_app(app: web.Application, *, host: str, port: int, ready: Callable[[], None] | None = None) -> None:
    """``web.run_app(app, host=host, port=port, print=None)`` with ``AppRunner``, in the same steps:
    serves until SIGINT or SIGTERM (or a ``web.GracefulExit`` raised in the loop), then stops the
    app while the loop's other tasks still run, then ends them. ``ready`` is called once the port
    is bound; ``CannotListen`` if it cannot be."""
    loop = asyncio.new_event_loop()
    main = loop.create_task(serve(app, host, port, ready))
    try:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main)
    except (web.GracefulExit, KeyboardInterrupt):
        pass
    finally:
        if not main.done():
            main.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(main)
        rest = asyncio.all_tasks(loop)
        for task in rest:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*rest, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def serve(app: web.Application, host: str, port: int, ready: Callable[[], None] | None) -> None:
    runner = AppRunner(app, handle_signals=True, keepalive_timeout=75.0)  # web.run_app's defaults
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:  # free when checked, before the browser started; taken since
            raise CannotListen(exc) from exc
        if ready is not None:
            ready()
        await asyncio.Event().wait()  # until cancelled
    finally:
        await runner.cleanup()
