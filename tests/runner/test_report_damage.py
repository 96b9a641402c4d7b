"""The HTML reports of damaged or edited attempt and batch folders (found by a review of the pages,
each run with `sandbox report` on a damaged copy): what cannot be shown is listed, never a
traceback, and the pages count as `sandbox results` does. Built from the committed reference
attempt; no browser."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from sandbox.cli import main
from sandbox.runner.batch import write_summary
from sandbox.runner.folders import AttemptFolder, batch_attempts, outcome, read_summary
from sandbox.runner.report import write_reports
from tests.support.attempt_folders import scored_attempt


def edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def edit_calls(folder: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """``edit`` each call line of the folder's trace.jsonl."""
    lines = []
    for line in (folder / "trace.jsonl").read_text().splitlines():
        data = json.loads(line)
        if data.get("type", "call") == "call":
            edit(data)
        lines.append(json.dumps(data) + "\n")
    (folder / "trace.jsonl").write_text("".join(lines))


def gate_failure(**failure: Any) -> Callable[[dict[str, Any]], None]:
    return lambda score: score["gates"].update(ok=False, failures=[{"gate": "x", "message": "m", **failure}])


# damage done to score.json -> what the page lists (after "score.json is damaged (")
DAMAGED_SCORES = {
    "a-field-a-number": (lambda s: s["fields"].insert(0, 5), "fields[0] is 5, not an object"),
    "a-field-without-critical": (lambda s: s["fields"][0].pop("critical"), "fields[0].critical is missing"),
    "critical-a-number": (lambda s: s["fields"][0].update(critical=1), "fields[0].critical is 1, not true or false"),
    "gate-failures-a-string": (lambda s: s["gates"].update(failures="abc"), "gates.failures is 'abc', not a list"),
    "gate-seq-a-list": (gate_failure(seq=[1]), "gates.failures[0].seq is [1], not a whole number"),
    "evidence-failure-without-field": (
        lambda s: s["evidence"].update(failures=[{"msg": 1}]), "evidence.failures[0].field is missing"
    ),
    "reasons-a-number": (lambda s: s.update(reasons=5), "reasons is 5, not a list"),
    "scoring-pack-a-number": (lambda s: s.update(scoring_pack=5), "scoring_pack is 5, not a string"),
    "errors-a-string": (lambda s: s.update(errors="boom"), "errors is 'boom', not a list"),
}  # fmt: skip


@pytest.mark.parametrize("damage", list(DAMAGED_SCORES), ids=list(DAMAGED_SCORES))
def test_a_damaged_score_is_listed_and_the_attempt_taken_as_not_scored(tmp_path, capsys, damage):
    """Each made `sandbox report` raise (a TypeError, KeyError or AttributeError: exit 1 with a
    traceback), and the attempts after it in the batch got no page; `sandbox results` coped."""
    edit, said = DAMAGED_SCORES[damage]
    batch = tmp_path / "batch"
    first = scored_attempt(batch / "controlled-form-1")
    scored_attempt(batch / "controlled-form-2")
    edit_json(first / "score.json", edit)
    assert main(["report", str(batch)]) == 0
    page = (first / "report.html").read_text()
    problem = f"score.json is damaged ({said}): the attempt is taken as not scored"
    assert "NOT SCORED" in page and str(escape(problem)) in page
    assert "QUALIFIED PASS" in (batch / "controlled-form-2" / "report.html").read_text()
    assert "<td>1/2</td><td>1/2</td>" in (batch / "report.html").read_text()
    assert main(["results", str(batch)]) == 1
    assert f"controlled-form-1: {problem}" in capsys.readouterr().out


def test_what_a_newer_writer_adds_to_a_score_is_no_damage(tmp_path):
    """The entries are checked for the keys the readers take; a key this version does not know is left."""
    folder = scored_attempt(tmp_path / "batch" / "controlled-form-1")
    edit_json(folder / "score.json", lambda s: (s.update(novel={"x": 1}), s["fields"][0].update(novel=[1])))
    assert AttemptFolder.load(folder).problems == []
    assert "QUALIFIED PASS (error-free)" in write_reports(folder)[0].read_text()


