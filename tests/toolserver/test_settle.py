"""Settling without fixed pauses: after an action the sandbox waits exactly for what the page
started (requests and the handling of their answers, navigations, popups), woken by events and
the page's own reports; then the next call sees the finished page."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.calls import ref_of, snapshot, start
from tests.support.site import SITE
from toolserver.contract.trace import parse_trace


async def click(run, name: str) -> dict:
    reply = await run.call("browser_click", {"ref": ref_of((await snapshot(run))["snapshot"], f'button "{name}"')})
    assert reply["ok"], reply
    return reply["result"]


def waits_gave_up(run) -> list:
    return [e for e in parse_trace(run.trace.text()).events if e.kind == "settle_timeout"]


async def test_chained_fetches_are_rendered_before_the_click_returns(run):
    await start(run, f"{SITE}/settle")
    await click(run, "fetch twice")
    # Read without a snapshot's own settling: the page's state right after the click returned.
    assert await run.sessions[run.current_session_id].active_tab.page.inner_text("#out") == "word fetched"
    assert not waits_gave_up(run)


async def test_requests_the_pages_load_and_pageshow_listeners_start_are_waited_for(run):
    await start(run, f"{SITE}/settle")
    for event in ("load", "pageshow"):
        reply = await run.call("browser_navigate", {"url": f"{SITE}/on-{event}"})
        assert reply["ok"], reply
        page = run.sessions[run.current_session_id].active_tab.page
        assert await page.inner_text("#out") == f"{event} fetched"
    assert not waits_gave_up(run)


async def test_an_xhr_answer_is_handled_before_the_click_returns(run):
    await start(run, f"{SITE}/settle")
    await click(run, "xhr")
    assert await run.sessions[run.current_session_id].active_tab.page.inner_text("#out") == "xhr fetched"


async def test_a_navigation_started_a_task_later_is_followed(run):
    await start(run, f"{SITE}/settle")
    result = await click(run, "later")
    assert result["url"] == f"{SITE}/second" and result["changes"]["url_changed"] is True
    assert result["title"] == "Second" and result["changes"]["navigations"]
    assert "Second page" in (await snapshot(run))["snapshot"]
    assert not waits_gave_up(run)


async def test_a_same_document_history_change_keeps_the_document_and_its_refs(run):
    await start(run, f"{SITE}/settle")
    snap = (await snapshot(run))["snapshot"]
    result = await click(run, "push")
    assert result["url"] == f"{SITE}/settle?pushed=1" and result["title"] == "Pushed"
    assert result["changes"]["url_changed"] is True  # the new URL is recorded as a navigation ...
    # ... but the document is the same: the refs of the snapshot before still work.
    reply = await run.call("browser_click", {"ref": ref_of(snap, 'button "xhr"')})
    assert reply["ok"], reply
    assert not waits_gave_up(run)


async def test_a_click_that_starts_nothing_reports_no_change(run):
    await start(run, f"{SITE}/settle")
    result = await click(run, "nothing")
    assert result["changes"] == {"url_changed": False, "title_changed": False}
    assert not waits_gave_up(run)


async def test_typing_reports_the_value_after_the_pages_own_handlers(run):
    await start(run, f"{SITE}/settle")
    field = ref_of((await snapshot(run))["snapshot"], 'textbox "Shout"')
    reply = await run.call("browser_type", {"ref": field, "text": "quiet please"})
    assert reply["ok"] and reply["result"]["value"] == "QUIET PLEASE", reply


async def test_typing_in_a_frame_reads_the_value_from_the_page(run):
    # A frame's typing report is not the tab's: the field's value is read from the page instead.
    await start(run, f"{SITE}/typing")
    field = ref_of((await snapshot(run))["snapshot"], 'textbox "Inner"')
    reply = await run.call("browser_type", {"ref": field, "text": "  padded  "})
    assert reply["ok"] and reply["result"]["value"] == "padded", reply


async def test_typing_into_a_removed_field_is_a_stale_ref_not_a_timeout(run):
    await start(run, f"{SITE}/typing")
    text = (await snapshot(run))["snapshot"]
    field = ref_of(text, 'textbox "Gone"')
    assert (await run.call("browser_click", {"ref": ref_of(text, 'button "remove"')}))["ok"]
    reply = await run.call("browser_type", {"ref": field, "text": "lost"})
    assert reply["error"]["type"] == "stale_ref" and "no longer matches" in reply["error"]["message"], reply


async def events_once_seen(run, kind: str, seconds: float = 5.0) -> list:
    """The run's events of ``kind``, once there is one (or ``seconds`` have passed)."""
    deadline = time.monotonic() + seconds
    while True:
        found = [e for e in parse_trace(run.trace.text()).events if e.kind == kind]
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def late_actions(run, seconds: float = 5.0) -> list:
    return await events_once_seen(run, "late_action", seconds)


