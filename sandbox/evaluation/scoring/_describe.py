"""Plain-text descriptions of a score report and a gate report, for people (``sandbox score``,
each attempt's ``score.txt``): an agent's values and the URLs it asked for are quoted with their
control and bidirectional characters escaped (``sandbox.evaluation.shown``). Pure module: no
Playwright, no aiohttp."""

from __future__ import annotations

import json
from typing import Any

from sandbox.evaluation.evaluator_errors import EvaluatorError
from sandbox.evaluation.gates import GateReport
from sandbox.evaluation.scoring._report import ScoreReport
from sandbox.evaluation.shown import shown


def short_value(value: Any, limit: int = 90) -> str:
    """A value as JSON, cut to ``limit`` characters (``...`` marks the cut)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_pair(expected: Any, got: Any, limit: int = 90) -> tuple[str, str]:
    """Two values as JSON, each cut to ``limit`` characters where they first differ: two long URLs
    that differ past the cut would otherwise read the same."""
    texts = json.dumps(expected, ensure_ascii=False), json.dumps(got, ensure_ascii=False)
    index = next((i for i, (a, b) in enumerate(zip(*texts, strict=False)) if a != b), min(map(len, texts)))
    if index < limit - 3:  # they differ within what short_value shows
        return short_value(expected, limit), short_value(got, limit)
    start, width = index - limit // 2, limit - 6

    def around(text: str) -> str:
        return "..." + text[start : start + width] + ("..." if start + width < len(text) else "")

    return around(texts[0]), around(texts[1])


def describe_errors(errors: list[EvaluatorError], *, tracebacks: bool = True) -> list[str]:
    """Lines naming each evaluator that raised, with its traceback indented below it."""
    lines = []
    for error in errors:
        lines.append(f"  EVALUATOR ERROR {error.describe()}")
        if tracebacks:
            lines += ["    " + line for line in error.traceback.rstrip("\n").splitlines()]
    return lines


def describe_gates(report: GateReport) -> str:
    if not report.measured:
        head = "gates NOT MEASURED"
    elif report.errors:
        head = f"gates NOT JUDGED: {len(report.errors)} raised" + (
            f", {len(report.failures)} failed" if report.failures else ""
        )
    else:
        head = "gates passed" if report.ok else f"gates FAILED ({len(report.failures)})"
    lines = [head]
    lines += [f"  [{f.gate}] " + (f"seq {f.seq}: " if f.seq is not None else "") + f.message for f in report.failures]
    lines += describe_errors(report.errors)
    lines += [f"  note: {n}" for n in report.notes]
    return shown("\n".join(lines))


def describe_score(report: ScoreReport) -> str:
    if report.status == "error":
        verdict = "EVALUATION ERROR (an evaluator raised: not judged, not a qualified pass)"
    elif report.qualified_pass:
        verdict = "QUALIFIED PASS" + (" (error-free)" if report.error_free else " (not error-free)")
    else:
        verdict = "NOT A QUALIFIED PASS"
    correct = sum(f.correct for f in report.fields)
    lines = [
        f"pack {report.pack} (scored with {report.scoring_pack}, checksum {report.stamp.checksum[:12]})",
        f"verdict: {verdict}",
        f"field accuracy {report.field_accuracy:.4f} ({correct}/{len(report.fields)})",
        f"evidence {report.evidence.score:.4f} ({report.evidence.valid}/{report.evidence.required})",
        "output contract: " + ("ok" if report.output_contract.ok else "NOT MET"),
    ]
    lines += [f"  [{e.code}] {e.message}" for e in report.output_contract.errors]
    for field in report.fields:
        if not field.correct:
            mark = "critical " if field.critical else ""
            expected, got = short_pair(field.expected, field.got)
            lines.append(f"  wrong {mark}field {field.name}: expected {expected}, got {got} ({field.detail})")
    lines += [f"  evidence {f.field}: {f.message}" for f in report.evidence.failures]
    lines += describe_errors([e for e in report.errors if e not in report.gates.errors])  # gates': below
    lines.append(describe_gates(report.gates))
    lines += [f"reason: {r}" for r in report.reasons]
    return shown("\n".join(lines))
