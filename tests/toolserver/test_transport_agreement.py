"""The same bad message gets the same answer over MCP stdio and MCP over HTTP: the same JSON-RPC
error code, message and id (HTTP refused some before the SDK read them, others it left to the
SDK, which answered otherwise than stdio: a dump of pydantic's errors with the invalid-params code
and no id, its JSON parser's word for a byte that is not UTF-8, no bound on nesting)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

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
}


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
    }
    run_id = opened.headers["mcp-run-id"]  # each is in the session's trace, as over stdio
    trace = [json.loads(line) for line in (await (await client.get(f"/runs/{run_id}/trace")).text()).splitlines()]
    told = [line["data"]["code"] for line in trace if line.get("kind") == "unreadable_message"]
    assert told == [code for _, code, _ in said.values()]
