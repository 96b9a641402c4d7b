"""A page whose renderer crashes while a call waits for it to settle: that call answers
``page_crashed`` itself. Before, it answered ``ok`` with the page as it stood before the crash,
and only the next call said the page had crashed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

import pytest

from tests.support.calls import ref_of
from tests.support.hostile import build_hostile_mirror, hostile_run, start_hostile
from tests.support.polling import until
from tests.support.processes import descendant_argvs
from tests.support.site import SITE
from toolserver.capacity import process_tree
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.faults import parse_faults

# Every mirrored answer comes this late: the call is still settling when the page crashes (the
# crash, a new CDP session's question, can take most of a second on a busy machine).
LATE_MS = 2500
# The call's questions to the page once its request is out answer within this: then it is settling
# (a question asked after the crash fails at once: test_browser_crash_mid_call.py).
ASKED_S = 0.3
XHR_BUTTON = "document.querySelectorAll('button')[1].click()"  # /settle's "xhr": one request, answered late


async def crash(tab) -> None:
    """The tab's renderer ends (CDP ``Page.crash``, a real crash); returns once the sandbox saw it."""
    cdp = await tab.page.context.new_cdp_session(tab.page)
    crashing = asyncio.ensure_future(cdp.send("Page.crash"))  # its answer never comes
    while not tab.crashed:
        await asyncio.sleep(0.01)
    crashing.cancel()
    with contextlib.suppress(BaseException):
        await crashing


def loaded(session, path: str) -> bool:
    """The session's current tab shows ``path``, loaded, and the page has a request of its own in the router."""
    tab = session.active_tab
    state = tab.state or {}
    return tab.url == f"{SITE}{path}" and state.get("ready") == "complete" and session.settling.inflight > 0


@pytest.mark.parametrize("tool", ["browser_click", "browser_type", "browser_navigate", "browser_open_tab"])
async def test_a_call_whose_page_crashes_while_it_settles_answers_page_crashed(sandbox, tool):
    """Each call is in its settle wait once the page has a request of its own in the router: the
    click's; one the page made before the typing, once the typing reported; /on-load's fetch, once
    the document loaded (in the tab the navigation or the new tab shows)."""
    run = sandbox.create_run(policy=Policy(mode="observe"), faults=parse_faults(f"mirror-delay:ms={LATE_MS}"))
    assert (await run.call("browser_start_session", {"provider": "kernel", "url": f"{SITE}/settle"}))["ok"]
    session = run.current_session()
    first = session.active_tab
    snapshot = (await run.call("browser_snapshot", {}))["result"]["snapshot"]
    if tool == "browser_click":
        args: dict = {"ref": ref_of(snapshot, 'button "xhr"')}
        settling = lambda: session.settling.inflight > 0  # noqa: E731
    elif tool == "browser_type":
        args = {"ref": ref_of(snapshot, 'textbox "Shout"'), "text": "hi"}
        await first.page.evaluate(XHR_BUTTON)
        typed = first.inputs
        settling = lambda: first.inputs > typed  # noqa: E731
    else:
        args = {"url": f"{SITE}/on-load"}
        settling = lambda: loaded(session, "/on-load")  # noqa: E731
    call = asyncio.ensure_future(run.call(tool, args))
    assert await until(settling, 10, step=0.01)
    await asyncio.sleep(ASKED_S)
    assert not call.done()
    tab = session.active_tab
    await asyncio.wait_for(crash(tab), 10)
    crashed_at = time.monotonic()
    reply = await asyncio.wait_for(call, 10)
    waited = time.monotonic() - crashed_at
    await run.close()
    assert reply["ok"] is False and reply["error"]["type"] == "page_crashed", reply
    assert waited < 2.0, waited  # the crash ends the settle wait at once, not with the late answer
    assert tab.id in reply["error"]["message"] and "browser_close_tab" in reply["error"]["message"], reply
    line = parse_trace(run.trace.text()).calls[-1]
    crashes = [e["tab"] for e in line.events if e["kind"] == "page_crashed"]  # t1 too, when they share a renderer
    assert line.tool == tool and not line.ok and crashes.count(tab.id) == 1, line


async def test_a_question_to_a_page_that_crashes_ends_at_the_crash(own_sandbox, tmp_path):
    """A spinning page never answers the snapshot's question; when its renderer ends (killed: CDP
    Page.crash waits for the spinning thread), the question ends with it. Before, it waited out the
    action bound (5 s), then said page_crashed."""
    root = build_hostile_mirror(tmp_path)
    async with own_sandbox() as own:
        run = hostile_run(own, root, "/spin")
        await start_hostile(run, "/spin")
        tab = run.current_session().active_tab
        await asyncio.sleep(0.5)  # it spins 50 ms after its load
        call = asyncio.ensure_future(run.call("browser_snapshot", {}))
        await asyncio.sleep(0.5)  # asked, and never answered
        assert not call.done()
        argvs = descendant_argvs(os.getpid())
        browser = next(pid for pid, argv in argvs.items() if f"--proxy-server={own.host.backstop.url}" in argv)
        for pid in process_tree(browser)[1:]:
            if "--type=renderer" in argvs.get(pid, []):
                os.kill(pid, signal.SIGKILL)
        assert await until(lambda: tab.crashed, 10, step=0.01)
        crashed_at = time.monotonic()
        reply = await asyncio.wait_for(call, 10)
        waited = time.monotonic() - crashed_at
        await run.close()
    assert reply["error"]["type"] == "page_crashed", reply
    assert waited < 2.0, waited  # the action bound is 5 s
