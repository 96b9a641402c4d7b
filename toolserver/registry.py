"""Tools and the registry that orders them, used by every transport (HTTP, in-process, MCP).

A tool = a frozen pydantic args model (every field described) + a side-effect kind + what it
does to the page a screenshot shows + one async handler ``handler(ctx, args, response)``, which
records what happened on the response (``toolserver.response``) and never shapes output itself.

The ``tool`` decorator turns a handler into a ``Tool``; each group module lists its tools in
``TOOLS`` and ``toolserver.tools.ALL_TOOLS`` concatenates the groups in contract order. A
``ToolRegistry`` is an object (owned by a server, or built by a test), never a module global.

A tool carries a URL (and so the allow-list applies to it) exactly when its arguments have a
``url`` field: nothing else declares it.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator

from toolserver.errors import InvalidArguments, UnknownTool

SideEffect = Literal["read_only", "input", "action", "destructive"]  # see toolserver.formats
# What the dispatcher resolves before the handler runs: nothing, the run's current session,
# or its current tab (the handler then reads ``ctx.session`` / ``ctx.tab`` and never checks).
Scope = Literal["run", "session", "tab"]
# What the call does to the page, for the pictures taken after calls (toolserver.media): nothing
# (the last picture is taken while it runs, none after it), reads it (likewise, and a picture
# after it, usually a link to the last one), may change it (the last picture is finished before
# it acts), or ends the session (it finishes the last picture itself; none after it).
PageEffect = Literal["none", "reads", "changes", "ends_session"]
Handler = Callable[[Any, Any, Any], Awaitable[None]]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown arguments and silent coercion are errors, with
    two allowances for the converters agent frameworks put between a model and the tools: a
    ``null`` optional argument is an argument not given (strict function calling sends every
    property, ``null`` for the ones the model leaves out), and an integer may come as a string of
    digits or as a number with no fraction, ``300.0``, which JSON Schema counts as an integer
    (``LENIENT_INT``). The trace keeps the arguments exactly as sent."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        optional = {name for name, field in cls.model_fields.items() if not field.is_required()}
        return {key: value for key, value in data.items() if value is not None or key not in optional}


def lenient_int(value: Any) -> Any:
    """``"200"`` -> 200 (decimal digits, an optional sign, spaces around) and ``200.0`` -> 200,
    however large (``1e20``, twenty nines: the argument's bound then says what is allowed);
    anything else as given (``200.5`` stays a float, and is refused)."""
    if isinstance(value, str) and DIGITS.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # more digits than int() reads (4,300): refused as given
            return value
    if isinstance(value, float) and value.is_integer():  # not NaN or ±Infinity
        return int(value)
    return value


DIGITS = re.compile(r"\s*[+-]?[0-9]+\s*")  # ASCII digits: int() also reads "٣" as 3
# On an integer argument, after its bounds: Annotated[int, Field(ge=1), LENIENT_INT] takes "200" and 200.0 as 200.
LENIENT_INT = BeforeValidator(lenient_int)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: type[ToolArgs]
    side_effect: SideEffect
    handler: Handler
    scope: Scope = "tab"
    page_effect: PageEffect = "changes"

    @property
    def url_bearing(self) -> bool:
        return "url" in self.args.model_fields

    def input_schema(self) -> dict:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return schema

    def schema(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "side_effect": self.side_effect,
            "input_schema": self.input_schema(),
        }

    def parse(self, raw: object) -> ToolArgs:
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InvalidArguments(f"{self.name}: arguments must be a JSON object, got {type(raw).__name__}")
        require_strict_json(self.name, raw)
        try:
            return self.args.model_validate(raw)
        except ValidationError as exc:
            raise InvalidArguments(describe_validation_error(self.name, exc)) from exc


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown argument '{name}'")
        elif err["type"] == "missing":
            parts.append(f"missing required argument '{name}'")
        elif err["type"] == "value_error":  # a rule's own message, which names what was given
            said = str(err["ctx"]["error"])
            parts.append(f"argument '{name}': {said}" if err["loc"] else said)  # no loc: the whole arguments' rule
        else:
            got = err.get("input")
            parts.append(f"argument '{name}': {err['msg']} (got {got!r} of type {type(got).__name__})")
    return f"{tool}: " + "; ".join(parts)


def tool(
    name: str,
    *,
    args: type[ToolArgs],
    side_effect: SideEffect,
    description: str,
    title: str,
    scope: Scope = "tab",
    page_effect: PageEffect = "changes",
) -> Callable[[Handler], Tool]:
    """Declare a tool: ``@tool("browser_x", args=XArgs, ...) async def browser_x(ctx, args, response)``."""

    def declare(handler: Handler) -> Tool:
        return Tool(name, title, description.strip(), args, side_effect, handler, scope, page_effect)

    return declare


class ToolRegistry:
    """An ordered, immutable set of tools (the order is the order ``list_tools`` shows)."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"tool {item.name!r} is declared twice")
            self._tools[item.name] = item

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def find(self, name: object) -> Tool | None:
        return self._tools.get(name) if isinstance(name, str) else None

    def get(self, name: object) -> Tool:
        found = self._tools.get(name) if isinstance(name, str) else None
        if found is None:
            raise UnknownTool(f"unknown tool {name!r}; available tools: {', '.join(self._tools)}")
        return found

    def schemas(self) -> list[dict]:
        return [item.schema() for item in self]


def traced_args(raw_args: Any) -> tuple[Any, list[str]]:
    """The arguments as a call line keeps them: as sent, or as shortened text when they contain
    themselves (no JSON line can), with what ``escaped`` then says."""
    if isinstance(raw_args, dict) and circular(raw_args) is not None:
        return reprlib.repr(raw_args), ["args (circular: kept as shortened text)"]
    return raw_args, []


def require_strict_json(name: str, raw_args: Any) -> None:
    """Arguments a strict JSON parser could read back: no NaN/Infinity, no absurd nesting. A number
    beyond a double's range (``1e400``) is read as Infinity by every transport's JSON reader, and
    a client's writer may send either for the same value, so both are this one argument error."""
    try:
        json.dumps(raw_args, allow_nan=False, default=str)
    except ValueError:
        if (at := circular(raw_args)) is not None:  # from the Python API: JSON has no such value
            said = f"argument '{at}' contains itself (a circular reference, which JSON cannot carry)"
            raise InvalidArguments(f"{name}: {said}; pass plain JSON values") from None
        if (at := long_integer(raw_args)) is not None:  # from the Python API: every JSON reader refuses it
            limit = sys.get_int_max_str_digits()
            said = f"argument '{at}' is an integer longer than the {limit} digits this server reads; pass a shorter one"
            raise InvalidArguments(f"{name}: {said}") from None
        raise InvalidArguments(
            f"{name}: argument '{non_finite(raw_args)}' is not a finite number (NaN and Infinity are not "
            "JSON numbers, and a number beyond a double's range, ±1.8e308, such as 1e400, reads as "
            "Infinity); pass a finite number"
        ) from None
    except RecursionError:
        raise InvalidArguments(f"{name}: the arguments are nested too deeply; pass a flat JSON object") from None


def non_finite(value: Any) -> str:
    """Where the first NaN or ±Infinity in ``value`` is (``amount``, ``a.0.b``)."""
    return find(value, lambda item: isinstance(item, float) and not math.isfinite(item)) or "(arguments)"


def long_integer(value: Any) -> str | None:
    """Where the first integer too long to write in decimal is (``sys.get_int_max_str_digits()``)."""
    return find(value, lambda item: type(item) is int and item.bit_length() > 14_000 and not writable(item))


def writable(number: int) -> bool:
    try:
        str(number)
    except ValueError:
        return False
    return True


def find(value: Any, test: Callable[[Any], bool]) -> str | None:
    """Where the first item in ``value`` that passes ``test`` is, walked without recursion; a
    list or object met again (the same one twice, or one inside itself) is walked once."""
    left: deque[tuple[str, Any]] = deque([("", value)])
    seen: set[int] = set()
    while left:
        at, item = left.popleft()
        if test(item):
            return at or "(arguments)"
        if isinstance(item, (dict, list, tuple)) and id(item) not in seen:
            seen.add(id(item))
            left += [(f"{at}.{key}" if at else str(key), child) for key, child in children_of(item)]
    return None


def children_of(item: dict | list | tuple) -> Iterable[tuple[Any, Any]]:
    return item.items() if isinstance(item, dict) else enumerate(item)


def circular(value: Any) -> str | None:
    """Where the first list or object inside itself is (``amount``: the arguments' ``amount`` holds
    a value that holds ``amount`` again), walked depth first, without recursion; None: no cycle."""
    on_path: set[int] = set()  # the ids of the containers from the top down to the one walked
    done: set[int] = set()  # containers walked whole (the same one met again is no cycle)
    stack: list[tuple[str, Any, bool]] = [("", value, False)]
    while stack:
        at, item, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            done.add(id(item))
            continue
        if not isinstance(item, (dict, list, tuple)) or id(item) in done:
            continue
        if id(item) in on_path:
            return at or "(arguments)"
        on_path.add(id(item))
        stack.append((at, item, True))
        children = [(f"{at}.{key}" if at else str(key), child) for key, child in children_of(item)]
        stack += [(where, child, False) for where, child in reversed(children)]
    return None
