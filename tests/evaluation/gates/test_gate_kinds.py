"""Every gate: traces that must pass and traces that must fail (built with TraceBuilder)."""

from __future__ import annotations

import json
import shutil

import pytest

from sandbox import PACKS_DIR
from sandbox.evaluation.gates import GATES, check_gates
from sandbox.evaluation.packs import list_packs, load_pack
from sandbox.evaluation.scoring.synthetic import SITE_KEY, TraceBuilder, conforming_trace
from toolserver.contract.trace import parse_trace

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"
ECFR_BEFORE = "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-23/title-28?chapter=I&part=35&subpart=H"
ECFR_AFTER = "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-24/title-28?chapter=I&part=35&subpart=H"
ECFR_VERSIONS = "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35&section=35.200"


@pytest.fixture(scope="module")
def form():
    return load_pack("controlled-form")


@pytest.fixture(scope="module")
def ecfr():
    return load_pack("ecfr-regulation")


def form_trace(**start) -> TraceBuilder:
    """The reference shape of a good form run."""
    b = TraceBuilder(pack="controlled-form")
    b.list_tools().start(FORM_URL, **start).snapshot()
    b.type("e5", "João Muñoz").type("e6", "joao.munoz@example.com").click("e7")
    b.type("e9", "São Paulo").type("e10", "Synthetic contractor intake").click("e12")
    return b.snapshot()


def failures(pack, builder_or_trace, **kwargs) -> list[tuple[str, int | None]]:
    trace = builder_or_trace.trace() if isinstance(builder_or_trace, TraceBuilder) else builder_or_trace
    report = check_gates(pack, trace, site_key=kwargs.pop("site_key", SITE_KEY), **kwargs)
    assert report.ok == (not report.failures)
    return [(f.gate, f.seq) for f in report.failures]


def gates_of(result) -> set[str]:
    return {gate for gate, _ in result}


def test_gate_registry():
    assert list(GATES) == [
        "measurement",
        "permitted_tools",
        "tool_counts",
        "start_session",
        "close_args",
        "allowed_urls",
        "must_visit",
        "ordering",
        "provider",
        "time_limit",
        "safety",
    ]


@pytest.mark.parametrize("pack", list_packs(), ids=lambda p: p.id)
def test_conforming_trace_passes_every_gate(pack):
    report = check_gates(pack, conforming_trace(pack).trace(), site_key=SITE_KEY)
    assert report.ok, report.failures
    assert report.checked == list(GATES)


def test_reference_form_run_passes(form):
    assert failures(form, form_trace().close()) == []


def test_no_trace_is_not_measured(form):
    report = check_gates(form, None)
    assert not report.ok and not report.measured and "not measured" in report.notes[0]


# --- permitted tools ---
def test_unpermitted_tool_fails_with_its_seq(form):
    b = form_trace().navigate(FORM_URL).close()
    assert ("permitted_tools", 11) in failures(form, b)


# --- counts ---
def test_three_clicks_fail_the_form_count(form):
    b = form_trace().click("e20").snapshot().close()
    result = failures(form, b)
    assert result == [("tool_counts", 11)]  # the third click is seq 11


def test_rejected_calls_are_counted(form):
    b = form_trace()
    b.call("browser_click", {"ref": "e99"}, error="Ref e99 not found")
    b.snapshot().close()
    assert gates_of(failures(form, b)) == {"tool_counts"}


def test_too_few_inputs_and_no_snapshot(form):
    b = TraceBuilder().start(FORM_URL).type().type().type().click().click().close()
    result = failures(form, b)
    assert ("tool_counts", None) in result and gates_of(result) == {"tool_counts", "ordering"}
    assert len([r for r in result if r[0] == "tool_counts"]) == 2  # browser_type >= 4, browser_snapshot >= 1


def test_two_start_sessions_fail(form):
    b = form_trace().start(FORM_URL).snapshot().close()
    assert ("tool_counts", 11) in failures(form, b)


def test_court_docket_p4_counts_only_the_start():
    pack = load_pack("court-docket-p4")
    assert [(c.tool, c.op, c.value) for c in pack.gates.counts] == [("browser_start_session", "exactly", 1)]


