"""A full disk under `sandbox run` and `sandbox report`: a real small tmpfs (mounting it needs
root; elsewhere these tests are skipped). No batch is lost: every attempt is in the table with
why, no file is left half written, and what could not be written is said in a line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=120k", "tmpfs", str(mount)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_batch_on_a_full_disk_keeps_every_attempt_and_leaves_no_half_file(small_disk):
    """It ended in a traceback, with no table and no summary, and 0-byte attempt.json files."""
    done = subprocess.run(
        [SANDBOX_CLI, "run", "controlled-form", "--agent", "reference", "--repeats", "2", "--concurrency", "2",
         "--out", str(small_disk), "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    # The agents ran (their times are known): their attempts' files are what could not be written.
    assert "recording_error 2" in done.stdout and done.stdout.count("No space left on device") >= 2, done.stdout
    assert done.stdout.count("but its attempt could not be recorded") == 2, done.stdout
    assert "sandbox run: cannot write the report" in done.stderr
    (batch,) = small_disk.iterdir()
    for file in batch.rglob("*"):
        if file.is_file() and file.suffix in (".json", ".png", ".html"):
            assert file.stat().st_size > 0, file  # written whole or not at all
            if file.suffix == ".json":
                json.loads(file.read_text())
    report = subprocess.run([SANDBOX_CLI, "report", str(batch)], capture_output=True, text=True, timeout=120)
    assert report.returncode == 3 and report.stderr.startswith("sandbox report: cannot write the report: ")
    assert not (batch / "report.html").exists() or (batch / "report.html").read_text().rstrip().endswith("</html>")
