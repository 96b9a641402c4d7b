"""A damaged attempt folder counts the same in every reader of a batch (the results and their
table, the comparison and its leaderboard, the batch and attempt pages, JUnit, the Inspect
export): the benchmark keeps every selected attempt, so it stays in the count, as an attempt that
proves nothing it cannot prove. Its record (attempt.json) missing, unreadable, or unreadable in a
field the counts rest on: no qualified pass, field accuracy 0, time unknown. Its trace cut short:
no qualified pass (the gates cannot be checked), the field accuracy, which rests on the answer,
kept. Each says why. Built from the committed reference attempt; no browser."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from markupsafe import escape

from sandbox.cli import main
from sandbox.runner.batch import write_summary
from sandbox.runner.folders import AttemptFolder, batch_attempts, outcome, read_summary
from sandbox.runner.inspect_export import export_inspect_log
from sandbox.runner.junit import junit_xml
from sandbox.runner.recordings import load_recording
from sandbox.runner.report import write_reports
from tests.support.attempt_folders import REFERENCE, cut_trace_mid_line, scored_attempt


def record(**fields) -> bytes:
    good = {"pack": "controlled-form", "agent": "a", "status": "completed", "elapsed_seconds": 3.0}
    return json.dumps(good | fields).encode()


def write_record(**fields) -> Callable[[Path], None]:
    return lambda folder: (folder / "attempt.json").write_bytes(record(**fields))


REFERENCE_RUN = json.loads((REFERENCE / "attempt.json").read_text(encoding="utf-8"))["run_id"]  # its trace's run

# damage -> (what it does to the second attempt's folder, its status and field accuracy, the start
# of its reason, what the batch's note says of it)
DAMAGE = {
    "status-unreadable": (
        write_record(status=7), "unreadable", 0.0,
        "attempt.json field 'status' is unreadable (7): how the agent ended is unknown, and its score is not counted",
        "have an attempt.json that cannot be read or counted (controlled-form-2: attempt.json field 'status'",
    ),
    "status-null": (
        write_record(status=None), "unreadable", 0.0, "attempt.json field 'status' is unreadable (null)",
        "have an attempt.json that cannot be read or counted (controlled-form-2: attempt.json field 'status'",
    ),
    "elapsed-not-a-number": (
        write_record(elapsed_seconds="3 s"), "unreadable", 0.0,
        "attempt.json field 'elapsed_seconds' is unreadable (\"3 s\"): its time is unknown",
        "have an attempt.json that cannot be read or counted (controlled-form-2: attempt.json field 'elapsed_seconds'",
    ),
    "record-not-json": (
        lambda folder: (folder / "attempt.json").write_bytes(b'{"pack": "controlled-form", '), "unreadable", 0.0,
        "attempt.json is not valid JSON (", "have an attempt.json that cannot be read or counted (controlled-form-2: ",
    ),
    "record-missing": (
        lambda folder: (folder / "attempt.json").unlink(), "unfinished", 0.0,
        "attempt.json is missing: the attempt did not finish", "have no attempt.json",
    ),
    "record-of-another-run": (  # two batches copied into one folder: one's record, the other's trace
        write_record(run_id="run_000000000000"), "unreadable", 0.0,
        f"attempt.json is of run run_000000000000 and trace.jsonl of run {REFERENCE_RUN} (two attempts' files in",
        "have an attempt.json that cannot be read or counted (controlled-form-2: attempt.json is of run",
    ),
    "record-and-score-disagree": (  # one's record, the other's score; or an edited score.json
        write_record(qualified_pass=False), "unreadable", 0.0,
        "attempt.json says qualified_pass false and score.json true (two attempts' files in one folder, or an",
        "have an attempt.json that cannot be read or counted (controlled-form-2: attempt.json says qualified_pass",
    ),
    "trace-cut-mid-line": (
        lambda folder: cut_trace_mid_line(folder, 6), "completed", 1.0,
        "trace.jsonl is damaged (line 6: unreadable (JSONDecodeError",
        "have a damaged trace.jsonl (controlled-form-2: trace.jsonl is damaged (line 6",
    ),
}  # fmt: skip


CASES = [(damage, summarised) for damage in DAMAGE for summarised in (False, True)]


@pytest.fixture(params=CASES, ids=[f"{d}{'-after-its-summary' if s else ''}" for d, s in CASES])
def damaged(request, tmp_path) -> tuple[Path, str, float, str, str]:
    """A batch of two qualified attempts of agent ``a`` (3.0 s each, field accuracy 1.0), the
    second damaged (after the batch's summary.json was written, or with none); with what it must
    count as."""
    name, summarised = request.param
    damage, status, accuracy, said, noted = DAMAGE[name]
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", traced=True)
    second = scored_attempt(batch / "controlled-form-2", traced=True)
    (second / "score.txt").write_text("verdict: QUALIFIED PASS (error-free)\n")  # as the runner wrote it
    if summarised:  # as the runner wrote it, from the folders whole: the table then said 2/2
        write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
        noted = f"no longer back (damaged since it was written): rebuilt from the attempt folders; 1 attempt(s) {noted}"
    damage(second)
    return batch, status, accuracy, said, noted


def test_the_results_count_it_as_an_attempt_that_is_no_pass(damaged, capsys):
    """Before: a record whose status could not be read was a qualified pass (2/2, exit 0), an
    unreadable or missing one's field accuracy went into the mean, a trace cut short was not said."""
    batch, status, accuracy, said, noted = damaged
    data = read_summary(batch)
    good, bad = data["attempts"]
    assert (good["qualified_pass"], bad["qualified_pass"], bad["error_free"]) == (True, False, False)
    assert (bad["status"], bad["field_accuracy"], bad["agent"]) == (status, accuracy, "a")
    assert bad["reason"].startswith(said), bad["reason"]
    (row,) = data["summary"]
    assert (row["attempts"], row["qualified_passes"], row["error_free_passes"]) == (2, 1, 1)
    assert row["mean_field_accuracy"] == (1.0 + accuracy) / 2 and row["median_seconds"] == 3.0
    assert noted in data["note"]
    assert main(["results", str(batch)]) == 1
    printed = capsys.readouterr()
    line = next(line for line in printed.out.splitlines() if line.startswith("  controlled-form-2: "))
    assert "1/2" in printed.out and said in line and noted in printed.err


def test_the_comparison_and_its_leaderboard_count_it_alike(damaged, tmp_path, capsys):
    batch, status, accuracy, _, _ = damaged
    board = tmp_path / "board.html"
    assert main(["compare", str(batch), "--json", "--html", str(board)]) == 1
    (row,) = json.loads(capsys.readouterr().out)["ranking"]
    assert (row["attempts"], row["qualified_passes"], row["error_free_passes"]) == (2, 1, 1)
    assert row["mean_field_accuracy"] == (1.0 + accuracy) / 2 and row["median_seconds"] == 3.0
    assert row["statuses"] == ({"completed": 2} if status == "completed" else {"completed": 1, status: 1})
    page = board.read_text()
    assert "<td>1/2</td>" in page and f"<td>{(1.0 + accuracy) / 2:.3f}</td>" in page
    # the time chart's median is the table's: an unknown time is no 0 s
    assert "median 3.0 s" in page and "median 1.5 s" not in page


def test_the_pages_and_junit_say_it_is_no_pass_and_why(damaged):
    batch, status, accuracy, said, noted = damaged
    write_reports(batch)
    summary = (batch / "report.html").read_text()
    assert "<td>1/2</td><td>1/2</td>" in summary and f"<td>{(1.0 + accuracy) / 2:.3f}</td>" in summary
    assert escape(noted) in summary
    page = (batch / "controlled-form-2" / "report.html").read_text()
    assert "NOT A QUALIFIED PASS" in page and "QUALIFIED PASS (error-free)" not in page and escape(said) in page
    cases = {case.get("name"): case for case in ET.fromstring(junit_xml(batch)).iter("testcase")}
    assert cases["controlled-form[a#1]"].find("failure") is None
    failure = cases["controlled-form[a#2]"].find("failure")
    assert failure is not None and failure.get("message").startswith(said)
    assert failure.get("type") == f"not_qualified ({status})" and failure.text.startswith(said)


def test_the_inspect_export_scores_it_as_the_results_count_it(damaged, tmp_path):
    """Before: its sample kept score.json's field accuracy (1.0), and with a record whose status
    could not be read, or a trace cut short, its qualified pass."""
    batch, status, accuracy, said, _ = damaged
    target, _ = export_inspect_log(batch, tmp_path / "log.json")
    log = read_eval_log(target)
    samples = {sample.id: sample for sample in log.samples}
    good, bad = (samples[name].scores["sandbox_scorer"] for name in ("controlled-form-1", "controlled-form-2"))
    assert good.value["qualified_pass"] == 1.0 and good.value["field_accuracy"] == 1.0
    assert (bad.value["qualified_pass"], bad.value["field_accuracy"]) == (0.0, accuracy)
    assert bad.explanation.startswith(said) and bad.metadata["qualified_pass"] is True  # score.json's own, kept
    assert samples["controlled-form-2"].metadata["status"] == status
    means = {score.name: score.metrics["mean"].value for score in log.results.scores}
    assert means["qualified_pass"] == 0.5 and means["field_accuracy"] == (1.0 + accuracy) / 2


def test_a_trace_of_a_newer_format_is_not_damaged(tmp_path):
    """What this version cannot read of a newer trace is named, but takes back no pass."""
    folder = scored_attempt(tmp_path / "b" / "controlled-form-1", traced=True)
    lines = (folder / "trace.jsonl").read_text().splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), "format": 99}) + "\n"
    (folder / "trace.jsonl").write_text("".join(lines) + json.dumps({"type": "verdict", "x": 1}) + "\n")
    assert any("newer than this sandbox reads" in problem for problem in AttemptFolder.load(folder).problems)
    (attempt,) = read_summary(folder.parent)["attempts"]
    assert attempt["qualified_pass"] is True and attempt["status"] == "completed" and attempt["reason"] == ""


