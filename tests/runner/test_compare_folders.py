"""`sandbox compare`, `results` and the leaderboard over batch folders written here (no browser):
copies of one batch stay apart, edited or damaged files are named or rebuilt (never a traceback),
mixed pack versions and unreplaced interruptions are said, a batch's credit rate survives a
rebuild, and the notes and links of the leaderboard match the table."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.runner.attempt import AttemptOutcome, AttemptRecord
from sandbox.runner.batch import interleaved, write_summary
from sandbox.runner.compare import comparison, dollars, format_comparison
from sandbox.runner.folders import read_summary
from sandbox.runner.report import render_leaderboard
from tests.support.attempt_folders import scored_attempt


def outcome(folder: Path, agent: str = "a", pack: str = "controlled-form", **fields) -> AttemptOutcome:
    values = dict(status="completed", elapsed_seconds=10.0, qualified_pass=True, error_free=True,
                  field_accuracy=1.0, tool_calls=7, token_usage=None) | fields  # fmt: skip
    return AttemptOutcome(pack=pack, agent=agent, directory=folder, **values)


def batch(folder: Path, *outcomes: AttemptOutcome, rate: float = 2000.0) -> Path:
    folder.mkdir(parents=True)
    write_summary(folder, list(outcomes), rate)
    return folder


def compared(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["compare", *args, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else {}, captured.err


def test_two_copies_of_one_batch_are_two_rows(tmp_path, capsys):
    for side in ("a", "b"):
        batch(tmp_path / side / "x" / "B", outcome(tmp_path / side / "x" / "B" / "a--controlled-form-1"))
    code, result, _ = compared(capsys, str(tmp_path / "a" / "x" / "B"), str(tmp_path / "b" / "x" / "B"))
    assert code == 0
    assert sorted(row["agent"] for row in result["ranking"]) == ["a @ a/x/B", "a @ b/x/B"]
    assert [row["attempts"] for row in result["ranking"]] == [1, 1]


def test_folders_with_no_workflow_in_common_are_nothing_to_compare(tmp_path, capsys):
    one = batch(tmp_path / "one", outcome(tmp_path / "one" / "x"))
    two = batch(tmp_path / "two", outcome(tmp_path / "two" / "x", pack="bid-intake"))
    code, _, err = compared(capsys, str(one), str(two))
    assert code == 2 and "nothing to compare: no workflow was run in every folder" in err
    assert f"{one} ran controlled-form; {two} ran bid-intake" in err


def test_pack_versions_and_unreplaced_interruptions_are_said():
    attempts = [
        outcome(Path("x1"), pack_checksum="1" * 64).to_json(),
        outcome(Path("x2"), pack_checksum="2" * 64).to_json(),
        outcome(Path("x3"), qualified_pass=False, status="stopped", interruption="the batch was stopped").to_json(),
        outcome(Path("x4"), status="unfinished", elapsed_seconds=0.0, qualified_pass=False).to_json(),
    ]
    notes = comparison(attempts)["overlaps"]
    assert "controlled-form: its attempts ran on 2 versions of the pack (checksums 111111111111, 222222222222)" in (
        " ".join(notes)
    )
    assert any(n.startswith("1 attempt(s) were interrupted by the infrastructure and not replaced") for n in notes)
    assert comparison(attempts)["ranking"][0]["median_seconds"] == 10.0  # the unfinished one's 0 s is no time
    # an interrupted pass is interrupted too (run selection ignores the score), but it is no failure
    passed = outcome(Path("x5"), interruption="injected fault mirror-5xx:p=1: a 503 page").to_json()
    (note,) = [n for n in comparison([*attempts, passed])["overlaps"] if "interrupted" in n]
    assert note.startswith("2 attempt(s) were interrupted") and "; 1 of them count as failures here" in note, note


def test_mixed_mirrors_and_mixed_faults_are_said_and_attempts_that_do_not_say_are_left_out():
    def notes(attempts: list[dict]) -> list[str]:  # of mirrors and faults only
        return [n for n in comparison(attempts)["overlaps"] if "mirrors" in n or "faults" in n]

    same = [outcome(Path(f"s{n}"), agent=agent, mirror_checksum="3" * 64, faults="") for n, agent in enumerate("ab")]
    assert notes([a.to_json() for a in same]) == []
    attempts = [
        *(a.to_json() for a in same),
        outcome(Path("m"), agent="b", mirror_checksum="4" * 64, faults="mirror-5xx:p=1 (seed 0)").to_json(),
    ]
    mirrors, faults = notes(attempts)
    assert mirrors.startswith(
        "the attempts read 2 sets of mirrors (checksums 333333333333, 444444444444: other --mirrors, or an entry"
    )
    assert faults.startswith("the attempts ran under different injected faults (a: none; b: mirror-5xx:p=1 (seed 0), ")
    # Faults unknown (null: a record written before attempts said, an attempt never run) and a
    # summary written before (no such keys): nothing is known of them, so nothing is said.
    unknown = outcome(Path("u"), agent="a", faults=None).to_json()
    older = [{k: v for k, v in a.items() if k not in ("faults", "mirror_checksum")} for a in attempts[:2]]
    assert notes([unknown, *older, attempts[2]]) == []


def test_a_rebuilt_batch_knows_the_faults_of_the_records_that_say_them(tmp_path):
    """An attempt.json written before attempts said their faults was read back as "no faults"."""
    said, none, unsaid = (scored_attempt(tmp_path / "b" / f"controlled-form-{n}") for n in (1, 2, 3))
    record = json.loads((said / "attempt.json").read_text())
    (said / "attempt.json").write_text(json.dumps(record | {"faults": "mirror-5xx:p=1 (seed 0)"}))
    (none / "attempt.json").write_text(json.dumps(record | {"faults": None}))  # a batch without faults
    (unsaid / "attempt.json").write_text(json.dumps({k: v for k, v in record.items() if k != "faults"}))
    faults = {Path(a["directory"]).name: a["faults"] for a in read_summary(tmp_path / "b")["attempts"]}
    assert faults == {
        "controlled-form-1": "mirror-5xx:p=1 (seed 0)",
        "controlled-form-2": "",
        "controlled-form-3": None,
    }


@pytest.mark.parametrize(
    "edit",
    [
        lambda data: data["attempts"][0].update(cost_usd="free"),
        lambda data: data.update(comparison=[1, 2]),
        lambda data: data["attempts"][0].update(pack="x" * 300),
        lambda data: data["attempts"][0].update(qualified_pass=False, field_accuracy=0.0, reason=5),  # it raised
    ],
)
def test_an_edited_summary_is_rebuilt_or_read_never_a_traceback(tmp_path, capsys, edit):
    folder = tmp_path / "b"
    batch(folder, outcome(folder / "a--controlled-form-1"))
    (folder / "a--controlled-form-1").mkdir()
    record = AttemptRecord(pack="controlled-form", agent="a", status="completed", elapsed_seconds=10.0)
    (folder / "a--controlled-form-1" / "attempt.json").write_text(record.to_json())
    (folder / "a--controlled-form-1" / "score.json").write_text('{"qualified_pass": "yes", "field_accuracy": "abc"}')
    data = json.loads((folder / "summary.json").read_text())
    edit(data)
    (folder / "summary.json").write_text(json.dumps(data))
    junit = ["report", str(folder), "--junit", str(tmp_path / "junit.xml")]
    for command in (["compare", str(folder)], ["results", str(folder)], ["report", str(folder)], junit):
        code = main(command)
        err = capsys.readouterr().err
        assert code in (0, 1) and "Traceback" not in err, (command, err)


def test_a_damaged_score_is_no_pass(tmp_path):
    folder = tmp_path / "b" / "a--controlled-form-1"
    folder.mkdir(parents=True)
    record = AttemptRecord(pack="controlled-form", agent="a", status="completed", elapsed_seconds=10.0)
    (folder / "attempt.json").write_text(record.to_json())
    (folder / "score.json").write_text('{"qualified_pass": "yes", "error_free": 1, "field_accuracy": "abc"}')
    (attempt,) = read_summary(folder.parent)["attempts"]
    assert (attempt["qualified_pass"], attempt["error_free"], attempt["field_accuracy"]) == (False, False, 0.0)
    assert attempt["reason"].startswith("score.json is damaged (qualified_pass is 'yes', not true or false)")


def test_score_files_of_0_1_0_are_read_as_they_are(tmp_path, capsys):
    """0.1.0's score reports had no status (nor errors): they were taken as damaged, every attempt a failure."""
    batch = shutil.copytree(FIXTURES_DIR / "attempts" / "reference", tmp_path / "old")
    (batch / "summary.json").unlink(missing_ok=True)
    for score in batch.glob("*/score.json"):
        data = json.loads(score.read_text())
        score.write_text(json.dumps({k: v for k, v in data.items() if k not in ("status", "errors")}))
    assert main(["results", str(batch)]) == 0
    assert "damaged" not in capsys.readouterr().out


