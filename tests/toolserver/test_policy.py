"""Live policy: the allow-list at call time (and its bypasses), page-initiated navigations,
state-change detection and blocking, observe mode, and the offline canary."""

from __future__ import annotations

import re

import pytest
import pytest_asyncio

from tests.support.calls import ref_of, snapshot
from tests.support.site import SITE
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.run import Run

ALLOWED = f"{SITE}/allowed?a=1&b=2"
PAGES = [ALLOWED, f"{SITE}/policy", f"{SITE}/meta", f"{SITE}/redirect-out", f"{SITE}/changes"]

BYPASSES = {
    "scheme case": "HTTPS://test.sandbox.example/allowed?a=1&b=2",
    "host case": "https://TEST.sandbox.example/allowed?a=1&b=2",
    "path case": "https://test.sandbox.example/Allowed?a=1&b=2",
    "percent-encoded char": "https://test.sandbox.example/%61llowed?a=1&b=2",
    "encoded ampersand": "https://test.sandbox.example/allowed?a=1%26b=2",
    "encoded question mark": "https://test.sandbox.example/allowed%3Fa=1&b=2",
    "userinfo host": "https://test.sandbox.example@evil.example/allowed?a=1&b=2",
    "userinfo": "https://user@test.sandbox.example/allowed?a=1&b=2",
    "explicit port": "https://test.sandbox.example:443/allowed?a=1&b=2",
    "trailing dot": "https://test.sandbox.example./allowed?a=1&b=2",
    "dot-dot segment": "https://test.sandbox.example/x/../allowed?a=1&b=2",
    "dot segment": "https://test.sandbox.example/./allowed?a=1&b=2",
    "backslash": "https://test.sandbox.example\\allowed?a=1&b=2",
    "tab inside": "https://test.sandbox.example/al\tlowed?a=1&b=2",
    "newline inside": "https://test.sandbox.example/allowed?a=1&b\n=2",
    "space around": " https://test.sandbox.example/allowed?a=1&b=2 ",
    "reordered query": "https://test.sandbox.example/allowed?b=2&a=1",
    "added parameter": "https://test.sandbox.example/allowed?a=1&b=2&c=3",
    "http scheme": "http://test.sandbox.example/allowed?a=1&b=2",
    "javascript": "javascript:location='https://test.sandbox.example/forbidden'",
    "data": "data:text/html,<h1>x</h1>",
    "file": "file:///etc/passwd",
    "blob": "blob:https://test.sandbox.example/1234",
    "view-source": "view-source:https://test.sandbox.example/allowed?a=1&b=2",
    "chrome": "chrome://settings",
    "about": "about:blank",
    "IDN look-alike": "https://test.sandbox.ex\u0430mple/allowed?a=1&b=2",
    "punycode look-alike": "https://test.sandbox.xn--exmple-4nf/allowed?a=1&b=2",
}


def policy_run(sandbox, mode="enforce", block=False, allowed_changes=()) -> Run:
    policy = Policy(
        allowed_urls=tuple(PAGES),
        mode=mode,
        block_state_changes=block,
        allowed_state_changes=frozenset(allowed_changes),
        pack="test-pack",
    )
    return sandbox.create_run(policy=policy)


async def enforced_run(sandbox) -> Run:
    run = policy_run(sandbox)
    reply = await run.call("browser_start_session", {"provider": "kernel", "site_key": "pol", "url": ALLOWED})
    assert reply["ok"], reply
    return run


@pytest.fixture
async def enforced(sandbox):
    run = await enforced_run(sandbox)
    yield run
    await run.close()


@pytest_asyncio.fixture(scope="module")
async def enforced_shared(sandbox):
    """One enforced session for the bypass table: each case is refused and checked to leave
    the page where it was, so the next case starts from the same state."""
    run = await enforced_run(sandbox)
    yield run
    await run.close()


def events(run, kind):
    return [e for e in parse_trace(run.trace.text()).events if e.kind == kind]


