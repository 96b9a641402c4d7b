"""The same bad message gets the same answer over MCP stdio and MCP over HTTP: the same JSON-RPC
error code, message and id (HTTP refused some before the SDK read them, others it left to the
SDK, which answered otherwise than stdio: a dump of pydantic's errors with the invalid-params code
and no id, its JSON parser's word for a byte that is not UTF-8, no bound on nesting)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.calls import handshake_then
from toolserver.config import ServerConfig

SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
NESTED = b'{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"_meta": ' + b'{"a": ' * 70 + b"1" + b"}" * 72
BAD = {  # the message, as the client sends it
    "an empty object": b"{}",
    "JSON-RPC 1.0": b'{"jsonrpc": "1.0", "id": 2, "method": "tools/list"}',
    "no jsonrpc member": b'{"id": 3, "method": "tools/list"}',
    "a string": b'"tools/list"',
    "params that are a list": b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": [1]}',
    "a byte that is not UTF-8": b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\xff"}}',
    f"nesting past max_json_depth ({ServerConfig.max_json_depth})": NESTED,
    "a key given twice": b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"a": 1, "a": 2}}',
    "an integer of 5,000 digits": b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": '
    b'"browser_scroll", "arguments": {"direction": "down", "amount": ' + b"7" * 5000 + b"}}}",
    "not JSON": b'{"jsonrpc": "2.0", "id": 9, "method": ping}',
    "an id of another type": b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
}
# data.type: the HTTP API's error type for the same fault in a body (there was none over MCP)
TYPES = ["invalid_arguments"] * 5 + ["invalid_encoding", *["malformed_json"] * 4, "invalid_arguments"]


async def stdio_answers(trace_dir: Path) -> list[dict]:
    """One stdio server's answer to each bad message, sent after the handshake one at a time."""
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--pack", "controlled-form", "--trace-dir", str(trace_dir),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(handshake_then())
    assert "result" in json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
    answers = []
    for line in BAD.values():
        process.stdin.write(line + b"\n")
        answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 60)))
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 60) == 0
    return answers


async def test_a_bad_message_gets_the_same_answer_over_stdio_and_http(client, tmp_path):
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    opened = await client.post("/mcp?pack=controlled-form", json=initialize, headers=ACCEPT)
    session = ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    assert (await client.post("/mcp", json=initialized, headers=session)).status == 202
    over_http = []
    for message in BAD.values():
        answer = await client.post("/mcp", data=message, headers=session)
        assert answer.status == 400
        over_http.append(await answer.json())
    over_stdio = await stdio_answers(tmp_path)
    for case, by_http, by_stdio in zip(BAD, over_http, over_stdio, strict=True):
        assert (by_http["id"], by_http["error"]) == (by_stdio["id"], by_stdio["error"]), case
    said = {case: (a["id"], a["error"]["code"], a["error"]["message"]) for case, a in zip(BAD, over_http, strict=True)}
    shapeless = "Invalid request: not a JSON-RPC 2.0 request, notification or response"
    assert said == {
        "an empty object": (None, -32600, shapeless),
        "JSON-RPC 1.0": (2, -32600, shapeless),
        "no jsonrpc member": (3, -32600, shapeless),
        "a string": (None, -32600, shapeless),
        "params that are a list": (4, -32600, shapeless),
        "a byte that is not UTF-8": (None, -32700, "Parse error: not UTF-8: byte 0xff at 63"),
        f"nesting past max_json_depth ({ServerConfig.max_json_depth})": (
            6,
            -32600,
            f"Invalid request: nested deeper than {ServerConfig.max_json_depth} levels",
        ),
        "a key given twice": (
            7,
            -32600,
            'Invalid request: the key "a" is given twice in one object; give each key once',
        ),
        # The SDK's reader said "Parse error: Invalid JSON: number out of range", with id null: the client
        # waited for its answer for ever, and the HTTP API's words for it were other.
        "an integer of 5,000 digits": (
            8,
            -32600,
            "Invalid request: the message has an integer of 5000 digits, longer than the 4300 digits this server reads",
        ),
        "not JSON": (None, -32700, "Parse error: Invalid JSON: expected value at line 1 column 39"),
        "an id of another type": (None, -32600, "Invalid request: an id must be a string or an integer, not 1.5"),
    }
    assert [a["error"].get("data", {}).get("type") for a in over_http] == TYPES
    run_id = opened.headers["mcp-run-id"]  # each is in the session's trace, as over stdio
    trace = [json.loads(line) for line in (await (await client.get(f"/runs/{run_id}/trace")).text()).splitlines()]
    told = [line["data"]["code"] for line in trace if line.get("kind") == "unreadable_message"]
    assert told == [code for _, code, _ in said.values()]


