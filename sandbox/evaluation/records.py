"""Reading values out of records (expected records and agents' output records)."""

from __future__ import annotations

from typing import Any

MISSING = object()


def record_value(record: Any, dotted: str) -> Any:
    """The value at a dotted path (``a.b.c``) in nested objects, or ``MISSING``."""
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value
