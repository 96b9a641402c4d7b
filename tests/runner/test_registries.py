"""Kinds registered by name: one module (this one) adds a tool, an agent kind and an executor
through the public decorators, and each is listed where users look — the tool registry's
schemas, the agent-kind and executor registries, ``sandbox run --help`` — and works: the dummy
agent runs a real attempt, on the dummy executor, through ``run_batch``. Options a kind does
not take are errors that name them."""

from __future__ import annotations

import argparse
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest
from pydantic import Field

from sandbox.cli import build_parser, main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AGENT_KINDS, AgentOption, AgentOptions, AgentSpecError, agent_kind, make_agent
from sandbox.runner.batch import run_batch
from sandbox.runner.executors import EXECUTORS, BatchPlan, ExecutorSpecError, executor_kind, parse_executor
from sandbox.runner.executors.local import LocalOptions
from sandbox.runner.executors.local import start as start_local
from sandbox.runner.task import AgentResult, AgentTask
from toolserver.registry import ToolArgs, ToolRegistry, tool


class EchoArgs(ToolArgs):
    text: str = Field(description="What to echo.")


@tool("browser_echo", args=EchoArgs, side_effect="read_only", title="Echo", description="Echo the text back.")
async def browser_echo(ctx, args: EchoArgs, response) -> None:
    response.add(text=args.text)


class SilentAgent:
    """Answers at once, with no tool call."""

    def __init__(self, word: str) -> None:
        self.name = f"silent:{word}"

    async def run(self, task: AgentTask) -> AgentResult:
        return AgentResult(output=f"nothing for {task.pack_id}")


@dataclass(frozen=True, kw_only=True)
class InlineOptions:
    label: str = "inline"  # the spec's value: inline:LABEL
    sandbox: object | None = None  # the started sandbox to run on


STARTED: list[tuple[BatchPlan, InlineOptions]] = []


@pytest.fixture
def dummies():
    """The dummy agent kind and executor, registered for one test and taken away after."""

    @agent_kind("silent", usage="silent:WORD", uses=("base_url",))
    def create_silent(word: str, options: AgentOptions) -> SilentAgent:
        return SilentAgent(word)

    @executor_kind(
        "inline", usage="inline[:LABEL]", summary="beside the caller, labelled", options=InlineOptions, value="label"
    )
    async def start_inline(plan: BatchPlan, options: InlineOptions):
        STARTED.append((plan, options))
        return await start_local(plan, LocalOptions(sandbox=options.sandbox))

    try:
        yield
    finally:
        for registry, name in ((AGENT_KINDS, "silent"), (EXECUTORS, "inline")):
            if name in registry:
                registry.remove(name)
        STARTED.clear()


def run_help() -> str:
    (run,) = [
        parser
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, parser in action.choices.items()
        if name == "run"
    ]
    return " ".join(run.format_help().split())  # argparse wraps lines: compare words


def test_a_tool_built_with_the_decorator_is_in_its_registrys_schemas():
    registry = ToolRegistry([browser_echo])
    (schema,) = registry.schemas()
    assert schema["name"] == "browser_echo" and schema["side_effect"] == "read_only"
    assert schema["input_schema"]["properties"]["text"]["description"] == "What to echo."


def test_a_registered_agent_kind_and_executor_are_listed_in_the_registries_and_the_help(dummies):
    assert "silent" in AGENT_KINDS and "silent:WORD" in AGENT_KINDS.usages()
    assert "inline" in EXECUTORS and "inline[:LABEL]" in EXECUTORS.usages()
    text = run_help()
    assert "silent:WORD" in text and "openai:MODEL" in text and "think:SECONDS:AGENT" in text
    assert "--executor inline[:LABEL]|local|ray[:ADDRESS]" in text
    assert "inline[:LABEL]: beside the caller, labelled" in text


def test_taken_away_they_are_listed_no_more(dummies):
    AGENT_KINDS.remove("silent")
    EXECUTORS.remove("inline")
    text = run_help()
    assert "silent" not in text and "inline" not in text
    with pytest.raises(AgentSpecError, match="unknown agent 'silent:x'"):
        make_agent("silent:x")
    with pytest.raises(ExecutorSpecError, match="unknown executor 'inline'"):
        parse_executor("inline")


