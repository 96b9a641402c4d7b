"""Tool definitions for every agent stack come from the one contract: ``sandbox tools`` prints
them, and each format is accepted by its stack's own types (MCP ``Tool``, JSON Schema)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import mcp_types
import pytest

from sandbox.paths import PACKS_DIR
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
        assert o["function"]["parameters"] == a["input_schema"] == source["input_schema"]
        # MCP adds only nullable: true and its type list, and leaves out the top-level additionalProperties: false that
        # google-genai's MCP tools cannot read (every tool failed: 'bool' object has no attribute 'items')
        assert "additionalProperties" not in m.input_schema and source["input_schema"]["additionalProperties"] is False
        closed = {**without_nullable(m.input_schema), "additionalProperties": False}
        assert closed == source["input_schema"]
        for name, prop in m.input_schema.get("properties", {}).items():
            assert prop.get("nullable", False) == ({"type": "null"} in prop.get("anyOf", ())), (source["name"], name)
            if prop.get("nullable"):  # Ajv compiles no nullable without a type
                assert [prop["type"], "null"] == [member["type"] for member in prop["anyOf"]], (source["name"], name)
        assert m.title == source["title"] and m.annotations.open_world_hint is False
        assert set(a) == {"name", "description", "input_schema"}


def without_nullable(schema: dict) -> dict:
    properties = schema.get("properties", {})
    added = ("nullable", "type")  # type: beside nullable, the anyOf's types
    cleaned = {
        name: {k: v for k, v in prop.items() if not (k in added and prop.get("nullable"))}
        for name, prop in properties.items()
    }
    return {**schema, "properties": cleaned} if properties else schema


AJV_CHECK = """
const Ajv = require("ajv");
const tools = JSON.parse(require("fs").readFileSync(0, "utf8"));
const said = {};
for (const tool of tools) {
  try {
    const valid = new Ajv().compile(tool.inputSchema);
    const nulls = valid({max_chars: null, ref: null, tab: null});
    said[tool.name] = {none: valid({}), nulls: nulls, small: valid({max_chars: 5})};
  } catch (error) { said[tool.name] = {error: error.message}; }
}
console.log(JSON.stringify(said));
"""


def test_ajv_compiles_every_mcp_tool_schema():
    """Ajv (JavaScript's JSON Schema validator, which MCP gateways and clients compile tool schemas
    with; the copy the MCP Inspector installs in node/) refused 7 of the 11 tools: '"nullable"
    cannot be used without "type"'."""
    node_dir = Path(__file__).resolve().parents[2] / "node"
    assert (node_dir / "node_modules" / "ajv").is_dir(), "run `make node` (npm ci in node/)"
    tools = json.dumps(tool_definitions("mcp", SCHEMAS))
    done = subprocess.run(
        ["node", "-e", AJV_CHECK], input=tools, capture_output=True, text=True, cwd=node_dir, timeout=60
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert [name for name, answer in said.items() if "error" in answer] == [], said
    assert said["browser_snapshot"] == {"none": True, "nulls": True, "small": False}  # null is "not given"
    assert said["browser_navigate"]["none"] is False  # url is required


def test_an_unknown_format_or_pack_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown tool format 'xml'; use one of mcp, openai"):
        tool_definitions("xml", SCHEMAS)
    done = sandbox_tools("--pack", "no-such-pack")
    assert done.returncode == 2 and "unknown pack 'no-such-pack'; known packs:" in done.stderr
    assert sandbox_tools("--pack", str(PACKS_DIR / "controlled-form")).returncode == 0  # a folder path is a pack too
    broken = sandbox_tools("--pack", str(PACKS_DIR))  # a folder that is not a pack
    assert broken.returncode == 2 and "card.json" in broken.stderr, broken.stderr


def test_click_and_type_publish_target_beside_ref_both_nullable():
    for name in ("browser_click", "browser_type"):
        schema = next(t for t in SCHEMAS if t["name"] == name)["input_schema"]
        assert {"ref", "target"} <= set(schema["properties"]) and schema["additionalProperties"] is False
        assert "ref" not in schema.get("required", [])
        for key in ("ref", "target"):  # the default (null) matches the type: a filled-in default is valid
            assert schema["properties"][key]["anyOf"] == [{"type": "string"}, {"type": "null"}]
            assert schema["properties"][key]["default"] is None
        validator = jsonschema.Draft202012Validator(schema)
        extra = {"text": "x"} if name == "browser_type" else {}
        tool = default_registry().get(name)
        # As converters send them: one of the two, the other null or empty, or every default filled in.
        for sent in (
            {"target": "e3"},
            {"ref": "e3"},
            {"ref": "e3", "target": None},
            {"ref": None, "target": "e3"},
            {"ref": "", "target": "e3"},
            {"ref": "e3", "target": "e3"},
            {"ref": "e3", "target": None, "element": None, **({"submit": False} if extra else {})},  # defaults
        ):
            assert validator.is_valid({**sent, **extra}), sent
            assert tool.parse({**sent, **extra}).element_ref == "e3", sent
        for bad, message in (
            ({**extra}, "missing required argument 'ref' (or its alias 'target')"),
            ({"ref": None, "target": "", **extra}, "missing required argument 'ref' (or its alias 'target')"),
            ({"ref": "e1", "target": "e2", **extra}, "'ref' ('e1') and its alias 'target' ('e2') name different"),
            ({"ref": 7, **extra}, "argument 'ref': Input should be a valid string (got 7 of type int)"),
        ):
            with pytest.raises(Exception, match=re.escape(message)):
                tool.parse(bad)


# OpenAI's strict function calling: the keywords it takes, and its rules on objects.
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "enum", "const", "anyOf", "items", "$ref",
    "$defs", "description", "title", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}  # fmt: skip


