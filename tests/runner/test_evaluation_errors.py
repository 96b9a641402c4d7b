"""Errors are verdicts: a field rule or a gate that raises while a real batch is scored (the
reference agent, real Chromium, the bundled mirrors) marks its attempts ``evaluation_error``
with the traceback in score.json, names the evaluator wherever the user looks (score.txt, the
reason line, summary.json, `sandbox results`, `sandbox score`, the HTML report, JUnit), and the
batch's other attempts complete and qualify.

The raising evaluators are registered the way every rule kind and gate is (``RULE_KINDS``,
``GATES``), for bid-intake only; ``monkeypatch`` takes them out again after the test."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from sandbox.cli import main
from sandbox.evaluation.gates import GATES, GateContext
from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.rules import RULE_KINDS, FieldCheck
from sandbox.runner.batch import format_reasons, format_table, run_batch, summarise
from sandbox.runner.junit import junit_xml
from sandbox.runner.report import write_reports

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit.xsd")
EXPLODING = "bid-intake"  # the pack whose attempts meet the raising evaluator
QUALIFYING = "controlled-form"


def plant_raising_rule(monkeypatch: pytest.MonkeyPatch) -> str:
    exact = RULE_KINDS["exact"]

    def exact_that_raises(rule, expected, got) -> FieldCheck:
        if rule.name == "place.postal_code":  # a field of bid-intake, not of controlled-form
            raise ZeroDivisionError("planted: the rule divides by zero")
        return exact(rule, expected, got)

    monkeypatch.setitem(RULE_KINDS, "exact", exact_that_raises)
    return "rule exact on field place.postal_code"


def plant_raising_gate(monkeypatch: pytest.MonkeyPatch) -> str:
    def gate_that_raises(ctx: GateContext):
        if ctx.pack.id == EXPLODING:
            raise ZeroDivisionError("planted: the gate divides by zero")
        return iter(())

    monkeypatch.setitem(GATES, "exploding", gate_that_raises)
    return "gate exploding"


@pytest.mark.parametrize("plant", [plant_raising_rule, plant_raising_gate], ids=["rule", "gate"])
async def test_a_raising_evaluator_is_an_error_and_the_batch_goes_on(sandbox, tmp_path, monkeypatch, capsys, plant):
    evaluator = plant(monkeypatch)
    packs = [load_pack(QUALIFYING), load_pack(EXPLODING)]
    outcomes = await run_batch(
        packs, "reference", repeats=2, out=tmp_path, progress=False, sandbox=sandbox, concurrency=2
    )

    by_pack = {pack.id: [o for o in outcomes if o.pack == pack.id] for pack in packs}
    assert len(outcomes) == 4
    for fine in by_pack[QUALIFYING]:  # the same batch's other attempts complete and qualify
        assert fine.status == "completed" and fine.qualified_pass and fine.error_free, fine.reason
    for broken in by_pack[EXPLODING]:
        assert broken.status == "evaluation_error" and not broken.qualified_pass
        assert broken.reason.startswith(f"evaluation error: {evaluator} raised ZeroDivisionError: planted: the "), (
            broken.reason
        )

        score = json.loads((broken.directory / "score.json").read_text())
        assert score["status"] == "error" and score["qualified_pass"] is False
        [error] = score["errors"]
        assert (error["evaluator"], error["exception"]) == (evaluator, "ZeroDivisionError")
        assert error["traceback"].startswith("Traceback (most recent call last):")
        assert "raise ZeroDivisionError" in error["traceback"] and error["traceback"].rstrip().endswith(
            "ZeroDivisionError: planted: the " + evaluator.split()[0] + " divides by zero"
        )
        attempt = json.loads((broken.directory / "attempt.json").read_text())
        assert attempt["status"] == "completed" and attempt["score_status"] == "error"  # the agent did finish

        score_text = (broken.directory / "score.txt").read_text()
        assert "verdict: EVALUATION ERROR" in score_text and f"EVALUATOR ERROR {evaluator} raised" in score_text
        assert f"  - {broken.reason}" in score_text.splitlines()  # "why it did not qualify"

    # on screen: the summary table and the reason lines, from the batch and from `sandbox results`
    rows = {row["pack"]: row for row in summarise(outcomes)}
    assert rows[EXPLODING]["statuses"] == {"evaluation_error": 2} and rows[EXPLODING]["qualified_passes"] == 0
    assert rows[QUALIFYING]["statuses"] == {"completed": 2} and rows[QUALIFYING]["qualified_passes"] == 2
    batch = outcomes[0].directory.parent
    summary = json.loads((batch / "summary.json").read_text())
    assert "evaluation_error 2" in format_table(summary["summary"])
    assert f"  {EXPLODING}-1: evaluation error: {evaluator} raised" in format_reasons(summary["attempts"])
    assert main(["results", str(batch)]) == 1
    printed = capsys.readouterr().out
    assert "evaluation_error 2" in printed and f"  {EXPLODING}-2: evaluation error: {evaluator}" in printed

    # re-scored from its folder while the evaluator still raises: exit 3, the evaluator named
    assert main(["score", str(batch / f"{EXPLODING}-1")]) == 3
    printed = capsys.readouterr().out
    assert "verdict: EVALUATION ERROR" in printed and f"EVALUATOR ERROR {evaluator} raised ZeroDivisionError" in printed

    # the HTML reports and JUnit: an <error>, not a <failure>
    write_reports(batch)
    page = (batch / f"{EXPLODING}-1" / "report.html").read_text()
    assert "EVALUATION ERROR" in page and evaluator in page and "ZeroDivisionError: planted" in page
    assert "evaluation error" in (batch / "report.html").read_text()
    xml = junit_xml(batch)
    SCHEMA.validate(xml)
    suite = ET.fromstring(xml).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "0", "2")
    errors = [case.find("error") for case in suite.findall("testcase") if case.find("error") is not None]
    assert {e.get("type") for e in errors} == {"evaluation_error"}
    assert all(evaluator in e.get("message") and "ZeroDivisionError" in e.text for e in errors)
