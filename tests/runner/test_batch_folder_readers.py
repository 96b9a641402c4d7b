"""The readers of a batch folder (`sandbox report`, `sandbox results`, `sandbox compare`, the
summary rebuilt from the folders) with an attempt folder they cannot read or one that is a
symbolic link: the unreadable attempt counts as an attempt that proves nothing, and every other
attempt is reported; a linked one is left out and named, as a copy is. Built from the committed
reference attempt; no browser."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import PROJECT_ROOT
from sandbox.cli import main
from sandbox.runner.batch import write_summary
from sandbox.runner.folders import AttemptFolder, batch_attempts, outcome, read_summary
from tests.support.attempt_folders import scored_attempt

# Run in a child as the batch's reader: as root, it drops to nobody (whose access the kernel checks)
# after importing and rendering one page, so that nothing it loads later lies under a folder
# nobody may not enter (the Python install under /root). As another user it is that user.
READ_AS_NOBODY = """
import contextlib, io, json, os, shutil, sys, tempfile
from pathlib import Path
from sandbox.cli import build_parser, main
from tests.support.attempt_folders import scored_attempt
import sandbox.runner.inspect_export  # export's own import: nobody cannot read this Python's files
build_parser()
warm = Path(tempfile.mkdtemp()) / "batch"
scored_attempt(warm / "controlled-form-1", traced=True)
with contextlib.redirect_stdout(io.StringIO()):
    main(["report", str(warm)])
shutil.rmtree(warm.parent)
if os.geteuid() == 0:
    os.setegid(65534)
    os.seteuid(65534)