def test_values_no_writer_gives_are_named_and_never_fatal(tmp_path, capsys):
    """A start that is no ISO time made JUnit and the Inspect export raise; a NaN cost made the
    comparison raise; a NaN or negative time went into the median. Left out, as unknown."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", record(cost_usd=0.5), traced=True)
    damaged = record(started_at="yesterday", cost_usd=float("nan"), credits_per_dollar=-1)
    scored_attempt(batch / "controlled-form-2", damaged, traced=True)
    assert main(["results", str(batch)]) == 0
    out = capsys.readouterr().out
    assert "2/2" in out and re.search(r"\n1 +a +2/2 .* unknown ", out), out  # the mean of an unknown cost is unknown
    problems = AttemptFolder.load(batch / "controlled-form-2").problems
    assert [p.split("'")[1] for p in problems if p.startswith("attempt.json field")] == [
        "cost_usd", "credits_per_dollar", "started_at"
    ]  # fmt: skip
    cases = list(ET.fromstring(junit_xml(batch)).iter("testcase"))
    assert [case.find("failure") for case in cases] == [None, None]
    target, _ = export_inspect_log(batch, tmp_path / "log.json")
    assert [sample.metadata["status"] for sample in read_eval_log(target).samples] == ["completed", "completed"]


@pytest.mark.parametrize(
    ("fields", "pack", "problem"),
    [
        ({"pack": 5, "elapsed_seconds": "slow"}, "controlled-form", "attempt.json is unreadable (pack: "),
        ({"elapsed_seconds": float("nan")}, "controlled-form", "attempt.json field 'elapsed_seconds' left out: "),
    ],
    ids=["pack-a-number", "elapsed-nan"],
)
def test_replay_reads_the_record_as_the_results_do(tmp_path, fields, pack, problem):
    """Replay read attempt.json on its own: a pack that is no name raised a TypeError, a time
    that is no number was scored with (an evaluation error; NaN passed the time limit)."""
    folder = scored_attempt(tmp_path / "b" / "controlled-form-1", record(**fields), traced=True)
    recording = load_recording(folder)
    assert (recording.pack, recording.elapsed_seconds) == (pack, None)
    assert [p for p in recording.problems if p.startswith("attempt.json")][0].startswith(problem)


def test_two_batches_merged_into_one_folder_are_both_counted_and_said(tmp_path, capsys):
    """Batch b copied into batch a's folder: b's summary.json was taken, and a's two attempts, whose
    folders are beside b's, were left out of every count in silence."""
    for side, agent, names in (
        ("a", "x", ("controlled-form-2", "controlled-form-3")),
        ("b", "y", ("controlled-form-1",)),
    ):
        for name in names:
            scored_attempt(tmp_path / side / name, record(agent=agent), agent=agent)
        write_summary(tmp_path / side, [outcome(folder) for folder in batch_attempts(tmp_path / side)])
    merged = shutil.copytree(tmp_path / "a", tmp_path / "merged")
    shutil.copytree(tmp_path / "b", merged, dirs_exist_ok=True)  # b's summary.json over a's
    data = read_summary(merged)
    assert sorted((a["agent"], Path(a["directory"]).name) for a in data["attempts"]) == [
        ("x", "controlled-form-2"), ("x", "controlled-form-3"), ("y", "controlled-form-1")
    ]  # fmt: skip
    assert "does not list the attempt folder(s) controlled-form-2/, controlled-form-3/ beside it" in data["note"]
    assert main(["compare", str(merged), "--json"]) == 0
    assert {row["agent"]: row["attempts"] for row in json.loads(capsys.readouterr().out)["ranking"]} == {"x": 2, "y": 1}
    # the batch as written is read as it was: every folder listed, nothing rebuilt
    assert "note" not in read_summary(tmp_path / "a") and len(read_summary(tmp_path / "a")["attempts"]) == 2


