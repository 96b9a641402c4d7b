"""The data of an attempt folder's two JSON files, checked: whether ``attempt.json``'s record
(read by ``read_attempt_record``) can be counted, and whether ``score.json`` is a score report
the readers can show. Pure: reads no file."""

from __future__ import annotations

from typing import Any

from sandbox.evaluation.scoring import short_value
from sandbox.runner.attempt import AttemptRecord
from sandbox.runner.folders._kinds import KIND_SAID, NUMBER, of_kind

# The fields of attempt.json the counts rest on, besides ``pack`` (without which it is no record),
# and what is unknown without them: whether the score may count at all rests on how the agent
# ended, and its time is in the median. One there but unreadable leaves the record uncountable;
# any other field (one this version does not know, a malformed note) is left out and named.
COUNTED_FIELDS = {"status": "how the agent ended", "elapsed_seconds": "its time"}

SCORE_KEYS: dict[str, Any] = {  # as 0.1.0 wrote them too (its reports had no status)
    "qualified_pass": bool, "error_free": bool, "field_accuracy": NUMBER, "fields": list,
    "evidence": dict, "output_contract": dict, "gates": dict,
}  # fmt: skip


def counted_field_damage(data: dict[str, Any], record: AttemptRecord) -> tuple[str, str, str] | None:
    """Why a record read from ``data`` cannot be counted: (what is wrong, what is unknown for it, the
    field), or None. A field the counts rest on is there but unreadable (another type, null, not a
    finite number)."""
    for name, unknown in COUNTED_FIELDS.items():
        if name in data and getattr(record, name) is None:
            return f"attempt.json field {name!r} is unreadable ({short_value(data[name], 60)})", unknown, name
    return None


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
