"""fixtures/attempts/: every sample attempt scores to the verdict its attempt.json states."""

from __future__ import annotations

import json

import pytest

from sandbox import FIXTURES_DIR
from sandbox.packs import load_pack
from sandbox.scoring import score_attempt
from sandbox.trace import read_trace

ATTEMPTS = sorted(p.parent for p in (FIXTURES_DIR / "attempts").glob("*/attempt.json"))


@pytest.mark.parametrize("folder", ATTEMPTS, ids=lambda p: p.name)
def test_sample_attempt_verdict(folder):
    meta = json.loads((folder / "attempt.json").read_text())
    assert meta["origin"] in ("hand-made", "recorded") and meta["recorded_run"] == (meta["origin"] == "recorded")
    report = score_attempt(load_pack(meta["pack"]), (folder / "output.txt").read_text(encoding="utf-8"),
                           read_trace(folder / "trace.jsonl"), meta["elapsed_seconds"], site_key=meta["site_key"])
    want = meta["expected_verdict"]
    assert report.qualified_pass is want["qualified_pass"]
    assert sorted({f.gate for f in report.gates.failures}) == sorted(want["gates_failed"])


def test_there_is_a_sample_attempt():
    assert ATTEMPTS
