"""The MCP transport, driven by the official MCP Python client over streamable HTTP (``/mcp`` on
the real loopback server) and over stdio (a spawned ``sandbox mcp``): the contract, the
whole controlled-form workflow, errors, bad input, and traces equal to HTTP's."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from sandbox.paths import MIRRORS_DIR, PACKS_DIR
from tests.support.calls import handshake_then, ref_of
from tests.support.disks import fill, small_disk
from tests.support.sandboxes import http_client
from toolserver.browser.chromium import resolve_chromium
from toolserver.config import ServerConfig
from toolserver.contract.names import TOOL_NAMES
from toolserver.contract.trace import parse_trace, read_trace
from toolserver.formats import open_schema, with_nullable

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"
SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
VOLATILE = {"t", "t_start", "t_end", "wall", "wall_start", "wall_end"}


def mcp_reply(result) -> dict:
    """A CallToolResult in the HTTP API's shape."""
    if result.is_error:
        return {"ok": False, "error": result.structured_content}
    return {"ok": True, "result": result.structured_content}


def mcp_caller(client: Client):
    async def call(name: str, args: dict) -> dict:
        return mcp_reply(await client.call_tool(name, args))

    return call


def http_caller(client, run_id: str):
    async def call(name: str, args: dict) -> dict:
        return await (await client.post(f"/runs/{run_id}/tools/{name}", json=args)).json()

    return call


async def form_workflow(call, site_key: str) -> list[dict]:
    """The controlled-form task to the success page, then a policy violation, a stale ref and
    an invalid argument. Returns the replies."""
    replies = []

    async def step(name: str, **args) -> dict:
        reply = await call(name, args)
        replies.append(reply)
        return reply

    async def snap() -> str:
        reply = await step("browser_snapshot")
        assert reply["ok"], reply
        return reply["result"]["snapshot"]

    started = await step(
        "browser_start_session", provider="kernel", site_key=site_key, clear_cookies=False, url=FORM_URL
    )
    assert started["ok"], started
    text = await snap()
    first_snapshot = text
    for label, value in (("Name", "João Muñoz"), ("Email", "joao.munoz@example.com")):
        assert (await step("browser_type", ref=ref_of(text, f'textbox "{label}'), text=value))["ok"]
    assert (await step("browser_click", ref=ref_of(text, 'button "Next"')))["ok"]
    text = await snap()
    for label, value in (("City", "São Paulo"), ("Bio", "Synthetic contractor intake.")):
        assert (await step("browser_type", ref=ref_of(text, f'textbox "{label}'), text=value))["ok"]
    assert (await step("browser_click", ref=ref_of(text, 'button "Next"')))["ok"]
    text = await snap()
    assert "Confirm (Step 3 of 3)" in text and "João Muñoz" in text
    assert (await step("browser_click", target=ref_of(text, 'button "Confirm & Next"')))["ok"]
    assert "Success" in await snap()

    violation = await step("browser_navigate", url="https://example.com/")
    assert violation["error"]["type"] == "policy_violation"
    stale = await step("browser_click", ref=ref_of(first_snapshot, 'button "Next"'))
    assert stale["error"]["type"] == "stale_ref" and "new snapshot" in stale["error"]["message"]
    invalid = await step("browser_start_session", provider="kernel", clear_cookies="false")
    assert invalid["error"]["type"] == "invalid_arguments" and "'clear_cookies'" in invalid["error"]["message"]
    return replies


def comparable(trace_text: str, site_key: str) -> list[dict]:
    """The call and event lines with timings, run-specific ids and the site key taken out."""
    text = re.sub(r"ses_[0-9a-f]{12}", "<session>", trace_text).replace(site_key, "<site_key>")
    lines = [json.loads(line) for line in text.splitlines()]
    return [strip_volatile(line) for line in lines if line["type"] in ("call", "event")]


def strip_volatile(value):
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


@pytest.fixture
def mcp_url(client):
    return lambda query="pack=controlled-form": str(client.make_url(f"/mcp?{query}"))


async def http_form_trace(client, site_key: str) -> str:
    created = await (await client.post("/runs", json={"pack": "controlled-form"})).json()
    await form_workflow(http_caller(client, created["run_id"]), site_key)
    await client.delete(f"/runs/{created['run_id']}")
    return await (await client.get(f"/runs/{created['run_id']}/trace")).text()


