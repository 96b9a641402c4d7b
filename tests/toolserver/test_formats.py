"""Tool definitions for every agent stack come from the one contract: ``sandbox tools`` prints
them, and each format is accepted by its stack's own types (MCP ``Tool``, JSON Schema)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import mcp_types
import pytest

from toolserver.contract.names import TOOL_NAMES
from toolserver.formats import FORMATS, tool_definitions
from toolserver.tools import default_registry

SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
SCHEMAS = default_registry().schemas()


def sandbox_tools(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SANDBOX_CLI, "tools", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_command_prints_each_format_from_the_contract(fmt):
    done = sandbox_tools("--format", fmt, "--pack", "bid-intake")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == tool_definitions(fmt, SCHEMAS)


def test_each_format_has_the_contract_in_order_with_the_same_schemas():
    mcp = [mcp_types.Tool.model_validate(t) for t in tool_definitions("mcp", SCHEMAS)]
    openai = tool_definitions("openai", SCHEMAS)
    anthropic = tool_definitions("anthropic", SCHEMAS)
    assert (
        [t.name for t in mcp]
        == [t["function"]["name"] for t in openai]
        == [t["name"] for t in anthropic]
        == list(TOOL_NAMES)
    )
    for source, m, o, a in zip(SCHEMAS, mcp, openai, anthropic, strict=True):
        jsonschema.Draft202012Validator.check_schema(source["input_schema"])
        assert m.input_schema == o["function"]["parameters"] == a["input_schema"] == source["input_schema"]
        assert m.title == source["title"] and m.annotations.open_world_hint is False
        assert set(a) == {"name", "description", "input_schema"}


def test_an_unknown_format_or_pack_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown tool format 'xml'; use one of mcp, openai"):
        tool_definitions("xml", SCHEMAS)
    done = sandbox_tools("--pack", "no-such-pack")
    assert done.returncode == 2 and "unknown pack 'no-such-pack'; known packs:" in done.stderr


def test_click_and_type_publish_target_beside_ref():
    for name in ("browser_click", "browser_type"):
        schema = next(t for t in SCHEMAS if t["name"] == name)["input_schema"]
        assert {"ref", "target"} <= set(schema["properties"]) and schema["additionalProperties"] is False
        assert "ref" not in schema.get("required", [])
        validator = jsonschema.Draft202012Validator(schema)
        extra = {"text": "x"} if name == "browser_type" else {}
        assert validator.is_valid({"target": "e3", **extra}) and validator.is_valid({"ref": "e3", **extra})
        tool = default_registry().get(name)
        assert tool.parse({"target": "e3", **extra}).ref == "e3"
        for bad, message in (
            ({**extra}, "missing required argument 'ref' (or its alias 'target')"),
            ({"ref": "e1", "target": "e2", **extra}, "not both"),
        ):
            with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
                tool.parse(bad)
