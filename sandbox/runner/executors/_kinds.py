"""The executor registry: ``@executor_kind`` registers an executor's ``start(plan, options)`` and
the dataclass of the options it takes; ``parse_executor("ray:HEAD:6379", {"retries": 2})``
resolves a spec and its options through it.

Imports no executor module: every executor module imports this one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from sandbox.runner.agents import AgentOptions
from sandbox.runner.kinds import KindRegistry

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from sandbox.evaluation.packs import Pack
    from sandbox.runner.attempt import AttemptOutcome
    from sandbox.runner.prices import Prices
    from toolserver.contract.policy import PolicyMode
    from toolserver.faults import FaultPlan


@dataclass(frozen=True)
class AttemptSettings:
    """What every attempt of a batch is run with: ``run_attempt``'s keyword arguments."""

    time_limit: float | None = None  # None: the pack's
    policy: PolicyMode | None = None  # None: the sandbox's
    block_state_changes: bool | None = None  # None: the sandbox's
    screenshots: str = "all"  # all | failures | none
    playwright_trace: bool = False
    prices: Prices | None = None  # the cost boundary (sandbox.runner.prices); None: costs unknown
    faults: FaultPlan | None = None  # injected faults (toolserver.faults); None: none
    mirror_roots: tuple[Path, ...] | None = None  # the attempts' own mirror roots; None: the sandbox's

    def arguments(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


@dataclass(frozen=True)
class BatchAgent:
    """One agent of a batch: its spec, its own options, and the name the comparison gives it."""

    spec: str
    options: AgentOptions
    label: str = ""  # "" : the spec

    @property
    def name(self) -> str:
        return self.label or self.spec


@dataclass(frozen=True)
class BatchPlan:
    """What a batch gives its executor: the agents, and how their attempts run."""

    agents: tuple[BatchAgent, ...]
    concurrency: int  # at most this many attempts at once (the batch holds them to it)
    attempt: AttemptSettings


class Executor(Protocol):
    """A started executor: runs one attempt at a time per call, any number of calls at once.
    ``dispatch_wait``: how long the attempt waited for its turn (recorded, not timed).
    ``capacity``: the most attempts it runs at once and why (the batch holds to it and says so);
    None: as many as the batch asks."""

    capacity: tuple[int, str] | None

    async def run(
        self, pack: Pack, attempt_number: int, directory: Path, agent: BatchAgent, dispatch_wait: float = 0.0
    ) -> AttemptOutcome: ...

    async def stop(self) -> None: ...


OptionsT = TypeVar("OptionsT", bound="DataclassInstance")
StartT = TypeVar("StartT", bound=Callable[..., Awaitable[Executor]])


class ExecutorSpecError(ValueError):
    """An executor spec names no registered executor, or comes with an option it does not take."""


class ExecutorUnavailable(RuntimeError):
    """An executor that cannot start where it was pointed (no Ray at the address, no pool of that
    name): a user's situation, said in one line."""


@dataclass(frozen=True)
class ExecutorKind(Generic[OptionsT]):
    name: str  # the spec's prefix: "ray" in "ray:HEAD:6379"
    usage: str  # how the spec is written: "ray[:ADDRESS]"
    summary: str  # where attempts run, for help texts
    options: type[OptionsT]  # a dataclass: the options it takes, each with a default
    start: Callable[[BatchPlan, OptionsT], Awaitable[Executor]]
    value: str | None = None  # the option the spec's value sets ("address"); None: it takes no value

    def option_names(self) -> list[str]:
        return [field.name for field in dataclasses.fields(self.options) if field.name != self.value]


@dataclass(frozen=True)
class ExecutorChoice(Generic[OptionsT]):
    """An executor and its options, checked: ``await choice.start(plan)``."""

    kind: ExecutorKind[OptionsT]
    options: OptionsT

    async def start(self, plan: BatchPlan) -> Executor:
        return await self.kind.start(plan, self.options)


class ExecutorKinds(KindRegistry[ExecutorKind[Any]]):
    def parse(self, spec: str, options: Mapping[str, object] | None = None) -> ExecutorChoice[Any]:
        """``NAME[:VALUE]`` and the options given for it; an option it does not take is an error."""
        name, colon, value = spec.partition(":")
        kind = self.get(name)
        if kind is None:
            raise ExecutorSpecError(f"unknown executor {spec!r}: use {' or '.join(self.usages())}")
        if colon and kind.value is None:
            raise ExecutorSpecError(f"the {name} executor takes no value (got {spec!r}): use {kind.usage}")
        for option in options or {}:
            if option not in kind.option_names():
                takers = [k.usage for k in self if option in k.option_names()]
                takes = f"; {' and '.join(takers)} takes it" if takers else ""
                raise ExecutorSpecError(f"the {name} executor does not take {option!r}{takes}")
        values = dict(options or {})
        if kind.value is not None and value:
            values[kind.value] = value
        return ExecutorChoice(kind, kind.options(**values))


EXECUTORS = ExecutorKinds("executor")


def executor_kind(
    name: str,
    *,
    usage: str,
    summary: str,
    options: type[DataclassInstance],
    value: str | None = None,
    registry: ExecutorKinds = EXECUTORS,
) -> Callable[[StartT], StartT]:
    """Register ``async start(plan, options) -> Executor`` as the executor ``name``:

        @executor_kind("ray", usage="ray[:ADDRESS]", summary="a Ray cluster", options=RayOptions, value="address")
        async def start(plan: BatchPlan, options: RayOptions) -> RayExecutor: ...

    ``options`` is a dataclass whose fields (each with a default) are the options it takes;
    ``value`` names the one the spec's value (after ``NAME:``) sets.
    """
    if value is not None and value not in {field.name for field in dataclasses.fields(options)}:
        raise ValueError(f"executor {name!r}: its value sets {value!r}, which {options.__name__} has no field for")

    def register(start: StartT) -> StartT:
        registry.add(ExecutorKind(name, usage, summary, options, start, value))
        return start

    return register


def parse_executor(spec: str, options: Mapping[str, object] | None = None) -> ExecutorChoice[Any]:
    """The executor ``spec`` names (``local``, ``ray:HEAD:6379``) with ``options``, checked."""
    return EXECUTORS.parse(spec, options)
