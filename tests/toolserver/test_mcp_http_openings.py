"""``/mcp`` answers the SDK does not shape as this server means to: an ``initialize`` the SDK
refuses keeps no session (the SDK kept one per refusal, until 10,000 filled its limit), a body
up to ``max_body_bytes`` is read, and every answer of a session names its run."""

from __future__ import annotations

import json
import logging
import re

import mcp_types as types

from tests.support.calls import handshake_then
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace
from toolserver.transports.http import MCP_SESSIONS

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
NO_PARAMS = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}


async def test_an_initialize_the_sdk_refuses_keeps_no_session_and_binds_no_run(own_sandbox, caplog):
    """The SDK answered the refusal with HTTP 200 and a session id, and kept that session for
    mcp_session_idle_s; with ?name= the session was bound to the named run."""
    caplog.set_level(logging.INFO, logger="mcp.server.streamable_http_manager")
    async with own_sandbox() as own, http_client(own) as server:
        run_ids = []
        for query in ["?pack=controlled-form"] * 3 + ["?pack=controlled-form&name=failed-opening"] * 3:
            answer = await server.post(f"/mcp{query}", json=NO_PARAMS, headers=ACCEPT)
            said = await answer.json()
            assert said["id"] == 1 and said["error"]["code"] == types.INVALID_PARAMS, said
            assert "mcp-session-id" not in answer.headers  # no session to name
            run_ids.append(answer.headers["mcp-run-id"])
        assert server.app[MCP_SESSIONS].sessions == {}
        created = re.findall(r"Created new transport with session ID: (\w+)", caplog.text)
        assert len(created) == 6
        for session in created:  # the SDK holds none of them: its 404, said by session_gone
            gone = await server.delete("/mcp", headers=ACCEPT | {"mcp-session-id": session})
            assert gone.status == 404 and "never opened it" in (await gone.json())["error"]["message"]
        for run_id in set(run_ids[:3]):  # each owned run ended; the named run is left for a later opening
            trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
            assert trace.end is not None and trace.end["reason"] == "initialize_failed"
        initialize, initialized = map(json.loads, handshake_then().splitlines())
        opened = await server.post("/mcp?pack=controlled-form&name=failed-opening", json=initialize, headers=ACCEPT)
        assert opened.status == 200 and opened.headers["mcp-run-id"] == run_ids[3]
        session = ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"]}
        assert (await server.delete("/mcp", headers=session)).status == 200
        assert (await server.delete(f"/runs/{run_ids[3]}")).status == 200


async def test_a_body_up_to_max_body_bytes_is_read_even_above_the_sdks_4_mib(own_sandbox):
    """The SDK refused a body over its own default bound (4 MiB) with a plain-text 413 and no trace."""
    async with own_sandbox(max_body_bytes=6 * 1024 * 1024) as own, http_client(own) as server:
        initialize, initialized = map(json.loads, handshake_then().splitlines())
        opened = await server.post("/mcp?pack=controlled-form", json=initialize, headers=ACCEPT)
        run_id, session = opened.headers["mcp-run-id"], ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"]}
        assert (await server.post("/mcp", json=initialized, headers=session)).status == 202
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": "browser_snapshot", "arguments": {"max_chars": "x" * (5 * 1024 * 1024)}}
        answer = await server.post("/mcp", json=call, headers=session)
        assert answer.status == 200 and answer.headers["mcp-run-id"] == run_id
        result = (await answer.json())["result"]
        assert result["isError"] and result["structuredContent"]["type"] == "invalid_arguments"
        call["params"]["arguments"]["max_chars"] = "x" * (7 * 1024 * 1024)
        refused = await server.post("/mcp", json=call | {"id": 3}, headers=session)
        assert refused.status == 413 and (await refused.json())["error"]["data"] == {"type": "body_too_large"}
        assert (await server.delete("/mcp", headers=session)).status == 200
        trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
        assert [c.seq for c in trace.calls] == [1]
        (event,) = [e.data for e in trace.events if e.kind == "unreadable_message"]
        assert "larger than 6291456 bytes" in event["error"], event


async def test_refusals_made_before_the_sdk_name_the_run_and_never_a_clients_own_id(client):
    """A refusal made before the SDK saw the request had no Mcp-Run-Id; a client's response (an id of
    the client's own) to a closed session, or under a bad version header, was answered with its id."""
    initialize, initialized = map(json.loads, handshake_then().splitlines())
    opened = await client.post("/mcp?pack=controlled-form", json=initialize, headers=ACCEPT)
    run_id, session = opened.headers["mcp-run-id"], ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"]}
    assert (await client.post("/mcp", json=initialized, headers=session)).status == 202
    response = {"jsonrpc": "2.0", "id": 41, "result": {}}  # the client's answer to a request of the server's
    listed = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    unknown_version = session | {"mcp-protocol-version": "1999-01-01"}
    for body, headers in [
        (b"{not json", session),
        (json.dumps([initialized]).encode(), session),
        (json.dumps(listed).encode(), unknown_version),
        (json.dumps(response).encode(), unknown_version),
    ]:
        refused = await client.post("/mcp", data=body, headers=headers)
        said = await refused.json()
        assert refused.status == 400 and refused.headers.get("mcp-run-id") == run_id, said
        assert said["id"] == (5 if b'"id": 5' in body else None), said
    assert (await client.delete("/mcp", headers=session)).status == 200
    gone = await client.post("/mcp", json=response, headers=session)
    assert gone.status == 404 and (await gone.json())["id"] is None
    asked = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, headers=session)
    assert asked.status == 404 and (await asked.json())["id"] == 6
