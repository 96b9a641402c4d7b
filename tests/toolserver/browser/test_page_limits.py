"""What one page may make of its session: tabs it opens without end, its renderer's memory, a
crash in the middle of a call. Each is bounded, recorded and said as a clear tool error, and the
session and the other runs go on."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest_asyncio

from tests.support.calls import ref_of
from tests.support.hostile import HOSTILE, build_hostile_mirror, hostile_run, snapshot_text, start_hostile
from tests.support.polling import until
from tests.support.processes import descendant_argvs
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
        suppressed = run.budgets["tab_opened"].suppressed
        # about 7 popups a second, fewer on a busy machine; no call in flight
        await until(lambda: sum(suppressed.values()) > 3, 30, step=0.1)
        snapshot = await run.call("browser_snapshot", {})
        await run.close()
    assert snapshot["ok"], snapshot
    trace = parse_trace(run.trace.text())
    opened = [e for e in trace.events if e.kind == "tab_opened"]
    assert 0 < len(opened) <= 3 * (len(trace.calls) + 1), len(opened)
    summaries = [e.data for e in trace.events if e.kind == "events_suppressed" and e.data["kind"] == "tab_opened"]
    assert summaries and sum(s["count"] for s in summaries) > 3, summaries


def renderer_data_limits(own) -> list[str]:
    """The data-size limit (``/proc/PID/limits``) of each renderer of ``own``'s browser."""
    limits = []
    for browser in own.host.browser_pids():
        for pid, argv in descendant_argvs(browser).items():
            if "--type=renderer" in argv:
                line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if "data size" in x)
                limits.append(line.split()[3])
    return limits


async def test_every_renderer_is_held_to_the_memory_cap(sandbox, hostile_root):
    """Run as root, Chromium runs without its sandbox, and so without the 16 GB data limit it
    gives its renderers: one page could take all the machine's memory from every other run."""
    run = hostile_run(sandbox, hostile_root, "/calm")
    await start_hostile(run, "/calm")
    limits = renderer_data_limits(sandbox)
    await run.close()
    assert limits and set(limits) == {str(sandbox.config.max_renderer_memory_mb << 20)}, limits


async def test_a_page_over_the_memory_cap_crashes_its_tab_the_call_says_so_and_the_session_goes_on(
    own_sandbox, hostile_root
):
    async with own_sandbox(own_browser=True, max_renderer_memory_mb=512) as own:
        hog, quiet = hostile_run(own, hostile_root, "/memory-hog", "/calm"), hostile_run(own, hostile_root, "/calm")
        await start_hostile(hog, "/memory-hog")
        await start_hostile(quiet, "/calm")
        assert set(renderer_data_limits(own)) == {str(512 << 20)}  # else the click takes V8's own limit, 4 GB
        clicked = await hog.call("browser_click", {"ref": ref_of(await snapshot_text(hog), 'button "Allocate"')})
        crashed = hog.current_session().active_tab
        for _ in range(100):
            if crashed.crashed:
                break
            await asyncio.sleep(0.05)
        again = await hog.call("browser_snapshot", {})
        assert (await quiet.call("browser_snapshot", {}))["ok"]  # another session: another renderer
        opened = await hog.call("browser_open_tab", {"url": f"{HOSTILE}/calm"})
        closed = await hog.call("browser_close", {})
        await hog.close()
        await quiet.close()
    # The call the page crashed under said browser_action_failed ("Locator.click: Target crashed").
    assert clicked["error"]["type"] == "page_crashed" and "t1" in clicked["error"]["message"], clicked
    assert again["error"]["type"] == "page_crashed", again
    assert opened["ok"] and closed["ok"], (opened, closed)
    (event,) = [e for e in parse_trace(hog.trace.text()).events if e.kind == "page_crashed"]
    assert (event.tab, event.data["url"]) == ("t1", f"{HOSTILE}/memory-hog")


async def test_a_tab_its_page_closes_is_recorded_and_the_tab_tools_say_it_is_closed(sandbox, hostile_root):
    """A page's window.close() left no line in the trace (its opening had one), and a tool given
    the tab said only that there was no such tab."""
    run = hostile_run(sandbox, hostile_root, "/popup-chain", mode="observe")
    await start_hostile(run, "/popup-chain")
    for _ in range(100):
        if any(e.kind == "tab_closed" for e in parse_trace(run.trace.text()).events) or "t3" in (
            run.current_session().tabs
        ):
            break
        await asyncio.sleep(0.05)
    switched = await run.call("browser_switch_tab", {"tab": "t2"})
    never = await run.call("browser_switch_tab", {"tab": "t999"})
    closed = await run.call("browser_close_tab", {"tab": "t1"})  # by the agent: its call line says so
    await run.close()
    assert switched["error"]["type"] == "unknown_tab" and "'t2' is closed" in switched["error"]["message"], switched
    assert "no tab 't999'" in never["error"]["message"], never
    assert closed["ok"], closed
    events = parse_trace(run.trace.text()).events
    by_page = [e.data for e in events if e.kind == "tab_closed"]
    assert by_page and {d["reason"] for d in by_page} == {"page"}, by_page
    assert by_page[0] == {"tab": "t2", "url": f"{HOSTILE}/popup-chain", "reason": "page"}
    assert "t1" not in {d["tab"] for d in by_page}


