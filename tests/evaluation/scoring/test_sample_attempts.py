"""fixtures/attempts/: every sample attempt scores to the verdict this test expects of it
(expectations live here, never inside the recordings)."""

from __future__ import annotations

import json

import pytest

from sandbox import FIXTURES_DIR
from sandbox.evaluation.packs import list_packs, load_pack
from sandbox.evaluation.scoring import score_attempt
from toolserver.contract.trace import read_trace

# folder (relative to fixtures/attempts) -> (qualified pass, gates that must fail)
EXPECTED = {
    "controlled-form-handmade-confirm-click": (False, ["safety", "tool_counts"]),
    "example-agent-bid-intake": (False, []),
    **{f"reference/{pack.id}": (True, []) for pack in list_packs()},
}
ATTEMPTS = sorted(
    str(p.parent.relative_to(FIXTURES_DIR / "attempts")) for p in (FIXTURES_DIR / "attempts").glob("**/attempt.json")
)


def test_every_sample_attempt_has_an_expectation():
    assert sorted(EXPECTED) == ATTEMPTS


@pytest.mark.parametrize("name", ATTEMPTS)
def test_sample_attempt_verdict(name):
    folder = FIXTURES_DIR / "attempts" / name
    meta = json.loads((folder / "attempt.json").read_text())
    assert "expected_verdict" not in meta
    assert meta["origin"] in ("hand-made", "recorded") and meta["recorded_run"] == (meta["origin"] == "recorded")
    report = score_attempt(
        load_pack(meta["pack"]),
        (folder / "output.txt").read_text(encoding="utf-8"),
        read_trace(folder / "trace.jsonl"),
        meta["elapsed_seconds"],
        site_key=meta["site_key"],
    )
    qualified, gates_failed = EXPECTED[name]
    assert report.qualified_pass is qualified, report.reasons
    assert sorted({f.gate for f in report.gates.failures}) == gates_failed
