"""Normalisers, one per value type: each returns a canonical, hashable form or raises
``NotComparable`` (the value is not of the type the rule expects).

Two values are equal under a rule when their canonical forms are equal. All normalisers are
type-sensitive: JSON ``true`` is never the integer 1, ``1`` is never ``"1"``.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta, timezone
from fractions import Fraction
from typing import Any

from sandbox.evaluation.shown import short_repr


class NotComparable(ValueError):
    """The value has the wrong type or form for the rule; the message says what was expected."""


def describe(value: Any) -> str:
    """A short type name for messages (JSON vocabulary)."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


def strict_key(value: Any) -> Hashable:
    """A type-tagged deep freeze: equal keys only for equal JSON values of equal types."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int):
        return ("integer", value)
    if isinstance(value, float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if value is None:
        return ("null",)
    if isinstance(value, list):
        return ("array", tuple(strict_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((k, strict_key(v)) for k, v in value.items())))
    raise NotComparable(f"not a JSON value: {type(value).__name__}")


def normalise_exact(value: Any, **_: Any) -> Hashable:
    return strict_key(value)


def normalise_enum(value: Any, *, enum_values: Sequence[str] = (), **_: Any) -> Hashable:
    if not isinstance(value, str):
        raise NotComparable(f"expected one of the enum strings, got {describe(value)}")
    if value not in enum_values:
        raise NotComparable(f"{short_repr(value)} is not one of {list(enum_values)}")
    return value


# Matched with fullmatch (``$`` also matches before a final line break) and ASCII digits only
# (``\d`` also matches other scripts' digits, which ``int`` reads).
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)


def normalise_date(value: Any, **_: Any) -> Hashable:
    """A calendar date written YYYY-MM-DD (no time part)."""
    if not isinstance(value, str):
        raise NotComparable(f"expected a YYYY-MM-DD date string, got {describe(value)}")
    match = _DATE.fullmatch(value)
    if not match:
        raise NotComparable(f"{short_repr(value)} is not a YYYY-MM-DD date")
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError as exc:
        raise NotComparable(f"{short_repr(value)} is not a valid date ({exc})") from None


_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?P<offset>[Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Significant digits of a second's fraction that are compared: far beyond any clock, and bounded so
# that ``int`` never meets Python's limit on digits (4,300), which it raises as a ValueError.
MAX_FRACTION_DIGITS = 100


def normalise_datetime(value: Any, **_: Any) -> Hashable:
    """An RFC 3339 timestamp -> the exact instant (UTC seconds as a Fraction), so the same
    instant written in different offsets compares equal. A timestamp without an offset is
    kept apart (tagged "local") and only equals the same local wall time."""
    if not isinstance(value, str):
        raise NotComparable(f"expected an ISO 8601 date-time string, got {describe(value)}")
    match = _DATETIME.fullmatch(value)
    if not match:
        raise NotComparable(f"{short_repr(value)} is not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss[.fff]±hh:mm)")
    try:
        year, month, day, hour, minute, second = (int(match[i]) for i in range(1, 7))
        wall = datetime(year, month, day, hour, minute, second)
    except ValueError as exc:
        raise NotComparable(f"{short_repr(value)} is not a valid date-time ({exc})") from None
    digits = (match[7] or "").rstrip("0")  # trailing zeros do not change the instant
    if len(digits) > MAX_FRACTION_DIGITS:
        raise NotComparable(
            f"{value[:32]!r}... has a fraction of a second of {len(digits)} significant digits; "
            f"at most {MAX_FRACTION_DIGITS} can be compared"
        )
    fraction = Fraction(int(digits), 10 ** len(digits)) if digits else Fraction(0)
    offset = match["offset"]
    if offset is None:
        return ("local", wall, fraction)
    if offset in ("Z", "z"):
        delta = timedelta(0)
    else:
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if hours > 23 or minutes > 59:
            raise NotComparable(f"{short_repr(value)} has an invalid UTC offset")
        delta = timedelta(hours=hours, minutes=minutes) * (1 if offset[0] == "+" else -1)
    instant = wall.replace(tzinfo=timezone(delta)) - _EPOCH
    return ("instant", int(instant.total_seconds()) + fraction)


def normalise_integer(value: Any, **_: Any) -> Hashable:
    """A JSON integer. ``7.0`` is the integer 7, as JSON Schema's ``"type": "integer"`` (Draft
    2020-12) reads it; booleans and numbers with a fraction part (7.5) are not integers."""
    if isinstance(value, float) and value.is_integer():  # never NaN or infinity: is_integer() is False
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotComparable(f"expected an integer, got {describe(value)}")
    return value


def normalise_aliases(value: Any, *, aliases: Mapping[str, str] = {}, **_: Any) -> Hashable:
    """Map an accepted alternative to its canonical form (both sides go through the map)."""
    if not isinstance(value, str):
        raise NotComparable(f"expected a string, got {describe(value)}")
    return aliases.get(value, value)


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace (any Unicode space, incl. no-break space) -> one space; trimmed."""
    return " ".join(text.split())


def normalise_whitespace(value: Any, **_: Any) -> Hashable:
    if not isinstance(value, str):
        raise NotComparable(f"expected a string, got {describe(value)}")
    return collapse_whitespace(value)


# Value kinds usable alone and as list elements (element_kind).
VALUE_NORMALISERS = {
    "exact": normalise_exact,
    "enum": normalise_enum,
    "date": normalise_date,
    "datetime": normalise_datetime,
    "integer": normalise_integer,
    "aliases": normalise_aliases,
    "whitespace_normalized": normalise_whitespace,
}
