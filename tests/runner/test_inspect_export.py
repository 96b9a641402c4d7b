"""`sandbox export --format inspect`: real attempts (the reference solver on the controlled-form
pack, a model agent replaying its committed cassette, a hand-made attempt scored for real)
written as Inspect eval logs with inspect_ai's own writer, read back with ``read_eval_log``,
and served by the real `inspect view` on loopback and opened in headless Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import aiohttp
import pytest
from inspect_ai.log import read_eval_log

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring import score_attempt
from sandbox.runner.agents import AgentOptions
from sandbox.runner.batch import run_batch
from sandbox.runner.replay import replay
from tests.support.serve import free_port, wait_answering
from toolserver.contract.trace import read_trace

VENV_BIN = Path(sys.executable).parent
CASSETTE = FIXTURES_DIR / "cassettes" / "openai-bid-intake.yaml"


@pytest.fixture(scope="module")
async def batch(sandbox, tmp_path_factory) -> Path:
    """A real batch folder: the reference solver on controlled-form, twice."""
    out = tmp_path_factory.mktemp("export")
    outcomes = await run_batch(
        [load_pack("controlled-form")], "reference", repeats=2, out=out, progress=False, sandbox=sandbox
    )
    assert [o.qualified_pass for o in outcomes] == [True, True]
    (folder,) = out.iterdir()
    return folder


def exported(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(["export", *argv])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_the_view_hint_quotes_a_folder_with_a_space(batch, tmp_path, capsys):
    spaced = tmp_path / "my batch"
    shutil.copytree(batch, spaced)
    code, out, _ = exported(["--format", "inspect", str(spaced)], capsys)
    assert code == 0 and out.splitlines()[-1] == f"  inspect view --log-dir '{spaced}'"


def test_a_batch_is_one_log_with_a_sample_per_attempt(batch, capsys):
    code, out, _ = exported(["--format", "inspect", str(batch)], capsys)
    assert code == 0
    log_file = batch / "inspect.eval"
    assert out.splitlines() == [
        f"{log_file}: 2 samples (controlled-form-1, controlled-form-2)",
        f"  inspect view --log-dir {batch}",
    ]
    log = read_eval_log(log_file)
    assert log.status == "success" and log.eval.task == "controlled_form" and log.eval.model == "sandbox/reference"
    assert [s.id for s in log.samples] == ["controlled-form-1", "controlled-form-2"]
    metrics = {score.name: score.metrics["mean"].value for score in log.results.scores}
    assert metrics == {"qualified_pass": 1.0, "field_accuracy": 1.0, "critical_failures": 0.0, "gates_ok": 1.0}

    for sample in log.samples:
        folder = batch / str(sample.id)
        attempt = json.loads((folder / "attempt.json").read_text())
        score = json.loads((folder / "score.json").read_text())
        calls = read_trace(folder / "trace.jsonl").calls
        assert sample.input == (folder / "prompt.txt").read_text()
        assert sample.output.completion == (folder / "output.txt").read_text()
        assert sample.metadata["pack"] == "controlled-form" and sample.metadata["site_key"] == attempt["site_key"]
        assert sample.total_time == attempt["elapsed_seconds"]
        assert datetime.fromisoformat(sample.started_at) == datetime.fromisoformat(attempt["started_at"])

        tools = [event for event in sample.events if event.event == "tool"]
        assert [(e.metadata["seq"], e.function, e.arguments) for e in tools] == [(c.seq, c.tool, c.args) for c in calls]
        assert all(
            e.error is None and e.working_time == pytest.approx(c.t_end - c.t_start)
            for e, c in zip(tools, calls, strict=True)
        )
        snapshot = next(e for e in tools if e.function == "browser_snapshot")
        assert snapshot.result[0].text == calls[snapshot.metadata["seq"] - 1].result["snapshot"]
        assert [e.event for e in sample.events][0 :: len(sample.events) - 1] == ["sample_init", "score"]

        assert sample.messages[0].role == "user" and sample.messages[-1].text == sample.output.completion
        asked = [call.function for m in sample.messages if m.role == "assistant" for call in m.tool_calls or []]
        assert asked == [c.tool for c in calls]
        assert [m.function for m in sample.messages if m.role == "tool"] == asked

        (verdict,) = sample.scores.values()
        assert verdict.value == {
            "qualified_pass": 1.0,
            "field_accuracy": 1.0,
            "critical_failures": 0.0,
            "gates_ok": 1.0,
        }
        assert verdict.explanation == "qualified pass" and verdict.metadata["status"] == "pass"
        assert verdict.metadata["gate_failures"] == [] and verdict.metadata["score_report"] == score
        assert [f["name"] for f in verdict.metadata["critical_fields"]] == [
            f["name"] for f in score["fields"] if f["critical"]
        ]


def test_one_attempt_folder_is_one_sample_and_json_is_the_other_format(batch, tmp_path, capsys):
    target = tmp_path / "logs" / "one.json"
    code, out, _ = exported([str(batch / "controlled-form-2"), "-o", str(target)], capsys)
    assert code == 0 and out == f"{target}: 1 sample (controlled-form-2)\n"
    assert json.loads(target.read_text())["eval"]["task"] == "controlled_form"
    (sample,) = read_eval_log(target).samples
    assert sample.id == "controlled-form-2" and sample.scores["sandbox_scorer"].value["qualified_pass"] == 1.0


def test_an_attempt_with_no_readable_record_is_no_pass_and_a_copy_is_left_out_and_said(batch, tmp_path, capsys):
    # As `sandbox results` counts them: the export scored both from score.json alone, and took the copy in silence.
    damaged = tmp_path / "damaged"
    shutil.copytree(batch, damaged)
    (damaged / "controlled-form-2" / "attempt.json").write_text("[1, 2]")
    shutil.copytree(damaged / "controlled-form-1", damaged / "controlled-form-1.bak")
    code, _, err = exported([str(damaged)], capsys)
    assert code == 0 and err.startswith("sandbox export: left out controlled-form-1.bak/"), err
    samples = {sample.id: sample for sample in read_eval_log(damaged / "inspect.eval").samples}
    assert sorted(samples) == ["controlled-form-1", "controlled-form-2"]
    kept, unread = (samples[name].scores["sandbox_scorer"] for name in ("controlled-form-1", "controlled-form-2"))
    assert kept.value["qualified_pass"] == 1.0 and unread.value["qualified_pass"] == 0.0
    assert unread.explanation.startswith("attempt.json"), unread.explanation


def test_gate_failures_status_and_critical_fields_are_in_the_score(tmp_path, capsys):
    """A hand-made attempt that clicks the final submit, scored for real: its gate failures
    (with their seq), its status and its wrong critical fields are in the sample's score."""
    folder = tmp_path / "controlled-form-handmade"
    shutil.copytree(FIXTURES_DIR / "attempts" / "controlled-form-handmade-confirm-click", folder)
    attempt = json.loads((folder / "attempt.json").read_text())
    report = score_attempt(
        load_pack("controlled-form"),
        (folder / "output.txt").read_text(),
        read_trace(folder / "trace.jsonl"),
        attempt["elapsed_seconds"],
        site_key=attempt["site_key"],
    )
    (folder / "score.json").write_text(report.model_dump_json(indent=2))
    assert report.status == "fail" and not report.gates.ok and report.critical_failures

    assert exported([str(folder)], capsys)[0] == 0
    (sample,) = read_eval_log(folder / "inspect.eval").samples
    score = sample.scores["sandbox_scorer"]
    assert score.value["qualified_pass"] == 0.0 and score.value["gates_ok"] == 0.0
    assert score.value["critical_failures"] == len(report.critical_failures)
    assert score.metadata["status"] == "fail" and score.explanation == "; ".join(report.reasons)
    failures = {(f["gate"], f["seq"]) for f in score.metadata["gate_failures"]}
    assert {("tool_counts", 12), ("safety", 12)} <= failures, failures
    wrong = [f["name"] for f in score.metadata["critical_fields"] if not f["correct"]]
    assert wrong == report.critical_failures