def test_a_scoring_pack_no_file_can_be_named_is_no_pack(tmp_path):
    """A scoring pack named with a NUL byte made the page raise a ValueError (only PackError was caught)."""
    folder = scored_attempt(tmp_path / "batch" / "controlled-form-1")
    edit_json(folder / "score.json", lambda s: s.update(scoring_pack="controlled\u0000form"))
    page = write_reports(folder)[0].read_text()
    assert "QUALIFIED PASS" in page and "<td>?</td>" in page  # rule kinds unknown without the pack


def test_an_event_kind_that_is_no_name_is_shown_as_text(tmp_path):
    """A kind ``["x"]`` made the page raise (unhashable list, tested against the highlighted kinds)."""
    folder = scored_attempt(tmp_path / "batch" / "controlled-form-1")
    edit_calls(
        folder, lambda call: call["events"].append({"kind": ["x"], "data": {"n": 1}}) if call["seq"] == 2 else None
    )
    page = write_reports(folder)[0].read_text()
    assert f'<li class="event">{escape(json.dumps(["x"]))} <code>' in page


def test_a_screenshot_linked_out_of_the_folder_is_not_shown(tmp_path):
    """``shots/1.png``, a symbolic link to a file outside the attempt folder, was shown: every other
    file a page links is one of the folder's own. A hard link (the runner's reused picture) is."""
    folder = scored_attempt(tmp_path / "batch" / "controlled-form-1")
    (tmp_path / "outside.png").write_bytes(b"png")
    (folder / "shots").mkdir()
    (folder / "shots" / "1.png").symlink_to(tmp_path / "outside.png")
    (folder / "shots" / "3.png").write_bytes(b"png")
    os.link(folder / "shots" / "3.png", folder / "shots" / "2.png")
    edit_calls(folder, lambda call: call.update(screenshot=f"shots/{call['seq']}.png") if call["seq"] <= 3 else None)
    page = write_reports(folder)[0].read_text()
    assert re.findall(r'<img src="([^"]*)"', page) == ["shots/2.png", "shots/3.png"]
    assert "screenshot: shots/1.png is a symbolic link out of the folder" in page


def two_agents(batch: Path) -> Path:
    """A batch of agents a and b, one attempt each, with its summary.json."""
    for agent in ("a", "b"):
        scored_attempt(batch / f"{agent}--controlled-form-1", agent=agent)
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    return batch


def test_an_attempt_whose_folder_is_gone_is_not_linked_where_its_summary_was_written(tmp_path, capsys):
    """A summary.json listing an attempt whose folder is not in the batch folder kept the path it
    was written at, and the leaderboard linked it from there (``../../home/someone/...``)."""
    batch = two_agents(tmp_path / "copy" / "batch")
    elsewhere = "/home/someone/runs/batch/b--controlled-form-1"
    edit_json(batch / "summary.json", lambda data: data["attempts"][1].update(directory=elsewhere))
    shutil.rmtree(batch / "b--controlled-form-1")
    assert main(["report", str(batch)]) == 0
    page = (batch / "report.html").read_text()
    assert re.findall(r'href="([^"]*)"', page) == ["a--controlled-form-1/report.html"] * 2  # grid, attempts
    assert 'b--controlled-form-1 <span class="muted">(no page: its folder is not in the batch folder)' in page
    assert "no page to link for 1 attempt(s): b--controlled-form-1 (its folder is not in the batch folder)" in page
    board = tmp_path / "board.html"
    assert main(["compare", str(batch), "--html", str(board)]) == 0
    assert re.findall(r'href="([^"]*)"', board.read_text()) == ["copy/batch/a--controlled-form-1/report.html"]
    assert "b--controlled-form-1 (its folder is not there)" in board.read_text()


