"""Every tool of the contract and its error paths, in-process, on a real Chromium."""

from __future__ import annotations

import json

import pytest

from tests.support.calls import ref_of, snapshot, start
from tests.support.site import SITE
from toolserver.contract.names import TOOL_NAMES
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace


async def test_list_tools_returns_contract_with_schemas(run):
    reply = await run.call("list_tools", {})
    tools = reply["result"]["tools"]
    assert [t["name"] for t in tools] == list(TOOL_NAMES)
    start_schema = next(t for t in tools if t["name"] == "browser_start_session")["input_schema"]
    assert set(start_schema["properties"]) == {"provider", "site_key", "clear_cookies", "url"}
    assert start_schema["additionalProperties"] is False
    assert all(t["side_effect"] in ("read_only", "input", "action", "destructive") for t in tools)


@pytest.mark.parametrize(
    "args, needle",
    [
        ({"provider": "kernel", "clear_cookies": "false"}, "argument 'clear_cookies'"),
        ({"provider": "kernel", "bogus": 1}, "unknown argument 'bogus'"),
        ({"provider": 7}, "argument 'provider'"),
        (["kernel"], "must be a JSON object"),
    ],
)
async def test_start_session_rejects_bad_arguments_by_name(run, args, needle):
    reply = await run.call("browser_start_session", args)
    assert reply["ok"] is False
    assert reply["error"]["type"] == "invalid_arguments"
    assert needle in reply["error"]["message"]
    call = parse_trace(run.trace.text()).calls[-1]
    assert call.args == args and call.ok is False


async def test_missing_required_argument_is_named(run):
    await start(run)
    reply = await run.call("browser_navigate", {})
    assert "missing required argument 'url'" in reply["error"]["message"]


async def test_start_session_result_and_first_page(run):
    result = await start(run, site_key="fresh-profile-1")
    assert result["provider"] == "kernel"
    assert result["session_id"].startswith("ses_")
    assert result["profile"] == "fresh-profile-1" and result["profile_new"] is True
    assert result["url"] == f"{SITE}/" and result["title"] == "Home" and result["status"] == 200
    assert result["tabs"] == [{"tab": "t1", "url": f"{SITE}/", "active": True, "title": "Home"}]


async def test_provider_other_than_kernel_is_refused_by_default(run):
    for provider in (None, "browserbase"):
        args = {"site_key": "k", "clear_cookies": False}
        if provider:
            args["provider"] = provider
        reply = await run.call("browser_start_session", args)
        assert reply["error"]["type"] == "provider_unavailable"
        said = "no provider was given" if provider is None else "provider 'browserbase' is not available"
        assert reply["error"]["message"].startswith(f'{said}: this service only starts provider="kernel"')


async def test_provider_fallback_option_names_the_other_provider(own_sandbox):
    async with own_sandbox(fallback_provider="browserbase") as own:
        run = own.create_run(policy=Policy())
        try:
            reply = await run.call("browser_start_session", {"site_key": "fb", "url": f"{SITE}/"})
            assert reply["ok"] and reply["result"]["provider"] == "browserbase"
            assert "fell back" in reply["result"]["fallback"]
        finally:
            await run.close()


async def test_profiles_persist_per_site_key_and_clear_cookies_empties(sandbox):
    first = sandbox.create_run()
    await start(first, site_key="persist-key")
    await first.call("browser_close", {})
    await first.close()

    second = sandbox.create_run()
    result = await start(second, url=f"{SITE}/second", site_key="persist-key")
    assert result["profile_new"] is False
    assert "cookie=visited=yes ls=1" in (await snapshot(second))["snapshot"]
    await second.call("browser_close", {})
    await second.close()

    third = sandbox.create_run()
    result = await start(third, url=f"{SITE}/second", site_key="persist-key", clear_cookies=True)
    assert result["profile_new"] is True
    text = (await snapshot(third))["snapshot"]
    assert "visited=yes" not in text and "ls=null" in text
    await third.close()


