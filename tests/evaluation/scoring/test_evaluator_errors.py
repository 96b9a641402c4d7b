"""Errors are verdicts, at the scorer: a field rule, a gate or an evidence check that raises is
recorded (which evaluator, the exception, the traceback), every other evaluator still judges,
and the report's status is ``error``: never a silent ``fail``, never an exception out of
``score_attempt``. The raising rule kinds and gates are registered as any other is
(``RULE_KINDS``, ``GATES``); ``monkeypatch`` takes them out again."""

from __future__ import annotations

import json

import pytest

from sandbox.cli import main
from sandbox.evaluation.gates import GATES, check_gates
from sandbox.evaluation.packs import Pack, load_pack
from sandbox.evaluation.rules import RULE_KINDS
from sandbox.evaluation.scoring import describe_score, score_attempt
from sandbox.evaluation.scoring._evidence import check_evidence
from sandbox.evaluation.scoring.synthetic import SITE_KEY, attempt_output, cited_record, conforming_trace


def score(pack, record=None):
    record = cited_record(pack) if record is None else record
    return score_attempt(pack, attempt_output(record), conforming_trace(pack).trace(), None, site_key=SITE_KEY)


def raise_for(field: str, kind: str, monkeypatch):
    original = RULE_KINDS[kind]

    def raising(rule, expected, got):
        if rule.name == field:
            raise KeyError("planted")
        return original(rule, expected, got)

    monkeypatch.setitem(RULE_KINDS, kind, raising)


def test_a_judged_attempt_says_pass_or_fail_and_lists_no_error(synthetic_pack):
    pack = synthetic_pack("controlled-form")
    passed = score(pack)
    assert (passed.status, passed.qualified_pass, passed.errors, passed.gates.errors) == ("pass", True, [], [])
    failed = score_attempt(pack, "no markers", conforming_trace(pack).trace(), None, site_key=SITE_KEY)
    assert (failed.status, failed.qualified_pass, failed.errors) == ("fail", False, [])


def test_a_raising_rule_is_an_error_and_the_other_rules_still_judge(synthetic_pack, monkeypatch):
    pack = synthetic_pack("controlled-form")
    raise_for("fields.city", "exact", monkeypatch)
    report = score(pack)
    assert report.status == "error" and not report.qualified_pass and not report.error_free
    [error] = report.errors
    assert (error.evaluator, error.exception, error.message) == (
        "rule exact on field fields.city",
        "KeyError",
        "'planted'",
    )
    assert error.traceback.startswith("Traceback") and "in raising" in error.traceback
    city = next(f for f in report.fields if f.name == "fields.city")
    assert not city.correct and city.detail == "not judged: the rule raised (see errors)"
    assert city.got == "São Paulo"  # the output's value is still shown
    assert [f.name for f in report.fields if not f.correct] == ["fields.city"]  # every other rule judged
    assert report.gates.ok and report.evidence.score == 1.0
    assert report.reasons[0] == (
        "evaluation error (not judged): rule exact on field fields.city raised KeyError: 'planted'"
    )
    text = describe_score(report)
    assert "verdict: EVALUATION ERROR" in text and "EVALUATOR ERROR rule exact on field fields.city" in text
    assert "    KeyError: 'planted'" in text.splitlines()  # the traceback, indented


def test_a_raising_gate_is_an_error_and_the_other_gates_still_run(synthetic_pack, monkeypatch):
    pack = synthetic_pack("controlled-form")

    def exploding(ctx):
        yield from ()
        raise RuntimeError("the gate cannot decide")

    monkeypatch.setitem(GATES, "exploding", exploding)
    trace = conforming_trace(pack).trace()
    gates = check_gates(pack, trace, elapsed_seconds=10_000, site_key=SITE_KEY)  # over the time limit too
    assert not gates.ok and [f.gate for f in gates.failures] == ["time_limit"]
    [error] = gates.errors
    assert (error.evaluator, error.exception, error.message) == (
        "gate exploding",
        "RuntimeError",
        "the gate cannot decide",
    )
    assert gates.checked[-1] == "exploding"

    report = score(pack)
    assert report.status == "error" and not report.qualified_pass
    assert report.errors == report.gates.errors and report.field_accuracy == 1.0
    assert "gates NOT JUDGED: 1 raised" in describe_score(report)


def test_a_raising_evidence_check_is_an_error(synthetic_root, monkeypatch):
    pack = load_pack(synthetic_root / "bid-intake")  # its own: fixture texts are cached per pack object
    original = Pack.fixture_bytes

    def raising(self, source):
        if source == "attachment_names":
            raise RuntimeError("planted")
        return original(self, source)

    monkeypatch.setattr(Pack, "fixture_bytes", raising)
    report = score(pack)
    assert report.status == "error" and not report.qualified_pass
    [error] = report.errors
    assert (error.evaluator, error.exception) == ("evidence of field attachments.names", "RuntimeError")
    failure = next(f for f in report.evidence.failures if f.field == "attachments.names")
    assert failure.message == "not judged: the evidence check raised (see errors)"
    assert report.evidence.valid == report.evidence.required - 1  # the other fields' evidence was judged
    with pytest.raises(RuntimeError, match="planted"):  # without an errors list to record into, it propagates
        check_evidence(pack, cited_record(pack))


def test_sandbox_score_and_gates_exit_3_when_an_evaluator_raises(synthetic_pack, tmp_path, monkeypatch, capsys):
    pack = synthetic_pack("controlled-form")
    (tmp_path / "output.txt").write_text(attempt_output(cited_record(pack)))
    (tmp_path / "trace.jsonl").write_text(conforming_trace(pack).text())
    common = ["--pack", str(pack.dir), "--trace", str(tmp_path / "trace.jsonl"), "--site-key", SITE_KEY]
    assert main(["score", *common, "--output", str(tmp_path / "output.txt")]) == 0
    capsys.readouterr()

    raise_for("fields.city", "exact", monkeypatch)
    assert main(["score", *common, "--output", str(tmp_path / "output.txt"), "--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "error" and data["errors"][0]["evaluator"] == "rule exact on field fields.city"

    monkeypatch.setitem(GATES, "exploding", lambda ctx: iter([1 / 0]))
    assert main(["gates", *common]) == 3
    printed = capsys.readouterr().out
    assert (
        "gates NOT JUDGED: 1 raised" in printed and "EVALUATOR ERROR gate exploding raised ZeroDivisionError" in printed
    )
