"""The output contract: one JSON array between ``BENCHMARK_JSON_BEGIN`` and
``BENCHMARK_JSON_END``, no Markdown fence, valid against the pack's JSON Schema (Draft
2020-12 with format checking). Every breach is a named ``ContractError``, never an exception.

Text outside the markers is tolerated (not a contract error), fences in it included. A fence
line between the markers, or on the nearest non-blank line before BEGIN or after END (a fence
around the markers), is a ``markdown_fence`` error: the JSON is still parsed so the report can
show the fields, but the contract fails. Of several markers, the last complete BEGIN...END pair
is parsed (and ``multiple_markers`` fails the contract).

JSON means RFC 8259, not what Python's reader accepts: ``NaN``, ``Infinity`` and
``-Infinity`` are ``invalid_json``, and an object that repeats a key is a ``duplicate_key``
error (the report shows the last value, as the reader keeps it). A ``date-time`` must match
RFC 3339 in full: the checker's pattern ends in ``$``, which also matches before a final
line break.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from sandbox.evaluation.packs import Pack
from sandbox.evaluation.records import KeyCounter, NotJson, json_depth, pointer_part, read_json
from sandbox.evaluation.scoring._cache import derived
from sandbox.evaluation.scoring._describe import short_value
from sandbox.evaluation.scoring._report import ContractError

BEGIN = "BENCHMARK_JSON_BEGIN"
END = "BENCHMARK_JSON_END"
MAX_SCHEMA_ERRORS = 20
MAX_DEPTH = 64  # the deepest schema here is 5 levels; deeper input would only risk recursion limits
MAX_MESSAGE = 300  # characters of one contract error: an agent's value may be megabytes
_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.M)
_FENCE_LINE = re.compile(r"^[ \t]*(```|~~~)[^\n]*$", re.M)
NOT_PARSED = object()


@dataclass
class ParsedOutput:
    data: Any = NOT_PARSED
    errors: list[ContractError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def records(self) -> list[Any]:
        return self.data if isinstance(self.data, list) else []


def inline_local_refs(schema: Any) -> Any:
    """A copy of ``schema`` with every bare local ``{"$ref": "#/..."}`` replaced by its target.
    Same meaning, but validation skips the reference lookups that dominate its cost. A
    recursive reference is left as it is. The copy is bounded: ``load_pack`` refuses a schema
    of more than ``MAX_SCHEMA_NODES`` nodes with its references followed."""

    def resolve(pointer: str) -> Any:
        node = schema
        for part in pointer[2:].split("/"):
            node = node[int(part)] if isinstance(node, list) else node[pointer_part(part)]
        return node

    def walk(node: Any, active: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and len(node) == 1 and ref not in active:
                return walk(resolve(ref), active + (ref,))
            return {k: walk(v, active) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, active) for v in node]
        return node

    return walk(schema, ())


def _strict_format_checker() -> FormatChecker:
    """Draft 2020-12's format checker, with ``date-time`` refusing a trailing line break."""
    checker = FormatChecker(())
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    loose = checker.checkers["date-time"][0]

    @checker.checks("date-time")
    def date_time(instance: object) -> bool:
        if isinstance(instance, str) and "\n" in instance:
            return False  # the RFC 3339 pattern ends in `$`, which matches before a final "\n"
        return bool(loose(instance))

    return checker


FORMAT_CHECKER = _strict_format_checker()


def schema_validator(pack: Pack) -> Draft202012Validator:
    cache = derived(pack)
    if cache.validator is None:
        cache.validator = Draft202012Validator(inline_local_refs(pack.schema), format_checker=FORMAT_CHECKER)
    return cache.validator