# --- streamable HTTP -----------------------------------------------------------------------
async def test_tools_list_is_the_contract_with_titles_and_annotations(client, mcp_url):
    async with Client(mcp_url()) as mcp:
        listed = (await mcp.list_tools()).tools
        http_tools = (
            await (await client.get(f"/runs/{mcp.session.initialize_result.meta['sandbox/run_id']}/tools")).json()
        )["tools"]
    assert [t.name for t in listed] == list(TOOL_NAMES)
    by_name = {t.name: t for t in listed}
    for tool, published in zip(listed, http_tools, strict=True):
        assert tool.input_schema == open_schema(with_nullable(published["input_schema"]))
        assert tool.title == published["title"]
        assert tool.annotations.open_world_hint is False
    for name in ("browser_snapshot", "list_tools"):
        assert by_name[name].annotations.read_only_hint is True and by_name[name].annotations.idempotent_hint is True
    for name in ("browser_scroll", "browser_switch_tab"):  # repeated, each moves further: no client retries them
        assert by_name[name].annotations.read_only_hint is False and by_name[name].annotations.idempotent_hint is False
    for name in ("browser_click", "browser_type", "browser_close", "browser_close_tab"):
        assert by_name[name].annotations.read_only_hint is False and by_name[name].annotations.destructive_hint is True
    assert by_name["browser_navigate"].annotations.destructive_hint is False


async def test_http_session_is_a_run_with_the_same_trace_as_http(client, mcp_url):
    http_trace = await http_form_trace(client, "same-trace-http")
    async with Client(mcp_url()) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        replies = await form_workflow(mcp_caller(mcp), "same-trace-mcp")
        assert (await client.get("/health")).status == 200
    trace_text = await (await client.get(f"/runs/{run_id}/trace")).text()
    trace = parse_trace(trace_text)
    assert trace.header["transport"] == "mcp-http" and trace.header["pack"] == "controlled-form"
    assert trace.end is not None and trace.end["reason"] == "mcp_disconnected"  # the client's DELETE ended the run
    assert len(trace.calls) == len(replies) == 15
    assert comparable(trace_text, "same-trace-mcp") == comparable(http_trace, "same-trace-http")
    assert parse_trace(http_trace).header["transport"] == "http"


async def test_call_results_carry_structured_content_and_readable_text(mcp_url):
    async with Client(mcp_url()) as mcp:
        started = await mcp.call_tool(
            "browser_start_session",
            {"provider": "kernel", "site_key": "mcp-text", "clear_cookies": False, "url": FORM_URL},
        )
        assert not started.is_error and started.structured_content["url"] == FORM_URL
        assert json.loads(started.content[0].text) == started.structured_content
        snap = await mcp.call_tool("browser_snapshot", {})
        text, facts = snap.content  # the snapshot first: a client that keeps one block sees the refs
        assert text.text == snap.structured_content["snapshot"] and text.text.startswith("- ")
        assert json.loads(facts.text)["snapshot_id"] == snap.structured_content["snapshot_id"]
        failed = await mcp.call_tool("browser_click", {"ref": "e999"})
        assert failed.is_error and failed.structured_content["type"] == "stale_ref"
        assert json.loads(failed.content[0].text) == failed.structured_content


async def test_run_id_header_delete_and_calls_after_the_run_ended(client, mcp_url):
    async with Client(mcp_url()) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        deleted = await client.delete(f"/runs/{run_id}")
        assert deleted.status == 200
        after = await mcp.call_tool("browser_snapshot", {})
        assert after.is_error and after.structured_content["type"] == "unknown_run"
    posted = await client.post(
        "/mcp?pack=controlled-form",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        headers={"accept": "application/json, text/event-stream"},
    )
    assert posted.status == 200 and posted.headers["Mcp-Run-Id"].startswith("run_")
    session = posted.headers["mcp-session-id"]
    assert (await client.delete("/mcp", headers={"mcp-session-id": session})).status == 200
    trace = parse_trace(await (await client.get(f"/runs/{posted.headers['Mcp-Run-Id']}/trace")).text())
    assert trace.end["reason"] == "mcp_disconnected"


async def test_unknown_tool_is_a_protocol_error_recorded_in_the_trace(client, mcp_url):
    async with Client(mcp_url("")) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        with pytest.raises(MCPError, match="unknown tool 'browser_fly'"):
            await mcp.call_tool("browser_fly", {"to": "moon"})
        wrong_type = await mcp.call_tool("browser_snapshot", {"max_chars": "two hundred"})
        assert wrong_type.is_error and "'max_chars'" in wrong_type.structured_content["message"]
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert trace.header["policy"] == "none"
    assert [(c.tool, c.args, c.error.type) for c in trace.calls] == [
        ("browser_fly", {"to": "moon"}, "unknown_tool"),
        ("browser_snapshot", {"max_chars": "two hundred"}, "invalid_arguments"),
    ]


def messages(exc: BaseException) -> str:
    """Every message inside an exception group (the client's task groups wrap what they raise)."""
    inner = getattr(exc, "exceptions", None)
    return " | ".join(messages(e) for e in inner) if inner else str(exc)