def test_an_unknown_kind_lists_every_registered_kind_with_its_usage(dummies):
    with pytest.raises(AgentSpecError) as caught:
        make_agent("nobody:x")
    assert str(caught.value) == (
        "unknown agent 'nobody:x': use anthropic:MODEL, cmd:\"COMMAND\", openai:MODEL, reference, "
        "replay:ATTEMPT_DIR, silent:WORD, think:SECONDS:AGENT"
    )
    with pytest.raises(ExecutorSpecError) as refused:
        parse_executor("nowhere")
    assert str(refused.value) == "unknown executor 'nowhere': use inline[:LABEL] or local or ray[:ADDRESS]"


def test_the_agent_options_a_kind_may_use_are_the_fields_of_agent_options():
    assert set(get_args(AgentOption)) == {field.name for field in dataclasses.fields(AgentOptions)}
    with pytest.raises(ValueError, match="unknown options \\['temperature'\\]"):
        agent_kind("warm", usage="warm:MODEL", uses=("temperature",))
    assert "warm" not in AGENT_KINDS


def test_an_agent_takes_the_options_it_declares_and_refuses_the_others(dummies):
    assert make_agent("silent:x", AgentOptions(base_url="http://127.0.0.1:1/v1")).name == "silent:x"
    with pytest.raises(AgentSpecError) as caught:
        make_agent("silent:x", AgentOptions(cassette=Path("c.yaml")))
    assert (
        str(caught.value) == "--cassette is for model agents (anthropic:MODEL, openai:MODEL); silent:x does not use it"
    )
    # a wrapper takes what its inner agent takes
    assert AGENT_KINDS.uses("think:0.1:silent:x") == {"base_url"}
    assert make_agent("think:0.1:silent:x", AgentOptions(base_url="http://127.0.0.1:1/v1")).name == "think:0.1:silent:x"


def test_an_executor_takes_its_options_and_refuses_the_others(dummies):
    chosen = parse_executor("inline:blue")
    assert chosen.kind.name == "inline" and chosen.options == InlineOptions(label="blue")
    with pytest.raises(ExecutorSpecError) as caught:
        parse_executor("inline", {"retries": 2})
    assert str(caught.value) == "the inline executor does not take 'retries'; ray[:ADDRESS] takes it"
    with pytest.raises(ExecutorSpecError, match="the local executor takes no value"):
        parse_executor("local:somewhere")
    assert parse_executor("ray:10.0.0.5:6379", {"retries": 1}).options.address == "10.0.0.5:6379"


async def test_the_dummy_agent_runs_on_the_dummy_executor_through_run_batch(dummies, sandbox, tmp_path):
    (outcome,) = await run_batch(
        [load_pack("controlled-form")],
        "silent:x",
        out=tmp_path,
        progress=False,
        executor="inline:blue",
        sandbox=sandbox,
        options=AgentOptions(base_url="http://127.0.0.1:1/v1"),
    )
    ((plan, options),) = STARTED
    assert options.label == "blue" and options.sandbox is sandbox
    ((agent,),) = [plan.agents]
    assert agent.spec == "silent:x" and agent.options.base_url == "http://127.0.0.1:1/v1"
    assert outcome.agent == "silent:x" and outcome.status == "completed" and not outcome.qualified_pass
    assert (outcome.directory / "output.txt").read_text() == "nothing for controlled-form"
    assert json.loads((outcome.directory.parent / "summary.json").read_text())["attempts"][0]["agent"] == "silent:x"


def test_the_command_line_refuses_an_executor_option_the_executor_does_not_take(capsys):
    assert main(["run", "bid-intake", "--agent", "reference", "--retries", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == (
        "sandbox run: the local executor does not take 'retries'; ray[:ADDRESS] takes it"
    )
    assert main(["run", "bid-intake", "--agent", "reference", "--executor", "nowhere"]) == 2
    assert "unknown executor 'nowhere': use local or ray[:ADDRESS]" in capsys.readouterr().err