def test_a_pack_or_agent_that_is_no_name_is_none(tmp_path, capsys):
    """With no record, the pack and agent come from score.json or the trace header: a damaged one's
    ``5`` made `sandbox results`, `report`, `export` and `score` raise a ValidationError or a TypeError."""
    folder = scored_attempt(tmp_path / "b" / "controlled-form-1", traced=True)
    (folder / "attempt.json").unlink()
    score = json.loads((folder / "score.json").read_text())
    (folder / "score.json").write_text(json.dumps({**score, "pack": 5}))
    header, *rest = (folder / "trace.jsonl").read_text().splitlines(keepends=True)
    header = json.dumps({**json.loads(header), "pack": ["controlled-form"], "agent": {"name": "a"}}) + "\n"
    (folder / "trace.jsonl").write_text(header + "".join(rest))
    (attempt,) = read_summary(folder.parent)["attempts"]
    # the pack its folder's name gives (as the runner names it); no agent: none is named, in no row
    assert (attempt["pack"], attempt["agent"], attempt["status"]) == ("controlled-form", None, "unfinished")
    assert main(["results", str(folder.parent)]) == 1
    assert main(["report", str(folder.parent), "--junit", str(tmp_path / "junit.xml")]) == 0
    assert main(["export", str(folder.parent), "-o", str(tmp_path / "log.json")]) == 0
    assert main(["score", str(folder)]) == 2
    assert "does not name its pack (no attempt.json or trace header): add --pack" in capsys.readouterr().err


