"""A request aiohttp cannot parse, answered before any route, is JSON like every other error: the
HTTP API's error shape and a JSON-RPC error at once (its path is unknown, so a ``/mcp`` client
reads it too), with one log line and no traceback; the connection closes, the server stays up."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import aiohttp.http_parser
import aiohttp.web_protocol
import pytest
from aiohttp import web
from mcp_types import JSONRPCError, jsonrpc_message_adapter

from toolserver.transports.serving import AppRunner

HEAD = "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
ACCEPT = "Accept: application/json, text/event-stream\r\n"
NOT_HTTP = {  # what is sent -> what the message says
    "a body longer than its Content-Length": (
        HEAD + ACCEPT + "Content-Length: 2\r\n\r\n{{}}garbage",
        "Invalid method encountered: b'{}garbage'",
        "longer than its Content-Length",
    ),
    "a malformed chunk size": (
        HEAD + ACCEPT + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n",
        "Invalid character in chunk size: b'zz'",
        "the body's framing",
    ),
    "a malformed request line": (
        "POST {path} HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n",
        "Expected CRLF after version",
        "the request line",
    ),
    "a header over 8190 bytes": (
        HEAD + "X-Long: " + "a" * 9000 + "\r\n\r\n",
        "Got more than 8190 bytes",
        "at most 8190 bytes",
    ),
}


async def exchange(client, data: bytes) -> bytes:
    """Everything the server answers on one connection, until it closes it."""
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


@pytest.mark.parametrize("path", ["/runs", "/mcp?pack=controlled-form"])
@pytest.mark.parametrize("case", NOT_HTTP)
async def test_a_request_that_is_not_readable_http_is_a_json_error_for_both_apis(client, caplog, case, path):
    sent, said, hint = NOT_HTTP[case]
    with caplog.at_level(logging.DEBUG):
        answer = await exchange(client, sent.format(path=path).encode())
    head, _, body = answer.rpartition(b"\r\n\r\n")  # the last answer (a request before it may be answered)
    assert head[head.rfind(b"HTTP/") :].startswith(b"HTTP/1.0 400 Bad Request"), answer[:300]
    assert b"Content-Type: application/json" in head
    reply = json.loads(body)
    error = reply["error"]
    assert reply["ok"] is False and (error["type"], error["data"]) == ("malformed_http", {"type": "malformed_http"})
    assert error["message"].startswith("the request is not readable HTTP (") and said in error["message"]
    assert hint in error["message"] and "\n" not in error["message"]
    parsed = jsonrpc_message_adapter.validate_json(body, by_name=False)  # as the MCP client reads a 4xx body
    assert isinstance(parsed, JSONRPCError) and parsed.error.code == -32600 and parsed.id is None
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []  # a client's error: no traceback
    assert any(said in r.getMessage() for r in caplog.records if r.name == "toolserver.transports.serving")
    assert (await client.get("/health")).status == 200


@pytest.mark.parametrize("path", ["/runs", "/mcp?pack=controlled-form"])
async def test_a_malformed_chunked_body_after_the_headers_is_one_json_error(client, caplog, monkeypatch, path):
    """The headers arrive first, so the route runs and reads the body while aiohttp's parser
    refuses it: one 400 malformed_http answer (not a 500 and then a second 400), no traceback.
    With aiohttp's pure-Python parser (AIOHTTP_NO_EXTENSIONS, PyPy), which gives the route that
    error; its C parser does not (the route waits for the body: ``request_body_timeout_s``)."""
    monkeypatch.setattr(aiohttp.web_protocol, "HttpRequestParser", aiohttp.http_parser.HttpRequestParserPy)
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    try:
        with caplog.at_level(logging.INFO):
            writer.write((HEAD.format(path=path) + ACCEPT + "Transfer-Encoding: chunked\r\n\r\n").encode())
            await writer.drain()
            await asyncio.sleep(0.3)  # a separate read: the route is waiting for the body
            writer.write(b"zz\r\n{}\r\n0\r\n\r\n")
            await writer.drain()
            answer = await read_until_closed(reader, 15)
    finally:
        writer.close()
    assert answer.count(b"HTTP/1.") == 1, answer
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 Bad Request") and b"Content-Type: application/json" in head, head
    reply = json.loads(body)
    error = reply["error"]
    assert error.get("type", error.get("data", {}).get("type")) == "malformed_http", reply
    assert error["message"].startswith("the request body is not readable HTTP (TransferEncodingError: zz)")
    assert "the body's framing" in error["message"]
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    assert (await client.get("/health")).status == 200


async def read_until_closed(reader: asyncio.StreamReader, quiet_s: float) -> bytes:
    """What arrives until the server closes the connection, or sends nothing for ``quiet_s``."""
    answer = b""
    while True:
        try:
            chunk = await asyncio.wait_for(reader.read(65536), quiet_s)
        except TimeoutError:
            return answer
        if not chunk:
            return answer
        answer += chunk


async def test_not_http_on_a_first_request_is_logged_at_debug(client, caplog):
    """A TLS hello (or a port scanner's bytes) on a new connection is noise, as aiohttp logs it:
    answered in JSON, logged at debug, not at warning."""
    with caplog.at_level(logging.DEBUG, logger="toolserver.transports.serving"):
        answer = await exchange(client, b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 40)
    assert answer.startswith(b"HTTP/1.0 400 Bad Request"), answer[:200]
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["type"] == "malformed_http"
    mine = [r for r in caplog.records if r.name == "toolserver.transports.serving"]
    assert [r.levelno for r in mine] == [logging.DEBUG], [(r.levelname, r.getMessage()) for r in mine]


async def test_a_handler_timeout_is_a_json_504_not_an_internal_error():
    """A TimeoutError a handler lets out is aiohttp's 504 (no exception given): said as a timeout."""

    async def times_out(request: web.Request) -> web.Response:
        raise TimeoutError

    app = web.Application()
    app.router.add_get("/slow", times_out)
    runner = AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/slow") as response:
            reply = await response.json()
    finally:
        await runner.cleanup()
    assert response.status == 504
    assert reply["error"]["type"] == "handler_timeout" and "timed out" in reply["error"]["message"], reply