@pytest.mark.parametrize("tool", ["browser_navigate", "browser_open_tab"])
@pytest.mark.parametrize("case", list(BYPASSES))
async def test_bypass_is_refused_and_page_does_not_move(enforced_shared, tool, case):
    enforced = enforced_shared
    url = BYPASSES[case]
    reply = await enforced.call(tool, {"url": url})
    assert reply["ok"] is False and reply["error"]["type"] == "policy_violation", (case, reply)
    assert "allowed_urls" in reply["error"]["message"] and ALLOWED in reply["error"]["message"]
    violation = events(enforced, "policy_violation")[-1]
    assert violation.data["url"] == url and violation.data["origin"] == "tool_call"
    assert violation.seq == parse_trace(enforced.trace.text()).calls[-1].seq
    snap = await snapshot(enforced)
    assert snap["url"] == ALLOWED and [t["tab"] for t in snap["tabs"]] == ["t1"]


async def test_a_refusal_quoting_a_huge_argument_is_cut_at_the_page_text_bound(enforced_shared):
    # The whole 200 KB URL came back in the message, and was in the trace line twice (args, error).
    url = f"{SITE}/{'a' * 200_000}"
    reply = await enforced_shared.call("browser_navigate", {"url": url})
    limit = enforced_shared.config.max_page_text_chars
    assert reply["error"]["type"] == "policy_violation" and len(reply["error"]["message"]) < limit + 100
    assert reply["error"]["message"].endswith("more characters)"), reply["error"]["message"][-80:]
    line = parse_trace(enforced_shared.trace.text()).calls[-1]
    assert line.args == {"url": url} and line.error is not None and line.error.message == reply["error"]["message"]


@pytest.mark.parametrize("tool", ["browser_navigate", "browser_open_tab"])
async def test_fragment_only_difference_is_accepted(enforced, tool):
    reply = await enforced.call(tool, {"url": ALLOWED + "#section-2"})
    assert reply["ok"], reply
    assert reply["result"]["url"] == ALLOWED + "#section-2"
    assert not events(enforced, "policy_violation")


async def test_start_session_url_is_checked_too(sandbox):
    run = policy_run(sandbox)
    reply = await run.call("browser_start_session", {"provider": "kernel", "url": BYPASSES["host case"]})
    assert reply["error"]["type"] == "policy_violation" and run.current_session_id is None
    await run.close()


PAGE_INITIATED = [
    ("link", 'link "plain link"'),
    ("location", 'button "location change"'),
    ("meta refresh", 'link "meta refresh"'),
    ("http redirect", 'link "redirect out"'),
    ("window.open", 'button "window open"'),
    ("target=_blank", 'link "blank target"'),
    ("form submission", 'button "search"'),
    ("unmirrored outside", 'link "canary link"'),
]


@pytest.mark.parametrize("name, needle", PAGE_INITIATED)
async def test_page_initiated_navigation_outside_is_stopped(sandbox, canary, name, needle):
    run = policy_run(sandbox)
    await run.call("browser_start_session", {"provider": "kernel", "site_key": "pol", "url": f"{SITE}/policy"})
    snap = await snapshot(run)
    reply = await run.call("browser_click", {"ref": ref_of(snap["snapshot"], needle)})
    assert reply["ok"], reply
    click_seq = parse_trace(run.trace.text()).calls[-1].seq
    violations = [e for e in events(run, "policy_violation") if e.data["origin"] in ("page", "redirect")]
    assert violations and all(v.seq == click_seq for v in violations), (name, violations)
    assert any("/forbidden" in v.data["url"] or v.data["url"].startswith(canary.url) for v in violations)
    blocked = [e for e in events(run, "blocked_request") if e.data["reason"] == "policy"]
    assert blocked, name
    for tab in reply["result"]["tabs"]:  # nothing loaded the forbidden page, in any tab
        assert "/forbidden" not in tab["url"] or tab["title"] == "Blocked by the sandbox"
    if name in ("window.open", "target=_blank"):
        assert len(reply["result"]["tabs"]) == 2  # the popup is listed, but stays empty
    else:
        assert (await snapshot(run))["url"] == (f"{SITE}/meta" if name == "meta refresh" else f"{SITE}/policy")
    assert canary.requests == []
    await run.close()


