"""A server whose trace directory fills up (issue 30, item 12), on a real small file system: a
call whose line cannot be written is answered with an error (HTTP ``server_fault``, over MCP a
JSON-RPC internal error, never code 0), the server stays up, and the run's trace is valid JSONL
while the disk is full and after space returns."""

from __future__ import annotations

import json

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.calls import handshake_then
from tests.support.disks import fill, small_disk
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace

LONG = "x" * 9000  # an argument kept in the call's line: longer than what fits in a page's tail


async def whole_trace(server, run_id: str):
    trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
    assert trace.problems == []
    return trace


async def test_a_call_on_a_full_disk_is_answered_and_the_trace_stays_whole(own_sandbox, tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        async with own_sandbox(trace_dir=disk) as own, http_client(own) as server:
            run_id = (await (await server.post("/runs", json={})).json())["run_id"]
            first = await server.post(f"/runs/{run_id}/tools/browser_snapshot", json={})
            assert (await first.json())["error"]["type"] == "no_session"
            filler = fill(disk)
            refused = await server.post(f"/runs/{run_id}/tools/browser_snapshot", json={"max_chars": LONG})
            error = (await refused.json())["error"]
            assert refused.status == 500 and error["type"] == "server_fault"
            assert [c.seq for c in (await whole_trace(server, run_id)).calls] == [1]
            assert "trace line not written" in error["message"]
            assert (await server.get("/health")).status == 200

            filler.unlink()  # space returns
            later = await server.post(f"/runs/{run_id}/tools/browser_snapshot", json={"max_chars": LONG})
            assert later.status == 200 and (await later.json())["error"]["type"] == "invalid_arguments"
            assert (await server.delete(f"/runs/{run_id}")).status == 200
            trace = await whole_trace(server, run_id)
            assert [c.seq for c in trace.calls] == [1, 3] and trace.calls[1].args == {"max_chars": LONG}
            assert trace.end is not None and trace.end["reason"] == "deleted"


async def test_an_mcp_call_on_a_full_disk_is_an_internal_error_not_code_0(own_sandbox, tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        async with own_sandbox(trace_dir=disk) as own, http_client(own) as server:
            async with Client(str(server.make_url("/mcp"))) as mcp:
                run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
                filler = fill(disk)
                with pytest.raises(MCPError) as refused:
                    await mcp.call_tool("browser_snapshot", {"max_chars": LONG})
                error = refused.value.error
                assert error.code == types.INTERNAL_ERROR and error.data == {"type": "server_fault"}
                assert (await whole_trace(server, run_id)).calls == []
                filler.unlink()
                again = await mcp.call_tool("browser_snapshot", {"max_chars": LONG})
                assert again.is_error and again.structured_content["type"] == "invalid_arguments"
            trace = await whole_trace(server, run_id)
            assert [c.seq for c in trace.calls] == [2] and trace.end is not None


async def test_an_mcp_call_of_arguments_of_no_object_on_a_full_disk_is_an_internal_error(own_sandbox, tmp_path):
    """Such a call is refused by the run itself, with a trace line; that line was written outside
    the error boundary, and a full disk was answered with the SDK's catch-all code 0."""
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    with small_disk(tmp_path / "disk") as disk:
        async with own_sandbox(trace_dir=disk) as own, http_client(own) as server:
            opened = await server.post("/mcp", json=initialize, headers=accept)
            run_id, session = (
                opened.headers["mcp-run-id"],
                accept | {"mcp-session-id": opened.headers["mcp-session-id"]},
            )
            assert (await server.post("/mcp", json=initialized, headers=session)).status == 202
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
            call["params"] = {"name": "browser_snapshot", "arguments": [LONG]}
            filler = fill(disk)
            error = (await (await server.post("/mcp", json=call, headers=session)).json())["error"]
            assert error["code"] == types.INTERNAL_ERROR and error["data"] == {"type": "server_fault"}, error
            assert (await whole_trace(server, run_id)).calls == []
            filler.unlink()
            answer = (await (await server.post("/mcp", json=call | {"id": 3}, headers=session)).json())["result"]
            assert answer["isError"] and answer["structuredContent"]["type"] == "invalid_arguments"
            assert (await server.delete("/mcp", headers=session)).status == 200
            trace = await whole_trace(server, run_id)
            assert [c.seq for c in trace.calls] == [2] and trace.end is not None