async def test_snapshot_click_and_stale_refs(run):
    await start(run)
    snap = await snapshot(run)
    assert snap["snapshot_id"] and snap["format"] == "aria" and snap["tab"] == "t1"
    button = ref_of(snap["snapshot"], 'button "Press"')
    reply = await run.call("browser_click", {"ref": button, "element": "Press button"})
    assert reply["ok"], reply
    assert "clicked 1" in (await snapshot(run))["snapshot"]
    # "target" is an alias of "ref"
    snap = await snapshot(run)
    reply = await run.call("browser_click", {"target": ref_of(snap["snapshot"], 'button "Press"')})
    assert reply["ok"] and "clicked 2" in (await snapshot(run))["snapshot"]

    # As strict converters and default-filling frameworks send them: every property, null for
    # the ones not given; an integer as a string. The trace keeps the arguments as sent.
    snap = await run.call("browser_snapshot", {"max_chars": "100000"})
    strict = {"ref": None, "target": ref_of(snap["result"]["snapshot"], 'button "Press"'), "element": None}
    reply = await run.call("browser_click", strict)
    assert reply["ok"] and "clicked 3" in (await snapshot(run))["snapshot"]
    calls = parse_trace(run.trace.text()).calls
    assert [c.args for c in calls[-3:-1]] == [{"max_chars": "100000"}, strict]

    unknown = await run.call("browser_click", {"ref": "e999"})
    assert unknown["error"]["type"] == "stale_ref" and "new snapshot" in unknown["error"]["message"]

    link = ref_of((await snapshot(run))["snapshot"], 'link "Second page"')
    await run.call("browser_click", {"ref": link})
    stale = await run.call("browser_click", {"ref": button})  # a ref of the old document
    assert stale["error"]["type"] == "stale_ref"
    assert "earlier document" in stale["error"]["message"]
    page_text = (await snapshot(run))["snapshot"]
    assert "Second page" in page_text  # nothing else was clicked


async def test_type_fills_unicode_exactly_and_enter_only_on_submit(run):
    await start(run)
    snap = (await snapshot(run))["snapshot"]
    name = ref_of(snap, 'textbox "Name"')
    reply = await run.call("browser_type", {"ref": name, "text": "João Muñoz"})
    assert reply["ok"] and reply["result"]["value"] == "João Muñoz"
    assert not [e for e in parse_trace(run.trace.text()).events if e.kind == "state_change"]
    reply = await run.call("browser_type", {"ref": name, "text": "Ana", "submit": True})
    assert reply["ok"]
    changes = [e for e in parse_trace(run.trace.text()).events if e.kind == "state_change"]
    assert [c.data["action"] for c in changes] == ["enter_key"]
    assert changes[0].seq == parse_trace(run.trace.text()).calls[-1].seq
    button = ref_of((await snapshot(run))["snapshot"], 'button "Press"')
    refused = await run.call("browser_type", {"ref": button, "text": "x"})  # Playwright's own words before
    assert refused["error"]["type"] == "browser_action_failed"
    assert refused["error"]["message"].startswith(f"{button} is not a field text can be typed into")


async def test_scroll_reports_position_and_end(run):
    await start(run, url=f"{SITE}/long")
    first = (await run.call("browser_scroll", {"direction": "down", "amount": 1000}))["result"]
    assert first["scroll_y"] == 1000 and first["at_end"] is False
    last = (await run.call("browser_scroll", {"direction": "down", "amount": 100000}))["result"]
    assert last["at_end"] is True and last["scroll_y"] == last["max_scroll_y"]
    bad = await run.call("browser_scroll", {"direction": "sideways"})
    assert bad["error"]["type"] == "invalid_arguments"


async def test_navigate_and_not_in_mirror(run):
    await start(run)
    reply = await run.call("browser_navigate", {"url": f"{SITE}/second#part"})
    assert reply["ok"] and reply["result"]["status"] == 200 and reply["result"]["changes"]["url_changed"]
    missing = await run.call("browser_navigate", {"url": f"{SITE}/secnd"})
    assert missing["error"]["type"] == "not_in_mirror"
    assert f"{SITE}/second" in missing["error"]["message"]  # the nearest mirrored URL is named
    assert (await snapshot(run))["url"] == f"{SITE}/second#part"  # the page did not move


async def test_http_redirect_is_followed_inside_the_mirror(run):
    await start(run)
    reply = await run.call("browser_navigate", {"url": f"{SITE}/redirect"})
    assert reply["ok"] and reply["result"]["url"] == f"{SITE}/second"


async def test_tabs_open_switch_close_with_stable_ids(run):
    await start(run)
    opened = (await run.call("browser_open_tab", {"url": f"{SITE}/second"}))["result"]
    assert opened["tab"] == "t2" and [t["tab"] for t in opened["tabs"]] == ["t1", "t2"]
    assert (await snapshot(run))["title"] == "Second"
    switched = (await run.call("browser_switch_tab", {"tab": "t1"}))["result"]
    assert switched["tab"] == "t1" and switched["title"] == "Home"
    bad = await run.call("browser_switch_tab", {"tab": "t9"})
    assert bad["error"]["type"] == "unknown_tab" and "t1, t2" in bad["error"]["message"]
    closed = (await run.call("browser_close_tab", {"tab": "t2"}))["result"]
    assert closed["closed_tab"] == "t2" and closed["active_tab"] == "t1"
    assert [t["tab"] for t in closed["tabs"]] == ["t1"]
    assert (await run.call("browser_close_tab", {"tab": "t1"}))["ok"]  # the last: the session stays open
    none = await run.call("browser_snapshot", {})  # it said no_session: an agent then started a second session
    assert none["error"]["type"] == "no_tab" and "open one with browser_open_tab" in none["error"]["message"]
    assert (await run.call("browser_open_tab", {"url": f"{SITE}/second"}))["result"]["tab"] == "t3"
    assert (await snapshot(run))["title"] == "Second"


