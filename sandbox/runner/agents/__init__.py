"""Agent kinds, registered by prefix: one module each in this package, declaring

    KIND = "openai"                       # the prefix of the agent spec ("openai:MODEL")
    USAGE = "openai:MODEL"                # how the spec is written (for error messages)
    def create(value: str, options: AgentOptions) -> Agent

``make_agent("openai:gpt-x")`` finds the module whose ``KIND`` is ``openai`` and calls its
``create("gpt-x", options)``. Adding an agent kind is adding a module: nothing else changes.
Every agent has ``name`` and ``async run(task: AgentTask) -> AgentResult``.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True)
class AgentOptions:
    base_url: str | None = None  # model agents: the endpoint (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL)
    cassette: Path | None = None  # model agents: vcrpy cassette
    record_mode: str = "once"  # model agents: once | none | all
    max_turns: int = 80


@cache
def agent_kinds() -> dict[str, ModuleType]:
    kinds: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None:
            if kind in kinds:
                raise RuntimeError(f"agent kind {kind!r} is declared by {kinds[kind].__name__} and {module.__name__}")
            kinds[kind] = module
    return kinds


def make_agent(spec: str, options: AgentOptions | None = None):
    kind, _, value = spec.partition(":")
    module = agent_kinds().get(kind)
    if module is None or (getattr(module, "NEEDS_VALUE", True) and not value):
        usages = ", ".join(m.USAGE for m in agent_kinds().values())
        raise ValueError(f"unknown agent {spec!r}: use {usages}")
    return module.create(value, options or AgentOptions())