async def test_bad_http_requests_get_clear_errors_and_the_server_stays_up(client, mcp_url):
    with pytest.raises(BaseException) as refused:
        async with Client(mcp_url("pack=no-such-pack")):
            pass
    assert "unknown pack 'no-such-pack'; known packs: " in messages(refused.value)
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    garbage = await client.post("/mcp", data=b"{not json", headers=accept)
    assert garbage.status == 400 and (await garbage.json())["error"]["code"] == -32700
    no_session = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers={**accept, "mcp-session-id": "nope"}
    )
    assert no_session.status == 404
    foreign = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers={**accept, "host": "evil.example"}
    )
    assert foreign.status in (403, 421)
    assert (await client.get("/health")).status == 200


async def test_a_message_of_a_session_that_is_not_json_is_in_its_runs_trace(client):
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    opened = await client.post("/mcp?pack=controlled-form", json=initialize, headers=accept)
    session = accept | {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    assert (await client.post("/mcp", json=initialized, headers=session)).status == 202
    garbage = await client.post("/mcp", data=b'{"jsonrpc": "2.0", "id": 4, "method": "tools/li', headers=session)
    answered = await garbage.json()
    assert garbage.status == 400 and answered["error"]["code"] == -32700
    # The SDK took the last of a repeated key, in silence, and an id of no allowed type for a
    # notification's absence of one: the call never ran and the client waited for ever.
    twice = b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "browser_scroll", '
    twice += b'"arguments": {"direction": "up", "direction": "down"}}}'
    repeated = await client.post("/mcp", data=twice, headers=session)
    assert repeated.status == 400 and (await repeated.json())["id"] == 5
    said = (await repeated.json())["error"]
    assert said["code"] == -32600 and 'the key "direction" is given twice' in said["message"]
    odd = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, headers=session)
    assert odd.status == 400 and (await odd.json())["error"] == {
        "code": -32600,
        "message": "Invalid request: an id must be a string or an integer, not 1.5",
        "data": {"type": "invalid_arguments"},
    }
    batch = await client.post("/mcp", json=[{"jsonrpc": "2.0", "id": 6, "method": "tools/list"}], headers=session)
    assert batch.status == 400 and (await batch.json())["error"] == {  # was a dump of pydantic's errors
        "code": -32600,
        "message": "Invalid request: an array (a JSON-RPC batch) is no message; send one at a time",
        "data": {"type": "invalid_arguments"},
    }
    huge = await client.post("/mcp", data=b" " * (ServerConfig.max_body_bytes + 1), headers=session)
    assert huge.status == 413  # refused before it was read: traced all the same, as over stdio
    run_id = opened.headers["mcp-run-id"]
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    event, *more = [e for e in trace.events if e.kind == "unreadable_message"]
    assert event.data["transport"] == "mcp-http" and event.data["code"] == -32700
    assert event.data["error"] == answered["error"]["message"]  # the error the client was answered
    assert event.data["line"].endswith('"method": "tools/li')
    assert [e.data["code"] for e in more] == [-32600] * 4 and not trace.calls
    assert str(ServerConfig.max_body_bytes) in more[-1].data["error"]
    assert (await client.delete("/mcp", headers=session)).status == 200


async def test_a_shapeless_call_on_a_run_made_over_http_is_traced_as_mcp_http(client):
    # Its event was named after the run's header ("http"), not the transport the message came by.
    run_id = (await (await client.post("/runs", json={"pack": "controlled-form"})).json())["run_id"]
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    opened = await client.post(f"/mcp?run={run_id}", json=initialize, headers=accept)
    session = accept | {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    await client.post("/mcp", json=initialized, headers=session)
    nameless = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {}}}
    assert (await (await client.post("/mcp", json=nameless, headers=session)).json())["error"]["code"] == -32602
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert [e.data["transport"] for e in trace.events if e.kind == "unreadable_message"] == ["mcp-http"]


async def test_a_client_that_disconnects_mid_call_leaves_the_call_in_the_trace(client, sandbox, mcp_url):
    run_ids: list[str] = []

    async def start_and_vanish() -> None:
        async with Client(mcp_url()) as mcp:
            run_ids.append(mcp.session.initialize_result.meta["sandbox/run_id"])
            await mcp.call_tool(
                "browser_start_session",
                {"provider": "kernel", "site_key": "mcp-gone", "clear_cookies": False, "url": FORM_URL},
            )

    vanishing = asyncio.ensure_future(start_and_vanish())
    while not run_ids or sandbox.runs[run_ids[0]].current is None:  # until the call is in the dispatcher
        await asyncio.sleep(0.01)
    vanishing.cancel()
    with pytest.raises(BaseException):  # noqa: B017 (cancelled, or cut off with the connection)
        await vanishing
    for _ in range(300):  # the call goes on in the server and is traced when it ends
        trace = parse_trace(await (await client.get(f"/runs/{run_ids[0]}/trace")).text())
        if trace.calls:
            break
        await asyncio.sleep(0.05)
    # The connection's end ends its run, which closes the browser context under the call in
    # flight: the call is traced, finished either way, with a clear error when it was cut short.
    (call,) = trace.calls
    assert call.tool == "browser_start_session"
    assert call.ok or call.error.type == "unknown_run", call.error
    assert (await client.get("/health")).status == 200


