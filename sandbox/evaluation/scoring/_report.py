"""The score report (frozen data). ``ScoreReport.model_dump(mode="json")`` is the
``sandbox score --json`` output."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.evaluation.evaluator_errors import EvaluatorError
from sandbox.evaluation.gates import GateReport

ScoreStatus = Literal["pass", "fail", "error"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldResult(_Frozen):
    name: str
    critical: bool
    correct: bool
    expected: Any
    got: Any = Field(description="The output's value; null when the field is missing (see detail).")
    detail: str | None = Field(default=None, description="Why the field is wrong (None when correct).")


class EvidenceFailure(_Frozen):
    field: str
    message: str


class EvidenceResult(_Frozen):
    score: float = Field(description="valid required entries / required entries (1.0 when none required)")
    valid: int = 0
    required: int = 0
    failures: list[EvidenceFailure] = Field(default_factory=list)


class ContractError(_Frozen):
    code: str = Field(
        description="empty_output, missing_markers, multiple_markers, markers_out_of_order, "
        "markdown_fence, invalid_json, duplicate_key, schema_violation; not_checked when the check itself raised "
        "(status error)"
    )
    message: str


class OutputContractResult(_Frozen):
    ok: bool
    errors: list[ContractError] = Field(default_factory=list)


class ScoreStamp(_Frozen):
    sandbox_version: str
    pack: str
    scoring_pack: str
    scoring_pack_number: int
    checksum: str = Field(
        description="sha256 over the scoring pack's rules, expected records, schema and evidence fixtures"
    )
    files: dict[str, str | None] = Field(description="sha256 per scoring file; null = missing fixture")


class ScoreReport(_Frozen):
    pack: str
    scoring_pack: str
    status: ScoreStatus = Field(
        description="pass: a qualified pass; fail: judged and not qualified; error: an evaluator raised "
        "(see errors), so the attempt could not be judged and is not qualified."
    )
    qualified_pass: bool
    error_free: bool
    field_accuracy: float
    fields: list[FieldResult]
    critical_failures: list[str]
    evidence: EvidenceResult
    output_contract: OutputContractResult
    gates: GateReport
    reasons: list[str] = Field(description="Why the attempt is not a (error-free) qualified pass.")
    errors: list[EvaluatorError] = Field(
        default_factory=list,
        description="Every evaluator that raised (gates included), with its exception and traceback; "
        "non-empty exactly when status is error.",
    )
    stamp: ScoreStamp
