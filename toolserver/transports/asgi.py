"""An aiohttp request served by an ASGI app (``asgi_bridge``): how ``/mcp`` hands a request whose
body was read already to the MCP SDK's session manager. Imports no MCP module but the SDK's types."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types
from aiohttp import web
from multidict import CIMultiDict

log = logging.getLogger("toolserver.transports.mcp_http")
EXCHANGE_HEADER = "x-sandbox-exchange"  # set by the bridge on every request; a client's own is dropped


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


async def asgi_request(asgi_app, method: str, headers: list[tuple[str, str]]) -> None:
    """A request of no body made here to an ASGI app (e.g. to end the SDK's session as a client
    would); its answer goes nowhere."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": "/", "raw_path": b"/", "root_path": "", "query_string": b"", "client": None, "server": None,
        "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers],
    }  # fmt: skip

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        pass

    await asgi_app(scope, receive, send)