async def test_observe_mode_records_without_refusing(sandbox):
    run = policy_run(sandbox, mode="observe")
    await run.call("browser_start_session", {"provider": "kernel", "url": ALLOWED})
    reply = await run.call("browser_navigate", {"url": f"{SITE}/forbidden"})
    assert reply["ok"] and reply["result"]["url"] == f"{SITE}/forbidden"
    violation = events(run, "policy_violation")[0]
    assert violation.data["enforced"] is False and violation.data["origin"] == "tool_call"
    await run.close()


async def test_run_without_pack_has_no_allow_list(run):
    await run.call("browser_start_session", {"provider": "kernel", "url": f"{SITE}/forbidden"})
    assert not events(run, "policy_violation")


async def changes_run(sandbox, **kw):
    run = policy_run(sandbox, **kw)
    await run.call("browser_start_session", {"provider": "kernel", "url": f"{SITE}/changes"})
    return run, (await snapshot(run))["snapshot"]


STATE_CHANGES = [
    ("non_get_request", 'button "post data"', None),
    ("form_submission", 'button "post form"', None),
    ("final_state_click", 'button "Confirm"', "final-submit"),
    ("download", 'link "attachment"', None),
]


@pytest.mark.parametrize("action, needle, name", STATE_CHANGES)
async def test_state_changes_are_recorded_with_their_call(sandbox, action, needle, name):
    run, snap = await changes_run(sandbox)
    reply = await run.call("browser_click", {"ref": ref_of(snap, needle)})
    assert reply["ok"], reply
    seq = parse_trace(run.trace.text()).calls[-1].seq
    found = [e for e in events(run, "state_change") if e.data["action"] == action]
    assert len(found) == 1 and found[0].seq == seq and found[0].data["allowed"] is False, found
    assert reply["result"]["changes"]["state_changes"]
    if name:
        assert found[0].data["name"] == name
        reached = [e for e in events(run, "state_change") if e.data["action"] == "final_state_reached"]
        assert reached and reached[0].data["name"] == "submitted"
    await run.close()


@pytest.mark.parametrize("action, needle, name", STATE_CHANGES)
async def test_block_state_changes_prevents_them(sandbox, canary, action, needle, name):
    run, snap = await changes_run(sandbox, block=True)
    reply = await run.call("browser_click", {"ref": ref_of(snap, needle)})
    found = [e for e in events(run, "state_change") if e.data["action"] == action]
    assert found and found[0].data["blocked"] is True, (action, found, reply)
    if action == "final_state_click":
        assert reply["error"]["type"] == "policy_violation"
        assert not [e for e in events(run, "state_change") if e.data["action"] == "final_state_reached"]
    if action == "download":
        assert not events(run, "download")
    await run.close()


async def test_enter_key_is_a_state_change_and_can_be_blocked(sandbox):
    for block in (False, True):
        run, snap = await changes_run(sandbox, block=block)
        reply = await run.call("browser_type", {"ref": ref_of(snap, 'textbox "Query"'), "text": "x", "submit": True})
        assert reply["ok"] is (not block)
        enter = [e for e in events(run, "state_change") if e.data["action"] == "enter_key"]
        assert len(enter) == 1 and enter[0].data["blocked"] is block
        await run.close()


async def test_allowed_named_action_is_recorded_as_allowed(sandbox):
    run, snap = await changes_run(sandbox, block=True, allowed_changes=("save-draft",))
    reply = await run.call("browser_click", {"ref": ref_of(snap, 'button "Save draft"')})
    assert reply["ok"]
    [found] = events(run, "state_change")
    assert found.data["name"] == "save-draft" and found.data["allowed"] is True and found.data["blocked"] is False
    await run.close()