# --- stdio ---------------------------------------------------------------------------------
async def test_stdio_run_matches_http_and_ends_when_the_client_leaves(client, tmp_path):
    http_trace = await http_form_trace(client, "stdio-same-http")
    params = StdioServerParameters(
        command=SANDBOX_CLI, args=["mcp", "--pack", "controlled-form", "--trace-dir", str(tmp_path)]
    )
    async with Client(params) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        assert [t.name for t in (await mcp.list_tools()).tools] == list(TOOL_NAMES)
        await form_workflow(mcp_caller(mcp), "stdio-same-mcp")
    trace_path = tmp_path / f"{run_id}.jsonl"
    trace = read_trace(trace_path)
    assert trace.header["transport"] == "mcp-stdio" and trace.end["reason"] == "mcp_disconnected"
    assert comparable(trace_path.read_text(), "stdio-same-mcp") == comparable(http_trace, "stdio-same-http")


async def test_stdio_takes_a_pack_folder_path_with_its_policy_and_prompt(tmp_path):
    folder = shutil.copytree(PACKS_DIR / "controlled-form", tmp_path / "my-form")
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, "pack_id": "my-form", "scoring_pack": "my-form"}))
    with (folder / "task_prompt.md").open("a") as prompt:
        prompt.write("\nThis line is the folder's own.\n")
    params = StdioServerParameters(
        command=SANDBOX_CLI, args=["mcp", "--pack", str(folder), "--trace-dir", str(tmp_path)]
    )
    async with Client(params) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        assert "This line is the folder's own." in (await mcp.get_prompt("task")).messages[0].content.text
        start = {"provider": "kernel", "site_key": "folder-pack", "clear_cookies": False, "url": FORM_URL}
        assert mcp_reply(await mcp.call_tool("browser_start_session", start))["ok"]
        refused = mcp_reply(await mcp.call_tool("browser_navigate", {"url": "https://example.com/"}))
    assert refused["error"]["type"] == "policy_violation", refused
    assert read_trace(tmp_path / f"{run_id}.jsonl").header["pack"] == "my-form"