sys.exit(main(sys.argv[1:]))
"""


def read_as_nobody(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", READ_AS_NOBODY, *args], cwd=PROJECT_ROOT, capture_output=True, text=True
    )


@contextlib.contextmanager
def damaged_batch(attempts: int, modes: dict[str, int]) -> Iterator[Path]:
    """A batch of scored attempts that anyone may read and write (nobody writes the pages), but for
    the paths in ``modes`` (in the batch), given those modes; folders opened again at the end."""
    with tempfile.TemporaryDirectory() as made:
        batch = Path(made) / "batch"
        for n in range(1, attempts + 1):
            scored_attempt(batch / f"controlled-form-{n}", traced=True)
        for path in (Path(made), batch, *batch.rglob("*")):
            path.chmod(0o777 if path.is_dir() else 0o644)
        for name, mode in modes.items():
            (batch / name).chmod(mode)
        try:
            yield batch
        finally:
            for name in modes:
                if (batch / name).is_dir():
                    (batch / name).chmod(0o777)


def test_the_compared_leaderboard_links_no_folder_that_cannot_be_entered():
    """`sandbox compare --html` linked the page of an attempt folder it could not enter, a page
    `sandbox report` never writes into it (the batch page shows it unlinked)."""
    with damaged_batch(2, {"controlled-form-2": 0}) as batch:
        board = batch / "board.html"
        (batch / "controlled-form-1" / "report.html").write_text("")  # as `sandbox report` leaves it
        compared = read_as_nobody("compare", str(batch), "--html", str(board))
        assert compared.returncode == 1, compared.stderr
        page = board.read_text()
        assert re.findall(r'href="([^"]*)"', page) == ["controlled-form-1/report.html"]
        assert "controlled-form-2 (unreadable)" in page


def test_an_attempt_folder_or_file_that_cannot_be_read_is_counted_and_the_others_reported():
    """`sandbox report` stopped at the folder it could not enter (exit 3, "cannot write the report:
    Permission denied"), leaving the pages of the attempts after it unwritten; a trace.jsonl it could
    not read left that attempt's qualified pass counted, gates unchecked."""
    modes = {"controlled-form-2": 0, "controlled-form-3/attempt.json": 0, "controlled-form-4/trace.jsonl": 0}
    with damaged_batch(4, modes) as batch:
        reported = read_as_nobody("report", str(batch))
        results = read_as_nobody("results", str(batch))
        assert reported.returncode == 0, reported.stderr
        assert "no page for controlled-form-2/: the attempt folder is unreadable (Permission denied)" in (
            reported.stderr
        )
        assert "(and 3 attempt reports)" in reported.stdout
        assert not (batch / "controlled-form-2" / "report.html").exists()
        for n in (1, 3, 4):
            assert (batch / f"controlled-form-{n}" / "report.html").is_file()
        page = (batch / "report.html").read_text()
        assert 'controlled-form-2 <span class="muted">(no page: unreadable)</span>' in page
        assert 'href="controlled-form-2/report.html"' not in page
        assert results.returncode == 1, results.stderr
        lines = {line.split(":")[0].strip(): line for line in results.stdout.splitlines() if ": " in line}
        assert (
            "the attempt folder is unreadable (Permission denied), and its score is not counted"
            in (lines["controlled-form-2"])
        )
        assert (
            "attempt.json is unreadable (Permission denied): how the agent ended is unknown"
            in (lines["controlled-form-3"])
        )
        assert (
            "trace.jsonl is unreadable (Permission denied): the gates cannot be checked against it"
            in (lines["controlled-form-4"])
        )
        # the unreadable folder names no agent or pack: its batch's (one agent, folders <pack>-<n>), never
        # a row of its own; the passes and the median are the other attempts' alone
        assert "controlled-form  a      1/4        1/4         0.500       3.00" in results.stdout
        assert "unknown  0/1" not in results.stdout and "controlled-form-2  " not in results.stdout


def test_an_attempt_folder_that_can_be_listed_but_not_entered_is_unreadable_and_the_others_reported():
    """A folder nobody may read but not search (mode 644) was taken as unfinished (its files looked
    absent), and `sandbox report` stopped at it (exit 3) writing its page."""
    with damaged_batch(2, {"controlled-form-1": 0o644}) as batch:
        reported = read_as_nobody("report", str(batch))
        assert reported.returncode == 0, reported.stderr
        assert "no page for controlled-form-1/: the attempt folder is unreadable (Permission denied)" in (
            reported.stderr
        )
        assert (batch / "controlled-form-2" / "report.html").is_file()


@pytest.mark.parametrize("mode", [0o644, 0o311, 0o000], ids=oct)
def test_an_attempt_folder_given_alone_that_cannot_be_entered_is_nothing_to_report(mode):
    """`sandbox report` given one attempt folder it could list but not enter (or neither) tried to write
    its page into it and exited 3, "cannot write the report: Permission denied", as for a full disk;
    the batch folder itself likewise."""
    with damaged_batch(1, {"controlled-form-1": mode}) as batch:
        alone = read_as_nobody("report", str(batch / "controlled-form-1"))
        assert alone.returncode == 2, alone.stderr
        assert alone.stderr == (
            f"sandbox report: cannot list or enter {batch / 'controlled-form-1'} (Permission denied): nothing to "
            "report, and no page can be written into it\n"
        )
        batch.chmod(mode)
        try:
            whole = read_as_nobody("report", str(batch))
        finally:
            batch.chmod(0o777)
        assert whole.returncode == 2, whole.stderr
        assert whole.stderr.startswith(f"sandbox report: cannot list or enter {batch} (Permission denied)")


@pytest.mark.parametrize("mode", [0o644, 0o311, 0o000], ids=oct)
def test_a_batch_folder_that_cannot_be_entered_is_one_line_from_results_compare_and_export(mode):
    """`sandbox results`, `sandbox compare` and `sandbox export` stopped with a PermissionError traceback on a batch
    folder they could not list or enter (`sandbox report` says so in one line, exit 2); and on the
    folder given to `sandbox run --out` whose newest batch they may enter but not list (one they may
    not enter is taken as an unreadable attempt folder, as in a batch)."""
    with damaged_batch(1, {}) as batch:
        out = batch.parent / "runs"
        newest = out / "2026-12-06T20-00-00-reference"
        newest.mkdir(parents=True)
        scored_attempt(newest / "controlled-form-1", traced=True)
        out.chmod(0o777)
        batch.chmod(mode)
        newest.chmod(0o311)
        try:
            for command in ("results", "compare", "export"):
                given = read_as_nobody(command, str(batch))
                assert given.returncode == 2, given.stderr
                assert given.stderr == (
                    f"sandbox {command}: cannot list or enter {batch} (Permission denied): nothing in it can be read\n"
                )
            newest_given = read_as_nobody("results", str(out))
        finally:
            batch.chmod(0o777)
            newest.chmod(0o777)
        assert newest_given.returncode == 2, newest_given.stderr
        assert newest_given.stderr.splitlines()[-1] == (
            f"sandbox results: cannot list or enter {newest} (Permission denied): nothing in it can be read"
        )


def garbled(folder: Path) -> Path:
    """An attempt folder whose record is no JSON, with no trace: none of its files names its agent."""
    return scored_attempt(folder, record=b"{garbled", traced=False)


def page_agents(page: str) -> set[str]:
    """The agents the batch page has a row for: in its summary table, leaderboard and grid."""
    return set(
        re.findall(r"<td>controlled-form</td><td>([^<]*)</td>", page)
        + re.findall(r"<tr><td>[0-9]+</td><td>([^<]*)</td>", page)
        + re.findall(r'<th scope="row">([^<]*)</th>', page)
    )


def test_a_damaged_attempt_naming_no_agent_counts_in_its_batch_agents_row(tmp_path, capsys):
    """A damaged attempt whose files name no agent (a garbled attempt.json, no trace) was a phantom
    agent "unknown": a row of its own in the table, the comparison and the page, ranked beside the
    batch's real agent. The batch (one agent, folders <pack>-<n>) says whose it is: counted in that
    row as an attempt that proves nothing; the passes and the median stay the other attempts'."""
    batch = tmp_path / "batch"
    for n in (1, 3):
        scored_attempt(batch / f"controlled-form-{n}", traced=True)
    garbled(batch / "controlled-form-2")
    data = read_summary(batch)
    assert [a["agent"] for a in data["attempts"]] == ["a", "a", "a"]
    assert [(r["pack"], r["agent"], r["attempts"]) for r in data["summary"]] == [("controlled-form", "a", 3)]
    assert (
        "name no agent: counted in the row of the agent their batch's folder names give (controlled-form-2: a)"
        in (data["note"])
    )
    assert main(["compare", str(batch), "--json"]) == 1
    [row] = json.loads(capsys.readouterr().out)["ranking"]
    assert (row["agent"], row["attempts"], row["qualified_passes"], row["error_free_passes"]) == ("a", 3, 2, 2)
    assert row["median_seconds"] == 3.0  # the damaged attempt's time is unknown: not in the median
    assert row["mean_tool_calls"] == 11.0  # and so is its count of calls (no record, no trace): never 0
    assert main(["report", str(batch)]) == 0
    assert page_agents((batch / "report.html").read_text()) == {"a"}


def test_a_damaged_attempt_of_a_batch_of_several_agents_counts_in_the_row_its_folder_names(tmp_path, capsys):
    """With several agents (folders <agent>--<pack>-<n>), the phantom "unknown" row took b's
    damaged attempt, and b's row counted one attempt fewer (its pass rate made higher)."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "a--controlled-form-1", traced=True, agent="a")
    scored_attempt(batch / "b--controlled-form-1", traced=True, agent="b")
    garbled(batch / "b--controlled-form-2")
    named = garbled(batch / "c--controlled-form-1")  # its score.json names c: a row none of whose calls is known
    (named / "score.json").write_text(json.dumps({**json.loads((named / "score.json").read_text()), "agent": "c"}))
    assert main(["compare", str(batch), "--json"]) == 1
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    assert [(r["agent"], r["attempts"], r["qualified_passes"], r["mean_tool_calls"]) for r in ranking] == [
        ("a", 1, 1, 11.0), ("b", 2, 1, 11.0), ("c", 1, 0, None)
    ]  # fmt: skip
    assert main(["results", str(batch)]) == 1
    assert "controlled-form  c      0/1        0/1         0.000       unknown   unknown" in capsys.readouterr().out
    assert main(["report", str(batch)]) == 0
    assert page_agents((batch / "report.html").read_text()) == {"a", "b", "c"}


def test_a_damaged_attempt_its_batch_does_not_attribute_is_in_no_row(tmp_path, capsys):
    """Folders of two agents gathered by hand under <pack>-<n> names do not say whose a damaged
    attempt is: it was ranked as an agent "unknown"; it is in no row, said, and still no pass."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", traced=True, agent="a")
    scored_attempt(batch / "controlled-form-2", traced=True, agent="b")
    garbled(batch / "controlled-form-3")
    data = read_summary(batch)
    assert [a["agent"] for a in data["attempts"]] == ["a", "b", None]
    assert [r["agent"] for r in data["summary"]] == ["a", "b"]
    assert "the batch does not say which ran them (controlled-form-3): in no agent's row" in data["note"]
    assert main(["compare", str(batch), "--json"]) == 1  # the damaged attempt is no qualified pass
    printed = capsys.readouterr()
    assert [(r["agent"], r["attempts"]) for r in json.loads(printed.out)["ranking"]] == [("a", 1), ("b", 1)]
    assert main(["compare", str(batch), str(batch / "controlled-form-1")]) == 1
    printed = capsys.readouterr()
    assert "None" not in printed.out and "unknown @" not in printed.out
    assert main(["results", str(batch)]) == 1
    assert main(["report", str(batch), "--junit", str(tmp_path / "junit.xml")]) == 0
    assert page_agents((batch / "report.html").read_text()) == {"a", "b"}


