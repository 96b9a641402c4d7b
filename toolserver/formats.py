"""Tool definitions for every agent stack, from the one contract ``list_tools`` publishes.

    tool_definitions("mcp", run.tools())        # MCP ``Tool`` objects (wire shape, camelCase)
    tool_definitions("openai", schemas)         # OpenAI function tools
    tool_definitions("openai-strict", schemas)  # the same under OpenAI's strict rules (strict: true)
    tool_definitions("anthropic", schemas)      # Anthropic Messages ``tools`` (``input_schema``)
    tool_definitions("json-schema", schemas)    # name, title, description, side effect, schema

Every format is built from the same dicts (``Tool.schema()``: the pydantic models' JSON
Schemas), so the MCP transport, ``sandbox tools`` and the model agents never drift apart.
Pure data: imports nothing from the tool server, no SDK.
"""

from __future__ import annotations

from collections.abc import Callable

FORMATS = ("mcp", "openai", "openai-strict", "anthropic", "json-schema")

# MCP tool annotations derived from a tool's side-effect kind. ``input`` tools (click, type)
# may submit a form, a state change the sandbox records, so they are marked destructive;
# ``action`` tools open or move pages or the view (additive), ``destructive`` ones close sessions
# or tabs. Only ``read_only`` tools (a snapshot, the tool list) are idempotent: a client may retry
# a tool it is told is idempotent, or read-only, by itself, and every call counts in the trace.
_ANNOTATIONS = {
    "read_only": {"readOnlyHint": True, "idempotentHint": True},
    "input": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
    "action": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
    "destructive": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
}


def mcp_annotations(tool: dict) -> dict:
    # openWorldHint is false for every tool: the sandbox never reaches the open web.
    return {"title": tool["title"], **_ANNOTATIONS[tool["side_effect"]], "openWorldHint": False}


def to_mcp(tool: dict) -> dict:
    return {
        "name": tool["name"],
        "title": tool["title"],
        "description": tool["description"],
        "inputSchema": open_schema(with_nullable(tool["input_schema"])),
        "annotations": mcp_annotations(tool),
    }


def open_schema(schema: dict) -> dict:
    """The schema without its top-level ``"additionalProperties": false``: google-genai's MCP tools
    (a ``ClientSession`` given to ``generate_content``) read that keyword as a schema and fail on
    every tool (``'bool' object has no attribute 'items'``). The server still refuses an argument
    it does not know; strict converters (OpenAI's) put the keyword back themselves."""
    return {key: value for key, value in schema.items() if key != "additionalProperties"}


def with_nullable(schema: dict) -> dict:
    """The schema with ``"nullable": true`` beside each property that is ``anyOf [T, null]``
    (OpenAPI's word for it): smolagents' MCP adapter reads ``anyOf`` as a required string unless it
    sees ``nullable``, and then cannot leave an optional argument out. Beside it goes ``T``'s
    ``type`` (Ajv, the JavaScript validator, refuses to compile a ``nullable`` without a ``type``,
    and reads ``nullable`` as allowing null); a type list there breaks mcp-use's converter."""
    properties = {name: with_nullable_said(prop) for name, prop in schema.get("properties", {}).items()}
    return {**schema, "properties": properties} if "properties" in schema else schema


def with_nullable_said(prop: dict) -> dict:
    """A property ``anyOf [T, null]`` with ``"nullable": true`` and ``T``'s type beside it (``with_nullable``)."""
    members = prop.get("anyOf", ())
    if {"type": "null"} not in members:
        return prop
    types = [member.get("type") for member in members if member != {"type": "null"}]
    if len(types) != 1 or not isinstance(types[0], str):  # no one type to say (a type list included)
        return prop
    return {**prop, "type": types[0], "nullable": True}


def to_openai(tool: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"]},
    }


def to_openai_strict(tool: dict) -> dict:
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": strict_schema(tool["input_schema"]),
            "strict": True,
        },
    }


def strict_schema(schema: dict) -> dict:
    """A JSON Schema under OpenAI's strict function-calling rules: every object closed
    (``additionalProperties: false``) with every property required, no ``default``. A property
    that was optional with no default (or a ``null`` one) becomes nullable, and the tools take
    ``null`` as "not given"; one with a default of its own (``clear_cookies: false``) keeps its
    plain type, so a model sends a value of that type (a gate on exact arguments wants ``false``,
    not ``null``)."""

    def walk(node: object) -> object:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items() if key not in ("default", "properties", "required")}
        if "properties" in node:
            required = set(node.get("required", ()))
            out["properties"] = {
                name: walk(prop) if name in required or has_default(prop) else or_null(prop_of(walk(prop)))
                for name, prop in node["properties"].items()
            }
            out["required"] = list(node["properties"])
            out["additionalProperties"] = False
        return out

    return walk(schema)  # type: ignore[return-value]


def has_default(prop: object) -> bool:
    """Whether a property has a default other than ``null``."""
    return isinstance(prop, dict) and prop.get("default") is not None


def prop_of(node: object) -> dict:
    if not isinstance(node, dict):
        raise ValueError(f"a property's schema must be an object, not {node!r}")
    return node


def or_null(prop: dict) -> dict:
    """``prop`` or null (``anyOf [prop, null]``), its title and description kept outside."""
    if {"type": "null"} in prop.get("anyOf", ()) or prop.get("type") == "null":
        return prop
    labels = {key: prop[key] for key in ("title", "description") if key in prop}
    inner = {key: value for key, value in prop.items() if key not in labels}
    return {"anyOf": [inner, {"type": "null"}], **labels}


def to_anthropic(tool: dict) -> dict:
    return {"name": tool["name"], "description": tool["description"], "input_schema": tool["input_schema"]}


def to_json_schema(tool: dict) -> dict:
    return dict(tool)


_CONVERTERS: dict[str, Callable[[dict], dict]] = {
    "mcp": to_mcp,
    "openai": to_openai,
    "openai-strict": to_openai_strict,
    "anthropic": to_anthropic,
    "json-schema": to_json_schema,
}


def tool_definitions(fmt: str, schemas: list[dict]) -> list[dict]:
    """The tools (as ``list_tools`` gives them), in contract order, in format ``fmt``."""
    convert = _CONVERTERS.get(fmt)
    if convert is None:
        raise ValueError(f"unknown tool format {fmt!r}; use one of {', '.join(FORMATS)}")
    return [convert(tool) for tool in schemas]