def cut(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut in its middle to ``limit`` characters (`` ... `` marks the cut): its start
    says where, its end what is wrong."""
    if len(text) <= limit:
        return text
    head = (limit - 5) * 2 // 3
    return text[:head] + " ... " + text[len(text) - (limit - 5 - head) :]


def _schema_message(error: Any) -> str:
    """The validator's message with the agent's value in it shortened (it embeds the whole
    value, as Python shows it), then cut to ``MAX_MESSAGE``."""
    message = error.message
    whole = repr(error.instance)
    if len(whole) > 90 and whole in message:
        message = message.replace(whole, short_value(error.instance))
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return cut(f"{cut(where, 120)}: {message}")


def _error(parsed: ParsedOutput, code: str, message: str) -> ParsedOutput:
    parsed.errors.append(ContractError(code=code, message=message))
    return parsed


def _fence_encloses(text: str, begin: int) -> bool:
    """Whether a Markdown code block is open at ``begin`` (the BEGIN marker's position): an odd
    number of fence lines before it, the last one opening a block the markers are in. A block
    closed before the markers, or opened after them, is prose, and tolerated (the nearest line
    was looked at: a block's closing fence just before BEGIN failed the contract)."""
    return len(_FENCE.findall(text, 0, begin)) % 2 == 1


def parse_output(text: Any, pack: Pack) -> ParsedOutput:
    parsed = ParsedOutput()
    if not isinstance(text, str) or not text.strip():
        return _error(parsed, "empty_output", "the output is empty")
    begins, ends = text.count(BEGIN), text.count(END)
    if not begins or not ends:
        missing = " and ".join(m for m, n in ((BEGIN, begins), (END, ends)) if not n)
        return _error(parsed, "missing_markers", f"{missing} not found; emit the JSON array between {BEGIN} and {END}")
    stop = text.rindex(END)
    opening = text.rfind(BEGIN, 0, stop)  # the last complete BEGIN...END pair
    if begins > 1 or ends > 1:
        _error(
            parsed,
            "multiple_markers",
            f"{BEGIN} appears {begins} times and {END} {ends} times; "
            f"exactly one pair is expected (the last {BEGIN}...{END} pair was used)",
        )
    if opening < 0:
        return _error(parsed, "markers_out_of_order", f"no {BEGIN} before the last {END}")
    start = opening + len(BEGIN)
    body = text[start:stop]
    fenced = bool(_FENCE.search(body))
    if fenced or _fence_encloses(text, opening):
        _error(parsed, "markdown_fence", "a Markdown code fence wraps the JSON; emit the JSON between the markers bare")
    if fenced:
        body = _FENCE_LINE.sub("", body)
    keys = KeyCounter()
    try:
        data = read_json(body, keys)
    except RecursionError:
        return _error(parsed, "invalid_json", "the JSON is nested too deeply to read")
    except NotJson as exc:
        return _error(parsed, "invalid_json", f"the text between the markers is not JSON: {exc}")
    except json.JSONDecodeError as exc:
        if not fenced:  # position in the whole output, as the reader sees it
            position = start + exc.pos
            line = text.count("\n", 0, position) + 1
            column = position - (text.rfind("\n", 0, position) + 1) + 1
        else:  # the fence lines were emptied, not taken out: the body's lines are still the output's
            line = text.count("\n", 0, start) + exc.lineno
            column = exc.colno + (start - (text.rfind("\n", 0, start) + 1) if exc.lineno == 1 else 0)
        return _error(
            parsed,
            "invalid_json",
            f"the text between the markers is not JSON: {exc.msg} (output line {line}, column {column})",
        )
    if json_depth(data) > MAX_DEPTH:
        return _error(parsed, "invalid_json", f"the JSON is nested deeper than {MAX_DEPTH} levels")
    parsed.data = data
    for where, key in keys.paths(data):
        _error(
            parsed,
            "duplicate_key",
            f"{cut(where, 120)}: key {cut(json.dumps(key), 120)} appears more than once in one object; "
            "give each key once (the report shows the last value)",
        )
    # the first errors alone: every error of a long garbled answer took gigabytes and a minute
    first = itertools.islice(schema_validator(pack).iter_errors(parsed.data), MAX_SCHEMA_ERRORS + 1)
    errors = sorted(first, key=lambda e: ([str(p) for p in e.absolute_path], e.message))
    for error in errors[:MAX_SCHEMA_ERRORS]:
        _error(parsed, "schema_violation", _schema_message(error))
    if len(errors) > MAX_SCHEMA_ERRORS:
        _error(parsed, "schema_violation", f"... and more schema errors (the first {MAX_SCHEMA_ERRORS} are listed)")
    return parsed
