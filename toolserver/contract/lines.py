"""How a trace record becomes one line of strict JSON in valid UTF-8 (``encode_line``): what
JSON cannot carry (a lone surrogate, NaN, an integer past 4,300 digits) is escaped and listed in
the line's ``escaped`` field (``strict_json``), and the characters JSONL readers end a line at are
written as escapes (``escape_line_breaks``). Pure module.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from decimal import Decimal
from typing import Any

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def strict_json(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """A copy of ``value`` that strict JSON in UTF-8 can carry, and the paths it had to change:
    lone surrogates become the literal text ``\\udXXX``, NaN/Infinity their names as strings."""
    changed: list[str] = []

    def fix(item: Any, where: str) -> Any:
        if isinstance(item, str):
            try:
                item.encode("utf-8")  # strict UTF-8 refuses exactly the lone surrogates (a search took 10x as long)
                return item
            except UnicodeEncodeError:
                pass
            changed.append(where or "(value)")
            return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", item)
        if isinstance(item, float) and not math.isfinite(item):
            changed.append(where or "(value)")
            return "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
        if type(item) is int and item.bit_length() > 14_000:  # maybe past int's 4,300 decimal digits
            try:
                str(item)
            except ValueError:  # its digits, as a string (Decimal's str has no digit limit)
                changed.append(where or "(value)")
                return str(Decimal(item))
        if isinstance(item, dict):
            out = {}
            for key, sub in item.items():
                key = fix(str(key), f"{where}(key)")
                out[key] = fix(sub, f"{where}.{key}" if where else key)
            return out
        if isinstance(item, (list, tuple)):
            return [fix(v, f"{where}[{i}]") for i, v in enumerate(item)]
        return item

    return fix(value, path), changed


# Characters that ``str.splitlines`` (and many JSONL readers) treat as line ends, which JSON
# may carry raw inside strings: always written as escapes, so one line is one record.
_LINE_BREAKS = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def escape_line_breaks(line: str) -> str:
    """``line`` with ``_LINE_BREAKS`` written as escapes. (``str.translate`` did it in 1.5 ms on a
    10 KB snapshot that was not all ASCII, every such call; a search finds none in microseconds.)"""
    if line.isascii():
        return line
    for char, escape in _LINE_BREAKS:
        if char in line:
            line = line.replace(char, escape)
    return line


def encode_line(data: dict[str, Any]) -> str:
    """One strict-JSON line; what JSON cannot carry is escaped and listed in ``escaped``."""
    try:
        line = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
        line.encode("utf-8")
        return escape_line_breaks(line)
    except (ValueError, UnicodeEncodeError):
        pass
    except RecursionError:  # arguments nested too deep to walk: keep their text, say so
        data = {**data, "args": reprlib.repr(data.get("args")), "escaped": ["args (too deep: kept as shortened text)"]}
    fixed, changed = strict_json(data)
    if changed:
        fixed["escaped"] = [*(fixed.get("escaped") or ()), *changed]
    return escape_line_breaks(json.dumps(fixed, ensure_ascii=False, allow_nan=False, default=str))