NON_FINITE = ["1e400", "-1e400", "Infinity", "-Infinity", "NaN"]  # JSON text of the argument's value


def scroll(number: str, request_id: int) -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "browser_scroll", '
        b'"arguments": {"direction": "down", "amount": %s}}}' % (request_id, number.encode())
    )


async def test_a_number_that_is_not_finite_is_the_same_argument_error_on_every_transport(client, tmp_path):
    """1e400 is JSON, but beyond a double's range: every reader here gives Infinity, the value a
    client's writer may send instead as the literal Infinity (not JSON). Over HTTP the literal
    was a 400 refusal of the body and 1e400 a tool error; over MCP both were a tool error whose
    message named neither the argument nor 1e400."""
    run_id = (await (await client.post("/runs", json={"pack": "controlled-form"})).json())["run_id"]
    by_http = []
    for number in NON_FINITE:
        body = b'{"direction": "down", "amount": %s}' % number.encode()
        answer = await client.post(f"/runs/{run_id}/tools/browser_scroll", data=body, headers=ACCEPT)
        assert answer.status == 200, await answer.text()  # a tool error (ok: false), not a refused request
        by_http.append((await answer.json())["error"])
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    opened = await client.post("/mcp?pack=controlled-form", json=initialize, headers=ACCEPT)
    session = ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    await client.post("/mcp", json=initialized, headers=session)
    by_mcp_http = []
    for request_id, number in enumerate(NON_FINITE, 2):
        result = (await (await client.post("/mcp", data=scroll(number, request_id), headers=session)).json())["result"]
        assert result["isError"] is True
        by_mcp_http.append(result["structuredContent"])
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--pack", "controlled-form", "--trace-dir", str(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(handshake_then() + b"".join(scroll(n, i) + b"\n" for i, n in enumerate(NON_FINITE, 2)))
    process.stdin.close()
    answers = [json.loads(line) for line in (await asyncio.wait_for(process.stdout.read(), 60)).splitlines()]
    assert await asyncio.wait_for(process.wait(), 60) == 0
    by_stdio = [answer["result"]["structuredContent"] for answer in sorted(answers[1:], key=lambda a: a["id"])]
    expected = {
        "type": "invalid_arguments",
        "message": "browser_scroll: argument 'amount' is not a finite number (NaN and Infinity are not JSON "
        "numbers, and a number beyond a double's range, ±1.8e308, such as 1e400, reads as Infinity); "
        "pass a finite number",
    }
    assert by_http == by_mcp_http == by_stdio == [expected] * len(NON_FINITE)
    calls = [json.loads(line) for line in (await (await client.get(f"/runs/{run_id}/trace")).text()).splitlines()]
    amounts = [(c["args"]["amount"], c["escaped"]) for c in calls if c["type"] == "call"]  # call lines, read
    assert amounts == [(n.replace("1e400", "Infinity"), ["args.amount"]) for n in NON_FINITE]