async def test_a_model_agent_attempt_keeps_its_turns_and_usage(sandbox, tmp_path, capsys):
    """The OpenAI agent replaying its committed cassette (no model server): one ModelEvent per
    turn with its tokens, the tool calls grouped as the model made them; the log replays."""
    (outcome,) = await run_batch(
        [load_pack("bid-intake")],
        "openai:scripted-browser-1",
        out=tmp_path,
        progress=False,
        sandbox=sandbox,
        options=AgentOptions(cassette=CASSETTE, record_mode="none"),
    )
    folder = outcome.directory
    assert outcome.status == "completed" and (folder / "transcript.jsonl").is_file()
    turns = [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]
    turns = [t for t in turns if t.get("role") == "assistant"]
    assert await asyncio.to_thread(main, ["export", str(folder)]) == 0
    (sample,) = read_eval_log(folder / "inspect.eval", resolve_attachments=True).samples
    models = [event for event in sample.events if event.event == "model"]
    assert len(models) == len(turns) and not turns[-1]["tool_calls"]  # the answering turn too (it had none)
    assert all(event.model == "openai/scripted-browser-1" for event in models)
    assert [e.output.usage.input_tokens for e in models] == [t["usage"]["prompt_tokens"] for t in turns]
    assert models[-1].output.message.text == turns[-1]["content"]
    assert (
        sum(e.output.usage.output_tokens for e in models)
        == sample.model_usage["openai/scripted-browser-1"].output_tokens
    )
    made = [[call.id for call in m.tool_calls] for m in sample.messages if m.role == "assistant" and m.tool_calls]
    assert made == [[call["id"] for call in t["tool_calls"]] for t in turns if t["tool_calls"]]
    attempt = json.loads((folder / "attempt.json").read_text())
    assert sample.model_usage["openai/scripted-browser-1"].total_tokens == attempt["token_usage"]["total_tokens"]
    report, _ = await replay(folder / "inspect.eval", sandbox=sandbox)
    assert report.first_divergence is None and report.compared == len(read_trace(folder / "trace.jsonl").calls)


