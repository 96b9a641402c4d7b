"""A tab call that fails says where the agent is: browser_open_tab whose page does not load
leaves the new tab current and says so (a hang or crash of that page is answered as that tab's,
and closing it is the advice), and browser_switch_tab cut short switches nothing. Before, the
open's error did not say the current tab had moved, and a failed switch had moved it. A start
whose first page fails says the session is open."""

from __future__ import annotations

import dataclasses

from tests.support.calls import snapshot, start
from tests.support.hostile import HOSTILE, build_hostile_mirror
from tests.support.site import SITE
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace


async def test_an_open_tab_whose_page_fails_to_load_leaves_the_current_tab_current(sandbox, tmp_path):
    run = sandbox.create_run(policy=Policy(mode="observe"), mirror_roots=(build_hostile_mirror(tmp_path / "h"),))
    started = await run.call("browser_start_session", {"provider": "kernel", "site_key": "h", "url": f"{HOSTILE}/calm"})
    assert started["ok"], started
    failed = await run.call("browser_open_tab", {"url": f"{HOSTILE}/fifo"})  # a body that cannot be read
    assert failed["error"]["type"] == "browser_action_failed", failed
    message = failed["error"]["message"]
    assert message.endswith(". Tab t2 was opened and is now the current tab (tab t1 is still open)."), message
    page = await snapshot(run)
    assert page["tab"] == "t2" and page["url"] != f"{HOSTILE}/calm"
    assert [(t["tab"], t["active"]) for t in page["tabs"]] == [("t1", False), ("t2", True)]
    await run.close()
    (*_, opened, _) = parse_trace(run.trace.text()).calls
    assert (opened.tool, opened.tab, opened.error.message) == ("browser_open_tab", "t2", message)


async def test_a_start_whose_first_page_fails_to_load_says_the_session_is_open_and_current(sandbox, tmp_path):
    """The session was open and current, but the error said only that the page failed: an agent
    started another, and a second browser context was held (a gate counting starts saw two)."""
    run = sandbox.create_run(policy=Policy(mode="observe"), mirror_roots=(build_hostile_mirror(tmp_path / "h"),))
    failed = await run.call("browser_start_session", {"provider": "kernel", "site_key": "h", "url": f"{HOSTILE}/fifo"})
    assert failed["error"]["type"] == "browser_action_failed", failed
    session = run.current_session().id
    message = failed["error"]["message"]
    assert message.endswith(
        f". Session {session} was started and is the current session (tab t1): go on in it "
        "(browser_navigate) rather than starting another."
    ), message
    assert failed["error"]["details"]["session_id"] == session
    assert (await run.call("browser_navigate", {"url": f"{HOSTILE}/calm"}))["ok"]  # the advice works
    await run.close()
    (started, _) = parse_trace(run.trace.text()).calls
    assert started.error.message == message


async def test_a_page_slow_to_load_is_a_timeout_not_the_script_it_was_refused(own_sandbox, tmp_path):
    """A navigation that outlasts its timeout on a page with an unmirrored script said the script
    was not in the mirror (the last request refused during the call, whatever it was)."""
    # The page holds its load 4 s: 2.5 s leave a busy machine time to refuse its script first.
    async with own_sandbox(navigation_timeout_ms=2500) as own:
        run = own.create_run(policy=Policy(mode="observe"), mirror_roots=(build_hostile_mirror(tmp_path / "h"),))
        started = await run.call(
            "browser_start_session", {"provider": "kernel", "site_key": "h", "url": f"{HOSTILE}/calm"}
        )
        assert started["ok"], started
        slow = await run.call("browser_navigate", {"url": f"{HOSTILE}/slow-load"})
        await run.close()
    assert slow["error"]["type"] == "browser_action_failed", slow
    message = slow["error"]["message"]
    assert "Timeout 2500ms exceeded" in message and "tracker" not in message, message
    refused = [e.data for e in parse_trace(run.trace.text()).events if e.kind == "blocked_request"]
    # Chromium may ask for the page's /favicon.ico itself, past interception (refused at the backstop).
    refused = [r for r in refused if not r["url"].endswith("/favicon.ico")]
    assert [(r["url"], r["resource_type"]) for r in refused] == [("https://tracker.sandbox.example/t.js", "script")]


async def test_a_switch_cut_short_switches_nothing(run):
    await start(run)
    assert (await run.call("browser_open_tab", {"url": f"{SITE}/second"}))["result"]["tab"] == "t2"
    bounds = run.config
    run.config = dataclasses.replace(bounds, call_timeout_s=1e-9)  # cut short at its first wait
    try:
        cut = await run.call("browser_switch_tab", {"tab": "t1"})
    finally:
        run.config = bounds
    assert cut["error"]["type"] == "page_unresponsive", cut
    page = await snapshot(run)
    assert (page["tab"], page["url"]) == ("t2", f"{SITE}/second")


async def test_an_empty_tab_or_session_id_is_not_given_as_for_a_ref(sandbox, tmp_path):
    """Converters that send "" for an unset string: browser_close_tab(tab="") and
    browser_close(session_id="") were refused ("no tab ''"), while "" for a ref is not given."""
    run = sandbox.create_run(policy=Policy(mode="observe"), mirror_roots=(build_hostile_mirror(tmp_path / "h"),))
    await start(run, f"{HOSTILE}/calm", site_key="h")
    assert (await run.call("browser_open_tab", {"url": f"{HOSTILE}/closer"}))["ok"]
    closed = await run.call("browser_close_tab", {"tab": ""})
    assert closed["ok"] and closed["result"]["closed_tab"] == "t2", closed
    ended = await run.call("browser_close", {"session_id": ""})
    assert ended["ok"], ended
    again = await run.call("browser_snapshot", {})
    assert again["error"]["type"] == "no_session" and "closed by call 4 (browser_close)" in again["error"]["message"]
    await run.close()
