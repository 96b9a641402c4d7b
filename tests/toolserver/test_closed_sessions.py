"""After browser_close: a repeated close answers ``already_closed``, and any other call says the
run's session is over, naming the call that closed it, never advising another start (the start
gate requires exactly one). A close cut short by ``call_timeout_s`` closes all the same, and the
close retried after it answers ok once the close under way has ended."""

from __future__ import annotations

import asyncio
import time

from tests.support.calls import start
from tests.support.hostile import HOSTILE, build_hostile_mirror
from tests.support.site import SITE
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace


async def test_a_second_close_is_already_closed_and_later_calls_say_the_session_is_over(run):
    session = (await start(run))["session_id"]
    first = await run.call("browser_close", {})
    assert first["result"] == {"closed": [session], "open_sessions": []}
    again = await run.call("browser_close", {})
    assert again["ok"], again
    assert again["result"] == {"closed": [], "open_sessions": [], "already_closed": [session]}
    for name, args in (("browser_snapshot", {}), ("browser_navigate", {"url": f"{SITE}/second"})):
        reply = await run.call(name, args)
        assert reply["error"] == {
            "type": "no_session",
            "message": f"session {session} was closed by call 2 (browser_close): this run's session is over",
        }, reply
        assert "browser_start_session" not in reply["error"]["message"]
    by_id = await run.call("browser_close", {"session_id": session})
    assert by_id["result"]["already_closed"] == [session]
    await run.close()
    lines = parse_trace(run.trace.text()).calls
    assert [(c.tool, c.ok, c.session_id) for c in lines] == [
        ("browser_start_session", True, session),
        ("browser_close", True, session),
        ("browser_close", True, session),
        ("browser_snapshot", False, None),
        ("browser_navigate", False, None),
        ("browser_close", True, session),
    ]


async def test_before_any_start_the_advice_is_still_to_start(run):
    reply = await run.call("browser_close", {})
    assert reply["error"]["type"] == "no_session" and "call browser_start_session first" in reply["error"]["message"]


async def test_with_another_session_open_a_close_moves_to_it_and_then_names_the_last(run):
    first = (await start(run, site_key="a"))["session_id"]
    second = (await start(run, site_key="b"))["session_id"]
    assert (await run.call("browser_close", {}))["result"] == {"closed": [second], "open_sessions": [first]}
    assert (await run.call("browser_snapshot", {}))["ok"]  # the other session is current
    assert (await run.call("browser_close", {}))["result"] == {"closed": [first], "open_sessions": []}
    again = await run.call("browser_close", {})
    assert again["result"]["already_closed"] == [first]
    said = (await run.call("browser_snapshot", {}))["error"]["message"]
    assert said == f"session {first} was closed by call 5 (browser_close): this run's session is over"


async def test_a_close_cut_short_by_the_call_timeout_can_be_retried_and_answers_ok(own_sandbox, tmp_path):
    """Saving a spinning page's profile waits up to close_timeout_s, longer than the call may take:
    the close is cut short, its answer says to try again later, and the close goes on. Retried, it
    said no_session ("call browser_start_session first"): the session was marked closed before the
    timeout, and the run still held it as its current session. Now the retry answers at once that
    the session is closed already (by the call cut short); the run's end awaits the close."""
    root = build_hostile_mirror(tmp_path / "hostile")
    async with own_sandbox(call_timeout_s=2.0, close_timeout_s=5.0) as hurried:
        run = hurried.create_run(policy=Policy(mode="observe"), mirror_roots=(root,))
        started = await run.call(
            "browser_start_session", {"provider": "kernel", "site_key": "hostile", "url": f"{HOSTILE}/calm"}
        )
        session_id = started["result"]["session_id"]
        session = run.current_session()
        await session.active_tab.page.evaluate("setTimeout(() => { while (true) {} }, 0)")
        await asyncio.sleep(0.2)
        cut = await run.call("browser_close", {})
        assert cut["error"]["type"] == "page_unresponsive" and "Try again later" in cut["error"]["message"], cut
        began = time.monotonic()
        retried = await run.call("browser_close", {})
        assert retried["ok"], retried
        assert retried["result"] == {"closed": [], "open_sessions": [], "already_closed": [session_id]}
        assert time.monotonic() - began < 1.0
        after = await run.call("browser_snapshot", {})
        assert after["error"]["message"] == (
            f"session {session_id} was closed by call 2 (browser_close): this run's session is over"
        )
        await run.close()
        assert session.closing is not None and session.closing.done()
        assert [(c.tool, c.ok) for c in parse_trace(run.trace.text()).calls] == [
            ("browser_start_session", True),
            ("browser_close", False),
            ("browser_close", True),
            ("browser_snapshot", False),
        ]