def test_a_rebuilt_batch_says_which_attempts_were_interrupted(tmp_path):
    folder = tmp_path / "b" / "a--controlled-form-1"
    folder.mkdir(parents=True)
    record = AttemptRecord(pack="controlled-form", agent="a", status="stopped", elapsed_seconds=4.0)
    (folder / "attempt.json").write_text(record.to_json())
    (attempt,) = read_summary(folder.parent)["attempts"]  # no summary.json: rebuilt
    assert (attempt["interruption"], attempt["selection"]) == ("the batch was stopped while it ran", "selected")
    assert "were interrupted by the infrastructure and not replaced" in " ".join(
        read_summary(folder.parent)["comparison"]["overlaps"]
    )


def test_a_re_run_interrupted_too_is_said_unreplaced_and_a_missing_re_run_leaves_one_attempt_selected(tmp_path):
    """The last approved replacement, interrupted too, counted as a failure without the note; and
    a batch whose first re-run's folder is missing (not written on a full disk) was read back with
    two selected attempts of one job: the original and the second re-run."""
    for name, status in (("a--controlled-form-1", "stopped"), ("a--controlled-form-1-r2", "stopped")):
        folder = tmp_path / "b" / name
        folder.mkdir(parents=True)
        record = AttemptRecord(pack="controlled-form", agent="a", status=status, elapsed_seconds=4.0)
        (folder / "attempt.json").write_text(record.to_json())
    summary = read_summary(tmp_path / "b")  # no summary.json: rebuilt
    assert [(Path(a["directory"]).name, a["selection"]) for a in summary["attempts"]] == [
        ("a--controlled-form-1", "replaced"),
        ("a--controlled-form-1-r2", "approved replacement"),
    ]
    (row,) = summary["comparison"]["ranking"]
    assert row["attempts"] == 1
    (note,) = [n for n in summary["comparison"]["overlaps"] if "interrupted" in n]
    assert note.startswith("1 attempt(s) were interrupted by the infrastructure and not replaced"), note
    assert note.endswith("`; 1 of them the last re-run of its attempt, so a larger N runs more)"), note


