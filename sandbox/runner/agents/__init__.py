"""Agent kinds, registered by name: one module each in this package, registering itself with

    @agent_kind("openai", usage="openai:MODEL", uses=("base_url", "cassette", "record_mode", "max_turns"))
    def create(model: str, options: AgentOptions) -> OpenAIAgent: ...

``make_agent("openai:gpt-x")`` finds the kind ``openai`` in ``AGENT_KINDS`` and calls its
``create("gpt-x", options)``; an option the kind does not use (``uses``) is an error naming it.
A wrapper (``think:SECONDS:AGENT``) says where its inner agent's spec is (``wraps``) and takes
the options that agent takes. Adding an agent kind is adding a module here and importing it
below; ``sandbox run --help`` and the errors list what is registered. Every agent has ``name``
and ``async run(task: AgentTask) -> AgentResult``.
"""

from __future__ import annotations

# the kinds this package brings: importing a kind's module registers it
from sandbox.runner.agents import anthropic_agent, command, openai_agent, reference_agent, replay, think  # noqa: F401
from sandbox.runner.agents._kinds import (
    AGENT_KINDS,
    AgentKind,
    AgentKinds,
    AgentOption,
    AgentOptions,
    AgentSpecError,
    agent_kind,
    make_agent,
)
from sandbox.runner.record_mode import RecordMode

# model kind -> the format its tools are offered in (and recorded in its cassettes)
MODEL_TOOL_FORMATS = {
    agent.kind: agent.tool_format for agent in (openai_agent.OpenAIAgent, anthropic_agent.AnthropicAgent)
}

__all__ = [
    "AGENT_KINDS",
    "AgentKind",
    "AgentKinds",
    "AgentOption",
    "AgentOptions",
    "AgentSpecError",
    "MODEL_TOOL_FORMATS",
    "RecordMode",
    "agent_kind",
    "make_agent",
]