async def bring_back(run) -> None:
    """Put back what the typing page's "take away" removed (the test, not a timer: a timer's half
    second could pass before a loaded machine's next call found the ref stale)."""
    await run.current_session().active_tab.page.evaluate("away.forEach((el) => document.body.append(el))")


@pytest.mark.parametrize("tool", ["browser_click", "browser_type"])
async def test_an_action_sent_before_its_ref_proved_stale_is_recorded_when_its_element_comes_back(run, tool):
    # A run that does not block state changes sends the click with its questions, and typing
    # with its own; neither can be taken back when the ref proves stale. The element comes back
    # after the reply, the action waiting for it acts: that is in the trace, in the failed call's name.
    await start(run, f"{SITE}/typing")
    text = (await snapshot(run))["snapshot"]
    ref = ref_of(text, 'button "Count"' if tool == "browser_click" else 'textbox "Back"')
    assert (await run.call("browser_click", {"ref": ref_of(text, 'button "take away"')}))["ok"]
    reply = await run.call(tool, {"ref": ref} | ({"text": "late"} if tool == "browser_type" else {}))
    assert reply["error"]["type"] == "stale_ref", reply
    await bring_back(run)
    [late] = await late_actions(run)
    assert late.data == {"tool": tool, "ref": ref} and late.seq == parse_trace(run.trace.text()).calls[-1].seq
    page = run.sessions[run.current_session_id].active_tab.page
    acted = page.get_attribute("#count", "data-n") if tool == "browser_click" else page.input_value("#back")
    assert await acted == ("1" if tool == "browser_click" else "late")


async def test_a_late_click_on_a_marked_control_is_a_state_change(run):
    # The click is sent before its ref proves stale; the control, marked as state-changing
    # around it, comes back after the reply and the click acts. The page reports the click on
    # a marked control as it happens, so it is a state change like any other, not only a late action.
    await start(run, f"{SITE}/typing")
    text = (await snapshot(run))["snapshot"]
    send = ref_of(text, 'button "Send"')
    assert (await run.call("browser_click", {"ref": ref_of(text, 'button "take away"')}))["ok"]
    assert (await run.call("browser_click", {"ref": send}))["error"]["type"] == "stale_ref"
    await bring_back(run)
    [late] = await late_actions(run)
    [change] = await events_once_seen(run, "state_change")
    assert change.data == {
        "action": "final_state_click",
        "name": "late-submit",
        "allowed": False,
        "blocked": False,
        "detail": {"tag": "span", "text": "Send"},
    }
    assert late.data == {"tool": "browser_click", "ref": send}


async def test_a_run_that_blocks_state_changes_clicks_only_a_ref_it_found(sandbox):
    # Such a run asks first (a marked control is refused before it is clicked): a stale ref is
    # never clicked, even when its element comes back.
    run = sandbox.create_run(block_state_changes=True)
    try:
        await start(run, f"{SITE}/typing")
        text = (await snapshot(run))["snapshot"]
        assert (await run.call("browser_click", {"ref": ref_of(text, 'button "take away"')}))["ok"]
        reply = await run.call("browser_click", {"ref": ref_of(text, 'button "Count"')})
        assert reply["error"]["type"] == "stale_ref", reply
        await bring_back(run)
        assert await late_actions(run, seconds=1.5) == []
        assert await run.sessions[run.current_session_id].active_tab.page.get_attribute("#count", "data-n") is None
    finally:
        await run.close()


async def test_a_popup_and_its_page_are_waited_for(run):
    await start(run, f"{SITE}/popup")
    result = await click(run, "Open long")
    assert [t["tab"] for t in result["tabs"]] == ["t1", "t2"]
    opened = result["changes"]["new_tabs"]
    assert opened[0]["opener"] == "t1"
    long_tab = run.sessions[run.current_session_id].tabs["t2"]
    assert long_tab.state is not None and long_tab.state["ready"] == "complete"  # loaded, reported
    assert not waits_gave_up(run)
