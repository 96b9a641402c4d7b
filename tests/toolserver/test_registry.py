"""The tool registry: one ordered list, built in one place, agreeing with the contract's
static facts; a new tool is one declaration that reaches list_tools, the OpenAI function
list and the trace."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import Field

from sandbox.runner.task import InProcessClient
from toolserver.contract.names import TOOL_NAMES, URL_BEARING_TOOLS
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.errors import BrowserActionFailed, InvalidArguments
from toolserver.formats import tool_definitions
from toolserver.registry import ToolArgs, ToolRegistry, tool
from toolserver.tools import ALL_TOOLS, default_registry


def test_default_registry_is_the_contract_in_order():
    assert default_registry().names == TOOL_NAMES


def test_url_bearing_tools_are_those_with_a_url_argument():
    assert tuple(t.name for t in default_registry() if t.url_bearing) == URL_BEARING_TOOLS


def test_every_tool_and_argument_is_described():
    for item in default_registry():
        assert item.title and item.description, item.name
        for name, field in item.args.model_fields.items():
            assert field.description, f"{item.name}.{name} has no description"


def test_a_tool_declared_twice_is_refused():
    with pytest.raises(ValueError, match="declared twice"):
        ToolRegistry([*ALL_TOOLS, ALL_TOOLS[0]])


class EchoArgs(ToolArgs):
    text: str = Field(description="Text to echo back.")


@tool(
    "browser_echo",
    args=EchoArgs,
    title="Echo",
    scope="run",
    side_effect="read_only",
    description="Echo the text (a twelfth tool, declared in one place).",
)
async def browser_echo(ctx, args: EchoArgs, response) -> None:
    response.add(echo=args.text)


async def test_a_twelfth_tool_is_one_declaration(own_sandbox):
    async with own_sandbox(registry=ToolRegistry([*ALL_TOOLS, browser_echo])) as own:
        run = own.create_run(policy=Policy())
        listed = (await run.call("list_tools", {}))["result"]["tools"]
        assert [t["name"] for t in listed] == [*TOOL_NAMES, "browser_echo"]
        functions = tool_definitions("openai", await InProcessClient(run).list_tools())
        assert functions[-1]["function"]["name"] == "browser_echo"
        assert functions[-1]["function"]["parameters"]["required"] == ["text"]
        assert await run.call("browser_echo", {"text": "hi"}) == {"ok": True, "result": {"echo": "hi"}}
        bad = await run.call("browser_echo", {"text": 3})
        assert bad["error"]["type"] == "invalid_arguments"
        await run.close()
    calls = parse_trace(run.trace.text()).calls
    assert [(c.tool, c.ok) for c in calls] == [("list_tools", True), ("browser_echo", True), ("browser_echo", False)]
    assert calls[1].result == {"echo": "hi"}


@tool("browser_quote", args=EchoArgs, title="Quote", scope="run", side_effect="read_only", description="Fail quoting.")
async def browser_quote(ctx, args: EchoArgs, response) -> None:
    raise BrowserActionFailed(f"the page said {args.text}")  # as a browser's message may quote page text


async def test_an_error_quoting_text_that_is_not_unicode_is_escaped_and_noted(own_sandbox):
    """A result's lone surrogate was escaped, an error's was not: the MCP SDK cannot write it (over
    stdio the connection ended) and the trace line could not be read back as UTF-8."""
    async with own_sandbox(registry=ToolRegistry([*ALL_TOOLS, browser_quote])) as own:
        run = own.create_run(policy=Policy())
        reply = await run.call("browser_quote", {"text": "bad \ud800 text"})
        assert reply["error"]["message"] == "the page said bad \\ud800 text", reply
        await run.close()
    (call,) = parse_trace(run.trace.text()).calls
    assert call.error.message == "the page said bad \\ud800 text"
    assert sorted(call.escaped) == ["args.text", "error.message"]
    run.trace.text().encode("utf-8")


async def test_an_unknown_tool_lists_the_registry(run):
    reply = await run.call("browser_fly", {})
    assert reply["error"]["type"] == "unknown_tool"
    assert reply["error"]["message"].endswith(", ".join(TOOL_NAMES))


def parse_within(tool_name: str, raw: object, seconds: float = 5.0) -> BaseException | None:
    """Parse in a thread of its own (a walk that never ends must fail the test, not hang it)."""
    outcome: list[BaseException | None] = []

    def parse() -> None:
        try:
            default_registry().get(tool_name).parse(raw)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001  (the outcome is the test's)
            outcome.append(exc)

    worker = threading.Thread(target=parse, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "parsing circular arguments did not end"
    return outcome[0]


def test_circular_arguments_are_refused_at_once_naming_where():
    """From the in-process API an argument object may contain itself: JSON cannot carry it. The
    search for what made ``json.dumps`` refuse walked the cycle for ever, holding the event loop."""
    itself: dict = {"direction": "down"}
    itself["amount"] = itself
    error = parse_within("browser_scroll", itself)
    assert isinstance(error, InvalidArguments), error
    assert str(error) == (
        "browser_scroll: argument 'amount' contains itself (a circular reference, which JSON cannot carry); "
        "pass plain JSON values"
    )
    loop: list = [1]
    loop.append([loop])
    error = parse_within("browser_scroll", {"direction": "down", "amount": loop})
    assert isinstance(error, InvalidArguments) and "argument 'amount.1.0' contains itself" in str(error), error
    shared = [1.5]  # the same list twice is no cycle: found once, said once
    error = parse_within("browser_scroll", {"direction": "down", "amount": [shared, shared, float("nan")]})
    assert isinstance(error, InvalidArguments) and "argument 'amount.2' is not a finite number" in str(error)


async def test_a_circular_argument_call_is_answered_and_has_its_line(run):
    itself: dict = {"direction": "down"}
    itself["amount"] = itself
    reply = await asyncio.wait_for(run.call("browser_scroll", itself), 10)
    assert reply["error"]["type"] == "invalid_arguments" and "contains itself" in reply["error"]["message"]
    (line,) = parse_trace(run.trace.text()).calls
    assert line.tool == "browser_scroll" and line.error.type == "invalid_arguments"
    assert isinstance(line.args, str) and "'direction': 'down'" in line.args and "{...}" in line.args, line.args
    assert line.escaped == ["args (circular: kept as shortened text)"]