@pytest.mark.parametrize("tab", ["t\u00b2", "t\u0663", "t" + "9" * 5000, "t0", "t-1"])
async def test_odd_tab_ids_are_unknown_tabs_not_faults(run, tab):
    await start(run)
    for name in ("browser_switch_tab", "browser_close_tab"):
        bad = await run.call(name, {"tab": tab})
        assert bad["error"]["type"] == "unknown_tab", bad["error"]
        assert "no tab" in bad["error"]["message"] and "open tabs: t1" in bad["error"]["message"]


async def test_page_opened_tabs_appear_in_the_tab_list(run):
    await start(run, url=f"{SITE}/popup")
    snap = (await snapshot(run))["snapshot"]
    reply = await run.call("browser_click", {"ref": ref_of(snap, 'link "Open second"')})
    assert reply["ok"]
    assert [t["tab"] for t in reply["result"]["tabs"]] == ["t1", "t2"]
    assert reply["result"]["changes"]["new_tabs"][0]["opener"] == "t1"
    # its first document is a navigation in its tab, written once (it was not written at all)
    said = [(e.kind, e.data.get("url")) for e in parse_trace(run.trace.text()).events if e.tab == "t2"]
    assert said == [("tab_opened", f"{SITE}/second"), ("navigation", f"{SITE}/second")], said
    assert f"{SITE}/second" in str(reply["result"]["changes"].get("navigations")), reply["result"]["changes"]


async def test_pdf_tab_shows_text_page_by_page(run):
    await start(run)
    reply = await run.call("browser_navigate", {"url": f"{SITE}/doc.pdf"})
    assert reply["ok"], reply
    snap = await snapshot(run)
    assert snap["format"] == "pdf_text" and snap["pdf_pages"] == 2
    assert "--- Page 2 of 2 ---" in snap["snapshot"] and "Page two holds the holding." in snap["snapshot"]
    assert not [e for e in parse_trace(run.trace.text()).events if e.kind in ("download", "state_change")]
    await run.call("browser_navigate", {"url": f"{SITE}/second"})
    assert (await snapshot(run))["format"] == "aria"


async def test_a_json_document_shows_its_text_and_the_next_html_page_its_tree(run):
    await start(run)
    reply = await run.call("browser_navigate", {"url": f"{SITE}/api/first.json"})
    assert reply["ok"], reply
    snap = await snapshot(run)
    assert snap["format"] == "text" and snap["url"] == f"{SITE}/api/first.json"
    assert snap["snapshot"] == '- document (application/json; shown as text)\n{"next": "/api/second.json"}'
    await run.call("browser_navigate", {"url": f"{SITE}/second"})
    snap = await snapshot(run)
    assert snap["format"] == "aria" and 'heading "Second page" [level=1] [ref=' in snap["snapshot"]


async def test_close_variants_and_approval(run, sandbox):
    first = (await start(run, site_key="a"))["session_id"]
    second = (await start(run, site_key="b"))["session_id"]
    refused = await run.call("browser_close", {"close_all": True})
    assert refused["error"]["type"] == "approval_required"
    other_run = sandbox.create_run()
    other_session = (await start(other_run, site_key="c"))["session_id"]
    foreign = await run.call("browser_close", {"session_id": other_session})
    assert foreign["error"]["type"] == "unknown_session"
    assert (await other_run.call("browser_snapshot", {}))["ok"]  # untouched
    closed = await run.call("browser_close", {"session_id": first})
    assert closed["result"]["closed"] == [first] and closed["result"]["open_sessions"] == [second]
    again = (await run.call("browser_close", {"session_id": first}))["result"]  # closed already: said so
    assert (again["closed"], again["already_closed"], again["open_sessions"]) == ([], [first], [second])
    assert (await run.call("browser_close", {}))["result"]["closed"] == [second]
    after = await run.call("browser_snapshot", {})  # no advice to start another: the session is over
    assert after["error"] == {
        "type": "no_session",
        "message": f"session {second} was closed by call 7 (browser_close): this run's session is over",
    }
    again = (await run.call("browser_close", {}))["result"]  # an argument-free close, repeated
    assert (again["closed"], again["already_closed"], again["open_sessions"]) == ([], [second], [])
    await other_run.close()


