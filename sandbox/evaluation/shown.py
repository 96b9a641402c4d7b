"""Text from agents and pages made fit to show people, on a terminal or in a page: the characters
a terminal acts on (ANSI escapes, a bell, a carriage return that writes over a line: C0 and C1
controls) and those that reorder what follows them on the screen (bidirectional overrides and
isolates, so ``got "abc"`` cannot be made to read as another value) are written as their escapes
(``\\x1b``, ``\\u202e``). Pure module."""

from __future__ import annotations

import json
import re
from typing import Any

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")  # line breaks and tabs kept
INLINE_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}]")  # a table's cell: on one line
JSON_UNESCAPED = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}]")  # what json.dumps leaves raw (it escapes C0)


def _escape(found: re.Match[str]) -> str:
    return found.group().encode("unicode_escape").decode()


def shown(text: str, *, inline: bool = False) -> str:
    """``text`` with its control and bidirectional characters written as escapes; ``inline``: its
    line breaks and tabs too (a cell of a table)."""
    return (INLINE_CONTROLS if inline else CONTROLS).sub(_escape, text)


def json_shown(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``, which escapes C0 controls only) with the
    rest of those characters as JSON escapes (``\\u009b``, ``\\u202e``): the same JSON, safe to print."""
    return JSON_UNESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def short_json(value: Any, limit: int = 120) -> str:
    """``value`` as JSON for a message, cut to ``limit`` characters (``...`` marks the cut): an
    agent's megabyte argument does not make a megabyte report."""
    return _cut(json.dumps(value, default=str), limit)


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters (``...`` marks the cut)."""
    return _cut(repr(value), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