def test_a_rebuilt_batch_keeps_its_credit_rate_and_an_unpriced_batch_sets_none(tmp_path, capsys):
    priced = tmp_path / "priced" / "a--controlled-form-1"
    priced.mkdir(parents=True)
    record = AttemptRecord(pack="controlled-form", agent="a", status="completed", elapsed_seconds=3.0,
                           cost_usd=0.002, credits_per_dollar=1000.0, qualified_pass=True)  # fmt: skip
    (priced / "attempt.json").write_text(record.to_json())
    (priced / "score.json").write_text('{"qualified_pass": true, "error_free": true, "field_accuracy": 1.0}')
    assert read_summary(priced.parent)["comparison"]["credits_per_dollar"] == 1000.0  # no summary.json: rebuilt
    unpriced = batch(tmp_path / "unpriced", outcome(tmp_path / "unpriced" / "x"))
    code, result, err = compared(capsys, str(priced.parent), str(unpriced))
    assert result["credits_per_dollar"] == 1000.0 and "priced credits differently" not in err
    assert next(r for r in result["ranking"] if r["mean_cost_usd"] is not None)["mean_credits"] == 2.0


def test_results_reprints_the_comparison_and_refuses_a_summary_of_no_attempt(tmp_path, capsys):
    folder = batch(tmp_path / "b", outcome(tmp_path / "b" / "1"), outcome(tmp_path / "b" / "2", agent="b"))
    assert main(["results", str(folder)]) == 0
    assert "rank  agent" in capsys.readouterr().out
    empty = batch(tmp_path / "empty")
    assert main(["results", str(empty)]) == 2
    assert "lists no attempt" in capsys.readouterr().err


