"""One registry of tools, used by every transport (HTTP, in-process API, MCP later).

A tool = a frozen pydantic args model (every field described) + a side-effect kind + one
async handler ``handler(ctx, args) -> dict``. Handlers never format transport output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from toolserver.errors import InvalidArguments, UnknownTool

if TYPE_CHECKING:
    from toolserver.run import CallContext

SideEffect = Literal["read_only", "input", "action"]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown arguments and silent coercion are errors."""
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[ToolArgs]
    side_effect: SideEffect
    handler: Callable[["CallContext", Any], Awaitable[dict]]
    url_bearing: bool = False
    needs_session: bool = True

    def schema(self) -> dict:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return {"name": self.name, "description": self.description,
                "side_effect": self.side_effect, "input_schema": schema}

    def parse(self, raw: object) -> ToolArgs:
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InvalidArguments(
                f"{self.name}: arguments must be a JSON object, got {type(raw).__name__}")
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
        else:
            got = err.get("input")
            parts.append(f"argument '{name}': {err['msg']} (got {got!r} of type {type(got).__name__})")
    return f"{tool}: " + "; ".join(parts)


TOOLS: dict[str, Tool] = {}


def tool(name: str, *, args: type[ToolArgs], side_effect: SideEffect, description: str,
         url_bearing: bool = False, needs_session: bool = True):
    def register(handler):
        TOOLS[name] = Tool(name, description.strip(), args, side_effect, handler,
                           url_bearing=url_bearing, needs_session=needs_session)
        return handler
    return register


def get_tool(name: str) -> Tool:
    load_tools()
    try:
        return TOOLS[name]
    except KeyError:
        from toolserver.run import CONTRACT_ORDER
        raise UnknownTool(f"unknown tool {name!r}; available tools: {', '.join(CONTRACT_ORDER)}") from None


def load_tools() -> dict[str, Tool]:
    """Import the tool modules once (each registers its tools)."""
    from toolserver.tools import input, meta, navigate, session, snapshot, tabs  # noqa: F401 (they register)
    return TOOLS
