"""The JSON kinds the folder readers expect of a value, and how a message names them. Imports
nothing of the project."""

from __future__ import annotations

from typing import Any

NUMBER = (int, float)
NUMBER_OR_NULL = (int, float, type(None))  # a time not known is null
WHOLE_OR_NULL = (int, type(None))  # a count not known is null
KIND_SAID: dict[Any, str] = {
    str: "a string", int: "a whole number", NUMBER: "a number", NUMBER_OR_NULL: "a number or null",
    WHOLE_OR_NULL: "a whole number or null",
    bool: "true or false", dict: "an object", list: "a list",
}  # fmt: skip


def of_kind(value: Any, kind: Any) -> bool:
    """Whether ``value`` is of ``kind`` as JSON has it: ``true`` is no number."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