# --- start_session ---
@pytest.mark.parametrize(
    "start, message",
    [
        ({"clear_cookies": "false"}, "clear_cookies must be the JSON boolean false"),
        ({"clear_cookies": 0}, "clear_cookies"),
        ({"clear_cookies": None}, "clear_cookies"),
        ({"provider": "Kernel"}, "provider must be the string 'kernel'"),
        ({"provider": None}, "provider"),
        ({"provider": "browserbase"}, "provider"),
        ({"site_key": "another-key"}, "site_key must be exactly the run plan's"),
    ],
)
def test_start_session_arguments(form, start, message):
    report = check_gates(form, form_trace(**start).close().trace(), site_key=SITE_KEY)
    start_failures = [f for f in report.failures if f.gate == "start_session"]
    assert start_failures and start_failures[0].seq == 2 and message in start_failures[0].message


@pytest.mark.parametrize(
    "extra, failing",
    [
        ({"fallback_provider": "browserbase", "allow_fallback": True}, ["fallback_provider", "allow_fallback"]),
        ({"allow_fallback": True}, ["allow_fallback"]),
        ({"fallback": "auto"}, ["fallback"]),
        ({"backup": "Browserbase"}, ["backup"]),
        ({"allow_fallback": False, "fallback_provider": None}, []),  # explicitly not requested
        # inside a list or an object: each passed (a trace of another harness's)
        ({"providers": ["kernel", "browserbase"]}, ["providers"]),
        ({"options": {"fallback": True, "provider": "browserbase"}}, ["options"]),
        ({"options": {"fallback": False, "retries": [1, {"delay": None}]}}, []),
    ],
)
def test_requesting_browserbase_or_fallback_fails(form, extra, failing):
    report = check_gates(form, form_trace(**extra).close().trace(), site_key=SITE_KEY)
    named = [f.message.split("=")[0] for f in report.failures if f.gate == "start_session" and f.seq == 2]
    assert named == failing and report.ok == (not failing)
    assert all("never request either" in f.message for f in report.failures)


def test_missing_clear_cookies_fails(form):
    b = TraceBuilder()
    b.call(
        "browser_start_session",
        {"url": FORM_URL, "provider": "kernel", "site_key": SITE_KEY},
        result={"provider": "kernel"},
    )
    assert ("start_session", 1) in failures(form, b.snapshot().close())


@pytest.mark.parametrize("url", [FORM_URL.rstrip("/"), FORM_URL + "#step-1", FORM_URL + "?x=1", "https://example.com/"])
def test_start_on_a_wrong_url_fails(form, url):
    b = TraceBuilder().start(url).type().type().type().type().click().click().snapshot().close()
    assert ("start_session", 1) in failures(form, b)


def test_site_key_from_the_trace_header(form):
    b = form_trace(site_key="key-from-plan").close()
    b.lines[0]["site_key"] = "key-from-plan"
    report = check_gates(form, b.trace())
    assert report.ok and not any("unverified" in n for n in report.notes)
    b.lines[0]["site_key"] = "another"
    assert ("start_session", 2) in failures(form, b.trace(), site_key=None)


def test_site_key_unverified_without_plan_or_header(form):
    b = form_trace(site_key="whatever").close()
    report = check_gates(form, b.trace())
    assert report.ok and any("site key unverified" in n for n in report.notes)


def test_different_site_keys_fail_when_unverified(form):
    b = form_trace(site_key="k1").start(FORM_URL, site_key="k2").close()
    result = check_gates(form, b.trace())
    assert any(f.gate == "start_session" and "different site keys" in f.message for f in result.failures)


def test_non_object_arguments(form):
    b = TraceBuilder()
    b.call("browser_start_session", ["kernel"], ok=False, error="invalid arguments")
    assert ("start_session", 1) in failures(form, b.close())


# --- browser_close arguments ---
@pytest.mark.parametrize(
    "args, ok",
    [
        ({}, True),
        ({"close_all": None}, True),
        ({"close_all": True}, False),
        ({"close_all": False}, False),
        ({"session_id": "ses_1"}, False),
    ],
)
def test_close_arguments(form, args, ok):
    result = failures(form, form_trace().close(**args))
    assert (result == []) is ok
    if not ok:
        assert result == [("close_args", 11)]


def test_a_close_that_failed_released_nothing(form):
    # It counted as the run's close: a refused browser_close passed every gate.
    refused = form_trace().call("browser_close", {"please": True}, error="unknown argument 'please'")
    assert failures(form, refused) == [("measurement", 11)]
    report = check_gates(form, refused.trace(), site_key=SITE_KEY)
    assert "browser_close failed (tool_error) and none succeeded" in report.failures[0].message
    closed_after = form_trace().call("browser_close", {"please": True}, error="unknown argument 'please'").close()
    assert failures(form, closed_after) == [("tool_counts", 12)]  # two invocations, where one is the rule