def test_the_page_shows_no_screenshot_from_outside_the_folder(tmp_path):
    """A trace naming ``../outside.png`` or an absolute path had the page show that file: the pages
    make no request beyond the folder's own screenshots."""
    folder = scored_attempt(tmp_path / "b" / "controlled-form-1", traced=True)
    (tmp_path / "b" / "outside.png").write_bytes(b"png")
    (folder / "shots").mkdir()
    (folder / "shots" / "3.png").write_bytes(b"png")
    outside = str(tmp_path / "b" / "outside.png")
    named = {1: "../outside.png", 2: outside, 3: "shots/3.png", 4: "shots/../../outside.png"}
    lines = []
    for line in (folder / "trace.jsonl").read_text().splitlines():
        data = json.loads(line)
        if data.get("type", "call") == "call" and data.get("seq") in named:
            data["screenshot"] = named[data["seq"]]
        lines.append(json.dumps(data) + "\n")
    (folder / "trace.jsonl").write_text("".join(lines))
    page = write_reports(folder)[0].read_text()
    assert re.findall(r'<img src="([^"]*)"', page) == ["shots/3.png"]


@pytest.mark.parametrize(
    "damage",
    [
        {"tool_calls": "browser_start_session"},
        {"tool_calls": [5]},
        {"content": 5},
        {"usage": {"prompt_tokens": "many"}},
    ],
    ids=["tool-calls-a-string", "a-tool-call-a-number", "content-a-number", "tokens-a-word"],
)
def test_a_damaged_transcript_is_exported_from_the_trace(tmp_path, damage):
    """The Inspect export raised an AttributeError, a ValidationError or a ValueError on it."""
    folder = scored_attempt(tmp_path / "b" / "controlled-form-1", traced=True)
    calls = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    turns = [  # a model agent's turns, one per call of the trace, as its transcript names them
        {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{c['seq']}", "name": c["tool"]}]}
        for c in calls
        if c.get("type", "call") == "call"
    ]
    turns[0] |= damage
    (folder / "transcript.jsonl").write_text("".join(json.dumps(turn) + "\n" for turn in turns))
    target, _ = export_inspect_log(folder, tmp_path / "log.json")
    (sample,) = read_eval_log(target).samples
    assert [event.function for event in sample.events if event.event == "tool"][0] == "browser_start_session"


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("attempts", "cost_usd", float("nan")),
        ("attempts", "elapsed_seconds", float("inf")),
        ("attempts", "field_accuracy", -1.0),
        ("attempts", "field_accuracy", 2.0),
        ("summary", "median_seconds", float("nan")),
        ("summary", "mean_field_accuracy", float("-inf")),
        ("summary", "attempts", -2),
    ],
)
def test_a_summary_with_numbers_no_writer_gives_is_rebuilt(tmp_path, capsys, where, key, value):
    """A summary.json edited to NaN, Infinity or a negative number (Python's json reads them) made
    `sandbox results`, `compare` and `report` raise (math.log10 of a NaN cost); it is rebuilt from
    the attempt folders, as any damaged summary is."""
    batch = tmp_path / "batch"
    for n in (1, 2):
        scored_attempt(batch / f"controlled-form-{n}", record(cost_usd=0.5), traced=True)
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    data = json.loads((batch / "summary.json").read_text())
    data[where][0][key] = value
    (batch / "summary.json").write_text(json.dumps(data))  # NaN, Infinity as Python writes them
    assert main(["results", str(batch)]) == 0 and "2/2" in capsys.readouterr().out
    assert main(["compare", str(batch), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["ranking"]
    assert row["qualified_passes"] == 2
    assert main(["report", str(batch)]) == 0
    assert "rebuilt from the attempt folders" in read_summary(batch)["note"]


def test_a_cost_no_writer_gives_is_shown_not_raised_on():
    from sandbox.runner.compare import dollars

    assert [dollars(float(v)) for v in ("nan", "inf", "-1")] == ["$nan", "$inf", "$-1.0000"]


DEEP = b"[" * 200_000 + b"]" * 200_000  # valid JSON nested deeper than Python's json reads


@pytest.mark.parametrize("name", ["summary.json", "score.json", "attempt.json"])
def test_a_file_nested_too_deep_is_not_valid_json_and_never_fatal(tmp_path, capsys, name):
    """A summary.json, score.json or attempt.json nested 200,000 deep made `sandbox results` raise a
    RecursionError; it is damaged, and said as a file that is not valid JSON is."""
    batch = tmp_path / "batch"
    for n in (1, 2):
        scored_attempt(batch / f"controlled-form-{n}", traced=True)
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    target = batch / name if name == "summary.json" else batch / "controlled-form-2" / name
    target.write_bytes(DEEP)
    code = main(["results", str(batch)])
    captured = capsys.readouterr()
    if name == "summary.json":
        assert code == 0 and "2/2" in captured.out
        assert "summary.json is unreadable (not valid JSON (nested too deep)); rebuilt" in captured.err
    else:
        assert code == 1 and "1/2" in captured.out
        assert f"{name} is not valid JSON (nested too deep)" in captured.out
    assert main(["compare", str(batch), "--json"]) == code
    assert main(["report", str(batch)]) == 0


def test_a_field_accuracy_outside_0_to_1_in_score_json_is_damage(tmp_path, capsys):
    """score.json's field_accuracy 7.5 was counted (`sandbox results` printed 7.500, exit 0), where
    the same in summary.json is a number no writer gives: the score is damaged, and said."""
    batch = tmp_path / "batch"
    for n in (1, 2):
        scored_attempt(batch / f"controlled-form-{n}", traced=True)
    score = json.loads((batch / "controlled-form-2" / "score.json").read_text())
    (batch / "controlled-form-2" / "score.json").write_text(json.dumps({**score, "field_accuracy": 7.5}))
    assert main(["results", str(batch)]) == 1
    out = capsys.readouterr().out
    assert "score.json is damaged (field_accuracy is 7.5, not a number from 0 to 1)" in out
    assert "7.500" not in out and "4.250" not in out, out  # the row's mean: (1 + 0) / 2, not (1 + 7.5) / 2
    (row,) = read_summary(batch)["summary"]
    assert row["qualified_passes"] == 1 and row["mean_field_accuracy"] == 0.5


def test_a_rebuilt_batch_of_attempts_priced_at_different_rates_says_which_rate_it_shows(tmp_path, capsys):
    """Attempts of one rebuilt batch priced at two credit rates were shown at the default rate
    without a word (`sandbox compare` says it of batches that do)."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", record(cost_usd=0.5, credits_per_dollar=1000.0), traced=True)
    scored_attempt(batch / "controlled-form-2", record(cost_usd=0.5, credits_per_dollar=3000.0), traced=True)
    assert main(["results", str(batch)]) == 0
    assert "the attempts priced credits differently (1000, 3000 a dollar); credits here are 2000 a dollar" in (
        capsys.readouterr().err
    )
