"""The agent-kind registry: ``@agent_kind`` registers a kind's ``create(value, options)``,
``make_agent(spec)`` resolves a spec through it.

Imports no agent module: every agent module imports this one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar, get_args

from sandbox.runner.kinds import KindRegistry
from sandbox.runner.record_mode import RecordMode
from sandbox.runner.task import Agent

AgentOption = Literal[
    "base_url", "cassette", "record_mode", "max_turns", "rerecord_hint", "workdir"
]  # AgentOptions' fields


@dataclass(frozen=True)
class AgentOptions:
    """What ``sandbox run`` (or the pytest plugin) hands every agent kind. An option left at None is
    not given; one given to a kind that does not use it is an error (``AgentKinds.make``).
    ``record_mode``, ``max_turns``, ``rerecord_hint`` and ``workdir`` always have a value, so they are
    never refused."""

    base_url: str | None = None  # model agents: the endpoint (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL)
    cassette: Path | None = None  # model agents: vcrpy cassette
    record_mode: RecordMode = RecordMode.ONCE  # model agents: when the cassette records (a typo fails here)
    max_turns: int = 80
    # model agents: how to record a cassette again, said when it cannot answer (the plugin says its own)
    rerecord_hint: str = "record it again with --record-mode all, against your model endpoint"
    # what relative paths mean (a cmd: agent runs there, a replay: folder, a cassette); ".": the
    # current directory, which a batch makes its driver's (``anchored``) before a Ray worker reads it
    workdir: Path = Path()

    def __post_init__(self) -> None:
        object.__setattr__(self, "record_mode", RecordMode(self.record_mode))

    def given(self) -> list[str]:
        """The options that are set and could have been left out (their default is None)."""
        return [
            field.name
            for field in dataclasses.fields(self)
            if field.default is None and getattr(self, field.name) is not None
        ]

    def anchored(self, workdir: Path) -> AgentOptions:
        """These options with their relative paths made to mean ``workdir`` (the driver's working
        directory), wherever the agent is made: a Ray worker's working directory is another."""
        anchored = dataclasses.replace(self, workdir=workdir.absolute() / self.workdir)  # an absolute one stays
        cassette = anchored.path(self.cassette) if self.cassette is not None else None
        return dataclasses.replace(anchored, cassette=cassette)

    def path(self, given: str | Path) -> Path:
        """``given``, relative to ``workdir`` (an absolute one as it is)."""
        return self.workdir / given


CreateAgent = Callable[[str, AgentOptions], Agent]
CreateT = TypeVar("CreateT", bound=CreateAgent)


class AgentSpecError(ValueError):
    """An agent spec names no registered kind, has a bad value, or comes with options it does not use."""


@dataclass(frozen=True)
class AgentKind:
    name: str  # the spec's prefix: "openai" in "openai:MODEL"
    usage: str  # how the spec is written: "openai:MODEL"
    create: CreateAgent  # create(value, options): value is the spec after "NAME:"
    uses: frozenset[AgentOption] = frozenset()  # the options it takes
    needs_value: bool = True  # False: the spec is the name alone ("reference")
    wraps: Callable[[str], str] | None = None  # a wrapper's inner spec from its value (it takes its options)


class AgentKinds(KindRegistry[AgentKind]):
    def resolve(self, spec: str) -> tuple[AgentKind, str]:
        """The kind a spec names and its value (the rest of the spec)."""
        name, _, value = spec.partition(":")
        kind = self.get(name)
        if kind is not None and kind.needs_value and not value.strip():
            raise AgentSpecError(f"agent {spec!r} is missing its value after {name}: write it as {kind.usage}")
        if kind is None:
            raise AgentSpecError(f"unknown agent {spec!r}: use {', '.join(self.usages())}")
        return kind, value

    def uses(self, spec: str) -> frozenset[AgentOption]:
        """The options the agent ``spec`` takes (a wrapper's: its own and its inner agent's)."""
        kind, value = self.resolve(spec)
        return kind.uses | self.uses(kind.wraps(value)) if kind.wraps else kind.uses

    def unwrap(self, spec: str) -> str:
        """The spec of the agent that does the work: a wrapper's inner agent, at any depth."""
        kind, value = self.resolve(spec)
        return self.unwrap(kind.wraps(value)) if kind.wraps else spec

    def make(self, spec: str, options: AgentOptions) -> Agent:
        kind, value = self.resolve(spec)
        agent = kind.create(value, options)  # a bad value is the kind's own error, before the options'
        uses = self.uses(spec)
        for option in options.given():
            if option not in uses:
                users = ", ".join(k.usage for k in self if option in k.uses) or "none of the registered kinds"
                raise AgentSpecError(
                    f"--{option.replace('_', '-')} is for model agents ({users}); {spec} does not use it"
                )
        return agent


AGENT_KINDS = AgentKinds("agent kind")


def agent_kind(
    name: str,
    *,
    usage: str,
    uses: Iterable[AgentOption] = (),
    needs_value: bool = True,
    wraps: Callable[[str], str] | None = None,
    registry: AgentKinds = AGENT_KINDS,
) -> Callable[[CreateT], CreateT]:
    """Register ``create(value, options) -> Agent`` as the agent kind ``name``:

    @agent_kind("openai", usage="openai:MODEL", uses=("base_url", "cassette", "record_mode", "max_turns"))
    def create(model: str, options: AgentOptions) -> OpenAIAgent: ...
    """
    taken = frozenset(uses)
    unknown = taken - set(get_args(AgentOption))
    if unknown:
        raise ValueError(
            f"agent kind {name!r}: unknown options {sorted(unknown)}; AgentOptions has {get_args(AgentOption)}"
        )

    def register(create: CreateT) -> CreateT:
        registry.add(AgentKind(name, usage, create, taken, needs_value, wraps))
        return create

    return register


def make_agent(spec: str, options: AgentOptions | None = None) -> Agent:
    """The agent ``spec`` names (``openai:gpt-x``, ``reference``, ...), with ``options``."""
    return AGENT_KINDS.make(spec, options or AgentOptions())
