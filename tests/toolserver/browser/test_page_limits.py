"""What one page may make of its session: tabs it opens without end, its renderer's memory, a
crash in the middle of a call. Each is bounded, recorded and said as a clear tool error, and the
session and the other runs go on."""

from __future__ import annotations

import asyncio

import pytest_asyncio

from tests.support.hostile import build_hostile_mirror, hostile_run, start_hostile
from toolserver.contract.trace import parse_trace


@pytest_asyncio.fixture(scope="module")
def hostile_root(tmp_path_factory):
    return build_hostile_mirror(tmp_path_factory.mktemp("hostile"))


async def test_a_chain_of_popups_grows_the_trace_by_a_bounded_amount(own_sandbox, hostile_root):
    """Each popup closes its opener, so neither the per-document popup cap nor the tab cap is
    ever reached: every popup was a tab_opened line, about 7 a second with no call in flight."""
    async with own_sandbox(max_page_event_lines=3) as own:
        run = hostile_run(own, hostile_root, "/popup-chain", mode="observe")
        await start_hostile(run, "/popup-chain")
        await asyncio.sleep(3.0)  # about 20 popups, no call in flight
        snapshot = await run.call("browser_snapshot", {})
        await run.close()
    assert snapshot["ok"], snapshot
    trace = parse_trace(run.trace.text())
    opened = [e for e in trace.events if e.kind == "tab_opened"]
    assert 0 < len(opened) <= 3 * (len(trace.calls) + 1), len(opened)
    summaries = [e.data for e in trace.events if e.kind == "events_suppressed" and e.data["kind"] == "tab_opened"]
    assert summaries and sum(s["count"] for s in summaries) > 3, summaries