async def test_stdio_bad_messages_keep_the_server_up_and_stdin_close_exits_zero(tmp_path):
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI,
        "mcp",
        "--trace-dir",
        str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )

    async def send(message) -> None:
        process.stdin.write((message if isinstance(message, str) else json.dumps(message)).encode() + b"\n")
        await process.stdin.drain()

    async def answer() -> dict:
        return json.loads(await asyncio.wait_for(process.stdout.readline(), 60))

    await send({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "browser_snapshot"}})
    early = await answer()
    assert early["error"] == {"code": -32600, "message": "tools/call before initialize: send initialize first"}
    for method in ("sandbox/nope", "resources/list"):  # not served: -32601 before the handshake too (clients probe)
        await send({"jsonrpc": "2.0", "id": 3, "method": method})
        unknown = await answer()
        assert unknown["id"] == 3 and unknown["error"]["code"] == -32601, unknown
    await send({"jsonrpc": "2.0", "id": 11, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})
    failed = await answer()  # its run ends (initialize_failed); the connection may initialize again
    assert failed["id"] == 11 and failed["error"]["code"] == -32602, failed
    await send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
    )
    initialized = await answer()
    assert "result" in initialized, initialized
    run_id = initialized["result"]["_meta"]["sandbox/run_id"]
    assert read_trace(tmp_path / f"{run_id}.jsonl").header["transport"] == "mcp-stdio"
    (failed_run,) = [path for path in tmp_path.glob("*.jsonl") if path.stem != run_id]
    assert read_trace(failed_run).end["reason"] == "initialize_failed"
    await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    again = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    await send({"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": again})
    refused_again = await answer()  # a second run would leave the first's sessions open, out of reach
    assert refused_again["error"]["code"] == -32600 and f"initialized already (run {run_id})" in str(refused_again)
    await send("{this is not json")  # a parse error, with no id (none can be read)
    not_json = await answer()
    assert not_json["id"] is None and not_json["error"]["code"] == -32700, not_json
    assert not_json["error"]["message"].startswith("Parse error: Invalid JSON")
    process.stdin.write(b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"x": "\xff"}}\n')
    not_utf8 = await answer()  # never read with the byte replaced: refused
    said = {"code": -32700, "message": "Parse error: not UTF-8: byte 0xff at 63", "data": {"type": "invalid_encoding"}}
    assert not_utf8["error"] == said, not_utf8
    await send({"jsonrpc": "2.0", "id": 9, "method": 5})  # JSON, not JSON-RPC: an invalid request, with its id
    assert (await answer()) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {
            "code": -32600,
            "message": "Invalid request: not a JSON-RPC 2.0 request, notification or response",
            "data": {"type": "invalid_arguments"},
        },
    }
    await send([1, 2])  # JSON of no message's shape: its start is traced all the same
    assert (await answer())["error"]["code"] == -32600
    await send(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "browser_snapshot", "arguments": [1]}}
    )
    listed = (await answer())["result"]  # arguments not an object: refused and traced, as over HTTP
    assert listed["isError"] and listed["structuredContent"] == {
        "type": "invalid_arguments",
        "message": "browser_snapshot: arguments must be a JSON object, got list",
    }
    await send({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"arguments": {}}})
    assert (await answer())["error"] == {"code": -32602, "message": "tools/call: params.name: Field required"}
    await send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "browser_start_session", "arguments": {"provider": "kernel", "clear_cookies": "false"}},
        }
    )
    refused = (await answer())["result"]
    assert refused["isError"] is True and refused["structuredContent"]["type"] == "invalid_arguments"
    await send({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"})
    assert (await answer())["error"]["code"] == -32601
    for size in (ServerConfig.max_body_bytes + 10, 3 * ServerConfig.max_body_bytes):  # too long: refused, skipped
        await send("x" * size)
        too_long = await answer()
        assert too_long["id"] is None and too_long["error"]["code"] == -32600, too_long  # as over HTTP (413)
        assert too_long["error"]["data"] == {"type": "body_too_large"}
        assert str(ServerConfig.max_body_bytes) in too_long["error"]["message"]
    twice = '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "browser_scroll", '
    await send(twice + '"arguments": {"direction": "up", "direction": "down"}}}')
    repeated = await answer()  # the SDK took the last value, and the trace had only it
    assert repeated["id"] == 12 and repeated["error"]["code"] == -32600, repeated
    assert 'the key "direction" is given twice' in repeated["error"]["message"]
    await send({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "x\ud800"}})
    surrogate = await answer()  # the SDK's parse error named no id: the request was never answered
    assert surrogate["id"] == 13 and "lone UTF-16 surrogate" in surrogate["error"]["message"], surrogate
    deep = '{"jsonrpc": "2.0", "id": 14, "method": "ping", "params": {"_meta": ' + '{"a": ' * 450 + "1"
    await send(deep + "}" * 452)  # looked for surrogates in, it ended the server (RecursionError)
    too_deep = await answer()  # refused past max_json_depth, as over HTTP (was the SDK's parse error)
    assert too_deep["id"] == 14 and too_deep["error"] == {
        "code": -32600,
        "message": f"Invalid request: nested deeper than {ServerConfig.max_json_depth} levels",
        "data": {"type": "malformed_json"},
    }
    for odd in (1.5, True, None, {"k": 1}):  # read as a notification: never run, never answered
        await send({"jsonrpc": "2.0", "id": odd, "method": "tools/list"})
        refused = await answer()
        assert refused["id"] is None and refused["error"]["code"] == -32600, refused
        assert refused["error"]["message"].startswith("Invalid request: an id must be a string or an integer")
    await send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert len((await answer())["result"]["tools"]) == len(TOOL_NAMES)
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 60) == 0
    assert await process.stdout.read() == b""  # nothing but MCP messages on stdout
    trace = read_trace(tmp_path / f"{run_id}.jsonl")
    assert trace.header["transport"] == "mcp-stdio" and trace.end["reason"] == "mcp_disconnected"
    assert [(c.tool, c.error.type) for c in trace.calls] == [
        ("browser_snapshot", "invalid_arguments"),
        ("browser_start_session", "invalid_arguments"),
    ]
    unreadable = [
        (e.data["code"], e.data["error"][:25], e.data["line"][:20])
        for e in trace.events
        if e.kind == "unreadable_message"
    ]
    assert {e.data["transport"] for e in trace.events if e.kind == "unreadable_message"} == {"mcp-stdio"}
    assert unreadable == [  # the lines after initialize (before it, there is no run); a second initialize is read
        (-32700, "Parse error: Invalid JSON", "{this is not json"),
        (-32700, "Parse error: not UTF-8: b", '{"jsonrpc": "2.0", "'),
        (-32600, "Invalid request: not a JS", '{"jsonrpc": "2.0", "'),
        (-32600, "Invalid request: an array", "[1, 2]"),
        (-32602, "tools/call: params.name: ", '{"arguments": {}}'),
        (-32600, "the message is larger tha", "x" * 20),
        (-32600, "the message is larger tha", "x" * 20),
        (-32600, "Invalid request: the key ", '{"jsonrpc": "2.0", "'),
        (-32600, "Invalid request: a string", '{"jsonrpc": "2.0", "'),
        (-32600, "Invalid request: nested d", '{"jsonrpc": "2.0", "'),
        *[(-32600, "Invalid request: an id mu", '{"jsonrpc": "2.0", "')] * 4,
    ]


