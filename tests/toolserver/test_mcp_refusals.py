"""``/mcp`` refuses before the SDK sees a request (issue 30, item 11): a body is read within the
HTTP API's time and size bounds, a client that leaves mid-body costs a log line, not a
traceback; an ``initialize`` refused for its query (a bad pack, run or name, too many runs) is
answered with the HTTP API's status and a JSON-RPC error with a proper code, and leaves no SDK
session, no run and no memory behind."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import mcp_types as types
import pytest
from aiohttp import web
from mcp import Client
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.support.sandboxes import http_client
from toolserver.transports.http import create_app
from toolserver.transports.mcp import SERVER_BUSY
from toolserver.transports.serving import AppRunner

ACCEPT = {"accept": "application/json, text/event-stream"}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
INITIALIZE = {"jsonrpc": "2.0", "method": "initialize", "params": HELLO}
LIST = {"jsonrpc": "2.0", "method": "tools/list"}


def live_sdk_sessions() -> int:
    """The SDK's session transports still alive in this process (each one a session it keeps)."""
    gc.collect()
    return sum(isinstance(o, StreamableHTTPServerTransport) and not o.is_terminated for o in gc.get_objects())


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024


def refused_with(exc: BaseException) -> MCPError:
    """The MCPError inside the client's exception groups."""
    while not isinstance(exc, MCPError):
        (exc,) = exc.exceptions  # type: ignore[attr-defined]
    return exc


async def test_refused_initializes_answer_at_once_and_leave_nothing_behind(own_sandbox):
    async with own_sandbox(max_runs=2) as own, http_client(own) as server:
        held = own.create_run()
        own.open_run("controlled-form", transport="http", name="taken")  # the server is now full
        cases = {  # query -> (HTTP status, JSON-RPC code, error type)
            "pack=no-such-pack": (400, types.INVALID_PARAMS, "invalid_pack"),
            "pack=controlled-form&colour=red": (400, types.INVALID_PARAMS, "invalid_pack"),
            "run=run_000000000000": (404, types.INVALID_PARAMS, "unknown_run"),
            "pack=controlled-form&name=no%20spaces": (400, types.INVALID_PARAMS, "invalid_run_name"),
            "pack=bid-intake&name=taken": (409, types.INVALID_PARAMS, "run_name_taken"),
            "pack=controlled-form": (429, SERVER_BUSY, "too_many_runs"),
        }
        sessions, rss = live_sdk_sessions(), rss_mb()
        async with aiohttp.ClientSession(str(server.make_url(""))) as client:  # keeps no responses
            for number in range(1000):
                query = list(cases)[number % len(cases)]
                message = {"jsonrpc": "2.0", "id": number, "method": "initialize", "params": HELLO}
                async with client.post(f"/mcp?{query}", json=message, headers=ACCEPT) as answer:
                    body = await answer.json()
                    status, code, kind = cases[query]
                    assert (answer.status, body["id"], body["error"]["code"]) == (status, number, code), body
                    assert body["error"]["data"] == {"type": kind} and "mcp-session-id" not in answer.headers
        assert live_sdk_sessions() == sessions  # none made (sessions of earlier tests may still be open)
        assert len(own.runs) == 2 and not held.closed  # no run was made, none was ended
        assert rss_mb() - rss < 15  # the SDK kept ~40 MB per 1,000 refused sessions


async def test_initializes_the_sdk_refuses_leave_no_sdk_session(own_sandbox):
    """The SDK answered an initialize it refused (params of the wrong shape) with HTTP 200 and kept
    its session for mcp_session_idle_s: 10,000 such answers and every new client got 503."""
    async with own_sandbox() as own, http_client(own) as server:
        sessions = live_sdk_sessions()
        async with aiohttp.ClientSession(str(server.make_url(""))) as client:  # keeps no responses
            for number in range(300):
                query = "pack=controlled-form" + ("&name=refused" if number % 2 else "")
                message = {"jsonrpc": "2.0", "id": number, "method": "initialize", "params": {}}
                async with client.post(f"/mcp?{query}", json=message, headers=ACCEPT) as answer:
                    body = await answer.json()
                    assert (body["id"], body["error"]["code"]) == (number, types.INVALID_PARAMS), body
                    assert "mcp-session-id" not in answer.headers
        assert live_sdk_sessions() == sessions
        named = own.named_run("refused")  # waits for an initialize; the others ended
        assert named is not None and [run for run in own.runs.values() if not run.closed] == [named]


async def test_the_official_client_sees_the_refusals_codes(own_sandbox):
    async with own_sandbox(max_runs=1) as own, http_client(own) as server:
        with pytest.raises(BaseException) as unknown:
            async with Client(str(server.make_url("/mcp?pack=no-such-pack"))):
                pass
        error = refused_with(unknown.value).error
        assert error.code == types.INVALID_PARAMS and error.data == {"type": "invalid_pack"}
        own.create_run()
        with pytest.raises(BaseException) as full:
            async with Client(str(server.make_url("/mcp?pack=controlled-form"))):
                pass
        error = refused_with(full.value).error
        assert error.code == SERVER_BUSY and error.data == {"type": "too_many_runs"}
        assert "max_runs 1" in error.message


@asynccontextmanager
async def served(sandbox) -> AsyncIterator[tuple[str, int]]:
    """The HTTP app on a real loopback site as ``sandbox serve`` runs it (a handler is not
    cancelled when its client leaves, unlike aiohttp's test server)."""
    runner = AppRunner(create_app(sandbox=sandbox))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][:2]
    finally:
        await runner.cleanup()