async def test_a_site_key_the_run_refuses_the_tool_refuses_too(client):
    """One rule for a site key (toolserver.contract.site_keys): ``POST /runs`` refused "" and the
    tool took it (as no profile); the run took "a b", whose /task and /answer then failed with a
    server fault (a pack's prompt gives the key between quotes)."""
    rule = "a site key is a non-empty string of printable characters without quotes, backslashes or white space"
    refused = ("", "a b", 'a"b', "\tk", "k\n", "k\x00", "k\x1b[2J", "a\\b", "k\u202egnp")  # NUL, ESC, bidi
    for key in refused:
        created = await client.post("/runs", json={"pack": "controlled-form", "site_key": key})
        error = (await created.json())["error"]
        assert created.status == 400 and error["type"] == "invalid_arguments", error
        assert f"site_key: {rule}" in error["message"] and json.dumps(key) in error["message"], error
    created = await client.post("/runs", json={"pack": "controlled-form", "site_key": "k-1"})
    run_id = (await created.json())["run_id"]
    assert created.status == 201 and (await client.get(f"/runs/{run_id}/task")).status == 200
    async with Client(str(client.make_url(f"/mcp?run={run_id}"))) as mcp:
        for key in refused:
            start = {"provider": "kernel", "site_key": key}
            by_http = await (await client.post(f"/runs/{run_id}/tools/browser_start_session", json=start)).json()
            by_mcp = (await mcp.call_tool("browser_start_session", start)).structured_content
            assert by_http["error"] == by_mcp, (by_http, by_mcp)
            assert by_mcp["type"] == "invalid_arguments" and f"argument 'site_key': {rule}" in by_mcp["message"]
            assert json.dumps(key) in by_mcp["message"]
        started = await mcp.call_tool("browser_start_session", {"provider": "kernel", "site_key": "k-1"})
        assert started.structured_content["profile"] == "k-1"


async def test_a_call_on_a_run_that_has_ended_gets_the_same_words_over_http_and_mcp(client):
    """Over HTTP it said where the trace stays readable, over MCP only "run ... has ended"."""
    run_id = (await (await client.post("/runs", json={"pack": "controlled-form"})).json())["run_id"]
    async with Client(str(client.make_url(f"/mcp?run={run_id}"))) as mcp:
        assert (await client.delete(f"/runs/{run_id}")).status == 200
        by_http = await client.post(f"/runs/{run_id}/tools/browser_snapshot", json={})
        by_mcp = await mcp.call_tool("browser_snapshot", {})
    assert by_http.status == 404 and by_mcp.is_error
    assert (
        (await by_http.json())["error"]
        == by_mcp.structured_content
        == {
            "type": "unknown_run",
            "message": f"run {run_id} has ended: nothing more can be done in it, start a new run (its trace stays "
            f"readable at GET /runs/{run_id}/trace)",
        }
    )


async def test_over_stdio_a_call_after_a_failed_initialize_is_told_to_initialize_as_before_one(tmp_path):
    """After a failed initialize the connection kept its (ended) run, so the call went on to the SDK,
    whose refusal said only "Invalid request parameters"."""
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "browser_snapshot", "arguments": {}}}
    lines = [
        {**call, "id": 2},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {**call, "id": 4},
    ]
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    answers = []
    for line in lines:  # one at a time: the initialize is answered before the call after it is read
        process.stdin.write(json.dumps(line).encode() + b"\n")
        answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 60)))
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 60) == 0
    before, failed, after = answers
    assert failed["error"]["code"] == -32602 and "params.capabilities: Field required" in failed["error"]["message"]
    told = {"code": -32600, "message": "tools/call before initialize: send initialize first"}
    assert before["error"] == after["error"] == told, after


async def test_an_unknown_tool_is_the_same_error_type_over_http_and_mcp(client):
    """Over MCP it was a protocol error with no ``data.type``, where the HTTP API says ``unknown_tool``."""
    run_id = (await (await client.post("/runs", json={"pack": "controlled-form"})).json())["run_id"]
    by_http = await client.post(f"/runs/{run_id}/tools/browser_fly", json={})
    async with Client(str(client.make_url(f"/mcp?run={run_id}"))) as mcp:
        with pytest.raises(MCPError) as refused:
            await mcp.call_tool("browser_fly", {})
    error = (await by_http.json())["error"]
    assert by_http.status == 404 and error["type"] == "unknown_tool"
    assert (refused.value.error.code, refused.value.error.message) == (-32602, error["message"])
    assert refused.value.error.data == {"type": "unknown_tool"}
    calls = [json.loads(line) for line in (await (await client.get(f"/runs/{run_id}/trace")).text()).splitlines()]
    assert [c["error"]["type"] for c in calls if c["type"] == "call"] == ["unknown_tool"] * 2