def test_stdio_a_client_that_vanishes_mid_call_leaves_exit_zero_and_no_traceback(tmp_path):
    """The client closes both its pipes while a navigation runs: the answer due has nowhere to go.
    The server used to end with a ConnectionResetError traceback and exit 1."""
    start = {"name": "browser_start_session", "arguments": {"provider": "kernel", "url": FORM_URL}}
    navigate = {"name": "browser_navigate", "arguments": {"url": FORM_URL}}
    stderr = (tmp_path / "stderr.txt").open("wb")
    process = subprocess.Popen(
        [SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(handshake_then({"method": "tools/call", "params": start}))
    process.stdin.flush()
    for _ in range(2):  # the initialize answer, then the start's
        assert process.stdout.readline()
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": navigate}).encode())
    process.stdin.write(b"\n")
    process.stdin.flush()
    time.sleep(0.02)  # the navigation is under way
    process.stdin.close()
    process.stdout.close()
    assert process.wait(60) == 0
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    (trace_file,) = tmp_path.glob("run_*.jsonl")
    trace = read_trace(trace_file)
    assert [c.tool for c in trace.calls] == ["browser_start_session", "browser_navigate"]
    assert trace.end["reason"] == "mcp_disconnected"


async def served_from_a_file(tmp_path, *requests: dict) -> tuple[int, list[dict]]:
    """`sandbox mcp` reading the handshake and ``requests`` from a file, so stdin ends at once:
    its exit status and its answers."""
    (tmp_path / "requests.jsonl").write_bytes(handshake_then(*requests))
    with (tmp_path / "requests.jsonl").open("rb") as stdin:
        process = await asyncio.create_subprocess_exec(
            SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path), stdin=stdin, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode, [json.loads(line) for line in out.splitlines()]


async def test_stdio_a_client_that_lists_the_tools_and_leaves_has_its_run_end_while_the_browser_starts(tmp_path):
    """The run ended only once the browser had started: a client that closes stdin kills the
    server a few seconds later (the TypeScript SDK: 4 s), and a cold start took longer, so the
    trace had no run_end. A Chromium that takes 10 s to start stands for a cold one here."""
    slow = tmp_path / "slow-chromium"
    slow.write_text(f'#!/bin/sh\nsleep 10\nexec {shlex.quote(resolve_chromium(None, None))} "$@"\n')
    slow.chmod(0o755)
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "SANDBOX_CHROMIUM": str(slow)},
    )  # fmt: skip
    process.stdin.write(handshake_then({"method": "tools/list"}))
    await process.stdin.drain()
    for _ in range(2):  # initialize, then the tools: answered while the browser starts
        assert "result" in json.loads(await asyncio.wait_for(process.stdout.readline(), 30))
    process.stdin.close()
    began = time.monotonic()
    while time.monotonic() - began < 3 and not any("run_end" in p.read_text() for p in tmp_path.glob("*.jsonl")):
        await asyncio.sleep(0.1)
    ended_after = time.monotonic() - began
    assert await asyncio.wait_for(process.wait(), 60) == 0
    (trace,) = [read_trace(path) for path in tmp_path.glob("*.jsonl")]
    assert ended_after < 3 and trace.end["reason"] == "mcp_disconnected", ended_after


async def test_stdio_from_a_file_is_served_too(tmp_path):
    """Requests in a file (not a pipe, which the server reads on its event loop): the SDK's own
    streams serve them."""
    _, answers = await served_from_a_file(tmp_path, {"method": "tools/list"})
    assert [a["id"] for a in answers] == [1, 2], answers
    assert "serverInfo" in answers[0]["result"] and len(answers[1]["result"]["tools"]) == len(TOOL_NAMES)


async def test_stdio_calls_from_a_file_are_all_answered_before_the_end_of_stdin_ends_the_run(tmp_path):
    """The file ends at once, while the browser is still starting: the end of stdin waits for
    every call read to be answered (the SDK alone answers them -32000 "Connection closed")."""
    start = {"name": "browser_start_session", "arguments": {"provider": "kernel", "url": FORM_URL}}
    snapshot = {"name": "browser_snapshot", "arguments": {}}
    status, answers = await served_from_a_file(
        tmp_path, {"method": "tools/call", "params": start}, {"method": "tools/call", "params": snapshot}
    )
    assert status == 0
    assert sorted(a["id"] for a in answers) == [1, 2, 3], answers
    started, snapped = sorted(answers[1:], key=lambda a: a["id"])
    assert started["result"]["isError"] is False, started
    assert "(Step 1 of 3)" in snapped["result"]["content"][0]["text"], snapped
    trace = read_trace(tmp_path / f"{answers[0]['result']['_meta']['sandbox/run_id']}.jsonl")
    assert [(c.tool, c.ok) for c in trace.calls] == [("browser_start_session", True), ("browser_snapshot", True)]
    assert trace.end["reason"] == "mcp_disconnected"


