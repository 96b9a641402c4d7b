"""MCP requests a server must refuse with its reason, and a trace line: an id in use by a request
still running (stdio and streamable HTTP), a session that is not open (expired, closed, never
opened: HTTP 404), and bad input sent through ``sandbox mcp --attach`` (refused by the server
it is attached to, and in that run's trace)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from tests.support.calls import handshake_then
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace, read_trace
from toolserver.faults import parse_faults
from toolserver.transports.guards import SANDBOX

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"
SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
START = {"name": "browser_start_session", "arguments": {"provider": "kernel", "url": FORM_URL}}


class RawRequest(types.Request[dict[str, Any] | None, str]):
    """A request whose params are sent as given (the client's typed requests cannot be malformed)."""


def unreadable(trace) -> list[dict]:
    return [e.data for e in trace.events if e.kind == "unreadable_message"]


def assert_of_no_call(trace) -> None:
    """A refused message belongs to no call, not to the one that ran when it came (whose line
    listed it among the events that call caused)."""
    assert [e.seq for e in trace.events if e.kind == "unreadable_message"] == [None]
    assert [e["kind"] for c in trace.calls for e in c.events if e["kind"] == "unreadable_message"] == []


async def test_stdio_a_request_whose_id_is_in_use_is_refused_and_traced(tmp_path):
    """The SDK ran both requests and answered the id twice: the client could not tell its answers apart."""
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path), "--faults", "mirror-delay:ms=1500",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    process.stdin.write(handshake_then({"method": "tools/call", "params": START}, {"method": "tools/list"}))
    # the same ids again: 2 still runs (its page is 1.5 s late), 3 was answered: free again
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": "2", "method": "tools/list"}).encode() + b"\n")
    await process.stdin.drain()
    answers = [json.loads(await asyncio.wait_for(process.stdout.readline(), 60)) for _ in range(4)]
    run_id = answers[0]["result"]["_meta"]["sandbox/run_id"]
    refused = next(a for a in answers if a["id"] == "2")
    assert refused["error"]["code"] == types.INVALID_REQUEST, refused
    said = refused["error"]["message"]
    assert said.startswith('Invalid request: id "2" is in use: a request with it is still running'), said
    assert refused["error"]["data"] == {"type": "duplicate_request_id"}
    started = next(a for a in answers if a["id"] == 2)
    assert started["result"]["isError"] is False, started
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode() + b"\n")
    await process.stdin.drain()
    again = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
    assert again["id"] == 2 and len(again["result"]["tools"]) == 11  # answered: the id is free again
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 60) == 0
    trace = read_trace(tmp_path / f"{run_id}.jsonl")
    assert [c.tool for c in trace.calls] == ["browser_start_session"]
    (event,) = unreadable(trace)
    assert event["transport"] == "mcp-stdio" and event["code"] == types.INVALID_REQUEST
    assert "is in use" in event["error"] and json.loads(event["line"])["id"] == "2"
    assert_of_no_call(trace)


async def test_http_a_request_whose_id_is_in_use_is_refused_and_traced(own_sandbox):
    """The SDK gave the second request the first's answer, and the first none: it waited until
    the session ended."""
    async with own_sandbox(faults=parse_faults("mirror-delay:ms=1500")) as own, http_client(own) as server:
        initialize, initialized = map(json.loads, handshake_then().splitlines())
        opened = await server.post("/mcp?pack=controlled-form", json=initialize, headers=ACCEPT)
        run_id, session = opened.headers["mcp-run-id"], ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"]}
        assert (await server.post("/mcp", json=initialized, headers=session)).status == 202

        async def rpc(id: int | str, method: str, params: dict | None = None):
            message = {"jsonrpc": "2.0", "id": id, "method": method} | ({"params": params} if params else {})
            response = await asyncio.wait_for(server.post("/mcp", json=message, headers=session), 30)
            assert response.headers["mcp-run-id"] == run_id  # every answer of a session names its run
            return response.status, await response.json()

        first = asyncio.create_task(rpc(7, "tools/call", START))
        while own.runs[run_id].current is None:  # the call runs
            await asyncio.sleep(0.02)
        status, refused = await rpc("7", "tools/list")
        assert status == 400 and refused["id"] == "7", refused
        assert refused["error"]["code"] == types.INVALID_REQUEST
        assert refused["error"]["message"].startswith('Invalid request: id "7" is in use')
        status, started = await first
        assert status == 200 and started["id"] == 7 and started["result"]["isError"] is False, started
        status, listed = await rpc(7, "tools/list")  # answered: the id is free again
        assert status == 200 and len(listed["result"]["tools"]) == 11
        trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
        assert [c.tool for c in trace.calls] == ["browser_start_session"]
        (event,) = unreadable(trace)
        assert event["transport"] == "mcp-http" and "is in use" in event["error"]
        assert_of_no_call(trace)