def test_a_trace_that_is_there_but_not_read_is_no_qualified_pass(tmp_path):
    """A trace.jsonl that is a pipe, or a link out of the folder, was named and its attempt's
    qualified pass counted all the same: the gates were never checked against a trace."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", traced=True)
    piped = scored_attempt(batch / "controlled-form-2", traced=True)
    linked = scored_attempt(batch / "controlled-form-3", traced=True)
    (piped / "trace.jsonl").unlink()
    os.mkfifo(piped / "trace.jsonl")
    (tmp_path / "outside.jsonl").write_bytes((linked / "trace.jsonl").read_bytes())
    (linked / "trace.jsonl").unlink()
    (linked / "trace.jsonl").symlink_to(tmp_path / "outside.jsonl")
    data = read_summary(batch)
    passes = {Path(a["directory"]).name: a["qualified_pass"] for a in data["attempts"]}
    assert passes == {"controlled-form-1": True, "controlled-form-2": False, "controlled-form-3": False}
    accuracy = {Path(a["directory"]).name: a["field_accuracy"] for a in data["attempts"]}
    assert accuracy["controlled-form-2"] == 1.0  # rests on the answer, which is there
    assert "controlled-form-2: trace.jsonl is not a regular file" in data["note"]
    assert (
        f"controlled-form-3: trace.jsonl is a symbolic link out of the folder (to {tmp_path / 'outside.jsonl'})"
        in (data["note"])
    )


def test_a_trace_missing_its_last_lines_is_no_qualified_pass(tmp_path):
    """A trace cut at a line's end after it was scored (its run_end and browser_close lines gone: a
    copy that stopped) was named "cut short", and its attempt's qualified pass counted all the same."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", traced=True)
    cut = scored_attempt(batch / "controlled-form-2", traced=True)
    lines = (cut / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (cut / "trace.jsonl").write_text("".join(lines[:-2]), encoding="utf-8")
    data = read_summary(batch)
    assert [a["qualified_pass"] for a in data["attempts"]] == [True, False]
    assert "controlled-form-2: trace.jsonl has no run_end line (cut short at a line's end" in data["note"]


def test_an_attempt_whose_trace_is_missing_is_no_qualified_pass(tmp_path):
    """The runner writes a trace for every attempt; with it deleted, the gates cannot be checked.
    A damaged trace took the pass back, and a missing one kept it."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1")
    (scored_attempt(batch / "controlled-form-2") / "trace.jsonl").unlink()
    data = read_summary(batch)
    assert [a["qualified_pass"] for a in data["attempts"]] == [True, False]
    assert "controlled-form-2: trace.jsonl is missing" in data["note"], data["note"]


def linked_batch(tmp_path: Path) -> tuple[Path, Path]:
    """A batch of one attempt beside two links: one to an attempt folder outside the batch, one to
    the batch's own attempt (counted twice if followed)."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", traced=True)
    outside = scored_attempt(tmp_path / "elsewhere" / "controlled-form-9", traced=True, agent="other")
    (batch / "controlled-form-2").symlink_to(outside)
    (batch / "controlled-form-3").symlink_to("controlled-form-1")
    return batch, outside


def test_a_linked_attempt_folder_is_left_out_and_named(tmp_path, capsys):
    """A link in a batch folder was followed: the attempt it led to was counted (the same attempt
    twice, another batch's agent), and `sandbox report` wrote its page where the link led."""
    batch, outside = linked_batch(tmp_path)
    data = read_summary(batch)
    assert [Path(a["directory"]).name for a in data["attempts"]] == ["controlled-form-1"]
    assert [a.name for a in batch_attempts(batch)] == ["controlled-form-1"]
    assert (
        f"left out controlled-form-2/ (a link to {outside}), controlled-form-3/ (a link to controlled-form-1): "
        "a symbolic link, which the runner never writes, would be read" in data["note"]
    )
    assert main(["report", str(batch)]) == 0
    assert "(and 1 attempt report)" in capsys.readouterr().out
    assert not (outside / "report.html").exists()
    assert main(["compare", str(batch), "--json"]) == 0
    printed = capsys.readouterr()
    [row] = json.loads(printed.out)["ranking"]
    assert (row["agent"], row["attempts"]) == ("a", 1)
    assert "left out controlled-form-2/ (a link to" in printed.err


def test_a_summary_listing_a_folder_that_is_now_a_link_is_rebuilt(tmp_path):
    """A summary.json written when the folder was real was taken as it was, and its attempt's
    folder (now the link) read and its page written through the link."""
    batch = tmp_path / "batch"
    for n in (1, 2):
        scored_attempt(batch / f"controlled-form-{n}", traced=True)
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    moved = tmp_path / "elsewhere" / "controlled-form-2"
    moved.parent.mkdir()
    (batch / "controlled-form-2").rename(moved)
    (batch / "controlled-form-2").symlink_to(moved)
    data = read_summary(batch)
    assert [Path(a["directory"]).name for a in data["attempts"]] == ["controlled-form-1"]
    assert "lists the attempt folder(s) controlled-form-2/, now symbolic links (not read): rebuilt" in data["note"]


def test_a_summary_naming_a_folder_longer_than_a_file_name_is_rebuilt(tmp_path):
    """Looking the folder up raised OSError (File name too long) through `sandbox compare`."""
    batch = tmp_path / "batch"
    scored_attempt(batch / "controlled-form-1", traced=True)
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    summary = json.loads((batch / "summary.json").read_text())
    summary["attempts"].append(summary["attempts"][0] | {"directory": "/" + "a" * 5000})
    (batch / "summary.json").write_text(json.dumps(summary))
    data = read_summary(batch)
    assert [Path(a["directory"]).name for a in data["attempts"]] == ["controlled-form-1"]
    assert "names an attempt folder that cannot be looked up ([Errno 36] File name too long" in data["note"]


def test_a_link_added_beside_a_summarys_attempts_is_named(tmp_path):
    """A link added to a batch with a summary.json was left out in silence by every reader."""
    batch, outside = linked_batch(tmp_path)
    (batch / "controlled-form-2").unlink()
    (batch / "controlled-form-3").unlink()
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    (batch / "controlled-form-2").symlink_to(outside)
    data = read_summary(batch)
    assert [Path(a["directory"]).name for a in data["attempts"]] == ["controlled-form-1"]
    assert f"left out controlled-form-2/ (a link to {outside})" in data["note"]


def test_an_attempt_folder_given_alone_is_read_though_it_is_a_link(tmp_path):
    """The reader's own choice: a link given as the folder is read (only links inside a batch are left out)."""
    batch, outside = linked_batch(tmp_path)
    assert AttemptFolder.load(batch / "controlled-form-2").counted
    assert read_summary(batch / "controlled-form-2")["attempts"][0]["agent"] == "other"
    shutil.rmtree(outside)


def test_the_batch_page_shows_a_row_of_no_known_time_as_unknown(tmp_path):
    """The summary table of the batch page said 0.00 s for a row whose attempts all had an unknown
    time (attempt.json missing: the batch killed)."""
    batch = tmp_path / "batch"
    (scored_attempt(batch / "controlled-form-1", traced=True) / "attempt.json").unlink()
    assert main(["report", str(batch)]) == 0
    page = (batch / "report.html").read_text()
    row = next(line for line in page.splitlines() if line.strip().startswith("<td>0.000</td>"))
    assert "<td>unknown</td>" in row and "0.00<" not in row
