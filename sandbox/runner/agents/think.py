"""think:SECONDS:AGENT — another agent that waits SECONDS before each tool call, as a model's
latency would (``think:0.5:reference``). For measuring throughput with agents that think:
the browser is idle while the "model" thinks, so attempts can overlap. It takes the options its
inner agent takes (``think:0.5:openai:MODEL --base-url URL``). It refuses a ``cmd:`` agent, whose
process calls the HTTP tool server itself: no wait could come between."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from contextlib import AbstractAsyncContextManager
from typing import Any

from sandbox.runner.agents._kinds import AgentOptions, AgentSpecError, agent_kind, make_agent
from sandbox.runner.task import Agent, AgentResult, AgentTask, ToolClient, agent_turn


class ThinkingClient:
    def __init__(self, client: ToolClient, seconds: float) -> None:
        self.client, self.seconds = client, seconds

    @property
    def run(self) -> Any:
        """The run of the client it wraps (None: none): a model agent finds the run's planned
        faults there (``model-429``, ``model-5xx``), as it does unwrapped."""
        return getattr(self.client, "run", None)

    async def call_raw(self, name: str, args: Any) -> dict:
        await asyncio.sleep(self.seconds)
        return await self.client.call_raw(name, args)

    async def list_tools(self) -> list[dict]:
        return await self.client.list_tools()


def seconds_said(seconds: float) -> str:
    """The delay as an agent's name says it: 0.50 is 0.5 and 1.0 is 1, but two delays are never one
    name (``:g`` alone rounds 0.1234567 and 0.1234568 alike) and a whole number is never 1e+06."""
    if seconds.is_integer():
        return str(int(seconds))
    said = f"{seconds:g}"
    return said if float(said) == seconds else repr(seconds)


class ThinkingAgent:
    def __init__(self, seconds: float, inner: Agent) -> None:
        self.seconds, self.inner = seconds, inner
        self.name = f"think:{seconds_said(seconds)}:{inner.name}"

    async def run(self, task: AgentTask) -> AgentResult:
        assert task.client is not None, "run_attempt always gives the agent a tool client"
        return await self.inner.run(dataclasses.replace(task, client=ThinkingClient(task.client, self.seconds)))

    def turn(self) -> AbstractAsyncContextManager[None]:
        """The inner agent's turn (``run_attempt``), if it takes one."""
        return agent_turn(self.inner)

    async def preflight(self) -> str | None:
        """The inner agent's check before a batch (a model agent's: does its endpoint answer?)."""
        check = getattr(self.inner, "preflight", None)
        return await check() if check else None


def inner_spec(value: str) -> str:
    """The wrapped agent's spec: ``reference`` in ``think:0.5:reference``."""
    return value.partition(":")[2]


@agent_kind("think", usage="think:SECONDS:AGENT", wraps=inner_spec)
def create(value: str, options: AgentOptions) -> ThinkingAgent:
    seconds, _, inner = value.partition(":")
    try:
        delay = float(seconds)
    except ValueError:
        delay = -1.0
    if not math.isfinite(delay) or delay < 0 or not inner:  # nan or inf: every call would wait forever
        raise AgentSpecError(f"think agent: use think:SECONDS:AGENT with SECONDS >= 0, got 'think:{value}'")
    if inner.partition(":")[0] == "cmd":  # its process calls the tool server itself, never through the wait
        raise AgentSpecError(
            f"think agent: a cmd: agent calls the tool server itself, so think cannot slow it; "
            f"make the command wait instead, got 'think:{value}'"
        )
    return ThinkingAgent(delay, make_agent(inner, options))
