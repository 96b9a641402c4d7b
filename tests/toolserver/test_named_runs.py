"""Named runs: clients that open a connection (or start a server process) per tool call keep one
run, one browser and one trace — over the HTTP API, over ``/mcp?name=`` and over stdio with
``sandbox mcp --attach``; the run still ends (explicitly, or when idle) and never leaks."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.support.calls import handshake_then, ref_of
from tests.support.polling import until
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace
from toolserver.faults import parse_faults
from toolserver.transports.guards import SANDBOX
from toolserver.transports.http import MCP_SESSIONS

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"
SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
START = {"provider": "kernel", "site_key": "named-run", "clear_cookies": False, "url": FORM_URL}


async def test_the_http_api_joins_a_live_run_by_name_and_refuses_a_clash(client):
    first = await client.post("/runs", json={"pack": "controlled-form", "name": "agent-1"})
    one = await first.json()
    same = {"pack": "controlled-form", "name": "agent-1", "site_key": one["site_key"], "policy": "enforce"}
    again = await client.post("/runs", json=same)
    assert (first.status, again.status) == (201, 200)
    two = await again.json()
    assert one["run_id"] == two["run_id"] and two["name"] == "agent-1" and two["site_key"] == one["site_key"]
    for other, says in [  # a joiner asking for another run plan is refused, not silently given the first's
        ({"pack": "bid-intake"}, "is a run of pack 'controlled-form', not 'bid-intake'"),
        ({"pack": None}, "is a run of pack 'controlled-form', not no pack"),
        ({"site_key": "other"}, "is a run of another site key than 'other'"),
        ({"policy": "observe"}, "is a run of policy 'enforce', not 'observe'"),
        ({"block_state_changes": True}, "is a run of block_state_changes false, not true"),
    ]:
        clash = await client.post("/runs", json={**same, **other})
        error = (await clash.json())["error"]
        assert clash.status == 409 and error["type"] == "run_name_taken" and one["run_id"] in error["message"]
        assert says in error["message"], error
    for bad in ("", "-x", "a b", "x" * 65):
        refused = await client.post("/runs", json={"pack": "controlled-form", "name": bad})
        assert refused.status == 400 and (await refused.json())["error"]["type"] == "invalid_run_name", bad
    assert (await client.delete(f"/runs/{one['run_id']}")).status == 200
    fresh = await client.post("/runs", json={"pack": "controlled-form", "name": "agent-1"})
    assert fresh.status == 201 and (await fresh.json())["run_id"] != one["run_id"]  # an ended run is not joined
    trace = parse_trace(await (await client.get(f"/runs/{one['run_id']}/trace")).text())
    assert trace.header["name"] == "agent-1" and trace.end["reason"] == "deleted"


async def test_a_session_per_call_over_mcp_http_keeps_one_run_and_one_trace(client):
    url = str(client.make_url("/mcp?pack=controlled-form&name=per-call"))
    runs = set()

    async def call(name: str, args: dict):  # as LangChain's get_tools() does: a new session for each call
        async with Client(url) as mcp:
            runs.add(mcp.session.initialize_result.meta["sandbox/run_id"])
            return await mcp.call_tool(name, args)

    assert not (await call("browser_start_session", START)).is_error
    snapshot = (await call("browser_snapshot", {})).structured_content["snapshot"]
    clicked = await call("browser_click", {"ref": ref_of(snapshot, 'textbox "Name"'), "target": None})
    assert not clicked.is_error, clicked.structured_content
    (run_id,) = runs
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert [c.tool for c in trace.calls] == ["browser_start_session", "browser_snapshot", "browser_click"]
    assert trace.end is None  # the sessions were deleted; the named run goes on
    assert (await client.delete(f"/runs/{run_id}")).status == 200


async def test_an_idle_named_run_ends_and_a_busy_one_does_not(own_sandbox):
    # Seconds: a new MCP session's end and start between two calls take tenths on a busy machine.
    async with own_sandbox(named_run_idle_s=3.0) as own, http_client(own) as server:
        url = str(server.make_url("/mcp?pack=controlled-form&name=idle"))
        for _ in range(4):  # calls from new sessions 0.3 s apart: never idle for 3 s
            async with Client(url) as mcp:
                run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
                await mcp.call_tool("browser_snapshot", {})
            await asyncio.sleep(0.3)
        assert not own.runs[run_id].closed and len(own.runs) == 1
        await until(lambda: own.runs[run_id].closed, 15, step=0.1)
        assert own.runs[run_id].closed and own.named_run("idle") is None
        trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
        assert trace.end["reason"] == "idle_timeout" and len(trace.calls) == 4


async def test_a_stdio_process_per_call_attached_to_a_server_keeps_one_run(client):
    server = str(client.make_url("")).rstrip("/")
    args = ["mcp", "--attach", server, "--name", "stdio-per-call", "--pack", "controlled-form"]
    runs = set()

    async def call(name: str, arguments: dict):  # a new `sandbox mcp` process for each call
        async with Client(StdioServerParameters(command=SANDBOX_CLI, args=args)) as mcp:
            runs.add(mcp.session.initialize_result.meta["sandbox/run_id"])
            if name == "list":
                return await mcp.list_tools()
            return await mcp.call_tool(name, arguments)

    assert len((await call("list", {})).tools) == 11
    assert not (await call("browser_start_session", START)).is_error
    snapshot = await call("browser_snapshot", {})
    text, _facts = snapshot.content  # passed through as /mcp answers: the snapshot text first
    assert text.text == snapshot.structured_content["snapshot"]
    stale = await call("browser_click", {"ref": "e9999"})
    assert stale.is_error and stale.structured_content["type"] == "stale_ref"
    (run_id,) = runs
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert [c.tool for c in trace.calls] == ["browser_start_session", "browser_snapshot", "browser_click"]
    assert trace.header["transport"] == "mcp-http" and trace.header["name"] == "stdio-per-call"
    assert (await client.delete(f"/runs/{run_id}")).status == 200


async def test_an_attached_process_answers_every_call_of_a_file_before_it_exits(client, tmp_path):
    """Calls written to a file end stdin at once: each is relayed and answered all the same."""
    server = str(client.make_url("")).rstrip("/")
    start = {"name": "browser_start_session", "arguments": START}
    snapshot = {"name": "browser_snapshot", "arguments": {}}
    calls = handshake_then({"method": "tools/call", "params": start}, {"method": "tools/call", "params": snapshot})
    (tmp_path / "calls.jsonl").write_bytes(calls)
    with (tmp_path / "calls.jsonl").open("rb") as stdin:
        process = await asyncio.create_subprocess_exec(
            SANDBOX_CLI, "mcp", "--attach", server, "--name", "from-a-file", "--pack", "controlled-form",
            stdin=stdin, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    answers = {a["id"]: a for a in map(json.loads, out.splitlines())}
    assert sorted(answers) == [1, 2, 3] and not answers[3]["result"]["isError"], answers
    run_id = answers[1]["result"]["_meta"]["sandbox/run_id"]
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert [(c.tool, c.ok) for c in trace.calls] == [("browser_start_session", True), ("browser_snapshot", True)]
    assert (await client.delete(f"/runs/{run_id}")).status == 200


async def attached(server: str, name: str, *calls: dict) -> asyncio.subprocess.Process:
    """A `sandbox mcp --attach` process on a pipe, the handshake and ``calls`` written to it."""
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "mcp", "--attach", server, "--name", name, "--pack", "controlled-form",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    process.stdin.write(handshake_then(*({"method": "tools/call", "params": call} for call in calls)))
    await process.stdin.drain()
    return process


async def test_an_attached_call_longer_than_five_seconds_is_answered(own_sandbox):
    """httpx's default timeout (5 s) cut such a call off, and the attached process never answered it."""
    async with own_sandbox(faults=parse_faults("mirror-delay:ms=6000")) as own, http_client(own) as server:
        start = {"name": "browser_start_session", "arguments": START}  # its page is 6 s late
        process = await attached(str(server.make_url("")).rstrip("/"), "slow", start)
        began = time.monotonic()
        lines = [await asyncio.wait_for(process.stdout.readline(), 60) for _ in range(2)]
        took = time.monotonic() - began
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), 60) == 0
    started = json.loads(lines[1])
    assert started["id"] == 2 and not started["result"]["isError"], started
    assert started["result"]["structuredContent"]["status"] == 200 and took > 6, (started, took)


