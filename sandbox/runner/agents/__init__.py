"""Agents: ``reference``, ``cmd:COMMAND``, ``openai:MODEL`` and ``replay:ATTEMPT_DIR``.

Every agent has ``name`` and ``async run(task: AgentTask) -> AgentResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AgentOptions:
    base_url: str | None = None          # openai: OpenAI-compatible endpoint (else OPENAI_BASE_URL)
    cassette: Path | None = None         # openai: vcrpy cassette
    record_mode: str = "once"            # openai: once | none | all
    max_turns: int = 80


def make_agent(spec: str, options: AgentOptions | None = None):
    options = options or AgentOptions()
    kind, _, value = spec.partition(":")
    if spec == "reference":
        from sandbox.runner.agents.reference_agent import ReferenceAgent
        return ReferenceAgent()
    if kind == "cmd" and value:
        from sandbox.runner.agents.command import CommandAgent
        return CommandAgent(value)
    if kind == "openai" and value:
        from sandbox.runner.agents.openai_agent import OpenAIAgent
        return OpenAIAgent(value, options)
    if kind == "replay" and value:
        from sandbox.runner.agents.replay import ReplayAgent
        return ReplayAgent(Path(value))
    raise ValueError(f"unknown agent {spec!r}: use reference, cmd:\"COMMAND\", openai:MODEL or replay:ATTEMPT_DIR")