def strict_violations(node: object, where: str = "") -> list[str]:
    if isinstance(node, list):
        return [v for i, item in enumerate(node) for v in strict_violations(item, f"{where}[{i}]")]
    if not isinstance(node, dict):
        return []
    found = [f"{where}: keyword {key!r}" for key in node if key not in STRICT_KEYWORDS]
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            found.append(f"{where}: additionalProperties is not false")
        if sorted(node.get("required", [])) != sorted(node.get("properties", {})):
            found.append(f"{where}: required {node.get('required')} is not every property")
    for key, value in node.items():
        if key == "properties":
            found += [v for name, prop in value.items() for v in strict_violations(prop, f"{where}.{name}")]
        elif key in ("anyOf", "items", "$defs"):
            found += strict_violations(value, f"{where}.{key}")
    return found


def test_the_openai_definitions_fail_the_strict_rules_and_the_strict_ones_pass():
    loose = tool_definitions("openai", SCHEMAS)
    assert sum(bool(strict_violations(t["function"]["parameters"])) for t in loose) >= 7  # the checker finds them
    for definition, source in zip(tool_definitions("openai-strict", SCHEMAS), SCHEMAS, strict=True):
        function = definition["function"]
        assert function["strict"] is True and function["name"] == source["name"]
        assert strict_violations(function["parameters"]) == [], function["name"]
        jsonschema.Draft202012Validator.check_schema(function["parameters"])


def test_what_a_strict_model_sends_the_tools_take_as_the_loose_call():
    """Under strict rules a model sends every property, null for the ones it leaves out: the
    strict schema accepts that, and the tool reads it as the call without them."""
    registry = default_registry()
    minimal = {
        "browser_start_session": {"provider": "kernel", "site_key": "k", "url": "https://example.gov/"},
        "browser_click": {"ref": "e3"},
        "browser_type": {"ref": "e3", "text": "x"},
        "browser_scroll": {"direction": "down"},
        "browser_navigate": {"url": "https://example.gov/"},
        "browser_open_tab": {"url": "https://example.gov/"},
        "browser_switch_tab": {"tab": "t1"},
    }
    for definition, source in zip(tool_definitions("openai-strict", SCHEMAS), SCHEMAS, strict=True):
        name, schema = definition["function"]["name"], definition["function"]["parameters"]
        defaults = {key: prop.get("default") for key, prop in source["input_schema"].get("properties", {}).items()}
        sent = defaults | minimal.get(name, {})  # null, or the property's own default (clear_cookies: false)
        assert jsonschema.Draft202012Validator(schema).is_valid(sent), (name, sent)
        tool = registry.get(name)
        assert tool.parse(sent) == tool.parse(minimal.get(name, {})), name


