"""Fault injection and run selection: seeded faults recorded in the trace; an interrupted attempt
replaced by an approved re-run (its folder kept), a genuine failure never re-run, and the counts
over the selected attempts."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
import xml.etree.ElementTree as ET
from datetime import datetime

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions
from sandbox.runner.batch import run_batch
from sandbox.runner.compare import comparison
from sandbox.runner.executors import BatchAgent
from sandbox.runner.folders import read_summary
from sandbox.runner.selection import interruption
from tests.support.site import SITE
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.faults import FaultSpecError, parse_faults

FORM = "controlled-form"
WRONG = f"cmd:{shlex.quote(sys.executable)} -c " + shlex.quote("print('BENCHMARK_JSON_BEGIN'); print('[]')")


def seed_where(spec: str, dies: list[str], lives: list[str]) -> int:
    """A seed under which the runs keyed ``dies`` get the fault and those keyed ``lives`` do not."""
    kind = spec.split(":")[0]
    for seed in range(500):
        plan = parse_faults(spec, seed)
        assert plan is not None
        if all(plan.for_run(k).once(kind) for k in dies) and not any(plan.for_run(k).once(kind) for k in lives):
            return seed
    raise AssertionError("no such seed below 500")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("lightning", "unknown fault 'lightning'"),
        ("session-dies:when=3", "'when=3' is not one of after=N, p=N"),
        ("mirror-delay:ms=soon", "ms='soon' is not a number"),
        ("mirror-5xx:p=2", "p must be between 0 and 1"),
    ],
)
def test_a_malformed_fault_spec_names_what_is_wrong(spec, message):
    with pytest.raises(FaultSpecError, match=message):
        parse_faults(spec)


async def test_an_interrupted_attempt_is_replaced_once_and_the_counts_are_over_the_selected(sandbox, tmp_path):
    spec = "session-dies:after=2:p=0.5"
    key = f"{FORM}:reference:1:reference--{FORM}-1"  # the run's fault key: pack, agent, number, folder
    seed = seed_where(spec, dies=[key], lives=[f"{key}-r1"])
    outcomes = await run_batch(
        [load_pack(FORM)],
        [BatchAgent("reference", AgentOptions()), BatchAgent(WRONG, AgentOptions(), label="wrong")],
        out=tmp_path,
        progress=False,
        sandbox=sandbox,
        faults=parse_faults(spec, seed),
        replace_interrupted=2,
    )
    by_folder = {o.directory.name: o for o in outcomes}
    assert sorted(by_folder) == [
        "reference--controlled-form-1",
        "reference--controlled-form-1-r1",
        "wrong--controlled-form-1",
    ]
    replaced, replacement = by_folder["reference--controlled-form-1"], by_folder["reference--controlled-form-1-r1"]
    assert replaced.selection == "replaced" and replaced.interruption.startswith("injected fault session-dies")
    assert replacement.selection == "approved replacement" and replacement.replaces == "reference--controlled-form-1"
    assert replacement.qualified_pass and not replacement.interruption
    wrong = by_folder["wrong--controlled-form-1"]  # a genuine failure: never re-run
    assert wrong.selection == "selected" and not wrong.interruption and not wrong.qualified_pass
    trace = parse_trace((replaced.directory / "trace.jsonl").read_text())
    (fault,) = [e.data for e in trace.events if e.kind == "fault_injected"]
    assert fault["fault"] == "session-dies:after=2:p=0.5" and "ended after call 2" in fault["detail"]
    summary = json.loads((replaced.directory.parent / "summary.json").read_text())
    rows = {r["agent"]: r for r in summary["comparison"]["ranking"]}
    assert (
        rows["reference"]["qualified_passes"],
        rows["reference"]["attempts"],
        rows["reference"]["replacements"],
    ) == (
        1,
        1,
        1,
    )
    assert (rows["wrong"]["qualified_passes"], rows["wrong"]["attempts"], rows["wrong"]["replacements"]) == (0, 1, 0)
    assert {a["selection"] for a in summary["attempts"]} == {"replaced", "approved replacement", "selected"}
    # Each attempt says the batch's faults and the mirrors it read: `sandbox compare` tells batches apart by them.
    assert {a["faults"] for a in summary["attempts"]} == {f"session-dies:after=2:p=0.5 (seed {seed})"}
    assert len({a["mirror_checksum"] for a in summary["attempts"]}) == 1 and summary["attempts"][0]["mirror_checksum"]
    # Without summary.json (an older batch, a file cut short), the folders give the same selection.
    (replaced.directory.parent / "summary.json").unlink()
    rebuilt = read_summary(replaced.directory.parent)
    assert [(a["selection"], a["replaces"], a["faults"]) for a in rebuilt["attempts"]] == [
        (a["selection"], a["replaces"], a["faults"]) for a in summary["attempts"]
    ]
    assert comparison(rebuilt["attempts"])["ranking"] == summary["comparison"]["ranking"]
    # The report's headline and `sandbox results` count as the batch counted: the replaced one out.
    from sandbox.cli import main
    from sandbox.runner.junit import junit_xml
    from sandbox.runner.report import write_reports

    batch = replaced.directory.parent
    page = write_reports(batch)[0].read_text(encoding="utf-8")
    assert "1/2 attempts qualified (1 interrupted attempt(s) replaced by a re-run, not counted)" in page
    junit = ET.fromstring(junit_xml(batch))  # the replaced attempt is a skipped case, not a failure
    suite = junit.find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("skipped")) == ("1", "1")
    names = [case.get("name") for case in junit.iter("testcase")]
    assert len(set(names)) == len(names) == 3 and "controlled-form[reference#1 re-run 1]" in names, names
    (skip,) = junit.iter("skipped")
    assert skip.get("message", "").startswith("replaced by a re-run: interrupted (injected fault session-dies")
    shutil.rmtree(wrong.directory)
    assert main(["results", str(batch)]) == 0  # the replacement passed; the attempt it replaced is out


async def test_an_answer_with_a_lone_surrogate_is_scored_not_re_run(sandbox, tmp_path):
    """Writing score.json failed on the str JSON's "\\ud800" gives; the attempt was then recorded
    as one the sandbox could not run, an interruption, and re-run with the same answer."""
    answer = "print('BENCHMARK_JSON_BEGIN'); print('[{\"record_id\": \"\\\\ud800\"}]'); print('BENCHMARK_JSON_END')"
    agent = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(answer)}"
    (outcome,) = await run_batch(
        [load_pack(FORM)],
        [BatchAgent(agent, AgentOptions(), label="surrogate")],
        out=tmp_path,
        progress=False,
        sandbox=sandbox,
        replace_interrupted=2,
    )
    assert (outcome.status, outcome.selection, outcome.interruption) == ("completed", "selected", "")
    assert "\\ud800" in (outcome.directory / "output.txt").read_text(encoding="utf-8")
    score = json.loads((outcome.directory / "score.json").read_text(encoding="utf-8"))
    assert score["qualified_pass"] is False and "\ud800" in json.dumps(score, ensure_ascii=False)


async def test_a_refused_session_start_and_a_failing_mirror_are_recorded_as_injected(sandbox):
    run = sandbox.create_run(policy=Policy(mode="observe"), faults=parse_faults("session-refused"))
    refused = await run.call("browser_start_session", {"provider": "kernel", "site_key": "faults", "url": f"{SITE}/"})
    assert (
        refused["error"]["type"] == "provider_unavailable"
        and "injected fault session-refused" in refused["error"]["message"]
    )
    await run.close()
    run = sandbox.create_run(policy=Policy(mode="observe"), faults=parse_faults("mirror-5xx,mirror-delay:ms=300"))
    started = await run.call("browser_start_session", {"provider": "kernel", "site_key": "faults", "url": f"{SITE}/"})
    assert started["ok"] and started["result"]["status"] == 503, started
    snapshot = await run.call("browser_snapshot", {})
    assert "Service Unavailable (injected fault)" in snapshot["result"]["snapshot"]
    kinds = [e.data["fault"] for e in parse_trace(run.trace.text()).events if e.kind == "fault_injected"]
    assert "mirror-5xx:p=1" in kinds and "mirror-delay:ms=300:p=1" in kinds
    await run.close()


async def test_a_late_response_interrupts_nothing_and_a_503_page_does(sandbox, tmp_path):
    """A wrong answer in a run that got an injected fault: a genuine failure when the fault only
    made a response late, an interruption when the page failed (it was re-run for either)."""
    from sandbox.runner.attempt import AttemptOutcome
    from sandbox.runner.selection import interruption

    said = {}
    for spec in ("mirror-delay:ms=5", "mirror-5xx"):
        run = sandbox.create_run(policy=Policy(mode="observe"), faults=parse_faults(spec))
        await run.call("browser_start_session", {"provider": "kernel", "site_key": "faults", "url": f"{SITE}/"})
        await run.close()
        folder = tmp_path / spec.split(":")[0]
        folder.mkdir()
        (folder / "trace.jsonl").write_text(run.trace.text(), encoding="utf-8")
        wrong = AttemptOutcome(FORM, "wrong", folder, "completed", 1.0, False, False, 0.0, 1, None, "a wrong answer")
        passed = AttemptOutcome(FORM, "right", folder, "completed", 1.0, True, True, 1.0, 0, None, "qualified pass")
        said[spec] = interruption(wrong)
        # decided without the score: re-running only the interrupted attempts that failed raised the pass rate
        assert interruption(passed) == said[spec]
    assert said["mirror-delay:ms=5"] == ""
    assert said["mirror-5xx"].startswith("injected fault mirror-5xx:p=1: "), said


def test_the_servers_take_faults_and_refuse_a_bad_spec(capsys):
    from sandbox.cli import main

    assert main(["mcp", "--faults", "lightning"]) == 2
    assert "unknown fault 'lightning'" in capsys.readouterr().err
    assert main(["serve", "--faults", "session-dies:when=1", "--port", "1"]) == 2
    assert "'when=1' is not one of" in capsys.readouterr().err
    assert main(["mcp", "--attach", "http://127.0.0.1:9", "--name", "x", "--faults", "mirror-5xx"]) == 2
    assert "--faults belongs to the server" in capsys.readouterr().err


async def thinking_batch(sandbox, out, attempts: int, **options):
    """``attempts`` attempts of the form, all at once, by an agent thinking 0.2 s before each call."""
    return await run_batch(
        [load_pack(FORM)],
        "think:0.2:reference",
        repeats=attempts,
        concurrency=attempts,
        out=out,
        progress=False,
        sandbox=sandbox,
        **options,
    )


async def test_an_attempt_the_sandbox_cannot_run_is_its_own_error_and_the_batch_goes_on(own_sandbox, tmp_path):
    async with own_sandbox(max_runs=1) as own:  # two attempts at once: the second run is refused
        outcomes = await thinking_batch(own, tmp_path, 2)
    statuses = sorted((o.status, o.qualified_pass) for o in outcomes)
    assert statuses == [("completed", True), ("crashed", False)]
    refused = next(o for o in outcomes if o.status == "crashed")
    assert "TooManyRuns" in refused.reason and (refused.directory / "attempt.json").is_file()
    summary = json.loads((refused.directory.parent / "summary.json").read_text())
    assert len(summary["attempts"]) == 2  # the batch is whole
    # It never ran: its time is unknown, not 0 s, so the median is the other attempt's (not halved).
    ran = round(next(o.elapsed_seconds or 0.0 for o in outcomes if o.status == "completed"), 3)
    assert refused.elapsed_seconds is None and summary["summary"][0]["median_seconds"] == ran
    assert comparison(summary["attempts"])["ranking"][0]["median_seconds"] == ran
    (refused.directory.parent / "summary.json").unlink()  # rebuilt from the folders: the same
    assert read_summary(refused.directory.parent)["summary"][0]["median_seconds"] == ran


async def test_a_session_refused_at_capacity_is_an_interruption_and_is_replaced(own_sandbox, tmp_path):
    async with own_sandbox(own_browser=True, max_open_sessions=3) as own:
        outside = own.create_run()  # another client's session holds one of the three places
        assert (await outside.call("browser_start_session", {"provider": "kernel"}))["ok"]
        # The batch runs three at once (its server holds three): one start is refused.
        outcomes = await thinking_batch(own, tmp_path, 3, replace_interrupted=1)
        await outside.close()
    (replaced,) = [o for o in outcomes if o.selection == "replaced"]
    assert replaced.interruption.startswith("the server was at capacity") and "open_sessions" in replaced.interruption
    (replacement,) = [o for o in outcomes if o.selection == "approved replacement"]
    assert replacement.replaces == replaced.directory.name and replacement.qualified_pass
    assert sum(o.qualified_pass for o in outcomes if o.selection != "replaced") == 3


async def test_a_batch_runs_no_more_attempts_at_once_than_its_server_holds_sessions(own_sandbox, tmp_path, caplog):
    async with own_sandbox(max_open_sessions=2) as own:
        outcomes = await thinking_batch(own, tmp_path, 4)
    assert all(o.qualified_pass for o in outcomes), [o.reason for o in outcomes]  # none refused: two waited
    waits = sorted(json.loads((o.directory / "attempt.json").read_text())["dispatch_wait_seconds"] for o in outcomes)
    assert waits[1] < 0.5 < waits[2], waits
    assert "running at most 2 attempts at once, not 4" in caplog.text and "max_open_sessions 2" in caplog.text


async def test_an_injected_browser_crash_is_recorded_and_the_next_session_gets_a_new_browser(own_sandbox):
    async with own_sandbox(own_browser=True) as own:
        run = own.create_run(policy=Policy(mode="observe"), faults=parse_faults("browser-crash:after=1"))
        start = {"provider": "kernel", "site_key": "crash", "url": f"{SITE}/"}
        assert (await run.call("browser_start_session", start))["ok"]
        for _ in range(50):  # the crash is reported by the browser's disconnection
            if own.host.crashes:
                break
            await asyncio.sleep(0.1)
        after = await run.call("browser_snapshot", {})
        assert after["error"]["type"] == "browser_crashed"
        kinds = [e.kind for e in parse_trace(run.trace.text()).events]
        assert "fault_injected" in kinds and "browser_crashed" in kinds
        assert (await run.call("browser_start_session", start))["ok"]  # a new browser, and once only
        assert own.host.launches == 2 and own.host.crashes == 1
        await run.close()


async def test_a_model_endpoint_that_keeps_refusing_is_an_interruption_and_is_recorded(sandbox, tmp_path):
    from sandbox.runner.selection import interruption
    from tests.support.models import scripted_server

    runner, url = await scripted_server().start_server()  # a live endpoint: the fault answers before it
    try:
        agent = BatchAgent("openai:scripted-browser-1", AgentOptions(base_url=f"{url}/v1"))
        (outcome,) = await run_batch(
            [load_pack("bid-intake")], [agent], out=tmp_path, progress=False, sandbox=sandbox,
            faults=parse_faults("model-429"),
        )  # fmt: skip
    finally:
        await runner.cleanup()
    assert outcome.status == "error" and not outcome.qualified_pass
    said = interruption(outcome)  # the agent failed on the injected 429, as on a real one
    assert said.startswith("the model endpoint failed: ") and "injected fault model-429" in said, said
    assert "RateLimitError" in json.loads((outcome.directory / "attempt.json").read_text())["error"]
    events = parse_trace((outcome.directory / "trace.jsonl").read_text()).events
    faults = [e.data for e in events if e.kind == "fault_injected"]
    assert len(faults) == 3 and all("answered 429" in f["detail"] for f in faults)  # a request, two retries


async def test_a_batch_stopped_during_a_re_run_keeps_both_attempts(sandbox, tmp_path):
    from sandbox.runner.batch import BatchStopped

    spec = "session-dies:after=2:p=0.5"
    key = f"{FORM}:think:0.3:reference:1:{FORM}-1"
    seed = seed_where(spec, dies=[key], lives=[f"{key}-r1"])
    batch = asyncio.ensure_future(
        run_batch([load_pack(FORM)], "think:0.3:reference", out=tmp_path, progress=False, sandbox=sandbox,
                  faults=parse_faults(spec, seed), replace_interrupted=1)
    )  # fmt: skip
    for _ in range(400):
        traces = list(tmp_path.glob(f"*/{FORM}-1-r1/trace.jsonl"))
        if traces and '"type": "call"' in traces[0].read_text():
            break
        assert not batch.done(), batch.result()
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the re-run never called a tool")
    batch.cancel()
    with pytest.raises(BatchStopped) as stopped:
        await batch
    assert [(o.directory.name, o.selection, o.status) for o in stopped.value.outcomes] == [
        (f"{FORM}-1", "replaced", "completed"),
        (f"{FORM}-1-r1", "approved replacement", "stopped"),
    ]
    assert stopped.value.outcomes[0].interruption.startswith("injected fault session-dies")
    said = "1 of 1 attempts finished, 0 stopped while they ran, 0 not started; 1 re-run(s) of interrupted attempts, 1 "
    assert said in str(stopped.value), stopped.value  # it said -1 not started
    summary = json.loads((stopped.value.batch_dir / "summary.json").read_text())
    assert [a["selection"] for a in summary["attempts"]] == ["replaced", "approved replacement"]


async def test_re_runs_run_as_many_at_once_as_the_attempts_did(sandbox, tmp_path):
    """Re-runs ran one after another once the batch had ended, however high its --concurrency."""
    spec = "session-refused:p=0.5"
    keys = [f"{FORM}:think:0.2:reference:{n}:{FORM}-{n}" for n in (1, 2)]
    seed = seed_where(spec, dies=keys, lives=[f"{key}-r1" for key in keys])
    faults = parse_faults(spec, seed)
    outcomes = await run_batch([load_pack(FORM)], "think:0.2:reference", repeats=2, concurrency=2, out=tmp_path,
                               progress=False, sandbox=sandbox, faults=faults, replace_interrupted=1)  # fmt: skip
    reruns = [o for o in outcomes if o.selection == "approved replacement"]
    assert [o.directory.name for o in reruns] == [f"{FORM}-1-r1", f"{FORM}-2-r1"]
    assert all(o.qualified_pass for o in reruns), [o.reason for o in reruns]
    spans = []
    for rerun in reruns:
        record = json.loads((rerun.directory / "attempt.json").read_text())
        start = datetime.fromisoformat(record["started_at"]).timestamp()
        spans.append((start, start + record["elapsed_seconds"]))
    (_, first_ended), (second_began, _) = sorted(spans)
    assert second_began < first_ended, spans  # both ran at once


async def test_a_re_run_the_sandbox_cannot_run_is_its_own_error(tmp_path):
    from sandbox.runner.attempt import AttemptOutcome
    from sandbox.runner.batch import rerun_interrupted

    class Refusing:  # an executor whose every run is refused, as a full server refuses one
        capacity = None

        async def run(self, pack, attempt_number, directory, agent, dispatch_wait=0.0):
            raise RuntimeError("no room for another run")

    pack, agent = load_pack(FORM), BatchAgent("reference", AgentOptions())
    first = AttemptOutcome(FORM, "reference", tmp_path / f"{FORM}-1", "crashed", 0.0, False, False, 0.0, 0, None,
                           "the sandbox could not run the attempt: TooManyRuns: 64 runs open")  # fmt: skip
    outcomes = await rerun_interrupted(first, (pack, 1, agent), 2, Refusing(), asyncio.Semaphore(1), [])
    assert [(o.directory.name, o.selection) for o in outcomes] == [
        (f"{FORM}-1", "replaced"),
        (f"{FORM}-1-r1", "replaced"),
        (f"{FORM}-1-r2", "approved replacement"),
    ]
    assert outcomes[-1].reason == "the sandbox could not run the attempt: RuntimeError: no room for another run"
    assert json.loads((tmp_path / f"{FORM}-1-r2" / "attempt.json").read_text())["status"] == "crashed"


async def test_a_stop_before_a_re_run_began_leaves_the_attempt_selected(tmp_path):
    from sandbox.runner.attempt import AttemptOutcome
    from sandbox.runner.batch import rerun_interrupted

    class StoppedAtOnce:  # the stop comes before the re-run's attempt starts: no attempt to record
        capacity = None

        async def run(self, pack, attempt_number, directory, agent, dispatch_wait=0.0):
            raise asyncio.CancelledError

    pack, agent = load_pack(FORM), BatchAgent("reference", AgentOptions())
    first = AttemptOutcome(FORM, "reference", tmp_path / f"{FORM}-1", "crashed", 0.0, False, False, 0.0, 0, None,
                           "the sandbox could not run the attempt: TooManyRuns: 64 runs open")  # fmt: skip
    kept: list = []
    with pytest.raises(asyncio.CancelledError):
        await rerun_interrupted(first, (pack, 1, agent), 1, StoppedAtOnce(), asyncio.Semaphore(1), kept)
    assert [(o.directory.name, o.selection) for o in kept] == [(f"{FORM}-1", "selected")]  # counted, not "replaced"


def test_a_reason_line_says_first_that_the_attempt_was_interrupted():
    from sandbox.runner.batch import format_reasons

    interrupted = "injected fault session-dies:after=2:p=1: the session ended after call 2"
    base = {"qualified_pass": False, "reason": "gate must_visit: ...", "interruption": interrupted}
    lines = format_reasons(
        [
            {**base, "directory": "/b/a--form-1", "selection": "selected"},  # not replaced (no --replace-interrupted)
            {**base, "directory": "/b/a--form-2-r1", "selection": "approved replacement", "replaces": "a--form-2"},
        ]
    ).splitlines()
    assert lines[1] == f"  a--form-1: interrupted: {interrupted}; gate must_visit: ..."
    assert (
        lines[2]
        == f"  a--form-2-r1: approved replacement of a--form-2, itself interrupted: {interrupted}; gate must_visit: ..."
    )


def test_an_attempt_the_sandbox_could_not_run_is_an_interruption_read_back_too(tmp_path):
    """Read back, its reason reads "agent crashed: the sandbox could not run ...": a rebuilt summary
    took it for a genuine failure that the live one had as an interruption."""
    from sandbox.runner.batch import unrun_attempt
    from sandbox.runner.folders import AttemptFolder, outcome

    live = unrun_attempt(tmp_path / f"{FORM}-1", load_pack(FORM), "reference", 1, RuntimeError("no room"))
    read_back = outcome(AttemptFolder.load(tmp_path / f"{FORM}-1"))
    assert read_back.reason.startswith("agent crashed: the sandbox could not run the attempt")
    assert (
        interruption(live) == interruption(read_back) == "the sandbox could not run the attempt: RuntimeError: no room"
    )
