"""Scoring: the output contract, field rules (one function per rule kind), evidence
citations and the acceptance verdict of one attempt.

Public API:
    score_attempt(pack, output_text, trace, elapsed_seconds, site_key=None) -> ScoreReport
    ScoreReport (``model_dump(mode="json")`` is the ``sandbox score --json`` shape); its
        ``status`` is pass, fail or error (an evaluator raised: ``EvaluatorError`` in ``errors``)
    describe_score(report), describe_gates(report) -> the plain-text verdict (``score.txt``)
    RULE_KINDS (rule kind -> function), bench_scoring(n=240) -> seconds

Pure package: no Playwright, no aiohttp.
"""

from sandbox.evaluation.evaluator_errors import EvaluatorError
from sandbox.evaluation.rules import RULE_KINDS, FieldCheck, check_field, expected_problem
from sandbox.evaluation.scoring._describe import describe_errors, describe_gates, describe_score, short_value
from sandbox.evaluation.scoring._report import (
    ContractError,
    EvidenceFailure,
    EvidenceResult,
    FieldResult,
    OutputContractResult,
    ScoreReport,
    ScoreStamp,
    ScoreStatus,
)
from sandbox.evaluation.scoring._score import score_attempt


def bench_scoring(n: int = 240) -> float:
    """Seconds to parse and score ``n`` synthetic attempts (see ``sandbox.evaluation.scoring.synthetic``)."""
    from sandbox.evaluation.scoring.synthetic import bench_scoring as run

    return run(n)


__all__ = [
    "RULE_KINDS",
    "ContractError",
    "EvidenceFailure",
    "EvaluatorError",
    "EvidenceResult",
    "FieldCheck",
    "FieldResult",
    "OutputContractResult",
    "ScoreReport",
    "ScoreStamp",
    "ScoreStatus",
    "bench_scoring",
    "check_field",
    "describe_errors",
    "describe_gates",
    "describe_score",
    "expected_problem",
    "score_attempt",
    "short_value",
]
