"""Reading values out of records (expected records and agents' output records), and out of a
schema by a ``$ref``'s JSON Pointer; and reading JSON text as RFC 8259 has it (``read_json``),
for agents' output and pack files alike."""

from __future__ import annotations

import json
import math
from collections import Counter
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


class NotJson(ValueError):
    """A token Python's JSON reader accepts but RFC 8259 does not."""


def _refuse_constant(name: str) -> Any:
    raise NotJson(f"{name} is not a JSON value (JSON has no NaN or Infinity); write a finite number or null")


def _read_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):  # RFC 8259 lets a reader bound its numbers: a double's range here
        raise NotJson(f"the number {text[:40]} is beyond a double's range")
    return number


def _read_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # longer than Python's bound on digits (4,300)
        raise NotJson(f"an integer of {len(text.lstrip('-'))} digits is longer than this reader takes") from None


class KeyCounter:
    """An ``object_pairs_hook`` that builds each object as ``json`` does (the last of a repeated
    key wins) and remembers the objects that repeated a key (kept alive, so ids stay unique)."""

    def __init__(self) -> None:
        self.repeated: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        built = dict(pairs)
        if len(built) < len(pairs):
            counts = Counter(key for key, _ in pairs)
            self.repeated[id(built)] = (built, [key for key in built if counts[key] > 1])
        return built

    def paths(self, data: Any, separator: str = "/") -> list[tuple[str, str]]:
        """(path, key) of every repeated key, objects in document order."""
        found: list[tuple[str, str]] = []
        if not self.repeated:
            return found
        stack: list[tuple[Any, str]] = [(data, "")]
        while stack:
            node, where = stack.pop()
            children: list[tuple[Any, Any]] = []
            if isinstance(node, dict):
                if id(node) in self.repeated:
                    found += [(where or "(root)", key) for key in self.repeated[id(node)][1]]
                children = list(node.items())
            elif isinstance(node, list):
                children = list(enumerate(node))
            stack.extend(
                (value, f"{where}{separator}{name}" if where else str(name)) for name, value in reversed(children)
            )
        return found


def read_json(text: str, keys: KeyCounter) -> Any:
    """``text`` read as RFC 8259 JSON, repeated keys noted in ``keys``. Raises ``NotJson`` (NaN,
    Infinity, a number beyond a double, an integer too long to read), ``json.JSONDecodeError``,
    and ``RecursionError`` for nesting too deep for the reader."""
    return json.loads(
        text, parse_constant=_refuse_constant, parse_float=_read_float, parse_int=_read_int, object_pairs_hook=keys
    )


def json_depth(value: Any) -> int:
    """Nesting depth, computed without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest
