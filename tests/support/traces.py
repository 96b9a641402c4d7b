"""A strict reading of trace text: every line must parse with no NaN or Infinity."""

from __future__ import annotations

import json


def refuse_constant(name: str):
    raise ValueError(f"non-strict JSON constant {name}")


def strict_lines(text: str) -> list[dict]:
    """Every line parsed by a strict JSON parser (no NaN/Infinity), or the test fails."""
    return [json.loads(line, parse_constant=refuse_constant) for line in text.split("\n") if line.strip()]
