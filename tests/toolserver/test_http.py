"""The HTTP transport on a real loopback aiohttp server: endpoints, errors, isolation."""

from __future__ import annotations

from tests.support.site import SITE
from toolserver.contract.trace import parse_trace


async def new_run(client, **body) -> str:
    response = await client.post("/runs", json=body)
    assert response.status == 201
    return (await response.json())["run_id"]


async def test_full_round_trip_and_trace(client):
    run_id = await new_run(client)
    tools = await (await client.get(f"/runs/{run_id}/tools")).json()
    assert "browser_click" in [t["name"] for t in tools["tools"]]
    reply = await client.post(
        f"/runs/{run_id}/tools/browser_start_session",
        json={"provider": "kernel", "site_key": "http-key", "clear_cookies": False, "url": f"{SITE}/"},
    )
    body = await reply.json()
    assert reply.status == 200 and body["ok"] and body["result"]["title"] == "Home"
    snap = await (await client.post(f"/runs/{run_id}/tools/browser_snapshot", json={})).json()
    assert 'button "Press"' in snap["result"]["snapshot"]
    trace_text = await (await client.get(f"/runs/{run_id}/trace")).text()
    trace = parse_trace(trace_text)
    assert [c.tool for c in trace.calls] == ["browser_start_session", "browser_snapshot"]
    deleted = await client.delete(f"/runs/{run_id}")
    assert deleted.status == 200
    after = await client.post(f"/runs/{run_id}/tools/browser_snapshot", json={})
    assert after.status == 404 and (await after.json())["error"]["type"] == "unknown_run"


async def test_malformed_json_unknown_run_unknown_tool_are_4xx_json(client):
    run_id = await new_run(client)
    bad = await client.post(
        f"/runs/{run_id}/tools/browser_snapshot", data=b"{not json", headers={"content-type": "application/json"}
    )
    assert bad.status == 400 and (await bad.json())["error"]["type"] == "malformed_json"
    missing = await client.post("/runs/run_nope/tools/browser_snapshot", json={})
    assert missing.status == 404 and (await missing.json())["error"]["type"] == "unknown_run"
    unknown = await client.post(f"/runs/{run_id}/tools/browser_fly", json={})
    assert unknown.status == 404 and (await unknown.json())["error"]["type"] == "unknown_tool"
    wrong_type = await client.post(f"/runs/{run_id}/tools/browser_start_session", json={"clear_cookies": 1})
    assert (await wrong_type.json())["error"]["type"] == "invalid_arguments"
    not_found = await client.get("/nowhere")
    assert not_found.status == 404 and (await not_found.json())["ok"] is False
    bad_run = await client.post("/runs", json={"pack": "no-such-pack"})
    assert bad_run.status == 400 and (await bad_run.json())["error"]["type"] == "invalid_pack"
    # the server is still up, and every rejected call is in the trace
    trace = parse_trace(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert [(c.tool, c.error.type) for c in trace.calls] == [
        ("browser_snapshot", "malformed_json"),
        ("browser_fly", "unknown_tool"),
        ("browser_start_session", "invalid_arguments"),
    ]
    assert trace.calls[0].args == "{not json"
    assert (await client.get("/health")).status == 200


async def test_runs_are_isolated(client):
    first, second = await new_run(client), await new_run(client)
    started = await (
        await client.post(
            f"/runs/{first}/tools/browser_start_session",
            json={"provider": "kernel", "site_key": "iso", "url": f"{SITE}/"},
        )
    ).json()
    session_id = started["result"]["session_id"]
    foreign = await (await client.post(f"/runs/{second}/tools/browser_close", json={"session_id": session_id})).json()
    assert foreign["error"]["type"] == "unknown_session"
    none = await (await client.post(f"/runs/{second}/tools/browser_snapshot", json={})).json()
    assert none["error"]["type"] == "no_session"
    mine = await (await client.post(f"/runs/{first}/tools/browser_snapshot", json={})).json()
    assert mine["ok"]
    await client.delete(f"/runs/{first}")
    await client.delete(f"/runs/{second}")
