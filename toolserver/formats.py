"""Tool definitions for every agent stack, from the one contract ``list_tools`` publishes.

    tool_definitions("mcp", run.tools())        # MCP ``Tool`` objects (wire shape, camelCase)
    tool_definitions("openai", schemas)         # OpenAI function tools
    tool_definitions("anthropic", schemas)      # Anthropic Messages ``tools`` (``input_schema``)
    tool_definitions("json-schema", schemas)    # name, title, description, side effect, schema

Every format is built from the same dicts (``Tool.schema()``: the pydantic models' JSON
Schemas), so the MCP transport, ``sandbox tools`` and the model agents never drift apart.
Pure data: imports nothing from the tool server, no SDK.
"""

from __future__ import annotations

from collections.abc import Callable

FORMATS = ("mcp", "openai", "anthropic", "json-schema")

# MCP tool annotations derived from a tool's side-effect kind. ``input`` tools (click, type)
# may submit a form, a state change the sandbox records, so they are marked destructive;
# ``action`` tools open or move pages (additive), ``destructive`` ones close sessions or tabs.
_ANNOTATIONS = {
    "read_only": {"readOnlyHint": True, "idempotentHint": True},
    "input": {"readOnlyHint": False, "destructiveHint": True},
    "action": {"readOnlyHint": False, "destructiveHint": False},
    "destructive": {"readOnlyHint": False, "destructiveHint": True},
}


def mcp_annotations(tool: dict) -> dict:
    # openWorldHint is false for every tool: the sandbox never reaches the open web.
    return {"title": tool["title"], **_ANNOTATIONS[tool["side_effect"]], "openWorldHint": False}


def to_mcp(tool: dict) -> dict:
    return {
        "name": tool["name"],
        "title": tool["title"],
        "description": tool["description"],
        "inputSchema": tool["input_schema"],
        "annotations": mcp_annotations(tool),
    }


def to_openai(tool: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"]},
    }


def to_anthropic(tool: dict) -> dict:
    return {"name": tool["name"], "description": tool["description"], "input_schema": tool["input_schema"]}


def to_json_schema(tool: dict) -> dict:
    return dict(tool)


_CONVERTERS: dict[str, Callable[[dict], dict]] = {
    "mcp": to_mcp,
    "openai": to_openai,
    "anthropic": to_anthropic,
    "json-schema": to_json_schema,
}


def tool_definitions(fmt: str, schemas: list[dict]) -> list[dict]:
    """The tools (as ``list_tools`` gives them), in contract order, in format ``fmt``."""
    convert = _CONVERTERS.get(fmt)
    if convert is None:
        raise ValueError(f"unknown tool format {fmt!r}; use one of {', '.join(FORMATS)}")
    return [convert(tool) for tool in schemas]