async def test_a_ref_of_a_tab_its_page_closed_between_calls_never_acts_on_the_tab_now_current(sandbox, hostile_root):
    """t2, a copy of t1's page, closes itself between calls: t1 becomes current unseen. Each page
    numbers its refs alike, so t2's ref named t1's own button, and the click acted there. Now it is
    refused with what happened and what to do; a snapshot of t1 makes its refs good again."""
    run = hostile_run(sandbox, hostile_root, mode="observe")
    await start_hostile(run, "/closer")
    opener = ref_of(await snapshot_text(run), "Open a copy")
    assert (await run.call("browser_click", {"ref": opener}))["ok"]
    await run.call("browser_snapshot", {})  # t1's latest snapshot
    assert (await run.call("browser_switch_tab", {"tab": "t2"}))["ok"]
    copy = ref_of(await snapshot_text(run), "Open a copy")  # t2's, numbered as t1's
    await run.current_session().tabs["t2"].page.evaluate("setTimeout(() => window.close(), 50)")  # its own timer
    await run.current_session().until(lambda: "t2" not in run.current_session().tabs, time.monotonic() + 5)
    reply = await run.call("browser_click", {"ref": copy})
    assert reply["error"]["type"] == "stale_ref", reply
    message = reply["error"]["message"]
    assert "tab t2 closed" in message and "tab t1 is the current tab" in message and "snapshot" in message, message
    assert len(run.current_session().tabs) == 1  # the click opened no copy from t1
    again = ref_of(await snapshot_text(run), "Close this tab")  # a tab the agent opened: Chromium keeps it
    assert (await run.call("browser_click", {"ref": again}))["ok"]  # t1's own refs hold after its snapshot
    await run.close()


async def test_the_browsers_zygote_is_held_to_the_memory_cap_once_it_has_launched(own_sandbox):
    """The zygote was held only when a session started, and only if Chromium had named it by
    then: a session started just after launch had an uncapped renderer."""
    async with own_sandbox(own_browser=True, max_renderer_memory_mb=512) as own:
        limits = []
        for browser in own.host.browser_pids():
            for pid, argv in descendant_argvs(browser).items():
                if "--type=zygote" in argv and "--no-zygote-sandbox" not in argv:
                    line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if "data size" in x)
                    limits.append(line.split()[3])
    assert limits and set(limits) == {str(512 << 20)}, limits


async def test_a_page_closing_its_tabs_cannot_spend_the_lines_of_the_tabs_the_sandbox_closes(own_sandbox, hostile_root):
    """The tab_closed lines of a window were one budget: a page looping window.open/window.close
    spent it, and the sandbox's own request_flood closure was only counted, never written."""
    # The flood sends up to 1,000 requests a second, fewer on a busy machine: with 600
    # a window, one full run recorded no request_flood closure (it passed alone and in other runs).
    async with own_sandbox(max_page_event_lines=1, max_page_requests=100) as own:
        run = hostile_run(own, hostile_root, "/popup-chain", "/request-flood", mode="observe")
        await start_hostile(run, "/popup-chain")
        opened = await run.call("browser_open_tab", {"url": f"{HOSTILE}/request-flood"})
        assert opened["ok"], opened
        # The flood may close its tab before the call's result is made: the result then names it
        # in changes.closed_tabs, and shows the tab that is current now.
        closed = [
            t["tab"] for t in opened["result"]["changes"].get("closed_tabs", []) if t["reason"] == "request_flood"
        ]
        flood = closed[0] if closed else opened["result"]["tab"]
        for _ in range(200):  # the chain closes about 7 tabs a second; the flood's tab soon closes
            if flood not in run.current_session().tabs:
                break
            await asyncio.sleep(0.05)
        await run.call("browser_snapshot", {})
        await run.close()
    events = parse_trace(run.trace.text()).events
    closed = [e.data for e in events if e.kind == "tab_closed"]
    assert [(d["tab"], d["url"]) for d in closed if d["reason"] == "request_flood"] == [
        (flood, f"{HOSTILE}/request-flood")
    ]
    summaries = [e.data for e in events if e.kind == "events_suppressed" and e.data["kind"] == "tab_closed"]
    assert summaries and {s["reason"] for s in summaries} == {"page"}, summaries