def test_results_json_prints_the_comparison_made_anew_not_the_one_stored(tmp_path, capsys):
    """`sandbox results --json` printed summary.json's own comparison as it was: an edited one
    ranking an agent that never ran, which the text table (made anew) does not show."""
    folder = batch(tmp_path / "b", outcome(tmp_path / "b" / "1"), outcome(tmp_path / "b" / "2", agent="b"))
    data = json.loads((folder / "summary.json").read_text())
    made = data["comparison"]
    forged = {**made, "ranking": [{**made["ranking"][0], "agent": "forged", "qualified_passes": 99}]}
    (folder / "summary.json").write_text(json.dumps({**data, "comparison": forged}))
    assert main(["results", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"] == made


def test_costs_print_to_the_millionth_the_ranking_tells_apart():
    """Costs were printed with two significant digits: $0.000123 and $0.000124 both as $0.00012,
    $0.01231 and $0.01232 both as $0.0123, though ranked apart (on means rounded to six decimals)."""
    assert [dollars(x) for x in (0.0, 0.00002, 0.00004, 0.0123, 1.5, 0.000123, 0.000124, 0.01231, 0.01232)] == [
        "$0.0000", "$0.00002", "$0.00004", "$0.0123", "$1.5000", "$0.000123", "$0.000124", "$0.01231", "$0.01232",
    ]  # fmt: skip
    assert dollars(4.5e-7) == "$0.00000045"  # under a millionth: never $0.0000
    ranked = [round(k * 1e-6, 6) for k in range(1, 30_000)] + [round(12.0 + k * 1e-6, 6) for k in range(3_000)]
    assert len({dollars(cost) for cost in ranked}) == len(set(ranked))
    rows = comparison(
        [
            outcome(Path(f"/b/{agent}-{n}"), agent=agent, cost_usd=cost).to_json()
            for agent, cost in (("a", 0.000123), ("b", 0.000124), ("c", 0.01231), ("d", 0.01232))
            for n in (1, 2)
        ]
    )
    table = format_comparison(rows)
    assert all(f"${cost}" in table for cost in ("0.000123", "0.000124", "0.01231", "0.01232")), table
    board = render_leaderboard(rows, [], Path("/b"))
    assert all(f"${cost}" in board for cost in ("0.000123", "0.000124", "0.01231", "0.01232"))


def test_every_pack_and_repeat_starts_with_the_next_agent():
    jobs = interleaved(["p"], 3, ["a", "b"])
    assert [agent for _, _, agent in jobs] == ["a", "b", "b", "a", "a", "b"]
    jobs = interleaved(["p", "q"], 1, ["a", "b", "c"])
    assert [agent for _, _, agent in jobs] == ["a", "b", "c", "b", "c", "a"]


def test_the_leaderboard_links_a_cells_selected_attempts_and_shows_the_notes(tmp_path):
    attempts = [
        outcome(tmp_path / "r", pack="court-docket-p4").to_json(),
        outcome(
            tmp_path / "s",
            pack="court-docket",
            qualified_pass=False,
            selection="replaced",
            interruption="injected fault",
        ).to_json(),  # fmt: skip
        outcome(tmp_path / "s-r1", pack="court-docket", selection="approved replacement").to_json(),
        outcome(tmp_path / "t", agent="b", pack="court-docket", pack_checksum="1" * 64).to_json(),
        outcome(tmp_path / "u", agent="b", pack="court-docket", pack_checksum="2" * 64).to_json(),
    ]
    for name in ("r", "s", "s-r1", "t", "u"):
        (tmp_path / name).mkdir()  # an attempt is linked when its folder is there, with its page
        (tmp_path / name / "report.html").write_text("")
    page = render_leaderboard(comparison(attempts), attempts, tmp_path)
    cell = re.search(r"<td style=[^>]*>2/2((?: <a [^>]*>#\d</a>)*)</td>", page)
    assert cell is not None and re.findall(r'href="([^"]+)/report.html"', cell.group(1)) == ["r", "s-r1"]
    assert "Note: court-docket: its attempts ran on 2 versions of the pack" in page


DAMAGED_RECORDS = {
    "wrong-types": (json.dumps({"pack": None, "status": 123}).encode(), "attempt.json is unreadable (pack: "),
    "not-utf-8": (b'{"pack": "controlled-form", "agent": "\xff"}', "attempt.json is not UTF-8 text (byte 0xff"),
    "not-json": (b'{"pack": "controlled-form", ', "attempt.json is not valid JSON ("),
    "not-an-object": (b"[1, 2]", "attempt.json is not a JSON object"),
}


@pytest.mark.parametrize("damage", list(DAMAGED_RECORDS), ids=list(DAMAGED_RECORDS))
def test_an_attempt_whose_record_cannot_be_read_is_no_pass(tmp_path, capsys, damage):
    """A damaged attempt.json beside a qualified score.json was shown `unfinished`, counted a
    qualified pass (1/2, a passing JUnit case), and said to have "no attempt.json"."""
    record, said = DAMAGED_RECORDS[damage]
    batch = tmp_path / "b"
    scored_attempt(batch / "controlled-form-1")
    scored_attempt(batch / "controlled-form-2", record)
    data = read_summary(batch)
    good, damaged = data["attempts"]
    assert (good["qualified_pass"], damaged["qualified_pass"], damaged["error_free"]) == (True, False, False)
    assert damaged["status"] == "unreadable" and damaged["reason"].startswith(said)
    assert "its score is not counted" in damaged["reason"]
    assert sum(row["qualified_passes"] for row in data["summary"]) == 1
    # in the row of the batch's one agent (its folder names no agent), never one of its own
    assert [row["statuses"] for row in data["summary"]] == [{"completed": 1, "unreadable": 1}]
    assert "no attempt.json" not in data["note"] and f"(controlled-form-2: {said}" in data["note"]
    assert main(["results", str(batch)]) == 1
    captured = capsys.readouterr()
    assert "1/2" in captured.out and f"controlled-form-2: {said}" in captured.out
    assert "have an attempt.json that cannot be read" in captured.err and "no attempt.json" not in captured.err
    assert main(["report", str(batch), "--junit", str(tmp_path / "junit.xml")]) == 0
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")}
    failure = cases["controlled-form[a#2]"].find("failure")
    assert failure is not None and failure.get("message").startswith(said)
    assert "have an attempt.json that cannot be read" in (batch / "report.html").read_text()
    page = (batch / "controlled-form-2" / "report.html").read_text()
    assert "NOT A QUALIFIED PASS" in page and "QUALIFIED PASS (error-free)" not in page


def test_an_attempt_with_no_record_is_no_pass_and_an_unreadable_one_unscored_reads(tmp_path, capsys):
    """No attempt.json (the runner writes it last): unfinished, its score.json's pass not counted.
    A not-UTF-8 attempt.json with no score: a UnicodeDecodeError traceback (run selection read it)."""
    batch = tmp_path / "b"
    (scored_attempt(batch / "controlled-form-1") / "attempt.json").unlink()
    (scored_attempt(batch / "controlled-form-2", b"\xff\xfe") / "score.json").unlink()
    first, second = read_summary(batch)["attempts"]
    assert (first["status"], first["qualified_pass"]) == ("unfinished", False)
    assert first["reason"].startswith("attempt.json is missing: the attempt did not finish")
    assert first["interruption"] == "the batch ended before the attempt did (it has no attempt.json)"
    assert (second["status"], second["qualified_pass"]) == ("unreadable", False)
    assert second["reason"].startswith("attempt.json is not UTF-8 text") and not second["interruption"]
    assert main(["results", str(batch)]) == 1
    assert "1 attempt(s) have no attempt.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b'{"qualified_pass": tru', "score.json is not valid JSON (Expecting value"),
        (b'{"qualified_pass": "\xff"}', "score.json is not UTF-8 text (byte 0xff"),
        (b"true", "score.json is not a JSON object"),
    ],
    ids=["not-json", "not-utf-8", "not-an-object"],
)
def test_a_score_that_cannot_be_read_is_said_as_such(tmp_path, content, said):
    """Its reason said "no score.json: the attempt was not scored", though the file is there."""
    folder = scored_attempt(tmp_path / "b" / "controlled-form-1")
    (folder / "score.json").write_bytes(content)
    (attempt,) = read_summary(folder.parent)["attempts"]
    assert attempt["reason"].startswith(said) and attempt["reason"].endswith("the attempt is taken as not scored")
    assert "no score.json" not in attempt["reason"] and not attempt["qualified_pass"]


def test_a_copy_of_an_attempt_folder_is_left_out_and_said(tmp_path, capsys):
    """bid-intake-1.bak beside bid-intake-1 was a third attempt (3/3 of 2)."""
    batch = tmp_path / "b"
    for name in ("controlled-form-1", "controlled-form-2", "controlled-form-2-r1"):
        scored_attempt(batch / name)
    shutil.copytree(batch / "controlled-form-1", batch / "controlled-form-1.bak")
    shutil.copytree(batch / "controlled-form-1", batch / "controlled-form-1 copy")
    data = read_summary(batch)
    assert [Path(a["directory"]).name for a in data["attempts"]] == [
        "controlled-form-1", "controlled-form-2", "controlled-form-2-r1",
    ]  # fmt: skip
    assert data["note"].startswith("left out controlled-form-1 copy/, controlled-form-1.bak/: attempt files under a")
    assert main(["results", str(batch)]) == 0
    [said] = capsys.readouterr().err.splitlines()
    assert said.startswith("sandbox results: left out controlled-form-1 copy/, controlled-form-1.bak/")
    assert main(["report", str(batch)]) == 0 and not (batch / "controlled-form-1.bak" / "report.html").exists()
    assert "left out controlled-form-1 copy/" in (batch / "report.html").read_text()
    # A folder of attempt folders gathered by hand (none named as the runner names them): each is one.
    gathered = shutil.copytree(FIXTURES_DIR / "attempts" / "reference", tmp_path / "gathered")
    assert len(read_summary(gathered)["attempts"]) == 8 and "note" not in read_summary(gathered)


@pytest.mark.parametrize(
    ("name", "runners"),
    [
        ("bid-intake-1", True), ("bid-intake-12", True), ("a--bid-intake-3", True), ("bid-intake-1-r2", True),
        ("my.agent--court-docket-p4-2-r1", True), ("bid-intake-1.bak", False), ("bid-intake-1 copy", False),
        ("bid-intake-0", False), ("bid-intake", False), ("bid-intake-1-r0", False), ("bid-intake-1~", False),
    ],
)  # fmt: skip
def test_the_names_the_runner_gives_attempt_folders_are_its_attempts(tmp_path, name, runners):
    scored_attempt(tmp_path / "b" / "controlled-form-9")
    scored_attempt(tmp_path / "b" / name)
    taken = [Path(a["directory"]).name for a in read_summary(tmp_path / "b")["attempts"]]
    assert (name in taken) is runners


@pytest.mark.parametrize("where", ["a folder", "under a file"])
def test_an_html_file_that_cannot_be_written_is_refused_before_comparing(tmp_path, capsys, where):
    """It was an IsADirectoryError or NotADirectoryError traceback, after the comparison."""
    one = batch(tmp_path / "one", outcome(tmp_path / "one" / "x"))
    (tmp_path / "page.html").mkdir()
    (tmp_path / "file").write_text("")
    html = tmp_path / ("page.html" if where == "a folder" else "file/page.html")
    code, result, err = compared(capsys, str(one), "--html", str(html))
    assert code == 2 and result == {}, err
    assert err.startswith(f"sandbox compare: --html {html}: cannot write a file there ("), err


def test_an_html_file_the_disk_has_no_room_for_is_exit_3(tmp_path, capsys):
    from tests.support.disks import fill, small_disk

    one = batch(tmp_path / "one", outcome(tmp_path / "one" / "x"))
    with small_disk(tmp_path / "disk") as disk:
        fill(disk)
        code, _, err = compared(capsys, str(one), "--html", str(disk / "page.html"))
    assert code == 3, err
    assert f"sandbox compare: cannot write {disk / 'page.html'}: No space left on device" in err