async def test_sigterm_ends_an_attached_process_and_its_connection_not_the_run(client):
    """As a closed stdin does: exit 0, the MCP session deleted on the server, the run goes on."""
    server = str(client.make_url("")).rstrip("/")
    process = await attached(server, "terminated", {"name": "browser_start_session", "arguments": START})
    opened = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
    assert json.loads(await asyncio.wait_for(process.stdout.readline(), 60))["id"] == 2
    run_id = opened["result"]["_meta"]["sandbox/run_id"]
    sessions = client.server.app[MCP_SESSIONS].sessions  # the server's, other tests' included

    def of_the_run() -> list[str]:
        return [session for session, binding in sessions.items() if binding.run.id == run_id]

    assert len(of_the_run()) == 1
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 60) == 0
    assert "SIGTERM: stopping" in (await process.stderr.read()).decode()
    assert of_the_run() == []  # deleted as the process ended, not left for the idle sweep
    assert not client.server.app[SANDBOX].runs[run_id].closed
    assert (await client.delete(f"/runs/{run_id}")).status == 200


async def test_an_event_stream_has_its_headers_before_its_first_event(client):
    """The standalone GET stream's first event is a ping 15 s away: its headers come at once."""
    url, accept = "/mcp?pack=controlled-form", {"Accept": "application/json, text/event-stream"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    opened = await client.post(url, json=initialize, headers=accept)
    session = {"Mcp-Session-Id": opened.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-06-18"}
    assert (await client.post(url, json=initialized, headers=accept | session)).status == 202
    async with asyncio.timeout(5):
        stream = await client.get(url, headers={"Accept": "text/event-stream"} | session)
    assert stream.status == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
    stream.close()
    run_id = opened.headers["Mcp-Run-Id"]
    assert (await client.delete(url, headers=session)).status == 200
    assert client.server.app[SANDBOX].runs[run_id].closed


async def run_cli(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, *args, stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    _, err = await asyncio.wait_for(process.communicate(b""), 60)
    return process.returncode or 0, err.decode()


async def test_attach_errors_are_clear_and_exit_2_or_3(client):
    code, err = await run_cli("mcp", "--attach", "http://127.0.0.1:9")
    assert code == 2 and "--attach needs --name" in err
    code, err = await run_cli("mcp", "--attach", "http://127.0.0.1:9", "--name", "x", "--approvals")
    assert code == 2 and "--approvals belongs to the server" in err
    code, err = await run_cli("mcp", "--name", "x")
    assert code == 2 and "go with --attach" in err
    code, err = await run_cli("mcp", "--attach", "http://127.0.0.1:9", "--name", "x")
    assert code == 3 and "cannot reach the sandbox server at http://127.0.0.1:9" in err
    server = str(client.make_url("")).rstrip("/")  # the server's own refusal, not the client's wrapping of it
    code, err = await run_cli("mcp", "--attach", server, "--name", "x", "--pack", "no-such-pack")
    assert code == 3 and "refused run 'x': unknown pack 'no-such-pack'; known packs: " in err, err


class Relay:
    """A loopback TCP relay to the server; ``cut`` drops every connection, as a server killed mid-call would."""

    def __init__(self, port: int) -> None:
        self.port, self.writers = port, []

    async def __aenter__(self) -> str:
        self.listener = await asyncio.start_server(self.relay, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.listener.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self.listener.close()
        self.cut()

    async def relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writers += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                sink.write(data)
            sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True)

    def cut(self) -> None:
        for writer in self.writers:
            writer.transport.abort()


async def test_a_call_pending_when_the_server_goes_is_answered(own_sandbox):
    """The attached process's stdout closed first, and the client never got an answer to its call."""
    async with own_sandbox(faults=parse_faults("mirror-delay:ms=6000")) as own, http_client(own) as server:
        async with Relay(server.port) as relayed:
            start = {"name": "browser_start_session", "arguments": START}  # its page is 6 s late
            process = await attached(relayed, "server-goes", start)
            assert "result" in json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
            await asyncio.sleep(1)  # the call is under way
        answer = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        assert await asyncio.wait_for(process.wait(), 60) == 3
    assert answer["id"] == 2 and answer["error"]["message"] == "Connection closed", answer
    assert f"the sandbox server at {relayed} went away: " in (await process.stderr.read()).decode()


async def test_joining_a_named_run_as_it_is_deleted_says_the_run_ended(client):
    """The join's 200 went out without its session bound to the run: every call then said
    "tools/call before initialize: send initialize first", to a client that had initialized."""
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "browser_snapshot", "arguments": {}}}
    said = set()
    for round_ in range(30):
        name = f"race-{round_}"
        run_id = (await (await client.post("/runs", json={"pack": "controlled-form", "name": name})).json())["run_id"]
        joined, _ = await asyncio.gather(
            client.post(f"/mcp?pack=controlled-form&name={name}", json=initialize, headers=accept),
            client.delete(f"/runs/{run_id}"),
        )
        if joined.status != 200:
            continue  # refused outright: a clean answer
        session = accept | {"mcp-session-id": joined.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await client.post("/mcp", json=initialized, headers=session)
        reply = await (await client.post("/mcp", json=call, headers=session)).json()
        said.add(json.dumps(reply.get("error") or reply["result"]["structuredContent"])[:120])  # what it is told
        await client.delete("/mcp", headers=session)
    assert not [s for s in said if "before initialize" in s], said
