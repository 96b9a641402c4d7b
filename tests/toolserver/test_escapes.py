"""Hardening, round two (issue 30): what a hostile page does to get past the router and the
allow-list — frames that navigate themselves, documents made at blob: URLs, requests from
workers — is refused and recorded, and never reaches the agent's snapshot."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from urllib.parse import urlsplit

import pytest
import pytest_asyncio

from tests.support.calls import ref_of
from tests.support.hostile import (
    HOSTILE,
    build_hostile_mirror,
    hostile_run,
    past_the_line_cap,
    snapshot_text,
    start_hostile,
)
from tests.support.polling import until
from tests.support.processes import descendant_argvs
from toolserver.api import Sandbox
from toolserver.capacity import process_tree
from toolserver.contract.trace import parse_trace
from toolserver.run import Run


@pytest_asyncio.fixture(scope="module")
def hostile_root(tmp_path_factory):
    return build_hostile_mirror(tmp_path_factory.mktemp("hostile"))


def violations(run: Run) -> list[dict]:
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == "policy_violation"]


async def test_an_allowed_frame_that_navigates_itself_off_the_allow_list_is_refused(sandbox, hostile_root):
    run = hostile_run(sandbox, hostile_root, "/frame-host", "/frame-hop")
    await start_hostile(run, "/frame-host")
    await until(lambda: violations(run))  # the frame's own timer sends it to /secret
    text = await snapshot_text(run)
    assert "SECRET-PAGE-TEXT" not in text
    (violation,) = violations(run)
    assert violation["url"] == f"{HOSTILE}/secret" and violation["origin"] == "frame" and violation["enforced"]
    await run.close()


async def test_in_observe_mode_the_frame_navigation_is_recorded_and_shown(sandbox, hostile_root):
    run = hostile_run(sandbox, hostile_root, "/frame-host", "/frame-hop", mode="observe")
    await start_hostile(run, "/frame-host")
    await until(lambda: violations(run))
    assert "SECRET-PAGE-TEXT" in await snapshot_text(run)
    assert [v["url"] for v in violations(run)] == [f"{HOSTILE}/secret"]
    await run.close()


async def test_a_frame_redirected_off_the_allow_list_is_the_frames_violation(sandbox, hostile_root):
    # It was recorded with the origin "redirect", which the gates take for the top frame's own.
    run = hostile_run(sandbox, hostile_root, "/frame-redirect-host", "/to-secret")
    await start_hostile(run, "/frame-redirect-host")
    await until(lambda: violations(run))
    text = await snapshot_text(run)
    await run.close()
    assert "SECRET-PAGE-TEXT" not in text
    assert [(v["url"], v["origin"]) for v in violations(run)] == [(f"{HOSTILE}/secret", "frame")]


async def test_a_top_frame_blob_document_is_refused_recorded_and_never_read(sandbox, hostile_root):
    run = hostile_run(sandbox, hostile_root, "/blob-nav")
    await start_hostile(run, "/blob-nav")
    clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Show"')})
    assert clicked["ok"], clicked
    await until(lambda: violations(run))
    text = await snapshot_text(run)
    assert "SECRET-PAGE-TEXT" not in text and "Blocked by the sandbox" in text
    (violation,) = violations(run)
    assert violation["url"].startswith(f"blob:{HOSTILE}/") and violation["origin"] == "page"
    await run.close()


async def test_a_popup_whose_first_document_is_a_blob_is_refused_recorded_and_never_read(sandbox, hostile_root):
    """Its document committed before the tab was adopted: no check, and its snapshot showed the text."""
    run = hostile_run(sandbox, hostile_root, "/blob-nav")
    await start_hostile(run, "/blob-nav")
    clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Show in a popup"')})
    assert clicked["ok"], clicked
    for _ in range(50):
        if len((await run.call("browser_snapshot", {}))["result"]["tabs"]) == 2:
            break
        await asyncio.sleep(0.1)
    assert (await run.call("browser_switch_tab", {"tab": "t2"}))["ok"]
    text = await snapshot_text(run)
    assert "SECRET-PAGE-TEXT" not in text and "Blocked by the sandbox" in text, text
    (violation,) = violations(run)
    assert violation["url"].startswith(f"blob:{HOSTILE}/") and violation["origin"] == "page"
    await run.close()


async def test_requests_from_workers_reach_the_sessions_backstop_and_are_recorded(sandbox, hostile_root):
    run = hostile_run(sandbox, hostile_root, "/worker-escape")
    await start_hostile(run, "/worker-escape")

    def escaped_lines() -> list[dict]:
        return [e.data for e in parse_trace(run.trace.text()).events if e.data.get("reason") == "escaped_interception"]

    await until(lambda: any("exfil.sandbox.example" in e["url"] for e in escaped_lines()))  # fetches, WebSockets
    await asyncio.sleep(0.5)  # the workers' other tries, which the page shows as they end
    text = await snapshot_text(run)
    assert "fetch 200" not in text and "ws open" not in text
    escaped = escaped_lines()
    assert escaped and all(e["resource_type"] == "unrouted" for e in escaped)
    assert any("exfil.sandbox.example" in e["url"] for e in escaped), escaped
    await run.close()
    # The browser's own proxy saw nothing at all: not the page's requests, not Chromium's own
    # background requests (the component update check, the sign-in ListAccounts: chromium.py).
    assert sandbox.host.backstop.seen == 0, sandbox.host.backstop.targets


async def test_a_shared_worker_flooding_requests_stalls_no_other_run(own_sandbox, hostile_root):
    """A shared worker's requests have no frame, so no tab the flood guard could count them
    against (``max_page_requests``): they escape to the session's backstop, which Chromium reaches
    through a few proxy connections at a time. About 1,000 a second are a few dozen refused
    there, and the other runs go on (measured: a quiet run's snapshots took 12-116 ms)."""
    async with own_sandbox() as own:
        flooding, quiet = hostile_run(own, hostile_root, "/shared-flood"), hostile_run(own, hostile_root, "/calm")
        await start_hostile(flooding, "/shared-flood")
        await start_hostile(quiet, "/calm")
        replies = []
        for _ in range(6):
            await asyncio.sleep(0.5)
            replies.append(await quiet.call("browser_snapshot", {}))
        assert (await flooding.call("browser_snapshot", {}))["ok"]
        await flooding.close()
        await quiet.close()
    assert all(reply["ok"] for reply in replies), replies
    escaped = [e.data for e in parse_trace(flooding.trace.text()).events if e.kind == "blocked_request"]
    assert escaped and {e["reason"] for e in escaped} == {"escaped_interception"}
    assert {urlsplit(e["url"]).hostname for e in escaped} <= {f"flood{n}.sandbox.example" for n in range(3)}


async def test_the_sessions_backstop_hears_its_pages_until_their_context_is_closed(sandbox, hostile_root):
    """It was closed first: while the profile was saved and the context closed, what the pages sent
    past the router found the port closed, or whoever had bound it since."""
    run = hostile_run(sandbox, hostile_root, "/worker-ticks")
    await start_hostile(run, "/worker-ticks")
    session = next(iter(run.sessions.values()))
    await until(lambda: session.backstop.seen > 20)  # the worker posts every 10 ms, once under way
    before = session.backstop.seen
    assert (await run.call("browser_close", {}))["ok"]
    assert session.backstop.seen > before
    await run.close()


async def test_a_request_past_the_router_with_a_line_over_8_kib_is_recorded(sandbox, hostile_root):
    """The backstop dropped such a line unread: an escaped POST was no state change at all."""
    run = hostile_run(sandbox, hostile_root, "/long-escape")
    await start_hostile(run, "/long-escape")
    for _ in range(50):
        changes = [e.data for e in parse_trace(run.trace.text()).events if e.kind == "state_change"]
        if len(changes) == 2:
            break
        await asyncio.sleep(0.1)
    await run.close()
    assert sorted(c["name"].split("?")[0] for c in changes) == [
        "POST http://exfil.sandbox.example/collect",
        "POST https://exfil.sandbox.example/collect",
    ], changes
    assert all(c["blocked"] and c["detail"]["reason"] == "escaped_interception" for c in changes)


async def test_posts_a_page_sends_as_it_is_left_are_recorded_with_their_method_and_url(sandbox, hostile_root):
    # They escape interception and reach the session's backstop as CONNECT hostile.sandbox.example:443,
    # which was taken for Chromium's own preconnect and dropped: no line, no state change.
    run = hostile_run(sandbox, hostile_root, "/unload-post", "/calm")
    await start_hostile(run, "/unload-post")
    left = await run.call("browser_navigate", {"url": f"{HOSTILE}/calm"})
    assert left["ok"], left
    wanted = {f"POST {HOSTILE}/collect?via={via}" for via in ("beacon", "keepalive")}

    def changed() -> set[str]:
        return {e.data["name"] for e in parse_trace(run.trace.text()).events if e.kind == "state_change"}

    # each arrives on its own connection, in its own time (later on a busy machine)
    await until(lambda: wanted <= changed(), 10, step=0.1)
    await run.close()
    events = parse_trace(run.trace.text()).events
    escaped = {e.data["url"]: e.data["method"] for e in events if e.data.get("reason") == "escaped_interception"}
    changes = {e.data["name"] for e in events if e.kind == "state_change"}
    for via in ("beacon", "keepalive"):
        url = f"{HOSTILE}/collect?via={via}"
        assert escaped.get(url) == "POST", escaped
        assert f"POST {url}" in changes, changes
    assert all(e.data["blocked"] for e in events if e.kind == "state_change")


async def test_a_flooding_page_grows_its_trace_by_a_bounded_amount(own_sandbox, hostile_root):
    # The page is never idle: do not wait long for it; but a loaded machine may take more than 5 s
    # to read it (page_unresponsive, seen once beside other test runs), which is not what is tested.
    async with own_sandbox(settle_timeout_s=1.0, action_timeout_ms=15_000) as own:
        await flood_run(own, hostile_root)


async def flood_run(sandbox: Sandbox, hostile_root) -> None:
    run = hostile_run(sandbox, hostile_root, "/flood")
    await start_hostile(run, "/flood")
    # About 250 refusals a second, fewer on a busy machine; no call in flight. Past 200 counted
    # unwritten, each of the three hosts has spent its lines (the page cycles through them).
    suppressed = run.budgets["blocked_request"].suppressed
    await until(lambda: sum(suppressed.values()) > 200, 30, step=0.1)
    size = len(run.trace.text())
    await asyncio.sleep(1.5)
    assert len(run.trace.text()) == size  # the window's budget is spent: counted, not written
    await snapshot_text(run)
    trace = parse_trace(run.trace.text())
    assert trace.problems == []
    blocked = [e for e in trace.events if e.kind == "blocked_request"]
    config = sandbox.config
    assert 0 < len(blocked) <= config.max_refusal_lines + 1
    per_host: dict[str, int] = {}
    for event in blocked:
        host = urlsplit(event.data["url"]).hostname or ""
        per_host[host] = per_host.get(host, 0) + 1
    assert max(per_host.values()) <= config.max_identical_refusals
    summaries = [e.data for e in trace.events if e.kind == "events_suppressed"]
    snapshot_call = trace.calls[-1]
    assert summaries and snapshot_call.suppressed_events == sum(s["count"] for s in summaries) > 200
    assert {s["host"] for s in summaries} <= {
        "flood0.sandbox.example",
        "flood1.sandbox.example",
        "flood2.sandbox.example",
    }
    await run.close()


async def test_a_page_that_floods_navigations_grows_its_trace_and_results_by_a_bounded_amount(
    own_sandbox, hostile_root
):
    async with own_sandbox(max_page_event_lines=10) as own:
        run = hostile_run(own, hostile_root, "/history-flood", mode="observe")
        await start_hostile(run, "/history-flood")
        await asyncio.sleep(1.0)  # hundreds of pushState calls, no call in flight
        size = len(run.trace.text())
        await asyncio.sleep(0.5)
        assert len(run.trace.text()) == size  # the window's budget is spent: counted, not written
        await asyncio.sleep(0.2)
        clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Still here"')})
        await run.close()
    assert clicked["ok"] and len(clicked["result"]["changes"].get("navigations", [])) <= 10, clicked
    trace = parse_trace(run.trace.text())
    assert trace.problems == []
    assert len([e for e in trace.events if e.kind == "navigation"]) <= 10 * (len(trace.calls) + 1)
    summaries = [e.data for e in trace.events if e.kind == "events_suppressed"]
    assert summaries and {(s["kind"], s["host"]) for s in summaries} == {("navigation", "hostile.sandbox.example")}
    snapshot_call = trace.calls[1]  # the first call after the flood began
    assert snapshot_call.suppressed_events is not None and snapshot_call.suppressed_events > 100, snapshot_call


async def test_a_page_that_floods_refused_frame_navigations_grows_its_trace_by_a_bounded_amount(
    own_sandbox, hostile_root
):
    """Each refusal was a policy_violation line: 562 lines, 225 KB in 5 s."""
    async with own_sandbox(max_page_event_lines=10) as own:
        run = hostile_run(own, hostile_root, "/frame-flood")
        await start_hostile(run, "/frame-flood")
        await past_the_line_cap(run, 10)  # a refused frame navigation every 5 ms, no call in flight
        clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Still here"')})
        await run.close()
    assert clicked["ok"], clicked
    trace = parse_trace(run.trace.text())
    assert 0 < len([e for e in trace.events if e.kind == "policy_violation"]) <= 10 * (len(trace.calls) + 1)
    summaries = [e.data for e in trace.events if e.kind == "events_suppressed"]
    assert ("policy_violation", "hostile.sandbox.example") in {(s["kind"], s["host"]) for s in summaries}, summaries


async def test_frames_flooding_refusals_leave_the_top_frames_own_violation_its_line(own_sandbox, hostile_root):
    """The frames spent every policy_violation line of the window: the top frame's attempt to leave
    was only counted, and the gates, which judge the top frame's visits, never saw it."""
    async with own_sandbox(max_page_event_lines=10) as own:
        run = hostile_run(own, hostile_root, "/frame-flood")
        await start_hostile(run, "/frame-flood")
        await past_the_line_cap(run, 10)  # far more than 10 refused frame navigations, no call in flight
        left = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Leave"')})
        await run.close()
    assert left["ok"], left
    events = parse_trace(run.trace.text()).events
    by_origin = {(e.data["origin"], e.data["url"]) for e in events if e.kind == "policy_violation"}
    assert ("page", f"{HOSTILE}/elsewhere") in by_origin, by_origin
    summaries = [e.data for e in events if e.kind == "events_suppressed" and e.data["kind"] == "policy_violation"]
    assert summaries and {s.get("origin") for s in summaries} == {"frame"}, summaries


async def test_a_tab_flooding_requests_is_closed_and_the_other_runs_go_on(own_sandbox, hostile_root):
    """About 1,000 requests a second from one page stalled every run on the server (a quiet run's
    snapshot took 7 s, then page_unresponsive; a new session elsewhere failed after 30 s)."""
    async with own_sandbox(max_page_requests=100) as own:  # far below the flood's pace on a busy machine too
        flooding, quiet = hostile_run(own, hostile_root, "/request-flood"), hostile_run(own, hostile_root, "/calm")
        await start_hostile(flooding, "/request-flood")
        await start_hostile(quiet, "/calm")
        for _ in range(200):
            closed = [e.data for e in parse_trace(flooding.trace.text()).events if e.kind == "tab_closed"]
            if closed:
                break
            await asyncio.sleep(0.1)
        assert (await quiet.call("browser_snapshot", {}))["ok"]
        after = await flooding.call("browser_snapshot", {})
        await flooding.close()
        await quiet.close()
    assert [(c["tab"], c["reason"], c["url"]) for c in closed] == [("t1", "request_flood", f"{HOSTILE}/request-flood")]
    assert closed[0]["requests"] > 100 and closed[0]["seconds"] == 2.0
    assert after["error"]["type"] == "no_tab" and "no open tab" in after["error"]["message"], after


async def test_a_mirrors_redirect_loop_is_refused_after_twenty_hops(sandbox, hostile_root):
    """The router followed a main-frame redirect loop without end: the navigation timed out after
    15 s, with 1,013 redirect lines in the trace."""
    run = hostile_run(sandbox, hostile_root, "/calm", "/loop-a", "/loop-b")
    await start_hostile(run, "/calm")
    reply = await run.call("browser_navigate", {"url": f"{HOSTILE}/loop-a"})
    shown = await snapshot_text(run)
    await run.close()
    events = parse_trace(run.trace.text()).events
    assert len([e for e in events if e.kind == "redirect"]) == 21, reply
    assert [e.data["reason"] for e in events if e.kind == "blocked_request"] == ["too_many_redirects"]
    assert not [e for e in events if e.kind == "settle_timeout"]  # the blocked page's commit is waited for, once
    assert reply["ok"] and "Blocked by the sandbox" in shown and "too_many_redirects" in shown, (reply, shown)


async def test_a_page_that_floods_dialogs_grows_its_trace_by_a_bounded_amount(own_sandbox, hostile_root):
    # The tab is left open (no dialog_flood closure): its lines are bounded all the same.
    async with own_sandbox(max_page_event_lines=10, max_page_dialogs=1_000_000) as own:
        run = hostile_run(own, hostile_root, "/nagger", mode="observe")
        await start_hostile(run, "/nagger")
        await asyncio.sleep(1.0)  # hundreds of alerts, each dismissed, no call in flight
        size = len(run.trace.text())
        await asyncio.sleep(0.5)
        assert len(run.trace.text()) == size  # the window's budget is spent: counted, not written
        snapshot = await run.call("browser_snapshot", {})
        await run.close()
    assert snapshot["ok"], snapshot
    trace = parse_trace(run.trace.text())
    assert len([e for e in trace.events if e.kind == "dialog"]) <= 10 * (len(trace.calls) + 1)
    summaries = [e.data for e in trace.events if e.kind == "events_suppressed"]
    assert summaries and {s["kind"] for s in summaries} == {"dialog"}
    # How many alerts come in the 1.5 s depends on the machine's load (83 to 211 were seen): well
    # over the 10 lines, counted and not written.
    assert trace.calls[1].suppressed_events is not None and trace.calls[1].suppressed_events > 30, trace.calls[1]


async def test_a_page_setting_2_mb_urls_in_a_loop_has_them_refused_and_writes_no_long_line(sandbox, hostile_root):
    # Chromium's one browser process took about a second for each 2 MB URL a page set: another
    # run's snapshot waited 0.2-5 s. Navigations and popups to URLs that long are refused in the
    # page (and Chromium throttles a page's navigations again), and no line carries a whole URL.
    flood, quiet = (
        hostile_run(sandbox, hostile_root, "/long-urls", mode="observe"),
        hostile_run(sandbox, hostile_root, "/calm"),
    )
    await start_hostile(flood, "/long-urls")
    await start_hostile(quiet, "/calm")
    await asyncio.sleep(2.5)
    assert "Calm" in await snapshot_text(quiet)  # the other run goes on (how fast: not a test's to say)
    reply = await flood.call("browser_snapshot", {})
    await flood.close()
    await quiet.close()
    assert reply["ok"] and reply["result"]["url"] == f"{HOSTILE}/long-urls", str(reply)[:300]
    limit = sandbox.config.max_page_text_chars
    assert longest_text(flood.trace.text()) <= limit + 40
    refused = [e.data for e in parse_trace(flood.trace.text()).events if e.kind == "blocked_request"]
    reasons = {d["reason"] for d in refused}
    assert reasons == {"url_too_long", "service_worker"}, reasons
    too_long = [d for d in refused if d["reason"] == "url_too_long"]
    assert {d["resource_type"] for d in too_long} == {"document", "popup"}
    assert all(d["length"] > 2_000_000 and d["url"].startswith(f"{HOSTILE}/long-urls") for d in too_long)


async def test_a_20_mb_title_and_a_5_mb_dialog_message_are_cut_in_results_and_lines(sandbox, hostile_root):
    run = hostile_run(sandbox, hostile_root, "/big-text")
    started = await start_hostile(run, "/big-text")
    snapshot = await run.call("browser_snapshot", {})
    clicked = await run.call("browser_click", {"ref": ref_of(snapshot["result"]["snapshot"], 'button "Alert"')})
    await run.close()
    limit = sandbox.config.max_page_text_chars
    for reply in (started, snapshot, clicked):
        assert reply["ok"], str(reply)[:300]
        assert longest_text(json.dumps(reply)) <= limit + 40
    assert snapshot["result"]["title"] == "T" * limit
    assert snapshot["result"]["tabs"][0]["title"] == "T" * limit
    (dialog,) = clicked["result"]["changes"]["dialogs"]
    assert dialog["message"].startswith("M" * limit + "… (") and dialog["message"].endswith(" more characters)")
    assert longest_text(run.trace.text()) <= limit + 40


def longest_text(lines: str) -> int:
    """The longest string in any of these JSON lines."""

    def longest(value: object) -> int:
        if isinstance(value, str):
            return len(value)
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        return max((longest(item) for item in items), default=0)

    return max(longest(json.loads(line)) for line in lines.splitlines())


async def test_a_tab_whose_page_crashed_says_so_at_once_and_the_session_goes_on(sandbox, hostile_root):
    # Before, nothing recorded the crash and every later call on the tab waited 10 s for a
    # page_unresponsive that blamed a spinning script.
    run = hostile_run(sandbox, hostile_root, "/calm")
    await start_hostile(run, "/calm")
    crashed = run.current_session().active_tab
    cdp = await crashed.page.context.new_cdp_session(crashed.page)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(cdp.send("Page.crash"), 2)  # the renderer ends: a real crash
    while not crashed.crashed:
        await asyncio.sleep(0.05)
    snapshot = await run.call("browser_snapshot", {})  # page_unresponsive after 10 s before
    assert snapshot["error"]["type"] == "page_crashed" and "browser_close_tab" in snapshot["error"]["message"]
    opened = await run.call("browser_open_tab", {"url": f"{HOSTILE}/calm"})
    assert opened["ok"], opened
    assert {t["tab"]: t["title"] for t in opened["result"]["tabs"]} == {"t1": None, "t2": "Calm"}
    switched = await run.call("browser_switch_tab", {"tab": "t1"})
    assert switched["error"]["type"] == "page_crashed"
    closed = await run.call("browser_close_tab", {"tab": "t1"})
    assert closed["ok"] and [t["tab"] for t in closed["result"]["tabs"]] == ["t2"], closed
    assert "Calm" in await snapshot_text(run)
    await run.close()
    (event,) = [e for e in parse_trace(run.trace.text()).events if e.kind == "page_crashed"]
    assert (event.tab, event.data["url"]) == ("t1", f"{HOSTILE}/calm")


async def test_popups_beyond_the_tab_cap_are_refused_and_the_session_stays_usable(own_sandbox, hostile_root):
    async with own_sandbox(max_tabs_per_session=5) as own:
        run = hostile_run(own, hostile_root, "/popups", "/calm")
        await start_hostile(run, "/popups")
        clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Open"')})
        assert clicked["ok"], clicked
        await asyncio.sleep(1.0)
        reply = await run.call("browser_snapshot", {})
        assert reply["ok"], reply
        tabs = reply["result"]["tabs"]
        assert len(tabs) == 5 and all(t["title"] in ("Popups", "Calm") for t in tabs), tabs
        opened = await run.call("browser_open_tab", {"url": f"{HOSTILE}/calm"})
        assert opened["error"]["type"] == "too_many_tabs" and "max_tabs_per_session 5" in opened["error"]["message"]
        trace = parse_trace(run.trace.text())
        refused = [e for e in trace.events if e.data.get("reason") == "too_many_tabs"]
        suppressed = sum(e.data["count"] for e in trace.events if e.kind == "events_suppressed")
        assert len(refused) + suppressed >= 300 - 4  # all but the first four popups (tabs t2-t5) refused
        await run.close()


async def test_a_tab_whose_worker_floods_the_console_is_closed_and_the_other_runs_go_on(own_sandbox, hostile_root):
    """A worker's console messages crossed the driver, 20,000 a second: another run's session start
    timed out after 30 s, and the flood went on as long as the page was open."""
    async with own_sandbox() as own:
        flooding = hostile_run(own, hostile_root, "/worker-console-flood")
        quiet = hostile_run(own, hostile_root, "/calm")
        await start_hostile(flooding, "/worker-console-flood")
        await start_hostile(quiet, "/calm")
        for _ in range(100):
            if not flooding.current_session().tabs:
                break
            await asyncio.sleep(0.1)
        answers = [await quiet.call("browser_snapshot", {}) for _ in range(3)]
        after = await flooding.call("browser_snapshot", {})
        await flooding.close()
        await quiet.close()
    closed = [e.data for e in parse_trace(flooding.trace.text()).events if e.kind == "tab_closed"]
    assert [(c["tab"], c["reason"]) for c in closed] == [("t1", "console_flood")], closed
    assert closed[0]["messages"] > 200 and closed[0]["seconds"] == 2.0, closed
    assert all(a["ok"] for a in answers), answers
    assert after["error"]["type"] == "no_tab", after


@pytest.mark.parametrize("page", ["/link-popups", "/base-popups", "/shadow-popups"])
async def test_a_link_clicked_in_a_loop_opens_no_window_past_the_cap(own_sandbox, hostile_root, page):
    """Each click of a link opening a new window (its target, or its document's <base target>)
    opened a page, which Chromium made before the session closed it: 300 pages for one click,
    where window.open stopped at the cap."""
    async with own_sandbox(max_tabs_per_session=5) as own:
        run = hostile_run(own, hostile_root, page, "/calm")
        await start_hostile(run, page)
        clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Open"')})
        assert clicked["ok"], clicked
        await asyncio.sleep(1.0)
        made = run.current_session().settling.pages_seen
        reply = await run.call("browser_snapshot", {})
        await run.close()
    assert reply["ok"] and len(reply["result"]["tabs"]) == 5, reply
    assert made <= 6, made  # its own tab, and the five its document may open
    trace = parse_trace(run.trace.text())
    refused = [e for e in trace.events if e.data.get("reason") == "too_many_tabs"]
    suppressed = sum(
        e.data["count"]
        for e in trace.events
        if e.kind == "events_suppressed" and e.data.get("reason") == "too_many_tabs"
    )
    assert len(refused) + suppressed >= 300 - 5, (len(refused), suppressed)


async def test_links_to_a_frame_or_kept_from_opening_spend_no_popup(own_sandbox, hostile_root):
    """A link naming one of the page's frames (a cross-origin one too), or one the page keeps from
    opening (preventDefault, and stopPropagation after it) opens no window: 120 of them left the
    document's next new-window link free to open. No click raised an error in the page (every
    click that was on no link did: the listeners read the window as a node)."""
    async with own_sandbox(max_tabs_per_session=5) as own:
        run = hostile_run(own, hostile_root, "/link-frames", "/calm")
        await start_hostile(run, "/link-frames")
        text = await snapshot_text(run)
        assert (await run.call("browser_click", {"ref": ref_of(text, 'button "Go"')}))["ok"]
        opened = await run.call("browser_click", {"ref": ref_of(text, 'link "Open one"')})
        await run.close()
    assert opened["ok"] and len(opened["result"]["tabs"]) == 2, opened
    assert opened["result"]["title"] == "Link frames", opened  # no error in the page
    trace = parse_trace(run.trace.text())
    assert [e.data for e in trace.events if e.data.get("reason") == "too_many_tabs"] == []


async def test_a_beforeunload_handler_never_keeps_the_agent_on_the_page(sandbox, hostile_root):
    run = hostile_run(sandbox, hostile_root, "/beforeunload", "/calm")
    await start_hostile(run, "/beforeunload")
    touched = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Touch"')})
    assert touched["ok"], touched  # a user gesture: Chromium now shows the page's beforeunload dialog
    went = await run.call("browser_navigate", {"url": f"{HOSTILE}/calm"})
    assert went["ok"] and went["result"]["url"] == f"{HOSTILE}/calm", went
    (dialog,) = [e.data for e in parse_trace(run.trace.text()).events if e.kind == "dialog"]
    assert dialog["dialog_type"] == "beforeunload" and dialog["response"] == "accepted"
    await run.close()


async def test_kept_profiles_are_bounded_by_bytes_and_the_eviction_is_recorded(own_sandbox, hostile_root):
    async with own_sandbox(max_profile_bytes=2_500_000, own_browser=True) as own:
        run = hostile_run(own, hostile_root, "/storage")
        for key in ("big-a", "big-b", "big-c"):  # about 1 MB each
            args = {"provider": "kernel", "site_key": key, "url": f"{HOSTILE}/storage"}
            assert (await run.call("browser_start_session", args))["ok"]
            assert (await run.call("browser_close", {}))["ok"]  # its profile is saved now
        assert list(own.host.profiles) == ["big-b", "big-c"]
        assert 2_000_000 < sum(own.host.profile_bytes.values()) <= 2_500_000
        (evicted,) = [e.data for e in parse_trace(run.trace.text()).events if e.kind == "profiles_evicted"]
        assert evicted == {"site_keys": ["big-a"], "max_profile_bytes": 2_500_000}
        await run.close()


async def test_a_console_flood_does_not_slow_another_run(sandbox, hostile_root):
    flood, quiet = hostile_run(sandbox, hostile_root, "/console-flood"), hostile_run(sandbox, hostile_root, "/calm")
    await start_hostile(flood, "/console-flood")
    await start_hostile(quiet, "/calm")
    await asyncio.sleep(1.0)
    assert "Calm" in await snapshot_text(quiet)  # the other run goes on (how fast: not a test's to say)
    assert "Console flood" in await snapshot_text(flood)
    await flood.close()
    await quiet.close()


def renderers(sandbox: Sandbox) -> list[int]:
    """The renderer processes of ``sandbox``'s own Chromium (found by its backstop proxy's port)."""
    argvs = descendant_argvs(os.getpid())
    browser = next(pid for pid, argv in argvs.items() if f"--proxy-server={sandbox.host.backstop.url}" in argv)
    return [pid for pid in process_tree(browser)[1:] if "--type=renderer" in argvs.get(pid, [])]


async def test_a_context_that_will_not_close_is_disposed_of_and_its_renderer_ends(own_sandbox, hostile_root):
    # A close bound nothing meets: the context's close always times out, and the browser disposes of it.
    async with own_sandbox(close_timeout_s=0.001, own_browser=True) as own:
        before = set(renderers(own))
        run = hostile_run(own, hostile_root, "/flood")
        await start_hostile(run, "/flood")
        opened = set(renderers(own)) - before
        assert opened, "the session's page has a renderer of its own"
        began = time.monotonic()
        await run.close()
        while set(renderers(own)) & opened and time.monotonic() - began < 5:
            await asyncio.sleep(0.1)
        assert not set(renderers(own)) & opened, "the renderer still runs 5 s after the run ended"
        assert parse_trace(run.trace.text()).end["reason"] == "closed"


async def test_a_mailto_link_starts_no_program_of_the_machines(own_sandbox, hostile_root, tmp_path, monkeypatch):
    """Chromium handed a page's mailto: URL to the desktop: it ran `xdg-settings` and then
    `xdg-email` with the page's URL, found in PATH (which would open the user's mail program)."""
    bin_dir, ran = tmp_path / "bin", tmp_path / "ran.txt"
    bin_dir.mkdir()
    for name in ("xdg-open", "xdg-email", "xdg-settings"):  # what a desktop would start, recording instead
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {ran}\n')
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    async with own_sandbox(own_browser=True) as own:  # launched with that PATH
        run = hostile_run(own, hostile_root, "/mailto")
        await start_hostile(run, "/mailto")  # the page sends its tab to a mailto: URL at load
        reply = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), "write to us")})
        assert reply["ok"], reply
        await asyncio.sleep(1.0)  # Chromium asks the desktop after the navigation is refused to the web
        await run.close()
    assert not ran.exists(), ran.read_text()


