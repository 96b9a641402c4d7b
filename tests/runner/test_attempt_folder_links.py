"""Attempt folders with symbolic links and odd files where their files should be (a batch folder
from elsewhere, an archive unpacked with its links): a file linked out of the folder is never read
into an export, a score, a replay or a report, and each odd file is named for what it is."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from inspect_ai.log import read_eval_log

from sandbox import FIXTURES_DIR, PROJECT_ROOT
from sandbox.cli import main
from sandbox.runner.folders import AttemptFolder, read_summary

ATTEMPT = FIXTURES_DIR / "attempts" / "reference" / "controlled-form"
SECRET = "SECRET OUTSIDE THE ATTEMPT FOLDER"


def attempt_with_links(tmp_path: Path) -> Path:
    """A batch of one attempt whose output.txt, transcript.jsonl and score.json lead out of its folder."""
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    folder = tmp_path / "batch" / "controlled-form-1"
    shutil.copytree(ATTEMPT, folder)
    for name in ("output.txt", "transcript.jsonl", "score.json"):
        (folder / name).unlink(missing_ok=True)
        (folder / name).symlink_to(outside)
    return folder


def test_a_file_linked_out_of_the_attempt_folder_is_not_exported(tmp_path, capsys):
    """`sandbox export` put the linked file's text into the eval log as the agent's answer."""
    folder = attempt_with_links(tmp_path)
    assert main(["export", "--format", "inspect", str(folder.parent), "-o", str(tmp_path / "log.eval")]) == 0
    capsys.readouterr()
    [sample] = read_eval_log(str(tmp_path / "log.eval")).samples or []
    assert SECRET not in sample.model_dump_json()
    problems = sample.metadata["problems"]
    assert f"output.txt is a symbolic link out of the folder (to {tmp_path / 'outside.txt'}): not read" in problems


def test_a_file_linked_out_of_the_attempt_folder_is_not_scored_replayed_or_reported(tmp_path, capsys):
    folder = attempt_with_links(tmp_path)
    assert main(["score", str(folder)]) == 2  # it scored the linked file as the agent's answer
    assert f"{folder}: output.txt is a symbolic link out of the folder" in capsys.readouterr().err
    (folder / "trace.jsonl").unlink()
    (folder / "trace.jsonl").symlink_to(tmp_path / "outside.txt")
    assert main(["replay", str(folder)]) == 2
    assert f"{folder}: trace.jsonl is a symbolic link out of the folder" in capsys.readouterr().err

    summary = read_summary(folder.parent)
    [attempt] = summary["attempts"]
    assert attempt["qualified_pass"] is False and "score.json is a symbolic link out of the folder" in attempt["reason"]
    assert main(["report", str(folder.parent)]) == 0
    page = (folder / "report.html").read_text()
    assert SECRET not in page and 'href="output.txt"' not in page and 'href="score.json"' not in page


def test_odd_files_are_named_for_what_they_are(tmp_path):
    """A folder or a link loop where a file should be was called missing (an attempt.json that
    is a folder made the attempt `unfinished`: "the batch is still running, or was killed")."""
    folder = tmp_path / "controlled-form-1"
    shutil.copytree(ATTEMPT, folder)
    (folder / "trace.jsonl").unlink()
    (folder / "trace.jsonl").mkdir()
    (folder / "attempt.json").unlink()
    (folder / "attempt.json").symlink_to("attempt.json")
    loaded = AttemptFolder.load(folder)
    assert "trace.jsonl is a folder, not a file" in loaded.problems
    assert "attempt.json is a loop of symbolic links" in loaded.problems
    assert loaded.attempt is None
    assert loaded.record_damage == "attempt.json is a loop of symbolic links: how the agent ended is unknown"


def test_an_attempt_folder_named_in_bytes_that_are_not_utf8_is_exported(tmp_path, capsys):
    """`sandbox export` stopped: "'utf-8' codec can't encode characters in position 2-3: surrogates
    not allowed", naming neither the folder nor the file."""
    batch = tmp_path / "batch"
    shutil.copytree(ATTEMPT, batch / "controlled-form-1")
    shutil.copytree(ATTEMPT, batch / os.fsdecode(b"ab\xff\xfe-2"))
    assert main(["export", "--format", "inspect", str(batch), "-o", str(tmp_path / "log.eval")]) == 0
    assert "2 samples (ab\\xff\\xfe-2, controlled-form-1)" in capsys.readouterr().out
    samples = read_eval_log(str(tmp_path / "log.eval")).samples or []
    assert sorted(str(sample.id) for sample in samples) == ["ab\\xff\\xfe-2", "controlled-form-1"]


def test_a_trace_with_a_byte_that_is_not_utf8_does_not_stop_the_results(tmp_path, capsys):
    """`sandbox results` stopped with a UnicodeDecodeError traceback (looking for what interrupted a
    failed attempt, it read the trace strictly)."""
    folder = tmp_path / "batch" / "controlled-form-1"
    shutil.copytree(ATTEMPT, folder)
    with (folder / "trace.jsonl").open("ab") as trace:
        trace.write(b"\xff\xfe a damaged line\n")
    for name in ("score.json", "attempt.json"):  # a failed attempt: both files say so (else a mixed folder)
        record = json.loads((folder / name).read_text())
        (folder / name).write_text(json.dumps(record | {"qualified_pass": False}))
    assert main(["results", str(folder.parent)]) == 1
    assert "controlled-form-1: not a qualified pass" in capsys.readouterr().out


def test_an_attempt_folder_the_reader_may_not_enter_is_said_unreadable():
    """A folder without permissions in a batch stopped `sandbox results` and `sandbox report` with a
    PermissionError traceback. Root enters any folder: as root, the batch is read as nobody."""
    with tempfile.TemporaryDirectory() as made:
        batch = Path(made) / "batch"
        for name in ("controlled-form-1", "controlled-form-2"):
            shutil.copytree(ATTEMPT, batch / name)
        for path in (Path(made), *batch.rglob("*"), batch):
            path.chmod(0o755 if path.is_dir() else 0o644)
        (batch / "controlled-form-2").chmod(0)
        code = f"print(json.dumps(read_summary(Path({str(batch)!r}))))"
        if os.geteuid() == 0:  # imported as root, read as nobody (the ids the kernel checks access against)
            code = f"os.setegid(65534); os.seteuid(65534); {code}"
        done = subprocess.run(
            [sys.executable, "-c", f"import json, os; from pathlib import Path; {IMPORT}; {code}"],
            cwd=PROJECT_ROOT, capture_output=True, text=True,
        )  # fmt: skip
        (batch / "controlled-form-2").chmod(0o755)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    [unreadable] = [a for a in summary["attempts"] if a["directory"].endswith("controlled-form-2")]
    assert unreadable["status"] == "unreadable" and not unreadable["qualified_pass"]
    assert unreadable["reason"].startswith("the attempt folder is unreadable (Permission denied)")


IMPORT = "from sandbox.runner.folders import read_summary"
