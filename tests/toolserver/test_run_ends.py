"""How ended runs are kept and how a run's end completes: the run that ended last is the one kept
past ``max_ended_runs`` (creation order evicted a long run the moment it ended, so a repeated
``/answer`` got ``unknown_run``); joining a named run counts as activity (it could be swept
before the joiner's first call); and an end whose caller is cancelled still writes ``run_end``."""

from __future__ import annotations

import asyncio

from tests.support.polling import until
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace


async def test_the_runs_that_ended_first_are_forgotten_first(own_sandbox, tmp_path):
    async with own_sandbox(max_ended_runs=1, trace_dir=tmp_path) as own:
        first, second = own.create_run(), own.create_run()
        await second.close("deleted")
        await first.close("deleted")  # made first, ended last
        own.evict_ended_runs()
        assert list(own.runs) == [first.id]


async def test_joining_a_named_run_counts_as_activity(own_sandbox):
    # Seconds, not tenths: a loaded machine's sweep and round trips take tenths.
    async with own_sandbox(named_run_idle_s=3.0) as own, http_client(own) as server:
        made = await (await server.post("/runs", json={"name": "shared"})).json()
        await asyncio.sleep(2.0)
        joined = await server.post("/runs", json={"name": "shared"})
        assert joined.status == 200 and (await joined.json())["run_id"] == made["run_id"]
        await asyncio.sleep(2.0)  # 4 s after it was made, 2 s after the join
        tools = await server.get(f"/runs/{made['run_id']}/tools")
        assert tools.status == 200, await tools.text()


async def test_an_end_whose_caller_is_cancelled_still_writes_run_end(own_sandbox, tmp_path):
    async with own_sandbox(trace_dir=tmp_path) as own:
        run = own.create_run()
        assert (await run.call("browser_start_session", {"provider": "kernel"}))["ok"]
        ending = asyncio.ensure_future(run.close("idle_timeout"))
        await asyncio.sleep(0)  # the end has begun (its sessions closing)
        ending.cancel()
        await until(lambda: run.trace.closed, 10)
        trace = parse_trace(run.trace.text())
        assert trace.end is not None and trace.end["reason"] == "idle_timeout", run.trace.text()[-500:]


async def test_an_end_whose_close_fails_still_ends_the_run_and_the_idle_sweep_goes_on(own_sandbox, caplog):
    """A failure other than the disk's (here the run's pictures, made to fail) came out of
    ``run.close``: the idle sweep that called it ended for good, so no other idle run was ended,
    and the failed run's trace had no ``run_end``."""
    async with own_sandbox(http_run_idle_s=0.3) as own, http_client(own) as server:
        failing = (await (await server.post("/runs", json={})).json())["run_id"]
        idle = (await (await server.post("/runs", json={})).json())["run_id"]

        async def fails(tool):
            raise RuntimeError("the pictures failed")

        own.runs[failing].media.before_call = fails  # this run only (an attribute of its own)
        await until(lambda: own.runs[failing].trace.closed and own.runs[idle].trace.closed, 5)
        for run_id in (failing, idle):
            trace = parse_trace(own.runs[run_id].trace.text())
            assert trace.end is not None and trace.end["reason"] == "idle_timeout", run_id
    assert "closing its sessions failed" in caplog.text