async def test_a_pages_uncaught_errors_do_not_reach_the_driver(sandbox, hostile_root):
    """Chromium handed each uncaught error and unhandled rejection (message and stack) to the one
    driver every run shares, read or not: 100 KB errors in a loop held it."""
    run = hostile_run(sandbox, hostile_root, "/error-flood")
    await start_hostile(run, "/error-flood")
    page = run.current_session().tabs["t1"].page
    errors: list[object] = []
    page.on("pageerror", lambda error: errors.append(error))  # what crosses the driver
    reply = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), "throw")})
    assert reply["ok"], reply
    await asyncio.sleep(0.5)
    title = (await run.call("browser_snapshot", {}))["result"]["title"]
    await run.close()
    assert title == "Errors seen: 100"  # the page's own listener still heard each error
    assert errors == []


async def test_a_page_opening_websockets_in_a_loop_is_refused_in_the_page_and_counted(sandbox, hostile_root):
    """Each WebSocket a page opened crossed the driver every run shares several times (Playwright's
    stand-in for routing it), however many a second, and no flood guard counted them."""
    run = hostile_run(sandbox, hostile_root, "/socket-flood")
    await start_hostile(run, "/socket-flood")
    reply = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), "open")})
    assert reply["ok"], reply
    await asyncio.sleep(0.5)  # the counts of the refusals past the first 20 come within 200 ms
    title = (await run.call("browser_snapshot", {}))["result"]["title"]
    await run.close()
    assert title == "Refused at once: 2000"
    sockets = [e for e in parse_trace(run.trace.text()).events if e.data.get("resource_type") == "websocket"]
    assert len(sockets) <= 25 and sockets[0].data["url"] == "wss://socket.sandbox.example/s0", sockets[:2]
    assert sockets[0].data["reason"] == "websocket"