@pytest.mark.parametrize("damage", ["record-missing", "record-unreadable"])
def test_an_uncounted_attempts_page_shows_its_counted_field_accuracy(tmp_path, damage):
    """Its page showed score.json's ``1.0000 (n/n)``, though the counts (the batch page's, `sandbox
    results`) take it as 0."""
    folder = scored_attempt(tmp_path / "batch" / "controlled-form-1")
    if damage == "record-missing":
        (folder / "attempt.json").unlink()
    else:
        edit_json(folder / "attempt.json", lambda record: record.update(status=7))
    assert read_summary(folder.parent)["attempts"][0]["field_accuracy"] == 0.0
    page = write_reports(folder.parent)[1].read_text()
    (said,) = re.findall(r'<th scope="row">field accuracy</th><td>([^<]*)</td>', page)
    assert re.fullmatch(
        r"0\.0000 as counted: score\.json says 1\.0000 \((\d+)/\1\), not counted without the attempt's own record",
        said,
    ), said


def test_an_edited_summary_row_is_counted_anew_from_its_attempts(tmp_path, capsys):
    """The batch page and `sandbox results` printed summary.json's rows as they were (0/2), while the
    header, the attempts and the leaderboard under them were counted from its attempts (2/2)."""
    batch = tmp_path / "batch"
    for n in (1, 2):
        scored_attempt(batch / f"controlled-form-{n}")
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    edit_json(batch / "summary.json", lambda data: data["summary"][0].update(qualified_passes=0))
    data = read_summary(batch)
    assert data["summary"][0]["qualified_passes"] == 2
    assert "summary.json's table rows are not those its attempts give" in data["note"]
    assert main(["results", str(batch)]) == 0
    printed = capsys.readouterr()
    assert re.search(r"\ncontrolled-form +a +2/2 ", printed.out) and "counted anew" in printed.err
    assert main(["report", str(batch)]) == 0
    page = (batch / "report.html").read_text()
    assert "<td>2/2</td><td>2/2</td>" in page and "<td>0/2</td>" not in page and "counted anew" in page


def test_a_summary_as_written_is_taken_without_a_note(tmp_path):
    batch = two_agents(tmp_path / "batch")
    assert "note" not in read_summary(batch)


def test_an_attempt_links_back_only_to_its_own_batchs_page(tmp_path):
    """An attempt folder given alone linked "← batch report" whenever the folder above it held a
    report.html, of whatever."""
    batch = tmp_path / "batch"
    for n in (1, 2):
        scored_attempt(batch / f"controlled-form-{n}")
    back = '<a href="../report.html">← batch report</a>'
    pages = write_reports(batch)
    assert all(back in page.read_text() for page in pages[1:])
    assert back in write_reports(batch / "controlled-form-1")[0].read_text()  # one attempt of it, again
    alone = tmp_path / "downloads"
    shutil.copytree(batch / "controlled-form-1", alone / "controlled-form-1")
    (alone / "report.html").write_text("<p>something else</p>")
    assert back not in write_reports(alone / "controlled-form-1")[0].read_text()


def test_the_score_readers_model_names_the_keys_the_scorer_writes():
    """score.json is checked against the readers' model (``ScoreFile``), made of the scorer's own
    entry models: a key the scorer renames or adds to a part the readers check fails here first."""
    from sandbox.evaluation.gates import GateReport
    from sandbox.evaluation.scoring import EvidenceResult, OutputContractResult, ScoreReport
    from sandbox.runner.folders._records import ScoreFile

    read = ScoreFile.model_fields
    assert set(read) - {"agent"} <= set(ScoreReport.model_fields)
    assert set(ScoreReport.model_fields) - set(read) == {"stamp"}  # the readers show no stamp
    for key, written in (
        ("evidence", EvidenceResult),
        ("output_contract", OutputContractResult),
        ("gates", GateReport),
    ):
        annotation = read[key].annotation
        assert annotation is not None and set(annotation.model_fields) == set(written.model_fields), key