async def test_stdio_sigterm_ends_the_run_with_the_call_in_flight_traced(tmp_path):
    """SIGTERM (what a client sends when the server does not exit after stdin closes) stops the
    server as ``sandbox serve`` stops: the call in flight is answered and traced, the run ends."""
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path), "--faults", "mirror-delay:ms=30000",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    start = {"name": "browser_start_session", "arguments": {"provider": "kernel"}}
    navigate = {"name": "browser_navigate", "arguments": {"url": FORM_URL}}  # its page is 30 s late
    process.stdin.write(handshake_then({"method": "tools/call", "params": start}))
    await process.stdin.drain()
    run_id = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))["result"]["_meta"]["sandbox/run_id"]
    assert json.loads(await asyncio.wait_for(process.stdout.readline(), 60))["id"] == 2
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": navigate}).encode())
    process.stdin.write(b"\n")
    await process.stdin.drain()
    trace_path = tmp_path / f"{run_id}.jsonl"
    while '"fault_injected"' not in trace_path.read_text():  # the navigation waits for its page
        await asyncio.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 60) == 0
    assert json.loads(await process.stdout.readline())["error"]["message"] == "Connection closed"
    trace = read_trace(trace_path)
    assert [(c.tool, c.ok) for c in trace.calls] == [("browser_start_session", True), ("browser_navigate", False)]
    assert trace.calls[1].error.type == "unknown_run" and trace.end["reason"] == "server_stopped"


async def test_stdio_a_browser_that_cannot_start_is_each_calls_traced_error(tmp_path):
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "SANDBOX_CHROMIUM": "/bin/false"},  # a "browser" that exits at once
    )  # fmt: skip
    snapshot = {"name": "browser_snapshot", "arguments": {}}
    process.stdin.write(handshake_then({"method": "tools/call", "params": snapshot}))
    run_id = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))["result"]["_meta"]["sandbox/run_id"]
    refused = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))["result"]
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 60) == 0
    error = refused["structuredContent"]
    assert refused["isError"] and error["type"] == "provider_unavailable"
    assert error["message"].startswith("Chromium (/bin/false) did not start: BrowserType.launch: ")
    assert "\n" not in error["message"]
    assert "ERROR toolserver.transports.mcp: the browser could not start" in (await process.stderr.read()).decode()
    (call,) = read_trace(tmp_path / f"{run_id}.jsonl").calls
    assert (call.tool, call.error.type) == ("browser_snapshot", "provider_unavailable")


async def test_a_stateless_client_is_refused_with_the_versions_served(mcp_url):
    with pytest.raises(BaseException) as refused:
        async with Client(mcp_url(), mode="2026-07-28") as mcp:
            await mcp.list_tools()
    assert "initialize handshake" in messages(refused.value) and "2025-11-25" in repr(refused.value)


async def test_joining_a_run_by_id_leaves_it_open_when_the_session_ends(client, mcp_url):
    run = await (await client.post("/runs", json={"pack": "controlled-form"})).json()
    async with Client(mcp_url(f"run={run['run_id']}")) as mcp:
        assert mcp.session.initialize_result.meta["sandbox/run_id"] == run["run_id"]
        assert (await mcp.call_tool("browser_snapshot", {})).structured_content["type"] == "no_session"
    reply = await (await client.post(f"/runs/{run['run_id']}/tools/browser_snapshot", json={})).json()
    assert reply["error"]["type"] == "no_session"  # the run is still open after the MCP session ended
    trace = parse_trace(await (await client.get(f"/runs/{run['run_id']}/trace")).text())
    assert [c.tool for c in trace.calls] == ["browser_snapshot", "browser_snapshot"] and trace.end is None
    with pytest.raises(BaseException) as refused:
        async with Client(mcp_url("run=run_nope")):
            pass
    assert "no run 'run_nope'" in messages(refused.value)