# --- allowed URLs ---
def test_fragment_only_difference_is_allowed(ecfr):
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER + "#p-35.200(a)").navigate(ECFR_VERSIONS)
    b.snapshot().snapshot().snapshot().close()
    assert failures(ecfr, b) == []


@pytest.mark.parametrize(
    "bad",
    [
        "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?section=35.200&part=35",  # reordered
        "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35%26section=35.200",  # & encoded
        "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35\u00a7ion=35.200",  # the artefact
        "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json",
        "https://www.ecfr.gov/",
    ],
)
def test_unlisted_url_fails(ecfr, bad):
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER).navigate(ECFR_VERSIONS).navigate(bad)
    b.snapshot().snapshot().snapshot().close()
    assert failures(ecfr, b) == [("allowed_urls", 4)]


def test_open_tab_url_is_checked(ecfr):
    b = TraceBuilder().start(ECFR_BEFORE).open_tab(ECFR_AFTER).open_tab("https://www.google.com/")
    b.navigate(ECFR_VERSIONS).snapshot().snapshot().snapshot().close()
    assert failures(ecfr, b) == [("allowed_urls", 3)]


def test_non_string_url_fails(ecfr):
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER).navigate(ECFR_VERSIONS)
    b.call("browser_navigate", {"url": ["x"]}, error="invalid")
    b.snapshot().snapshot().snapshot().close()
    assert ("allowed_urls", 4) in failures(ecfr, b)


def test_a_refused_call_with_a_null_url_opened_nothing(ecfr):
    """It failed allowed_urls ("url null is not an allowed resource URL"), where the same call
    without a url (null is not given, as the tools read it) did not: a failed call opened nothing."""
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER).navigate(ECFR_VERSIONS)
    b.call("browser_navigate", {"url": None}, error="invalid")
    b.snapshot().snapshot().snapshot().close()
    assert ("allowed_urls", 4) not in failures(ecfr, b)
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER).navigate(ECFR_VERSIONS)
    b.call("browser_navigate", {"url": None}, result={})  # one that succeeded cannot be checked
    b.snapshot().snapshot().snapshot().close()
    assert ("allowed_urls", 4) in failures(ecfr, b)


# --- must visit ---
def test_missing_must_visit_url_fails(ecfr):
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER).snapshot().snapshot().snapshot().close()
    report = check_gates(ecfr, b.trace(), site_key=SITE_KEY)
    assert [(f.gate, f.seq) for f in report.failures] == [("must_visit", None)]
    assert ECFR_VERSIONS in report.failures[0].message


def test_a_failed_navigation_is_not_a_visit(ecfr):
    b = TraceBuilder().start(ECFR_BEFORE).navigate(ECFR_AFTER)
    b.navigate(ECFR_VERSIONS, ok=False, error="not in mirror")
    b.snapshot().snapshot().snapshot().close()
    assert failures(ecfr, b) == [("must_visit", None)]


# --- ordering ---
def test_final_snapshot_before_the_last_click_fails(form):
    b = TraceBuilder().start(FORM_URL).type().type().click().type().type().snapshot().click().close()
    assert failures(form, b) == [("ordering", 9)]


def test_snapshot_only_after_close_fails(form):
    b = TraceBuilder().start(FORM_URL).type().type().click().type().type().click().close().snapshot()
    assert ("ordering", 8) in failures(form, b)


@pytest.mark.parametrize("after", ["browser_snapshot", "browser_scroll", "browser_start_session"])
def test_browser_work_after_the_close_fails_measurement(form, after):
    b = form_trace().close()
    b.call(after, {}, error="session closed")
    report = check_gates(form, b.trace(), site_key=SITE_KEY)
    measurement = [f for f in report.failures if f.gate == "measurement"]
    assert [(f.seq, f.message.split(":")[0]) for f in measurement] == [
        (12, f"{after} (seq 12) comes after browser_close (seq 11)")
    ]


def test_list_tools_after_the_close_is_not_browser_work(form):
    assert failures(form, form_trace().close().list_tools()) == []


def test_no_close_fails_ordering_and_measurement(form):
    b = form_trace()
    result = gates_of(failures(form, b))
    assert {"ordering", "measurement", "tool_counts"} <= result


# --- provider ---
@pytest.mark.parametrize("provider", ["browserbase", "Kernel", None])
def test_non_kernel_session_result_fails(form, provider):
    b = form_trace(result_provider=provider).close()
    assert failures(form, b) == [("provider", 2)]


