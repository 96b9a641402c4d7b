"""The data of an attempt folder's two JSON files, checked: ``attempt.json`` as an
``AttemptRecord`` (the fields it cannot read left out and named), ``score.json`` as a score
report the readers can show (or what makes it none). Pure: reads no file."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from sandbox.runner.attempt import AttemptRecord
from sandbox.runner.folders._kinds import KIND_SAID, NUMBER, of_kind

SCORE_KEYS: dict[str, Any] = {  # as 0.1.0 wrote them too (its reports had no status)
    "qualified_pass": bool, "error_free": bool, "field_accuracy": NUMBER, "fields": list,
    "evidence": dict, "output_contract": dict, "gates": dict,
}  # fmt: skip


def read_attempt_record(data: dict[str, Any]) -> tuple[AttemptRecord | None, list[str]]:
    """``attempt.json``'s data as an ``AttemptRecord`` and what could not be read: a field this
    version does not know, or of the wrong type, is left out and named (None: no pack named)."""
    data = dict(data)
    problems: list[str] = []
    while True:
        try:
            return AttemptRecord.model_validate(data), problems
        except ValidationError as exc:
            unreadable = {str(error["loc"][0]): error["msg"] for error in exc.errors() if error["loc"]}
            if not unreadable or not unreadable.keys() <= data.keys() or "pack" in unreadable:
                why = "; ".join(f"{name}: {message}" for name, message in unreadable.items()) or str(exc)
                return None, [*problems, f"attempt.json is unreadable ({why})"]
            for name, message in sorted(unreadable.items()):
                problems.append(f"attempt.json field {name!r} left out: {message}")
                del data[name]


def score_problem(data: dict[str, Any]) -> str | None:
    """What makes ``data`` no score report the readers can show (an edited or damaged file), or None."""
    for key, kind in SCORE_KEYS.items():
        value = data.get(key)
        if not of_kind(value, kind):
            return f"{key} is {value!r}, not {KIND_SAID[kind]}"
    if "status" in data and not isinstance(data["status"], str):
        return f"status is {data['status']!r}, not {KIND_SAID[str]}"
    evidence = data["evidence"]
    for key, kind in (("score", NUMBER), ("valid", int), ("required", int)):
        if not of_kind(evidence.get(key), kind):
            return f"evidence.{key} is {evidence.get(key)!r}, not {KIND_SAID[kind]}"
    return None
