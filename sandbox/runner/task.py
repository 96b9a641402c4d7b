"""What an agent gets (AgentTask) and gives back (AgentResult), and the tool client it uses.

An agent never sees expected records, fixtures or mirror files: only the prompt, the pack's
public parts (task input, output schema, time limit) and the tool API.
"""

from __future__ import annotations

import contextlib
import json
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class ToolCallError(Exception):
    """A tool answered ok=false. ``type`` and ``message`` are the tool's error."""

    def __init__(self, tool: str, error: dict) -> None:
        super().__init__(f"{tool}: {error.get('type')}: {error.get('message')}")
        self.tool, self.type, self.message = tool, error.get("type"), error.get("message")


class ToolClient(Protocol):
    async def call_raw(self, name: str, args: Any) -> dict: ...

    async def list_tools(self) -> list[dict]:
        """The run's tool schemas, asked of the transport (not a traced tool call)."""


class InProcessClient:
    """Calls a Run directly (the same dispatcher and trace as HTTP)."""

    def __init__(self, run) -> None:
        self.run = run

    async def call_raw(self, name: str, args: Any) -> dict:
        return await self.run.call(name, args)

    async def list_tools(self) -> list[dict]:
        return self.run.tools()


class HttpClient:
    """Calls the HTTP tool server (what external agents do)."""

    def __init__(self, base_url: str, run_id: str) -> None:
        self.base_url, self.run_id = base_url.rstrip("/"), run_id

    async def call_raw(self, name: str, args: Any) -> dict:
        import aiohttp

        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"{self.base_url}/runs/{self.run_id}/tools/{name}",
                data=json.dumps(args),
                headers={"content-type": "application/json"},
            ) as response,
        ):
            return await response.json()

    async def list_tools(self) -> list[dict]:
        import aiohttp

        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{self.base_url}/runs/{self.run_id}/tools") as response,
        ):
            return (await response.json())["tools"]


@dataclass
class Tools:
    """Convenience wrapper for scripted agents: ``await tools.call("browser_snapshot")``."""

    client: ToolClient
    calls: int = 0

    async def call(self, name: str, **args: Any) -> dict:
        self.calls += 1
        reply = await self.client.call_raw(name, args)
        if not reply.get("ok"):
            raise ToolCallError(name, reply.get("error") or {})
        return reply["result"]


@dataclass
class Spent:
    """What the agent has used so far, kept as it goes (a model agent's tokens after each turn, a
    ``cmd:`` agent's ``usage.json`` when it is stopped), so that an attempt that times out, crashes
    or is stopped still carries its tokens and cost."""

    token_usage: dict[str, int] | None = None
    model: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # what the agent says of itself (a usage_problem)


@dataclass(frozen=True)
class AgentTask:
    pack_id: str
    workflow: str
    prompt: str  # the full agent-facing prompt (runner prompt + task + schema + input)
    site_key: str
    time_limit_seconds: float
    input_text: str
    output_schema: dict
    sandbox_url: str | None = None  # the HTTP tool server, for external agents
    run_id: str | None = None
    client: ToolClient | None = None
    workdir: Path | None = None  # the attempt's folder (agents may keep logs there)
    spent: Spent = field(default_factory=Spent)  # kept up to date by the agent as it goes


@dataclass
class AgentResult:
    output: str
    status: str = "completed"  # completed | error | timeout | crashed | stopped (the batch was)
    error: str | None = None
    token_usage: dict[str, int] | None = None
    details: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    name: str

    async def run(self, task: AgentTask) -> AgentResult: ...


def agent_turn(agent: Agent) -> AbstractAsyncContextManager[None]:
    """What ``agent`` waits for before its attempt's clock starts (``agent.turn()``, if it has one:
    a model agent's turn at the model: alone with a cassette, beside the other live ones without);
    the wait counts as a dispatch wait, not elapsed time."""
    turn = getattr(agent, "turn", None)
    return turn() if turn is not None else contextlib.nullcontext()