async def test_an_idle_http_session_ends_its_run_and_a_busy_one_does_not(own_sandbox):
    """A client that stops sending (its process died, no DELETE): the session ends its run
    once it has had no request in flight for ``mcp_session_idle_s``, not while it is busy.
    (An open GET event stream counts as in flight, as in the SDK.)"""
    accept = {"accept": "application/json, text/event-stream"}
    async with own_sandbox(mcp_session_idle_s=1.0) as own, http_client(own) as server:

        async def rpc(method: str, params: dict, headers: dict, id: int | None = 1):
            message = {"jsonrpc": "2.0", "method": method, "params": params} | ({"id": id} if id else {})
            return await server.post("/mcp?pack=controlled-form", json=message, headers=accept | headers)

        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        opened = await rpc("initialize", hello, {})
        run_id, session = opened.headers["Mcp-Run-Id"], {"mcp-session-id": opened.headers["mcp-session-id"]}
        assert (await rpc("notifications/initialized", {}, session, id=None)).status == 202
        for _ in range(5):  # calls 0.3 s apart: never idle for 1 s
            called = await rpc("tools/call", {"name": "browser_snapshot", "arguments": {}}, session)
            assert called.status == 200 and called.headers["Mcp-Run-Id"] == run_id
            await asyncio.sleep(0.3)
        assert not own.runs[run_id].closed
        await asyncio.sleep(2.5)
        assert own.runs[run_id].closed
        trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
        assert trace.end["reason"] == "mcp_idle_timeout" and len(trace.calls) == 5
        late = await rpc("tools/call", {"name": "browser_snapshot", "arguments": {}}, session)
        assert late.status == 404  # the SDK reaped the session at the same age


async def test_stdio_an_unreadable_line_on_a_full_disk_is_answered_and_the_server_goes_on(tmp_path):
    """Its trace line could not be written: the OSError ended the server's reading of stdin, and
    the line was never answered."""
    with small_disk(tmp_path / "disk") as disk:
        process = await asyncio.create_subprocess_exec(
            SANDBOX_CLI, "mcp", "--trace-dir", str(disk), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        process.stdin.write(handshake_then())
        assert "result" in json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        filler = fill(disk)
        for _ in range(20):  # more lines than the trace file's last page still holds
            process.stdin.write(b"{this is not json" + b" x" * 150 + b"\n")
            not_json = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
            assert not_json["error"]["code"] == -32700, not_json
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}\n')
        assert len(json.loads(await asyncio.wait_for(process.stdout.readline(), 60))["result"]["tools"]) > 0
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
        filler.unlink()


async def test_an_mcp_sessions_run_busy_over_http_is_not_swept_as_idle(own_sandbox):
    """The MCP sweep counted only the session's own requests: a call on its run over the HTTP API
    was cut off (unknown_run, run_end mcp_idle_timeout) once the session had been quiet long enough."""
    from toolserver.faults import parse_faults

    idle = own_sandbox(mcp_session_idle_s=0.5, faults=parse_faults("mirror-delay:ms=1500"))
    async with idle as own, http_client(own) as server:
        accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        initialize, initialized = map(json.loads, handshake_then().splitlines())
        opened = await server.post("/mcp?pack=controlled-form", json=initialize, headers=accept)
        run_id = opened.headers["mcp-run-id"]
        start = {"provider": "kernel", "url": FORM_URL}
        started = await server.post(f"/runs/{run_id}/tools/browser_start_session", json=start)  # 1.5 s
        assert (await started.json())["ok"], await started.text()
        assert not own.runs[run_id].closed
        await asyncio.sleep(1.0)  # now quiet: swept
        assert own.runs[run_id].closed


async def test_a_server_stops_at_once_with_an_event_stream_held_open(tmp_path):
    """aiohttp waited for the stream's handler to end: a client holding GET /mcp open kept a
    stopping `sandbox serve` up for 122 s (60 s with `sandbox mcp --attach`)."""
    import aiohttp
    from aiohttp import web

    from tests.support.serve import free_port
    from toolserver.transports.http import create_app

    runner = web.AppRunner(create_app(ServerConfig(mirror_roots=(MIRRORS_DIR,), trace_dir=tmp_path)))
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    async with aiohttp.ClientSession() as http:
        opened = await http.post(f"http://127.0.0.1:{port}/mcp", json=initialize, headers=accept)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post(f"http://127.0.0.1:{port}/mcp", json=initialized, headers=accept | session)
        stream = await http.get(f"http://127.0.0.1:{port}/mcp", headers={"accept": "text/event-stream"} | session)
        assert stream.status == 200
        await asyncio.wait_for(runner.cleanup(), 30)  # within the shutdown's own bounds, not the client's will


async def test_a_notification_racing_the_sessions_delete_is_no_server_fault(client):
    """The SDK answered such a notification twice (202, then an error): the second answer was written
    into the first, unprepared one, a 500 server_fault with a traceback, in 10 rounds of 60."""
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
    statuses = []
    for round_ in range(60):
        opened = await client.post("/mcp?pack=controlled-form", json=initialize, headers=accept)
        session = accept | {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await client.post("/mcp", json=initialized, headers=session)

        async def delete(after: float, session: dict = session):
            await asyncio.sleep(after)
            return await client.delete("/mcp", headers=session)

        replies = await asyncio.gather(
            client.post("/mcp", json=cancelled, headers=session), delete(0.0005 * (round_ % 6))
        )
        statuses += [reply.status for reply in replies]
    assert 500 not in statuses, statuses