def test_a_folder_without_attempts_or_a_wrong_output_name_is_exit_2(batch, tmp_path, capsys):
    code, _, err = exported([str(tmp_path)], capsys)
    assert code == 2 and err.startswith(f"sandbox export: {tmp_path} holds no attempt: give an attempt folder")
    code, _, err = exported([str(batch), "-o", str(tmp_path / "log.txt")], capsys)
    assert code == 2 and "an Inspect log is a .eval or a .json file" in err
    assert not (tmp_path / "log.txt").exists()


# --- the Inspect viewer ------------------------------------------------------------------------


@asynccontextmanager
async def inspect_view(log_dir: Path, data_dir: Path) -> AsyncIterator[str]:
    """`inspect view` as a process on a free loopback port; its base URL once it lists logs.
    Its data folder is the test's own: `inspect view` ends the process a port file there names."""
    port = free_port()
    process = subprocess.Popen(
        [VENV_BIN / "inspect", "view", "--log-dir", log_dir, "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, "XDG_DATA_HOME": str(data_dir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        await wait_answering(f"{base}/api/log-files", process, "inspect view", seconds=30)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_inspect_view_lists_the_exported_log_and_shows_its_samples(batch, browser, tmp_path, capsys):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    assert exported([str(batch), "-o", str(log_dir / "reference.eval")], capsys)[0] == 0
    async with inspect_view(log_dir, tmp_path / "inspect-data") as base:
        async with aiohttp.ClientSession() as http, http.get(f"{base}/api/log-files") as response:
            listed = (await response.json())["files"]
        assert [(Path(f["name"]).name, f["task"]) for f in listed] == [("reference.eval", "controlled_form")]

        context = await browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(base)
            sample = page.get_by_text("controlled-form-2", exact=True)
            await sample.wait_for(timeout=30_000)
            # The list renders row by row: the other sample's row is waited for too, not looked at once.
            await page.get_by_text("controlled-form-1", exact=True).wait_for(timeout=30_000)
            await sample.click()
            start = page.get_by_text("browser_start_session", exact=True).first
            await start.wait_for(timeout=30_000)
            assert "/samples/sample/controlled-form-2/" in page.url
        finally:
            await context.close()


def test_a_damaged_attempt_naming_nothing_is_its_batchs_agents_with_no_made_up_time(tmp_path):
    """Its sample's agent was "unknown" (a model of its own in the log) where the results count it
    in its batch's agent's row, and its start was the time of the export."""
    from sandbox.runner.inspect_export import export_inspect_log
    from tests.support.attempt_folders import scored_attempt

    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", agent="a")
    scored_attempt(batch / "controlled-form-2", record=b"{garbled", traced=False)  # names no agent, no time
    target, _ = export_inspect_log(batch, tmp_path / "log.json")
    log = read_eval_log(target)
    samples = {sample.id: sample for sample in log.samples}
    damaged = samples["controlled-form-2"]
    assert damaged.metadata["agent"] == "a" and log.eval.metadata["agents"] == ["a"], damaged.metadata
    assert damaged.started_at is None and damaged.completed_at is None, damaged.started_at
    assert samples["controlled-form-1"].started_at is not None


def failed_attempt(folder: Path) -> Path:
    """``scored_attempt`` whose score.json says the answer did not qualify."""
    from tests.support.attempt_folders import scored_attempt

    scored_attempt(folder)
    score = json.loads((folder / "score.json").read_text())
    (folder / "score.json").write_text(json.dumps({**score, "qualified_pass": False, "error_free": False}))
    return folder


def test_an_attempt_a_rerun_replaced_is_a_sample_left_out_of_the_results(tmp_path):
    """The results counted it: two samples, a qualified pass of 0.5, where `sandbox results` counts
    one attempt and one qualified pass."""
    from sandbox.runner.folders import read_summary
    from sandbox.runner.inspect_export import export_inspect_log
    from tests.support.attempt_folders import scored_attempt

    batch = tmp_path / "batch"
    failed_attempt(batch / "controlled-form-1")
    scored_attempt(batch / "controlled-form-1-r1")
    (row,) = read_summary(batch)["summary"]
    assert (row["attempts"], row["qualified_passes"]) == (1, 1), row
    target, _ = export_inspect_log(batch, tmp_path / "log.json")
    log = read_eval_log(target)
    means = {score.name: score.metrics["mean"].value for score in log.results.scores}
    assert means["qualified_pass"] == 1.0, means
    assert {score.scored_samples for score in log.results.scores} == {1}
    assert {score.unscored_samples for score in log.results.scores} == {0}
    assert (log.results.total_samples, log.results.metadata) == (2, {"replaced_samples": 1})  # 1 + 0 + 1
    samples = {sample.id: sample for sample in log.samples}
    assert samples["controlled-form-1"].metadata["selection"] == "replaced"
    replacement = samples["controlled-form-1-r1"].metadata
    assert (replacement["selection"], replacement["replaces"]) == ("approved replacement", "controlled-form-1")
    assert samples["controlled-form-1"].scores["sandbox_scorer"].value["qualified_pass"] == 0.0  # its own, kept


@pytest.mark.parametrize("damage", ["trace-cut", "trace-cut-not-a-pass", "record-unreadable"])
def test_a_damaged_attempts_gates_are_not_ok_and_score_json_says_its_own_in_the_metadata(tmp_path, damage):
    """A trace cut mid-line scored qualified_pass 0 but gates_ok 1 (score.json's), though its
    explanation says the gates cannot be checked; an unreadable record kept score.json's
    critical failures, where none of its score counts."""
    from sandbox.runner.inspect_export import export_inspect_log
    from tests.support.attempt_folders import cut_trace_mid_line, scored_attempt

    folder = tmp_path / "controlled-form-1"
    if damage == "record-unreadable":
        scored_attempt(folder, record=b"{garbled")
    else:
        (failed_attempt if damage == "trace-cut-not-a-pass" else scored_attempt)(folder)
        cut_trace_mid_line(folder, 3)
    critical = [f for f in json.loads((folder / "score.json").read_text())["fields"] if f["critical"]]
    assert critical  # the controlled form has critical fields
    target, _ = export_inspect_log(folder, tmp_path / "log.json")
    (sample,) = read_eval_log(target).samples
    score = sample.scores["sandbox_scorer"]
    assert score.value["gates_ok"] == 0.0 and score.value["qualified_pass"] == 0.0, score.value
    assert score.metadata["gates_ok"] is True  # score.json's own
    expected = len(critical) if damage == "record-unreadable" else 0  # its field accuracy: 0, or the answer's
    assert score.value["critical_failures"] == expected, score.value
    assert "cannot be checked" in score.explanation or "not counted" in score.explanation, score.explanation


@pytest.mark.parametrize("elapsed", [1e300, 283824000000])
def test_an_elapsed_time_no_date_can_hold_leaves_the_end_out_and_says_so(tmp_path, capsys, elapsed):
    """The export raised OverflowError (a traceback, not an exit status)."""
    from sandbox.runner.attempt import AttemptRecord
    from tests.support.attempt_folders import scored_attempt

    record = AttemptRecord(
        pack="controlled-form", agent="a", status="completed", elapsed_seconds=elapsed,
        started_at="2026-12-04T12:26:32.000+00:00",
    )  # fmt: skip
    folder = scored_attempt(tmp_path / "controlled-form-1", record=record.to_json().encode())
    code, out, err = exported([str(folder), "-o", str(tmp_path / "log.json")], capsys)
    assert code == 0, err
    (sample,) = read_eval_log(tmp_path / "log.json").samples
    assert sample.completed_at is None and sample.started_at is not None
    assert any("elapsed_seconds" in problem for problem in sample.metadata["problems"]), sample.metadata["problems"]


def test_an_attempt_with_no_score_is_a_sample_the_means_count_as_results_do(tmp_path):
    """Two passes and a crashed attempt (no score.json) gave results 2/3 and an export of 1.0: a
    sample with no score was left out of the means; so was one unfinished and one whose
    score.json is damaged. Each then counted no critical failure, fewer than a scored wrong
    answer's: every critical field of its pack is one (as with a record not counted), and its
    score's metadata has the keys a scored one's has."""
    from sandbox.runner.attempt import AttemptRecord
    from sandbox.runner.folders import read_summary
    from sandbox.runner.inspect_export import export_inspect_log
    from tests.support.attempt_folders import scored_attempt

    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1")
    scored_attempt(batch / "controlled-form-2")
    crashed = AttemptRecord(pack="controlled-form", agent="a", status="crashed", error="worker died")
    (scored_attempt(batch / "controlled-form-3", record=crashed.to_json().encode()) / "score.json").unlink()
    unfinished = scored_attempt(batch / "controlled-form-4")
    (unfinished / "attempt.json").unlink()
    (unfinished / "score.json").unlink()
    (scored_attempt(batch / "controlled-form-5") / "score.json").write_text('{"qualified_pass": "yes"')
    (row,) = read_summary(batch)["summary"]
    assert (row["attempts"], row["qualified_passes"]) == (5, 2), row
    target, _ = export_inspect_log(batch, tmp_path / "log.json")
    log = read_eval_log(target)
    means = {score.name: score.metrics["mean"].value for score in log.results.scores}
    assert means["qualified_pass"] == pytest.approx(2 / 5), means
    assert means["field_accuracy"] == pytest.approx(row["mean_field_accuracy"]), (means, row)
    assert {(score.scored_samples, score.unscored_samples) for score in log.results.scores} == {(5, 0)}
    samples = {sample.id: sample for sample in log.samples}
    for name, said in [("controlled-form-3", "agent crashed: worker died"), ("controlled-form-4", "no score.json"),
                       ("controlled-form-5", "taken as not scored")]:  # fmt: skip
        score = samples[name].scores["sandbox_scorer"]
        assert score.value == {"qualified_pass": 0.0, "field_accuracy": 0.0, "critical_failures": 12.0, "gates_ok": 0.0}
        assert said in score.explanation, (name, score.explanation)
        assert len(score.metadata["critical_failures"]) == 12 and score.metadata["error_free"] is False
        scored = samples["controlled-form-1"].scores["sandbox_scorer"].metadata
        assert scored.keys() - {"scored"} <= score.metadata.keys(), scored.keys() - score.metadata.keys()
    assert means["critical_failures"] == pytest.approx(3 * 12 / 5), means


def test_a_call_time_that_is_no_time_dates_its_event_at_the_start_and_is_said(tmp_path, capsys):
    """A trace of another writer's may hold any text in wall_start and wall_end: the whole export
    failed ("sandbox export: Invalid isoformat string: '12:00 yesterday'", exit 2, no log, no file named)."""
    from tests.support.attempt_folders import scored_attempt

    folder = scored_attempt(tmp_path / "controlled-form-1")
    lines = (folder / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    calls = [n for n, line in enumerate(lines) if json.loads(line).get("type") == "call"]
    first, second = (json.loads(lines[n]) for n in calls[:2])
    lines[calls[0]] = json.dumps({**first, "wall_start": "12:00 yesterday"}) + "\n"
    lines[calls[1]] = json.dumps({**second, "wall_end": "soon"}) + "\n"
    (folder / "trace.jsonl").write_text("".join(lines), encoding="utf-8")
    code, _, err = exported([str(folder), "-o", str(tmp_path / "log.json")], capsys)
    assert code == 0, err
    (sample,) = read_eval_log(tmp_path / "log.json").samples
    tools = [event for event in sample.events if event.event == "tool"]
    assert tools[0].timestamp == sample.events[0].timestamp  # the sample's start
    assert tools[1].completed == tools[1].timestamp
    problems = [p for p in sample.metadata["problems"] if "is not an ISO time" in p]
    assert [p.split(":")[0] for p in problems] == [
        f"trace.jsonl call seq {first['seq']}",
        f"trace.jsonl call seq {second['seq']}",
    ]
    assert "'12:00 yesterday'" in problems[0] and "wall_end 'soon'" in problems[1], problems


def test_cached_tokens_are_inspects_and_a_wrapped_model_agent_is_named_by_its_model(tmp_path):
    """token_usage read only input/output/total (the cached input was lost, and counted as fresh
    for OpenAI); ``think:30:openai:gpt-4o`` was the model ``sandbox/think:30:openai:gpt-4o``."""
    from sandbox.runner.attempt import AttemptRecord
    from sandbox.runner.inspect_export import export_inspect_log, model_name, token_usage
    from tests.support.attempt_folders import scored_attempt

    assert model_name("think:30:openai:gpt-4o") == "openai/gpt-4o"
    assert model_name("think:5:think:30:anthropic:claude-x") == "anthropic/claude-x"
    assert model_name("think:30:reference") == "sandbox/think:30:reference"
    assert model_name("no-such-kind:x") == "sandbox/no-such-kind:x"
    openai = token_usage({"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105, "cached_tokens": 60})
    assert (openai.input_tokens, openai.input_tokens_cache_read, openai.total_tokens) == (40, 60, 105)
    # a turn's usage in the transcript, as the SDK dumps it: its cached input was read as fresh
    turn = token_usage({"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 60}})
    assert (turn.input_tokens, turn.input_tokens_cache_read, turn.total_tokens) == (40, 60, 105)
    anthropic = token_usage(
        {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 60, "cache_creation_input_tokens": 7}
    )
    assert (anthropic.input_tokens, anthropic.input_tokens_cache_read, anthropic.input_tokens_cache_write) == (
        10,
        60,
        7,
    )
    assert anthropic.total_tokens == 82
    usage = {"input_tokens": 10, "cached_input_tokens": 50, "output_tokens": 4}  # a cmd: agent's usage.json
    record = AttemptRecord(
        pack="controlled-form", agent="think:30:openai:gpt-4o", status="completed", elapsed_seconds=3.0,
        token_usage=usage,
    )  # fmt: skip
    folder = scored_attempt(tmp_path / "controlled-form-1", record=record.to_json().encode())
    target, _ = export_inspect_log(folder, tmp_path / "log.json")
    log = read_eval_log(target)
    assert log.eval.model == "openai/gpt-4o"
    used = log.stats.model_usage["openai/gpt-4o"]
    assert (used.input_tokens, used.input_tokens_cache_read, used.output_tokens, used.total_tokens) == (10, 50, 4, 64)


def test_a_lone_surrogate_in_an_attempt_is_escaped_not_the_end_of_the_export(tmp_path):
    """Half of a model's emoji, kept by JSON as an escape (``"\\ud83d"``) in its transcript, failed
    the whole batch's export: Inspect writes UTF-8 (exit 2, no log for any attempt)."""
    folder = shutil.copytree(FIXTURES_DIR / "attempts" / "reference" / "bid-intake", tmp_path / "bid-intake-1")
    turns = [
        {"role": "assistant", "content": "thinking \ud83d here", "finish_reason": "tool_calls",
         "tool_calls": [{"id": f"c{call.seq}", "name": call.tool, "arguments": "{}"}]}
        for call in read_trace(folder / "trace.jsonl").calls
    ]  # fmt: skip
    (folder / "transcript.jsonl").write_text("".join(json.dumps(turn) + "\n" for turn in turns), encoding="utf-8")
    assert main(["export", str(folder), "-o", str(tmp_path / "log.eval")]) == 0
    (sample,) = read_eval_log(tmp_path / "log.eval").samples
    said = [m.text for m in sample.messages if m.role == "assistant" and m.tool_calls]
    assert said and set(said) == {"thinking \\ud83d here"}, said[:2]


@pytest.mark.parametrize(
    "status, error, limit",
    [
        ("timeout", None, ("time", 600.0)),
        ("stopped", None, ("operator", 1.0)),  # was a sample that ended as any other
        ("recording_error", "recording_error: the disk is full", None),  # so was this
        ("crashed", "worker died", None),
        ("completed", None, None),
    ],
)
def test_an_attempt_that_did_not_end_on_its_own_is_inspects_error_or_limit(tmp_path, status, error, limit):
    from sandbox.runner.attempt import AttemptRecord
    from sandbox.runner.inspect_export import export_inspect_log
    from tests.support.attempt_folders import scored_attempt

    said = {"recording_error": "recording_error: the disk is full", "crashed": "worker died"}.get(status)
    record = AttemptRecord(
        pack="controlled-form", agent="a", status=status, error=said, elapsed_seconds=3.0, time_limit_seconds=600
    )
    folder = scored_attempt(tmp_path / "controlled-form-1", record=record.to_json().encode())
    target, _ = export_inspect_log(folder, tmp_path / "log.json")
    (sample,) = read_eval_log(target).samples
    assert (sample.error.message if sample.error else None) == error
    assert ((sample.limit.type, sample.limit.limit) if sample.limit else None) == limit


def test_a_pack_of_the_users_own_is_named_by_its_folder_for_replay(tmp_path):
    """The export kept the pack's id alone: `sandbox replay` of the log loaded the bundled pack of
    that id (or none), where replaying the attempt folder loads the user's own."""
    from sandbox.runner.attempt import AttemptRecord
    from sandbox.runner.inspect_export import export_inspect_log
    from sandbox.runner.recordings import load_recording
    from tests.support.attempt_folders import scored_attempt

    own = shutil.copytree(load_pack("controlled-form").dir, tmp_path / "my packs" / "controlled-form")
    record = AttemptRecord(
        pack="controlled-form", agent="a", status="completed", elapsed_seconds=3.0, pack_path=str(own)
    )
    folder = scored_attempt(tmp_path / "controlled-form-1", record=record.to_json().encode())
    target, _ = export_inspect_log(folder, tmp_path / "log.eval")
    (sample,) = read_eval_log(target).samples
    assert sample.metadata["pack_path"] == str(own)
    assert load_recording(target).pack == str(own) == load_recording(folder).pack