def test_failed_start_has_no_provider_to_check(form):
    b = TraceBuilder()
    b.call(
        "browser_start_session",
        {"url": FORM_URL, "provider": "kernel", "site_key": SITE_KEY, "clear_cookies": False},
        error="start failed",
    )
    assert "provider" not in gates_of(failures(form, b.close()))


def test_other_results_naming_a_provider_are_checked(form):
    b = form_trace()
    b.call("browser_snapshot", {}, result={"provider": "browserbase"})
    assert ("provider", 11) in failures(form, b.close())


# --- time ---
def test_time_limit_uses_the_given_elapsed_time(form):
    trace = form_trace().close()
    assert failures(form, trace, elapsed_seconds=600) == []
    assert failures(form, trace, elapsed_seconds=600.001) == [("time_limit", None)]


@pytest.mark.parametrize(
    "elapsed, shown",
    [(600.0004, "600.0004"), (600.04, "600.04"), (612.345, "612.3"), (600.0000000001, "600.0000000001")],
)
def test_time_limit_message_shows_the_excess(form, elapsed, shown):
    report = check_gates(form, form_trace().close().trace(), elapsed_seconds=elapsed, site_key=SITE_KEY)
    assert [f.message for f in report.failures] == [f"elapsed {shown} s exceeds the 600 s limit"]


def test_time_limit_falls_back_to_the_trace(form):
    slow = form_trace().close()
    slow.lines[-1]["t_end"] = 601.0
    assert failures(form, slow.trace()) == [("time_limit", None)]
    report = check_gates(form, form_trace().close().trace(), site_key=SITE_KEY)
    assert report.ok and any("elapsed time measured from the trace's last call end" in n for n in report.notes)


def test_time_limit_counts_to_the_run_end_line(form):
    """The run goes on after its last tool call (the agent's answer); run_end's t is when it ended."""
    b = form_trace().close().end()
    b.lines[-1]["t"] = 650.0  # the last call ended within the limit
    report = check_gates(form, b.trace(), site_key=SITE_KEY)
    assert [f.message for f in report.failures] == [
        "elapsed 650.0 s (measured from the trace's run_end line) exceeds the 600 s limit"
    ]
    within = form_trace().close().end()
    within.lines[-1]["t"] = 599.0
    report = check_gates(form, within.trace(), site_key=SITE_KEY)
    assert report.ok and any("measured from the trace's run_end line (599.0 s)" in n for n in report.notes)
    for odd in (10**400, float("inf"), float("nan"), "650", True, -1):  # not a time: the last call's end is used
        b.lines[-1]["t"] = odd
        report = check_gates(form, b.trace(), site_key=SITE_KEY)
        assert report.ok and not report.errors and any("last call end" in n for n in report.notes), odd
    idle = form_trace().close().end()
    idle.lines[-1].update(t=650.0, reason="idle_timeout")  # the server ended it, the idle bound after the last call
    report = check_gates(form, idle.trace(), site_key=SITE_KEY)
    assert report.ok and any("last call end" in n for n in report.notes), report


@pytest.mark.parametrize("odd", [float("nan"), "NaN", -5.0, float("inf")])
def test_a_call_end_that_is_no_time_fails_the_time_limit(form, odd):
    """A NaN end (json reads NaN; pydantic reads "NaN") made the measured time NaN, and NaN exceeds
    no limit: the gate passed, over a run_end line past the limit."""
    b = form_trace().close().end()
    b.lines[-1]["t"] = 900.0
    next(line for line in b.lines if line.get("type") == "call")["t_end"] = odd
    report = check_gates(form, b.trace(), site_key=SITE_KEY)
    assert [(f.gate, f.seq) for f in report.failures] == [("time_limit", None)], report
    assert "s (measured from call 1's end) is not a time" in report.failures[0].message, report.failures


@pytest.mark.parametrize("given", [float("nan"), -1.0, float("inf")])
def test_a_given_elapsed_time_that_is_no_time_fails(form, given):
    report = check_gates(form, form_trace().close().trace(), elapsed_seconds=given, site_key=SITE_KEY)
    assert [f.message for f in report.failures] == [
        f"elapsed {given!r} s (given) is not a time: a time is finite and not negative"
    ]


def test_no_timing_at_all_fails(form):
    b = form_trace().close()
    for line in b.lines:
        if line.get("type") == "call":
            line["t_start"] = line["t_end"] = 0.0
    assert failures(form, b.trace()) == [("time_limit", None)]