async def test_dialogs_dismissed_by_default_and_acceptance_is_a_state_change(own_sandbox):
    for mode, expected in (("dismiss", "false"), ("accept", "true")):
        async with own_sandbox(dialogs=mode) as own:
            run, snap = await changes_run(own)
            await run.call("browser_click", {"ref": ref_of(snap, 'button "ask"')})
            answer = (await snapshot(run))["snapshot"]
            assert "unanswered" not in answer and re.search(rf'paragraph \[ref=\w+\]: "{expected}"', answer), answer
            assert events(run, "dialog")[0].data["dialog_type"] == "confirm"
            accepted = [e for e in events(run, "state_change") if e.data["action"] == "dialog_accepted"]
            assert bool(accepted) is (mode == "accept")
            await run.close()


async def test_form_mirror_confirm_is_a_final_state_change(sandbox):
    form = "https://sarah27h.github.io/simple-multi-step-form/"
    for block in (False, True):
        policy = Policy(allowed_urls=(form,), block_state_changes=block, pack="controlled-form")
        run = sandbox.create_run(policy=policy)
        await run.call("browser_start_session", {"provider": "kernel", "url": form})
        values = {"Name": "João Muñoz", "Email": "joao.munoz@example.com"}
        for label, value in values.items():
            snap = (await snapshot(run))["snapshot"]
            assert (await run.call("browser_type", {"ref": ref_of(snap, f'textbox "{label}"'), "text": value}))["ok"]
        await run.call("browser_click", {"ref": ref_of((await snapshot(run))["snapshot"], 'button "Next"')})
        for label, value in {"City": "São Paulo", "Bio": "Synthetic bio."}.items():
            snap = (await snapshot(run))["snapshot"]
            await run.call("browser_type", {"ref": ref_of(snap, f'textbox "{label}"'), "text": value})
        await run.call("browser_click", {"ref": ref_of((await snapshot(run))["snapshot"], 'button "Next"')})
        snap = (await snapshot(run))["snapshot"]
        assert "Confirm (Step 3 of 3)" in snap
        reply = await run.call("browser_click", {"ref": ref_of(snap, 'button "Confirm & Next"')})
        changes = {e.data["action"]: e.data for e in events(run, "state_change")}
        assert changes["final_state_click"]["name"] == "final-submit"
        if block:
            assert reply["error"]["type"] == "policy_violation"
            assert "Confirm (Step 3 of 3)" in (await snapshot(run))["snapshot"]
            assert "final_state_reached" not in changes
        else:
            assert "Success (Finished)" in (await snapshot(run))["snapshot"]
            assert changes["final_state_reached"]["name"] == "submitted"
        await run.close()


async def test_canary_receives_nothing_and_every_attempt_is_traced(sandbox, canary):
    run = policy_run(sandbox, mode="observe")
    await run.call("browser_start_session", {"provider": "kernel", "url": f"{SITE}/canary"})
    await snapshot(run)
    await run.call("browser_navigate", {"url": f"{canary.url}/direct"})
    await run.close()
    assert canary.requests == []
    blocked = {
        e.data["url"].replace(canary.url, "CANARY").split("?")[0]: e.data for e in events(run, "blocked_request")
    }
    expected = {
        "CANARY/img.png",
        "CANARY/script.js",
        "CANARY/prefetch",
        "CANARY/style.css",
        "CANARY/iframe",
        "CANARY/form-post",
        "CANARY/fetch",
        "CANARY/xhr",
        "CANARY/beacon",
        "CANARY/events",
        "CANARY/redirected",
        f"{SITE}/sw.js",
    }
    missing = expected - set(blocked)
    assert not missing, (missing, sorted(blocked))
    assert any(k.startswith("ws://") or v["resource_type"] == "websocket" for k, v in blocked.items())
    refused = parse_trace(run.trace.text()).calls[-1]
    assert refused.error.type == "not_in_mirror"
    assert [e for e in events(run, "state_change") if e.data["action"] in ("non_get_request", "form_submission")]