def test_integer_arguments_may_come_as_digit_strings_or_whole_numbers_and_nothing_else_is_coerced():
    snapshot, scroll = default_registry().get("browser_snapshot"), default_registry().get("browser_scroll")
    assert (
        snapshot.parse({"max_chars": "300"}).max_chars == 300
        and snapshot.parse({"max_chars": " 300 "}).max_chars == 300
    )
    assert scroll.parse({"direction": "down", "amount": "40"}).amount == 40
    # JSON Schema's "integer" is any number with no fraction: what the schemas publish is taken.
    schema = next(s for s in default_registry().schemas() if s["name"] == "browser_snapshot")["input_schema"]
    for whole in (300.0, 1e3):
        assert jsonschema.Draft202012Validator(schema).is_valid({"max_chars": whole})
        assert snapshot.parse({"max_chars": whole}).max_chars == int(whole)
    for bad in ("2e2", "300.0", "abc", "", 300.5, True, "٣٠٠", float("inf")):  # ASCII digits only: int() reads "٣٠٠"
        with pytest.raises(Exception, match="argument 'max_chars'"):
            snapshot.parse({"max_chars": bad})
    assert snapshot.parse({"max_chars": 1e300}).max_chars == int(1e300)  # an integer, as JSON Schema says
    with pytest.raises(Exception, match="greater than or equal to 200"):
        snapshot.parse({"max_chars": "5"})
    with pytest.raises(Exception, match="less than or equal to 100000"):  # ten digits are a number too
        scroll.parse({"direction": "down", "amount": "1234567890"})
    start = default_registry().get("browser_start_session")
    with pytest.raises(Exception, match="argument 'clear_cookies'"):  # booleans stay JSON booleans
        start.parse({"provider": "kernel", "clear_cookies": "false"})


def test_strict_definitions_keep_a_property_with_a_default_of_its_own_as_its_plain_type():
    """A strict model sends every property: one with a real default (``clear_cookies: false``,
    ``submit: false``) stays its plain type, so the model sends the boolean, never ``null`` (which
    the server reads as not given but the start gate refuses: it wants the JSON boolean false)."""
    strict = {d["function"]["name"]: d["function"]["parameters"] for d in tool_definitions("openai-strict", SCHEMAS)}
    start, typing = strict["browser_start_session"], strict["browser_type"]
    assert start["properties"]["clear_cookies"] == {
        "type": "boolean",
        "title": "Clear Cookies",
        "description": "Empty the site_key's profile before starting (a JSON boolean).",
    }
    assert typing["properties"]["submit"]["type"] == "boolean" and "anyOf" not in typing["properties"]["submit"]
    sent = {"provider": "kernel", "site_key": "k", "clear_cookies": None, "url": "https://example.gov/"}
    assert not jsonschema.Draft202012Validator(start).is_valid(sent)
    assert jsonschema.Draft202012Validator(start).is_valid({**sent, "clear_cookies": False})
    assert start["properties"]["site_key"]["anyOf"][-1] == {"type": "null"}  # no default of its own: nullable


def test_mcp_annotations_never_call_a_tool_that_acts_again_when_repeated_idempotent():
    """Repeating a scroll scrolls further, and a switch changes where later calls act: a client
    that retries idempotent (or read-only) tools by itself would add calls the counts gate counts.
    MCP reads idempotentHint only when readOnlyHint is false, so neither says read-only."""
    annotations = {t["name"]: t["annotations"] for t in tool_definitions("mcp", SCHEMAS)}
    for name in ("browser_scroll", "browser_switch_tab"):
        assert annotations[name]["readOnlyHint"] is False and annotations[name]["idempotentHint"] is False, name
        assert annotations[name]["destructiveHint"] is False, name
    idempotent = sorted(name for name, hints in annotations.items() if hints.get("idempotentHint"))
    assert idempotent == ["browser_snapshot", "list_tools"]
    assert all("idempotentHint" in hints for hints in annotations.values())  # said, not left to a default


def test_an_integral_number_beyond_a_bound_gets_the_bounds_message():
    scroll = default_registry().get("browser_scroll")
    for huge in (1e20, "99999999999999999999", " +99999999999999999999 ", 2.0**60, "9" * 4300):
        with pytest.raises(Exception, match="less than or equal to 100000"):
            scroll.parse({"direction": "down", "amount": huge})
    for bad in (float("inf"), float("nan"), "1e20", "9" * 30 + ".5", "9" * 4301):  # 4,301 digits: int() refuses
        with pytest.raises(Exception, match="argument 'amount'"):
            scroll.parse({"direction": "down", "amount": bad})
