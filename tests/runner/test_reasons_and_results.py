"""Why an attempt failed, where the user looks: the lines after `sandbox run`'s table, each
attempt's score.txt, the batch's summary.json, `sandbox results DIR` and `sandbox score
ATTEMPT_DIR` — with real failing agents (a missing program, one that breaks a gate)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch
from sandbox.runner.reasons import failure_reasons

SAMPLES = FIXTURES_DIR / "attempts"
# An external agent that navigates off the pack's allow-list, then answers nothing.
OFF_LIST_AGENT = """
import json, os, urllib.request
url = os.environ["SANDBOX_URL"] + "/runs/" + os.environ["SANDBOX_RUN_ID"] + "/tools/"
def call(name, args):
    request = urllib.request.Request(url + name, json.dumps(args).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request))
call("browser_start_session", {"provider": "kernel", "site_key": os.environ["SANDBOX_SITE_KEY"],
     "clear_cookies": False, "url": "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view"})
call("browser_navigate", {"url": "https://sam.gov/search"})
"""


async def test_a_missing_agent_program_is_named_with_its_stderr(sandbox, tmp_path, capsys):
    outcomes = await run_batch(
        [load_pack("bid-intake")], "cmd:/nonexistent/agent", out=tmp_path, progress=False, sandbox=sandbox
    )
    [outcome] = outcomes
    assert not outcome.qualified_pass and outcome.status == "error"
    assert outcome.reason.startswith(f"agent error: agent exited with status 127 (run in {os.getcwd()}); stderr: ")
    assert "/nonexistent/agent: not found" in outcome.reason
    score_text = (outcome.directory / "score.txt").read_text()
    assert "NOT A QUALIFIED PASS" in score_text and "why it did not qualify:" in score_text
    assert "/nonexistent/agent: not found" in score_text

    batch = outcome.directory.parent
    summary = json.loads((batch / "summary.json").read_text())
    assert summary["summary"][0]["qualified_passes"] == 0 and summary["attempts"][0]["reason"] == outcome.reason
    assert main(["results", str(batch)]) == 1
    printed = capsys.readouterr().out
    assert "0/1" in printed and f"  bid-intake-1: {outcome.reason}" in printed.splitlines()
    assert main(["results", str(batch), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == summary


async def test_a_gate_failure_names_the_gate_and_the_calls_seq(sandbox, tmp_path):
    agent = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(OFF_LIST_AGENT)}"
    [outcome] = await run_batch([load_pack("bid-intake")], agent, out=tmp_path, progress=False, sandbox=sandbox)
    assert outcome.status == "completed" and not outcome.qualified_pass
    assert outcome.reason.startswith("gate "), outcome.reason
    assert "at seq 2: " in outcome.reason and "https://sam.gov/search" in outcome.reason


def test_sandbox_run_prints_the_reason_after_the_table(tmp_path, capsys):
    code = main(["run", "bid-intake", "--agent", "cmd:/nonexistent/agent", "--out", str(tmp_path), "--no-progress"])
    printed = capsys.readouterr().out.splitlines()
    assert code == 1
    table_end = next(i for i, line in enumerate(printed) if line.startswith("bid-intake "))
    assert printed[table_end + 1] == "not qualified:"
    assert printed[table_end + 2].startswith("  bid-intake-1: agent error: agent exited with status 127")
    report = Path(printed[-1].removeprefix("report: "))
    assert printed[-1].startswith("report: ") and report.name == "report.html" and report.is_file()
    assert (report.parent / "bid-intake-1" / "report.html").is_file()


def test_sandbox_run_names_an_attempt_page_it_could_not_write(tmp_path, capsys):
    """`sandbox report` named each attempt page it could not write; `sandbox run`, writing the same
    pages, said nothing of one (the batch page only noted it)."""
    agent = 'cmd:mkdir "$SANDBOX_ATTEMPT_DIR/report.html"'  # the page's name taken by a folder
    code = main(["run", "bid-intake", "--agent", agent, "--out", str(tmp_path), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 1
    assert "sandbox run: no page for bid-intake-1/: cannot write its page (" in captured.err, captured.err
    assert captured.out.splitlines()[-1].startswith("report: "), captured.out


def test_reasons_put_gates_with_seq_before_fields(capsys):
    folder = SAMPLES / "controlled-form-handmade-confirm-click"
    assert main(["score", str(folder), "--json"]) == 1
    score = json.loads(capsys.readouterr().out)
    reasons = failure_reasons(json.loads((folder / "attempt.json").read_text()), score)
    assert reasons[0].startswith("gate tool_counts at seq 12: browser_click called 3 times")
    assert reasons[1].startswith("gate safety at seq 12: ") and reasons[1].endswith("(+1 more gate failures)")
    assert reasons[2] == "critical field workflow.steps_reached: expected 3, got 4"


def test_reasons_of_a_pass_and_of_an_unscored_attempt():
    score = json.loads((SAMPLES / "reference" / "bid-intake" / "score.json").read_text())
    assert failure_reasons({"status": "completed"}, score) == []
    assert failure_reasons({"status": "completed"}, None) == [
        "no score.json: the attempt was not scored (run `sandbox score ATTEMPT_DIR`)"
    ]
    timeout = failure_reasons({"status": "timeout", "error": "stopped at the attempt's time limit (5 s)"}, score)
    assert timeout == ["time limit: stopped at the attempt's time limit (5 s)"]


@pytest.mark.parametrize("folder", ["reference/bid-intake", "example-agent-bid-intake"])
def test_score_takes_everything_from_an_attempt_folder(folder, capsys):
    recorded = json.loads((SAMPLES / folder / "score.json").read_text())
    code = main(["score", str(SAMPLES / folder), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if recorded["qualified_pass"] else 1)
    assert report == {**recorded, "stamp": report["stamp"]}


def test_results_rebuilds_the_table_of_an_older_batch(capsys):
    assert main(["results", str(SAMPLES / "reference")]) == 0  # recorded before summary.json existed
    printed = capsys.readouterr().out
    assert all(f"{pack}  " in printed for pack in ("bid-intake", "sec-contract", "court-docket-p4"))
    assert "not qualified" not in printed


def test_bad_folders_are_clear_usage_errors(tmp_path, capsys):
    assert main(["results", str(tmp_path)]) == 2
    assert "holds no summary.json and no attempt folder" in capsys.readouterr().err
    assert main(["score", str(tmp_path)]) == 2
    assert "is not an attempt folder" in capsys.readouterr().err
    assert main(["score"]) == 2
    assert "give an attempt folder" in capsys.readouterr().err


async def test_a_huge_line_of_stderr_is_quoted_cut_short(sandbox, tmp_path, capsys):
    """A 2 MB line of an agent's stderr went whole into its reason: printed on the terminal, and
    into summary.json, score.txt and both report pages (each 2 MB)."""
    agent = f"cmd:{shlex.quote(sys.executable)} -c \"import sys; sys.stderr.write('E' * 2_000_000); sys.exit(3)\""
    [failing] = await run_batch([load_pack("controlled-form")], agent, out=tmp_path, progress=False, sandbox=sandbox)
    assert "stderr: …EEEE" in failing.reason and "more characters)" in failing.reason
    assert len(failing.reason) < 1000, len(failing.reason)
    batch = failing.directory.parent
    assert main(["results", str(batch)]) == 1 and len(capsys.readouterr().out) < 3000
    assert main(["report", str(batch)]) == 0
    for name in ("summary.json", "report.html", "controlled-form-1/score.txt", "controlled-form-1/report.html"):
        assert (batch / name).stat().st_size < 50_000, name
    assert (batch / "controlled-form-1" / "agent.stderr.txt").stat().st_size == 2_000_000  # kept whole


def test_an_agents_long_error_is_quoted_cut_short():
    """An agent's error (an exception's message, an API error's body): whole in attempt.json, cut in its reason."""
    [reason] = failure_reasons({"status": "crashed", "error": "RuntimeError: " + "x" * 100_000}, None)[:1]
    assert len(reason) < 2500 and "more characters)" in reason


def test_the_grids_pack_names_and_the_reason_lines_folder_and_interruption_are_escaped():
    """A pack name heading the workflow grid, and an attempt's folder name, its interruption (a model
    endpoint's error text) and what it replaces, reached the terminal with their escape sequences."""
    from sandbox.runner.batch import format_reasons
    from sandbox.runner.compare import comparison, format_comparison

    hostile = "p\x1b]0;PWN\x07"
    attempt = {"pack": hostile, "agent": "a", "directory": f"/b/{hostile}-1-r1", "status": "completed",
               "elapsed_seconds": 1.0, "qualified_pass": False, "error_free": False, "field_accuracy": 0.0,
               "tool_calls": 1, "selection": "approved replacement", "replaces": "q\x1b[5m",
               "interruption": "worker died \x1b[31mRED", "reason": "gate"}  # fmt: skip
    printed = format_comparison(comparison([attempt])) + format_reasons([attempt])
    assert "\x1b" not in printed and "\x07" not in printed, printed
    assert "p\\x1b]0;PWN\\x07" in printed and "worker died \\x1b[31mRED" in printed and "q\\x1b[5m" in printed