async def test_a_session_not_open_is_404_saying_why_and_to_initialize_again(own_sandbox):
    """Expired, closed or never opened, the SDK said only "Session not found" (or, while it still
    held a session the sweep had ended, "send initialize first")."""
    async with own_sandbox(mcp_session_idle_s=1.0) as own, http_client(own) as server:
        initialize, initialized = map(json.loads, handshake_then().splitlines())

        async def opened() -> dict:
            answer = await server.post("/mcp?pack=controlled-form", json=initialize, headers=ACCEPT)
            session = ACCEPT | {"mcp-session-id": answer.headers["mcp-session-id"]}
            assert (await server.post("/mcp", json=initialized, headers=session)).status == 202
            return session

        async def listed(session: dict) -> tuple[int, dict]:
            message = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
            answer = await server.post("/mcp", json=message, headers=session)
            return answer.status, await answer.json()

        idle, closed = await opened(), await opened()
        assert (await server.delete("/mcp", headers=closed)).status == 200
        await asyncio.sleep(2.5)  # idle for 1 s: its run ended
        for session, how in [
            (idle, "expired: it had no request for 1 s (mcp_session_idle_s)"),
            (closed, "was closed by its client (DELETE)"),
            (ACCEPT | {"mcp-session-id": "nope"}, "is unknown: this server never opened it"),
        ]:
            status, answer = await listed(session)
            assert status == 404 and answer["error"]["code"] == types.INVALID_REQUEST, answer
            said = answer["error"]["message"]
            assert said.startswith(f"MCP session {session['mcp-session-id']!r} {how}"), said
            assert said.endswith("send initialize again, without an Mcp-Session-Id header"), said
            assert answer["error"]["data"] == {"type": "unknown_mcp_session"}


async def test_bad_input_through_an_attached_process_is_refused_upstream_and_traced(client):
    """The attached process refused what its own MCP reader could not take (a tools/call of no
    tool name, arguments of no object) unseen by the server: the run's trace missed those lines."""
    server = str(client.make_url("")).rstrip("/")
    args = ["mcp", "--attach", server, "--name", "bad-input", "--pack", "controlled-form"]
    async with Client(StdioServerParameters(command=SANDBOX_CLI, args=args)) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        unknown = await mcp_error(mcp.call_tool("browser_nope", {}))
        assert unknown.error.code == types.INVALID_PARAMS and "browser_nope" in unknown.error.message
        wrong = await mcp.call_tool("browser_snapshot", {"tab": 5})
        assert wrong.is_error and wrong.structured_content["type"] == "invalid_arguments"

        def raw(params: dict):
            return mcp.session.send_request(RawRequest(method="tools/call", params=params), ANY)

        nameless = await mcp_error(raw({"arguments": {}}))
        assert nameless.error.code == types.INVALID_PARAMS and "name" in nameless.error.message
        listed = await raw({"name": "browser_snapshot", "arguments": [1]})
        assert listed["isError"] is True and listed["structuredContent"]["type"] == "invalid_arguments"
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert [(c.tool, c.ok) for c in trace.calls] == [
        ("browser_nope", False), ("browser_snapshot", False), ("browser_snapshot", False)
    ]  # fmt: skip
    (event,) = unreadable(trace)
    assert event["transport"] == "mcp-http" and json.loads(event["line"]) == {"arguments": {}}
    assert (await client.delete(f"/runs/{run_id}")).status == 200


ANY = TypeAdapter(dict[str, Any])


async def mcp_error(request) -> MCPError:
    """The MCPError ``request`` raises."""
    with pytest.raises(MCPError) as raised:
        await request
    return raised.value


async def test_an_attached_process_answers_a_method_not_served_before_initialize_with_32601(client):
    """It said "sandbox/nope before initialize" (-32600), where the SDK and the server say -32601,
    which clients probing a server before the handshake rely on."""
    server = str(client.make_url("")).rstrip("/")
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--attach", server, "--name", "probed", "--pack", "controlled-form",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    for request in ({"id": 1, "method": "sandbox/nope"}, {"id": 2, "method": "tools/list"}):
        process.stdin.write(json.dumps({"jsonrpc": "2.0", **request}).encode() + b"\n")
    await process.stdin.drain()
    unknown, early = [json.loads(await asyncio.wait_for(process.stdout.readline(), 60)) for _ in range(2)]
    assert unknown["id"] == 1 and unknown["error"]["code"] == types.METHOD_NOT_FOUND, unknown
    assert early["error"] == {
        "code": types.INVALID_REQUEST,
        "message": "tools/list before initialize: send initialize first",
    }
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 60) == 0
    run = client.app[SANDBOX].named_run("probed")
    assert run is not None and (await client.delete(f"/runs/{run.id}")).status == 200
