"""A long-lived server releases what ended runs held: traces live on disk, ended runs are
evicted after a bound, and live runs are bounded (429) (issue 12, item 14)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import playwright

from tests.support.processes import descendant_argvs
from tests.support.sandboxes import http_client
from tests.support.site import SITE
from toolserver.browser import DRIVER_NODE_FLAGS, start_playwright
from toolserver.contract.trace import parse_trace


async def test_runs_beyond_max_runs_get_429(own_sandbox):
    async with own_sandbox(max_runs=2) as own, http_client(own) as client:
        made = [await client.post("/runs", json={}) for _ in range(3)]
        assert [r.status for r in made] == [201, 201, 429]
        refused = await made[2].json()
        assert refused["error"]["type"] == "too_many_runs" and "DELETE /runs/" in refused["error"]["message"]
        first = (await made[0].json())["run_id"]
        assert (await client.delete(f"/runs/{first}")).status == 200
        assert (await client.post("/runs", json={})).status == 201  # room again once one ended


async def test_ended_runs_are_evicted_and_their_traces_read_from_disk(own_sandbox, tmp_path):
    async with own_sandbox(max_ended_runs=1, trace_dir=tmp_path) as own, http_client(own) as client:
        ids = []
        for _ in range(3):
            run_id = (await (await client.post("/runs", json={})).json())["run_id"]
            await client.post(f"/runs/{run_id}/tools/list_tools", json={})
            assert (await client.delete(f"/runs/{run_id}")).status == 200
            ids.append(run_id)
        held = [run_id for run_id in ids if run_id in own.runs]
        assert held == ids[-1:]
        for run_id in ids:
            response = await client.get(f"/runs/{run_id}/trace")
            assert response.status == 200
            trace = parse_trace(await response.text())
            assert [c.tool for c in trace.calls] == ["list_tools"] and trace.end is not None
        assert (await client.get("/runs/run_000000000000/trace")).status == 404
        assert (await client.get("/runs/..%2F..%2Fetc%2Fpasswd/trace")).status == 404


async def test_a_file_backed_trace_holds_no_lines_in_memory(sandbox, tmp_path):
    run = sandbox.create_run(trace_path=tmp_path / "trace.jsonl")
    for _ in range(20):
        await run.call("browser_type", {"ref": "e1", "text": "x" * 100_000})  # rejected: no session
    await run.close()
    assert run.trace._lines == []
    assert run.trace.text() == (tmp_path / "trace.jsonl").read_text(encoding="utf-8")
    assert len(parse_trace(run.trace.text()).calls) == 20


async def test_profiles_are_bounded_least_recently_used_first(own_sandbox):
    # The browser host keeps the profiles (for every sandbox on it): this one gets a host of its own.
    async with own_sandbox(max_profiles=2, own_browser=True) as own:
        run = own.create_run()
        for key in ("lru-a", "lru-b", "lru-a", "lru-c"):
            reply = await run.call("browser_start_session", {"provider": "kernel", "site_key": key, "url": f"{SITE}/"})
            assert reply["ok"], reply
            assert (await run.call("browser_close", {}))["ok"]  # its profile is saved now, in this order
        await run.close()
        assert list(own.host.profiles) == ["lru-a", "lru-c"]


def drivers() -> dict[int, list[str]]:
    return {pid: argv for pid, argv in descendant_argvs(os.getpid()).items() if "run-driver" in argv}


async def test_the_servers_driver_runs_with_the_memory_flags(sandbox):
    flagged = [argv for argv in drivers().values() if set(DRIVER_NODE_FLAGS) <= set(argv)]
    assert flagged and Path(flagged[0][0]).name == "node", drivers()
    assert "PLAYWRIGHT_NODEJS_PATH" not in os.environ  # the wrapper is not left for other processes


async def test_a_node_the_user_names_is_used_as_it_is(monkeypatch):
    node = Path(playwright.__file__).parent / "driver" / "node"
    monkeypatch.setenv("PLAYWRIGHT_NODEJS_PATH", str(node))
    before = set(drivers())
    started = await start_playwright()
    try:
        new = [argv for pid, argv in drivers().items() if pid not in before]
        assert len(new) == 1 and new[0][0] == str(node) and not set(DRIVER_NODE_FLAGS) & set(new[0]), new
    finally:
        await started.stop()
    assert os.environ["PLAYWRIGHT_NODEJS_PATH"] == str(node)


def tmpdir_of(pid: int) -> str | None:
    for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        if entry.startswith(b"TMPDIR="):
            return entry[len(b"TMPDIR=") :].decode()
    return None


async def test_drivers_started_at_once_each_keep_their_own_temporary_folder(tmp_path):
    """A second driver started while the first was starting took the first's wrapper for the
    user's Node: it ran with the first's TMPDIR, and the environment kept naming that wrapper
    (deleted with the first's folder: every later start then failed)."""
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    before = set(drivers())
    started = await asyncio.gather(*(start_playwright(folder) for folder in folders))
    try:
        new = [pid for pid in drivers() if pid not in before]
        assert sorted(tmpdir_of(pid) or "" for pid in new) == sorted(map(str, folders)), new
        assert "PLAYWRIGHT_NODEJS_PATH" not in os.environ, os.environ["PLAYWRIGHT_NODEJS_PATH"]
    finally:
        for driver in started:
            await driver.stop()
