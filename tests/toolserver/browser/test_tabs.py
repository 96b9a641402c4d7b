"""Whose a page's tabs and requests are: a popup names the tab whose page opened it (not the
tab the agent is on), and a request a page makes is recorded in its tab."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.calls import ref_of, snapshot, start
from tests.support.hostile import HOSTILE, build_hostile_mirror, hostile_run, start_hostile
from tests.support.site import SITE
from toolserver.contract.events import EventRecord
from toolserver.contract.trace import parse_trace


async def events_once(run, done, seconds: float = 10.0) -> list[EventRecord]:
    """The run's trace events once ``done(events)`` holds (the test fails if it does not in time)."""
    for _ in range(int(seconds / 0.05)):
        events = parse_trace(run.trace.text()).events
        if done(events):
            return events
        await asyncio.sleep(0.05)
    raise AssertionError(f"not in the trace within {seconds:g} s: {run.trace.text()}")


@pytest.mark.parametrize(
    ("button", "path"),
    [("Ask for a popup", "/second"), ("Ask for a noopener popup", "/long"), ("Ask for a noopener link", "/typing")],
)
async def test_a_popup_a_background_tab_opens_names_that_tab_as_its_opener(run, button, path):
    # t1 opens the popup (window.open, or a link it clicks) while t2 is the active tab: t1 is its
    # opener, with noopener too (the popup cannot reach its opener then, but Playwright knows it).
    await start(run, f"{SITE}/tab-listener")
    assert (await run.call("browser_open_tab", {"url": f"{SITE}/tab-sender"}))["ok"]
    text = (await snapshot(run))["snapshot"]
    assert (await run.call("browser_click", {"ref": ref_of(text, f'button "{button}"')}))["ok"]
    events = await events_once(run, lambda events: any(e.kind == "tab_opened" for e in events))
    opened = [e for e in events if e.kind == "tab_opened"]
    assert [e.data for e in opened] == [{"tab": "t3", "opener": "t1", "url": f"{SITE}{path}"}]
    assert next(e for e in events if e.tab == "t3") is opened[0]  # the new tab's first event
    assert run.sessions[run.current_session_id].active_tab_id == "t2"  # the agent stays where it was


async def test_a_popup_in_a_chain_names_its_opener_or_null_never_another_tab(sandbox, tmp_path):
    # A chain: t1 opens t2, each later page opens the next and closes itself at once. Its popup
    # names it while Playwright still has it open; after it closed, the opener is not known (null):
    # which of the two a popup gets depends on timing, never another tab.
    root = build_hostile_mirror(tmp_path)
    run = hostile_run(sandbox, root, "/popup-chain", mode="observe")
    try:
        await start_hostile(run, "/popup-chain")
        events = await events_once(run, lambda events: sum(e.kind == "tab_opened" for e in events) >= 4)
        opened = [e.data for e in events if e.kind == "tab_opened"]
        assert (opened[0]["tab"], opened[0]["opener"]) == ("t2", "t1")  # t1 stays open: window.close() spares it
        assert [data["tab"] for data in opened] == [f"t{n}" for n in range(2, 2 + len(opened))]  # none lost
        for data in opened[1:]:
            assert data["opener"] in (None, f"t{int(data['tab'][1:]) - 1}"), opened
    finally:
        await run.close()


async def test_requests_a_page_makes_are_refused_in_its_tab(run):
    # Chromium's request for the page's icon (type other), and the page's image: neither is in the mirror.
    await start(run, f"{SITE}/icon")
    assert (await run.call("browser_open_tab", {"url": f"{SITE}/second"}))["ok"]  # t2 is the active tab now

    def both_refused(events: list[EventRecord]) -> bool:
        urls = {e.data["url"] for e in events if e.kind == "blocked_request"}
        return {f"{SITE}/favicon.png", f"{SITE}/missing.png"} <= urls

    events = await events_once(run, both_refused)
    refused = {e.data["url"]: e for e in events if e.kind == "blocked_request"}
    icon, image = refused[f"{SITE}/favicon.png"], refused[f"{SITE}/missing.png"]
    assert (icon.tab, icon.data["reason"], icon.data["resource_type"]) == ("t1", "not_in_mirror", "other")
    assert (image.tab, image.data["reason"], image.data["resource_type"]) == ("t1", "not_in_mirror", "image")
    assert icon.session_id == image.session_id == run.current_session_id


async def test_a_click_that_closes_its_own_tab_says_so(sandbox, tmp_path):
    # A popup's page closes its tab (window.close()) in the click's handler: the call waits for the
    # tab to close, and its result shows the tab that is current now, the closed one in
    # changes.closed_tabs. A tab the agent opened stays open: Chromium closes only popups.
    root = build_hostile_mirror(tmp_path)
    run = hostile_run(sandbox, root, "/closer")
    try:
        await start_hostile(run, "/closer")
        text = (await snapshot(run))["snapshot"]
        refused = await run.call("browser_click", {"ref": ref_of(text, 'button "Close this tab"')})
        assert refused["ok"] and [t["tab"] for t in refused["result"]["tabs"]] == ["t1"], refused
        assert "closed_tabs" not in refused["result"]["changes"]
        opened = await run.call("browser_click", {"ref": ref_of(text, 'button "Open a copy"')})
        assert [t["tab"] for t in opened["result"]["changes"]["new_tabs"]] == ["t2"], opened
        assert (await run.call("browser_switch_tab", {"tab": "t2"}))["ok"]
        text = (await snapshot(run))["snapshot"]
        reply = await run.call("browser_click", {"ref": ref_of(text, 'button "Close this tab"')})
        assert reply["ok"], reply
        result = reply["result"]
        assert result["changes"] == {"closed_tabs": [{"tab": "t2", "url": f"{HOSTILE}/closer", "reason": "page"}]}
        assert (result["tab"], result["url"], result["title"]) == ("t1", f"{HOSTILE}/closer", "Closer")
        assert [(t["tab"], t["active"]) for t in result["tabs"]] == [("t1", True)]
    finally:
        await run.close()
