"""``score_attempt``: compose the output contract, field rules, evidence and gates into one
verdict.

Scoring (contract, rules, expected records, evidence fixtures) always uses the workflow's
reviewed pack (``card.scoring_pack``); the gates use the executed pack's own ``gates.json``.

Every evaluator runs inside ``evaluating`` (``sandbox.evaluation.evaluator_errors``): one that
raises is recorded with its traceback, the others still judge, and the report's status is
``error`` (never a silent ``fail``). So scoring raises only for a pack that cannot be used.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from sandbox import __version__
from sandbox.evaluation.evaluator_errors import EvaluatorError, evaluating
from sandbox.evaluation.gates import check_gates
from sandbox.evaluation.normalise import strict_key
from sandbox.evaluation.packs import Pack, load_pack
from sandbox.evaluation.records import MISSING, record_value
from sandbox.evaluation.rules import FieldCheck, check_field
from sandbox.evaluation.scoring._contract import ParsedOutput, parse_output
from sandbox.evaluation.scoring._describe import short_value
from sandbox.evaluation.scoring._evidence import check_evidence
from sandbox.evaluation.scoring._report import (
    ContractError,
    EvidenceResult,
    FieldResult,
    OutputContractResult,
    ScoreReport,
    ScoreStamp,
    ScoreStatus,
)
from toolserver.contract.trace import Trace


def _match_record(scoring: Pack, expected: dict, records: list[Any]) -> tuple[dict | None, str | None]:
    """The output record whose record_key value equals the expected one (type-sensitive).

    When the pack expects one record and the output holds one record object, that record is
    scored whatever its key: the key's own field rule marks a wrong key wrong, as any other
    field (a non-critical key, such as the form's ``record_id``, may be wrong in a pass). Keys
    only choose among several records."""
    key = scoring.rules.record_key
    want = record_value(expected, key)
    objects = [r for r in records if isinstance(r, dict)]
    matches = [
        r
        for r in objects
        if record_value(r, key) is not MISSING and strict_key(record_value(r, key)) == strict_key(want)
    ]
    if matches:
        note = f"{len(matches)} output records share {key}; the first was scored" if len(matches) > 1 else None
        return matches[0], note
    got = [record_value(r, key) for r in objects]
    shown = [g for g in got if g is not MISSING]
    found = short_value(shown, 200) if shown else "none"  # an agent's keys: cut, they may be megabytes
    key_judged = any(rule.name == key for rule in scoring.rules.field_rules)
    if len(scoring.expected) == 1 and len(objects) == 1 and key_judged:
        value = record_value(objects[0], key)
        has = f"{key} = {short_value(value, 200)}" if value is not MISSING else f"no {key}"
        return objects[0], (
            f"the one output record has {has} (expected {json.dumps(want, ensure_ascii=False)}); it was scored "
            "all the same, its key judged by the key's own field rule"
        )
    return None, (
        f"no output record has {key} = {json.dumps(want, ensure_ascii=False)} (found {found}); every field counts "
        "as missing"
    )


def score_attempt(
    pack: Pack | str, output_text: str, trace: Trace | None, elapsed_seconds: float | None, site_key: str | None = None
) -> ScoreReport:
    """Score one attempt of ``pack`` (the executed pack). Never raises for a bad output or
    trace, nor for an evaluator that raises (status ``error``); a broken pack raises
    ``PackError``. ``pack`` may also be a pack id or folder."""
    if not isinstance(pack, Pack):
        pack = load_pack(pack)
    scoring = pack.scoring_pack()
    rules = scoring.rules
    reasons: list[str] = []
    errors: list[EvaluatorError] = []

    parsed = ParsedOutput(errors=[ContractError(code="not_checked", message="the output contract check raised")])
    with evaluating("output contract", errors):
        parsed = parse_output(output_text, scoring)
    contract = OutputContractResult(ok=parsed.ok, errors=parsed.errors)
    if not contract.ok:
        reasons.append(
            "output contract not met: "
            + "; ".join(f"{e.code}: {e.message}" for e in parsed.errors[:3])
            + (f" (+{len(parsed.errors) - 3} more)" if len(parsed.errors) > 3 else "")
        )

    fields: list[FieldResult] = []
    valid_evidence = required_evidence = 0
    evidence_failures = []
    missing_fixtures: set[str] = set()
    several = len(scoring.expected) > 1
    for expected_record in scoring.expected:
        record, note = _match_record(scoring, expected_record, parsed.records)
        if note and parsed.records:
            reasons.append(note)
        prefix = f"[{json.dumps(record_value(expected_record, rules.record_key))}] " if several else ""
        for rule in rules.field_rules:
            expected = record_value(expected_record, rule.name)
            got = MISSING if record is None else record_value(record, rule.name)
            check = FieldCheck(False, "not judged: the rule raised (see errors)")
            with evaluating(f"rule {rule.kind} on field {prefix}{rule.name}", errors):
                expected, got, check = check_field(rule, expected_record, record)
            fields.append(
                FieldResult(
                    name=prefix + rule.name,
                    critical=rule.critical,
                    correct=check.correct,
                    expected=expected,
                    got=None if got is MISSING else got,
                    detail=check.detail,
                )
            )
        evidence, missing = check_evidence(scoring, record, errors, field_prefix=prefix)
        missing_fixtures |= missing
        valid_evidence += evidence.valid
        required_evidence += evidence.required
        evidence_failures += [f.model_copy(update={"field": prefix + f.field}) for f in evidence.failures]

    correct = sum(f.correct for f in fields)
    accuracy = Fraction(correct, len(fields))
    critical_failures = [f.name for f in fields if f.critical and not f.correct]
    evidence_score = Fraction(valid_evidence, required_evidence) if required_evidence else Fraction(1)
    evidence_result = EvidenceResult(
        score=float(evidence_score), valid=valid_evidence, required=required_evidence, failures=evidence_failures
    )

    gates = check_gates(pack, trace, elapsed_seconds=elapsed_seconds, site_key=site_key)
    errors += gates.errors

    accuracy_ok = accuracy >= Fraction(rules.success_threshold_decimal)
    evidence_ok = evidence_score >= Fraction(rules.evidence_threshold_decimal)
    if not accuracy_ok and parsed.records:  # with no records the contract reason says why
        reasons.append(
            f"field accuracy {float(accuracy):.4f} ({correct}/{len(fields)}) is below the "
            f"{rules.success_threshold} threshold"
        )
    if critical_failures:
        reasons.append("critical field(s) wrong: " + ", ".join(critical_failures))
    if not evidence_ok:
        reasons.append(
            f"evidence {float(evidence_score):.4f} ({valid_evidence}/{required_evidence}) is below the "
            f"{rules.evidence_threshold} threshold"
        )
    if missing_fixtures:
        reasons.append(
            "evidence fixtures missing or unreadable (they are generated from the mirrors): "
            + ", ".join(sorted(missing_fixtures))
        )
    if not gates.measured:
        reasons.append("gates not measured: no trace given, so this cannot be a qualified pass")
    elif not gates.ok:
        names = list(dict.fromkeys(f.gate for f in gates.failures))
        reasons.append("gate(s) failed: " + ", ".join(names))

    if errors:
        reasons.insert(0, "evaluation error (not judged): " + "; ".join(e.describe() for e in errors))

    qualified = (
        not errors
        and contract.ok
        and accuracy_ok
        and not critical_failures
        and evidence_ok
        and gates.measured
        and gates.ok
    )
    error_free = qualified and correct == len(fields) and evidence_score == 1
    if qualified and not error_free:
        wrong = [f.name for f in fields if not f.correct]
        reasons.append("qualified pass, not error-free: " + (", ".join(wrong) if wrong else "evidence incomplete"))
    status: ScoreStatus = "error" if errors else "pass" if qualified else "fail"

    return ScoreReport(
        pack=pack.id,
        scoring_pack=scoring.id,
        status=status,
        qualified_pass=qualified,
        error_free=error_free,
        field_accuracy=float(accuracy),
        fields=fields,
        critical_failures=critical_failures,
        evidence=evidence_result,
        output_contract=contract,
        gates=gates,
        reasons=reasons,
        errors=errors,
        stamp=ScoreStamp(
            sandbox_version=__version__,
            pack=pack.id,
            scoring_pack=scoring.id,
            scoring_pack_number=scoring.card.pack_number,
            checksum=scoring.checksum(),
            files=scoring.checksums(),
        ),
    )