async def test_close_all_with_approvals(own_sandbox):
    async with own_sandbox(approvals=True) as own:
        run = own.create_run(policy=Policy())
        try:
            await start(run, site_key="x")
            await start(run, site_key="y")
            reply = await run.call("browser_close", {"close_all": True})
            assert len(reply["result"]["closed"]) == 2 and reply["result"]["open_sessions"] == []
        finally:
            await run.close()


async def test_page_reaching_outside_gets_nothing_through(run, canary):
    await start(run, url=f"{SITE}/outside")
    await snapshot(run)
    assert canary.requests == []
    blocked = [e for e in parse_trace(run.trace.text()).events if e.kind == "blocked_request"]
    assert {e.data["url"] for e in blocked} >= {
        f"{canary.url}/img.png",
        f"{canary.url}/script.js",
        f"{canary.url}/fetch",
    }
    assert all(e.data["reason"] == "not_in_mirror" for e in blocked)


async def test_trace_lines_are_exact_and_complete(run):
    await start(run)
    await run.call("browser_snapshot", {"max_chars": 5})  # invalid: below the minimum
    await run.call("browser_snapshot", {})
    await run.call("browser_close", {})
    await run.close()
    trace = parse_trace(run.trace.text())
    assert trace.problems == [] and trace.header["run_id"] == run.id and trace.end is not None
    assert [c.seq for c in trace.calls] == [1, 2, 3, 4]
    assert trace.calls[1].args == {"max_chars": 5} and trace.calls[1].error.type == "invalid_arguments"
    first = trace.calls[0]
    assert first.url_before is None and first.url_after == f"{SITE}/"
    assert first.session_id and first.tab == "t1" and first.t_end >= first.t_start >= 0
    assert [e["kind"] for e in first.events] == ["navigation"]
    for line in run.trace.text().splitlines():
        json.loads(line)


async def test_a_broken_mirror_entry_is_a_fault_naming_the_entry(sandbox, tmp_path):
    """A missing body was "FileNotFoundError(2, 'No such file or directory')" and a body typed a PDF
    that is none "PdfStreamError('Stream has ended unexpectedly')": neither named the entry."""
    from toolserver.contract.mirrors import reconstructed, write_entry
    from toolserver.contract.policy import Policy

    basis = reconstructed("a test's broken entries")
    root = tmp_path / "mirrors"
    write_entry(root / "h", "https://broken.test/", b"<a href='/gone'>gone</a>", "text/html", basis)
    write_entry(root / "h", "https://broken.test/gone", b"<p>", "text/html", basis, body_path="bodies/gone.html")
    write_entry(root / "h", "https://broken.test/lie.pdf", b"<p>not a pdf", "application/pdf", basis)
    (root / "h" / "bodies" / "gone.html").unlink()
    run = sandbox.create_run(policy=Policy(mode="observe"), mirror_roots=(root,))
    start = {"provider": "kernel", "site_key": "broken", "url": "https://broken.test/"}
    assert (await run.call("browser_start_session", start))["ok"]
    for url in ("https://broken.test/gone", "https://broken.test/lie.pdf"):
        await run.call("browser_navigate", {"url": url})
    await run.close()
    faults = [e.data["error"] for e in parse_trace(run.trace.text()).events if e.kind == "server_fault"]
    assert any("mirror entry https://broken.test/gone: body file " in f and "gone.html" in f for f in faults), faults
    assert any("mirror entry https://broken.test/lie.pdf is typed a PDF but is none" in f for f in faults), faults


@pytest.mark.parametrize("max_chars", [200, 201, 1000, "300"])
async def test_a_cut_snapshot_keeps_its_note_within_max_chars(run, max_chars):
    await start(run, f"{SITE}/long")
    whole = (await snapshot(run))["snapshot"]
    cut = (await run.call("browser_snapshot", {"max_chars": max_chars}))["result"]
    budget = int(max_chars)
    assert len(whole) > budget and cut["truncated"] is True
    text = cut["snapshot"]
    assert len(text) <= budget, len(text)
    shown, note = text.split("\n[... truncated: ")
    assert whole.startswith(shown) and note == f"{len(whole) - len(shown)} of {len(whole)} characters not shown]\n"
    fits = (await run.call("browser_snapshot", {"max_chars": len(whole)}))["result"]
    assert fits["snapshot"] == whole and "truncated" not in fits
