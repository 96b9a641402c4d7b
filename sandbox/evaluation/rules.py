"""Field rules: one small function per rule kind, registered by kind.

A rule function gets the rule, the expected value and the value found in the output record,
and returns a ``FieldCheck``. Scalar kinds compare canonical forms from ``normalise``; the
list kinds apply an element kind to each element.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.evaluation.normalise import VALUE_NORMALISERS, NotComparable, describe
from sandbox.evaluation.records import MISSING, record_value


@dataclass(frozen=True)
class FieldCheck:
    correct: bool
    detail: str | None = None


RuleFunction = Callable[[Any, Any, Any], FieldCheck]
RULE_KINDS: dict[str, RuleFunction] = {}


def rule_kind(name: str) -> Callable[[RuleFunction], RuleFunction]:
    def register(function: RuleFunction) -> RuleFunction:
        RULE_KINDS[name] = function
        return function

    return register


def _options(rule: Any) -> dict[str, Any]:
    return {"enum_values": getattr(rule, "enum_values", ()), "aliases": getattr(rule, "aliases", {})}


def _element_options(rule: Any) -> dict[str, Any]:
    return {"enum_values": rule.element_enum_values or (), "aliases": rule.element_aliases or {}}


def _compare(kind: str, expected: Any, got: Any, options: dict[str, Any]) -> FieldCheck:
    normalise = VALUE_NORMALISERS[kind]
    want = normalise(expected, **options)  # a bad expected value is a pack error, raised here
    try:
        have = normalise(got, **options)
    except NotComparable as exc:
        return FieldCheck(False, str(exc))
    if have == want:
        return FieldCheck(True)
    if kind == "exact" and describe(expected) != describe(got):
        return FieldCheck(False, f"type differs: expected {describe(expected)}, got {describe(got)}")
    return FieldCheck(False, "value differs")


def _scalar_kind(kind: str) -> RuleFunction:
    def check(rule: Any, expected: Any, got: Any) -> FieldCheck:
        return _compare(kind, expected, got, _options(rule))

    check.__name__ = f"check_{kind}"
    check.__doc__ = f"Rule kind {kind!r}: canonical forms (see _normalise.normalise_{kind}) must be equal."
    return check


for _kind in ("exact", "enum", "date", "datetime", "integer", "aliases", "whitespace_normalized"):
    rule_kind(_kind)(_scalar_kind(_kind))


def _element_keys(rule: Any, values: list[Any]) -> list[Any]:
    normalise = VALUE_NORMALISERS[rule.element_kind]
    return [normalise(v, **_element_options(rule)) for v in values]


def _as_list(got: Any) -> list[Any] | FieldCheck:
    if not isinstance(got, list):
        return FieldCheck(False, f"expected an array, got {describe(got)}")
    return got


@rule_kind("ordered_list")
def check_ordered_list(rule: Any, expected: Any, got: Any) -> FieldCheck:
    """Same length, and element i equals expected element i under ``element_kind``."""
    items = _as_list(got)
    if isinstance(items, FieldCheck):
        return items
    want = _element_keys(rule, expected)
    if len(items) != len(want):
        return FieldCheck(False, f"expected {len(want)} elements, got {len(items)}")
    have = []
    for index, item in enumerate(items):
        try:
            have.append(_element_keys(rule, [item])[0])
        except NotComparable as exc:
            return FieldCheck(False, f"element {index}: {exc}")
    if have == want:
        return FieldCheck(True)
    if Counter(map(repr, have)) == Counter(map(repr, want)):
        return FieldCheck(False, "same elements in a different order")
    first = next(i for i, (h, w) in enumerate(zip(have, want, strict=False)) if h != w)
    return FieldCheck(False, f"element {first} differs")


@rule_kind("unordered_set")
def check_unordered_set(rule: Any, expected: Any, got: Any) -> FieldCheck:
    """The same elements under ``element_kind`` in any order; duplicates are not collapsed."""
    items = _as_list(got)
    if isinstance(items, FieldCheck):
        return items
    want = Counter(_element_keys(rule, expected))
    have: Counter = Counter()
    for index, item in enumerate(items):
        try:
            have[_element_keys(rule, [item])[0]] += 1
        except NotComparable as exc:
            return FieldCheck(False, f"element {index}: {exc}")
    if have == want:
        return FieldCheck(True)
    missing = sum((want - have).values())
    extra = sum((have - want).values())
    return FieldCheck(False, f"{missing} expected element(s) missing, {extra} unexpected")


def check_field(rule: Any, expected_record: dict, record: dict | None) -> tuple[Any, Any, FieldCheck]:
    """(expected value, got value or MISSING, check) for one rule."""
    expected = record_value(expected_record, rule.name)
    got = MISSING if record is None else record_value(record, rule.name)
    if got is MISSING:
        return expected, got, FieldCheck(False, "field missing")
    return expected, got, RULE_KINDS[rule.kind](rule, expected, got)


def expected_problem(rule: Any, expected_record: dict) -> str | None:
    """Why the expected record's value cannot be scored by ``rule`` (None when it can)."""
    if rule.kind not in RULE_KINDS:
        return f"no scoring function for rule kind {rule.kind!r}"
    value = record_value(expected_record, rule.name)
    if value is MISSING:
        return "the expected record has no value for this field rule"
    try:
        if rule.kind in ("ordered_list", "unordered_set"):
            if not isinstance(value, list):
                return f"expected value must be an array for {rule.kind}, got {describe(value)}"
            _element_keys(rule, value)
        else:
            VALUE_NORMALISERS[rule.kind](value, **_options(rule))
    except NotComparable as exc:
        return f"expected value does not satisfy its own rule: {exc}"
    return None