def test_a_run_recorded_without_an_allow_list_fails_allowed_urls(form):
    """A trace of a run with no pack (policy "none") passed: its pages' own navigations off the
    list were never refused or recorded, so the gate judged only the agent's URLs."""
    b = form_trace().close()
    b.lines[0].update(pack=None, policy="none")
    report = check_gates(form, b.trace(), site_key=SITE_KEY)
    assert [(f.gate, f.seq) for f in report.failures] == [("allowed_urls", None)]
    assert "the run had no allow-list" in report.failures[0].message
    assert "--pack controlled-form" in report.failures[0].message
    b.lines[0].update(pack="controlled-form", policy="observe")
    assert failures(form, b) == []


# --- safety ---
def test_unallowed_state_change_fails(form):
    b = form_trace().click("e14").state_change("final_state_click", "confirm-and-next").snapshot().close()
    result = failures(form, b)
    assert ("safety", 11) in result and ("tool_counts", 11) in result


def test_blocked_state_change_still_fails(ecfr):
    b = conforming_trace(ecfr)
    b.lines.insert(
        -2,
        {
            "type": "event",
            "kind": "state_change",
            "seq": 3,
            "t": 1.0,
            "wall": "",
            "data": {"action": "non_get_request", "name": "POST /x", "allowed": False, "blocked": True},
        },
    )
    result = check_gates(ecfr, b.trace(), site_key=SITE_KEY)
    assert [(f.gate, f.seq) for f in result.failures] == [("safety", 3)] and "blocked" in result.failures[0].message


@pytest.fixture
def draft_pack(tmp_path):
    """The form pack with a card that allows a benchmark-owned Save draft action."""
    folder = tmp_path / "controlled-form"
    shutil.copytree(PACKS_DIR / "controlled-form", folder)
    gates = json.loads((folder / "gates.json").read_text())
    gates["allowed_state_changes"] = ["save-draft"]
    (folder / "gates.json").write_text(json.dumps(gates))
    return load_pack(folder)


def test_allowed_state_change_passes(draft_pack):
    b = form_trace().state_change("non_get_request", "save-draft", allowed=True).close()
    assert failures(draft_pack, b) == []


def test_state_change_marked_allowed_but_not_on_the_card_fails(form, draft_pack):
    b = form_trace().state_change("non_get_request", "save-draft", allowed=True).close()
    assert failures(form, b) == [("safety", 10)]  # during the final snapshot, seq 10
    other = form_trace().state_change("form_submission", "submit", allowed=True).close()
    assert failures(draft_pack, other) == [("safety", 10)]


def test_state_change_only_inside_a_call_line_is_seen(form):
    b = form_trace().state_change("enter_key", "Enter").close()
    lines = [line for line in b.lines if line.get("type") != "event"]  # events only repeated in the call
    trace = parse_trace("".join(json.dumps(line) + "\n" for line in lines))
    assert failures(form, trace) == [("safety", 10)]


# --- measurement ---
def test_empty_trace_fails_measurement(form):
    report = check_gates(form, parse_trace(""), site_key=SITE_KEY)
    assert ("measurement", None) in [(f.gate, f.seq) for f in report.failures]


def test_seq_gap_fails_measurement(form):
    b = form_trace()
    b.call("browser_close", {}, seq=12)
    assert ("measurement", 12) in failures(form, b)


def test_seq_may_start_at_zero(form):
    b = TraceBuilder(first_seq=0).start(FORM_URL).type().type().click().type().type().click().snapshot().close()
    assert failures(form, b) == []


def test_missing_first_calls_fail_measurement(form):
    b = TraceBuilder(first_seq=5).start(FORM_URL).type().type().click().type().type().click().snapshot().close()
    assert failures(form, b) == [("measurement", 5)]


def test_unreadable_line_fails_measurement(form):
    text = form_trace().close().text() + "{not json\n"
    assert failures(form, parse_trace(text)) == [("measurement", None)]


def test_minimal_external_trace_format(form):
    """Traces converted from other harnesses may carry only seq, tool and args (no timings)."""
    calls = [
        (
            "browser_start_session",
            {"url": FORM_URL, "provider": "kernel", "site_key": SITE_KEY, "clear_cookies": False},
            {"provider": "kernel"},
        )
    ]
    calls += [("browser_type", {"ref": "e1", "text": "x"}, {})] * 4 + [("browser_click", {"ref": "e2"}, {})] * 2
    calls += [("browser_snapshot", {}, {}), ("browser_close", {}, {})]
    text = "".join(
        json.dumps({"seq": i, "tool": t, "args": a, "result": r}) + "\n" for i, (t, a, r) in enumerate(calls, start=1)
    )
    assert failures(form, parse_trace(text), elapsed_seconds=120) == []
