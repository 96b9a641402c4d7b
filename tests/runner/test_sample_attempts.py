"""Recorded sample attempts re-score to their recorded verdicts through the CLI, and a recorded
reference attempt replays against the mirrors without divergence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.runner.replay import replay

RECORDED = sorted(p for p in (FIXTURES_DIR / "attempts").glob("**/score.json"))


@pytest.mark.parametrize("score_file", RECORDED, ids=lambda p: str(p.parent.relative_to(FIXTURES_DIR)))
def test_recorded_attempt_rescoring_matches(score_file: Path, capsys):
    folder = score_file.parent
    attempt = json.loads((folder / "attempt.json").read_text())
    recorded = json.loads(score_file.read_text())
    code = main(
        [
            "score",
            "--pack",
            attempt["pack"],
            "--output",
            str(folder / "output.txt"),
            "--trace",
            str(folder / "trace.jsonl"),
            "--elapsed",
            str(attempt["elapsed_seconds"]),
            "--site-key",
            attempt["site_key"],
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if recorded["qualified_pass"] else 1)
    assert report["qualified_pass"] == recorded["qualified_pass"]
    assert report["field_accuracy"] == recorded["field_accuracy"]
    assert report["gates"]["ok"] == recorded["gates"]["ok"]
    gates_code = main(
        [
            "gates",
            "--pack",
            attempt["pack"],
            "--trace",
            str(folder / "trace.jsonl"),
            "--site-key",
            attempt["site_key"],
            "--elapsed",
            str(attempt["elapsed_seconds"]),
        ]
    )
    assert gates_code == (0 if recorded["gates"]["ok"] else 1)


def test_there_are_recorded_reference_attempts_for_every_pack():
    from sandbox.evaluation.packs import list_packs

    packs = {p.parent.name for p in (FIXTURES_DIR / "attempts" / "reference").glob("*/trace.jsonl")}
    assert packs == {p.id for p in list_packs()}


async def test_recorded_reference_attempt_replays_without_divergence(sandbox):
    report, _ = await replay(FIXTURES_DIR / "attempts" / "reference" / "bid-intake", sandbox=sandbox)
    assert report.first_divergence is None, report.first_divergence
    assert report.rescore["qualified_pass"] is True