async def exchange(address: tuple[str, int], head: str, body: bytes, *, leave: bool = False) -> bytes:
    reader, writer = await asyncio.open_connection(*address)
    try:
        writer.write(head.encode() + body)
        await writer.drain()
        if leave:
            return b""
        return await asyncio.wait_for(reader.read(4096), 5)
    finally:
        writer.close()


def post_head(path: str, framing: str) -> str:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{framing}\r\n\r\n"
    )


async def test_mcp_bodies_have_the_http_apis_bounds_and_a_leaving_client_is_no_fault(own_sandbox, caplog):
    async with own_sandbox(request_body_timeout_s=1.0, max_body_bytes=4096) as own, served(own) as address:
        unfinished = {"Content-Length: 100": b'{"jsonrpc":', "Transfer-Encoding: chunked": b'5\r\n{"jso\r\n'}
        for framing, body in unfinished.items():
            answer = await exchange(address, post_head("/mcp", framing), body)
            assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
            assert b'"code": -32600' in answer and b'"request_timeout"' in answer
        answer = await exchange(address, post_head("/mcp", "Content-Length: 5000"), b"x" * 5000)
        assert answer.startswith(b"HTTP/1.1 413") and b'"body_too_large"' in answer
        caplog.clear()
        with caplog.at_level(logging.INFO):
            for path in ("/mcp", "/runs"):
                await exchange(address, post_head(path, "Transfer-Encoding: chunked"), b'5\r\n{"jso\r\n', leave=True)
            await asyncio.sleep(0.5)
        assert [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING] == []
        assert sum("the client left before its body arrived" in r.getMessage() for r in caplog.records) == 2
        assert own.runs == {}


async def test_a_protocol_version_header_not_spoken_is_named_with_the_versions_served(client):
    """The SDK sent any header but the handshake era's to its stateless-era entry, whose answer asked
    for that era's ``params._meta`` envelope, or listed 2026-07-28 as supported."""
    opened = await client.post("/mcp?pack=controlled-form", json={**INITIALIZE, "id": 1}, headers=ACCEPT)
    session = ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"]}
    served = ", ".join(HANDSHAKE_PROTOCOL_VERSIONS)
    for sent in ("banana", "", "1999-01-01", "2026-07-28", "2030-01-01"):
        answer = await client.post("/mcp", json={**LIST, "id": 8}, headers=session | {"mcp-protocol-version": sent})
        body = await answer.json()
        assert (answer.status, body["id"], body["error"]["code"]) == (400, 8, -32022), body
        said = body["error"]["message"]
        assert said.startswith("MCP-Protocol-Version header: protocol ") and sent in said, said
        assert said.endswith(f"connect with one of the supported versions ({served})"), said
        assert body["error"]["data"] == {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": sent}
    modern = await client.post("/mcp", json={**LIST, "id": 9}, headers=session | {"mcp-protocol-version": "2026-07-28"})
    assert "(stateless requests) is not served" in (await modern.json())["error"]["message"]
    async with Client(str(client.make_url("/mcp?pack=controlled-form")), mode="auto") as mcp:  # falls back on -32022
        assert mcp.session.initialize_result.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS


async def test_an_initialize_with_a_version_header_not_spoken_negotiates_down(client):
    """An ``initialize`` negotiates its version in its body: a newer MCP-Protocol-Version header
    on it is no refusal (it was -32022), and the SDK answers with a version this server speaks."""
    for sent in ("2030-01-01", "2026-07-28", "banana"):
        hello = {**INITIALIZE, "params": {**HELLO, "protocolVersion": sent}, "id": 7}
        newer = ACCEPT | {"mcp-protocol-version": sent}
        answer = await client.post("/mcp?pack=controlled-form", json=hello, headers=newer)
        body = await answer.json()
        assert answer.status == 200 and body["result"]["protocolVersion"] in HANDSHAKE_PROTOCOL_VERSIONS, body
        ended = await client.delete("/mcp", headers=ACCEPT | {"mcp-session-id": answer.headers["mcp-session-id"]})
        assert ended.status == 200


async def test_the_guards_refusals_on_mcp_are_json_rpc_errors_as_its_others_are(own_sandbox):
    """They were the HTTP API's ``{"ok": false, ...}``, which an MCP client reads as no JSON-RPC
    error; and /mcp read a body of any charset as UTF-8, where the HTTP API refuses it."""
    async with own_sandbox(token="s3cret") as own, http_client(own) as server:
        bearer = {"authorization": "Bearer s3cret"}
        refusals = {  # headers -> (status, type)
            "no token": ({}, 401, "unauthorized"),
            "a foreign Origin": (bearer | {"origin": "https://evil.example"}, 403, "forbidden_origin"),
            "a foreign Host": (bearer | {"host": "evil.example"}, 403, "forbidden_host"),
            "text/plain": (bearer | {"content-type": "text/plain"}, 415, "unsupported_media_type"),
            "latin-1": (bearer | {"content-type": "application/json; charset=latin-1"}, 415, "unsupported_charset"),
        }
        for case, (headers, status, kind) in refusals.items():
            for path in ("/mcp?pack=controlled-form", "/runs"):
                answer = await server.post(path, data=json.dumps(INITIALIZE | {"id": 1}), headers=ACCEPT | headers)
                body = await answer.json()
                assert answer.status == status, (case, path, body)
                if path == "/runs":
                    assert body["error"]["type"] == kind, (case, body)
                    continue
                assert body["jsonrpc"] == "2.0" and body["id"] is None, (case, body)
                assert (body["error"]["code"], body["error"]["data"]) == (-32600, {"type": kind}), (case, body)
        assert own.runs == {}  # none was opened
