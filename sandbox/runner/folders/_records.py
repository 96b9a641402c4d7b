"""The data of an attempt folder's two JSON files, checked: whether ``attempt.json``'s record
(read by ``read_attempt_record``) can be counted, and whether ``score.json`` is a score report
the readers can show. Pure: reads no file."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.evaluation.gates import GateFailure
from sandbox.evaluation.scoring import (
    ContractError,
    EvaluatorError,
    EvidenceFailure,
    FieldResult,
    short_value,
)
from sandbox.runner.attempt import AttemptRecord

# The fields of attempt.json the counts rest on, besides ``pack`` (without which it is no record),
# and what is unknown without them: whether the score may count at all rests on how the agent
# ended, and its time is in the median. One there but unreadable leaves the record uncountable;
# any other field (one this version does not know, a malformed note) is left out and named.
COUNTED_FIELDS = {"status": "how the agent ended", "elapsed_seconds": "its time"}


def counted_field_damage(data: dict[str, Any], record: AttemptRecord) -> tuple[str, str, str] | None:
    """Why a record read from ``data`` cannot be counted: (what is wrong, what is unknown for it, the
    field), or None. A field the counts rest on is there but unreadable (another type, null, not a
    finite number)."""
    for name, unknown in COUNTED_FIELDS.items():
        if name in data and getattr(record, name) is None:
            return f"attempt.json field {name!r} is unreadable ({short_value(data[name], 60)})", unknown, name
    return None


# score.json as the readers take it: ``ScoreReport``'s shape (its entries are the evaluation's own
# models), checked strictly (``"yes"`` is no true, ``1`` no true either), what this version does
# not know ignored (a newer writer's keys), and what 0.1.0 wrote without (status, errors) optional.
_READ = ConfigDict(extra="ignore", frozen=True, strict=True)


class _Field(FieldResult):
    model_config = _READ


class _EvidenceFailure(EvidenceFailure):
    model_config = _READ


class _ContractError(ContractError):
    model_config = _READ


class _GateFailure(GateFailure):
    model_config = _READ


class _EvaluatorError(EvaluatorError):
    model_config = _READ


class _Evidence(BaseModel):
    model_config = _READ
    score: float
    valid: int
    required: int
    failures: list[_EvidenceFailure] = Field(default_factory=list)


class _Contract(BaseModel):
    model_config = _READ
    ok: bool
    errors: list[_ContractError] = Field(default_factory=list)


class _Gates(BaseModel):
    model_config = _READ
    ok: bool
    measured: bool = True
    failures: list[_GateFailure] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    checked: list[str] = Field(default_factory=list)
    errors: list[_EvaluatorError] = Field(default_factory=list)


class ScoreFile(BaseModel):
    """What the readers take from score.json; every key they read is here, with its type."""

    model_config = _READ
    qualified_pass: bool
    error_free: bool
    field_accuracy: float = Field(ge=0, le=1)  # a share of the fields: 7.5 or NaN is no writer's
    fields: list[_Field]
    evidence: _Evidence
    output_contract: _Contract
    gates: _Gates
    status: str | None = None
    pack: str | None = None
    scoring_pack: str | None = None
    agent: str | None = None  # not ``ScoreReport``'s: another writer's, read by ``AttemptFolder.named``
    reasons: list[str] = Field(default_factory=list)
    critical_failures: list[str] = Field(default_factory=list)
    errors: list[_EvaluatorError] = Field(default_factory=list)


TYPE_SAID = {  # a pydantic error type, as a message says it
    "bool_type": "true or false", "int_type": "a whole number", "float_type": "a number", "string_type": "a string",
    "list_type": "a list", "model_type": "an object", "dict_type": "an object",
    "greater_than_equal": "a number from 0 to 1", "less_than_equal": "a number from 0 to 1",
}  # fmt: skip


def score_problem(data: dict[str, Any]) -> str | None:
    """What makes ``data`` no score report the readers can show (an edited or damaged file: a value
    of another type, one missing, at any depth), or None."""
    try:
        ScoreFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
        if first["type"] == "missing":
            return f"{where} is missing"
        said = TYPE_SAID.get(first["type"], first["msg"])
        value = repr(first["input"])
        return f"{where} is {value if len(value) <= 60 else value[:59] + '…'}, not {said}"
    return None
