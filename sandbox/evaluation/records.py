"""Reading values out of records (expected records and agents' output records), and out of a
schema by a ``$ref``'s JSON Pointer."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

MISSING = object()


def record_value(record: Any, dotted: str) -> Any:
    """The value at a dotted path (``a.b.c``) in nested objects, or ``MISSING``."""
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def pointer_part(part: str) -> str:
    """One step of a ``$ref``'s JSON Pointer (``#/$defs/shop%20title``): percent-decoded, as a URI
    fragment is, then ``~1`` and ``~0`` unescaped."""
    return unquote(part).replace("~1", "/").replace("~0", "~")
