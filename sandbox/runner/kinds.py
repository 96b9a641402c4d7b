"""A registry of kinds by name — agent kinds (``sandbox.runner.agents``) and executors
(``sandbox.runner.executors``) — filled by their decorators, as Inspect's ``@solver`` fills its
registry. A registry is an object: the help texts and error messages list what it holds, in
name order, and a test can add a kind and take it away again.

Imports nothing from the project: both registries build on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar


class Kind(Protocol):
    @property
    def name(self) -> str:
        """What a spec starts with: ``openai`` in ``openai:MODEL``."""

    @property
    def usage(self) -> str:
        """How a spec of this kind is written, for help texts and errors: ``openai:MODEL``."""


KindT = TypeVar("KindT", bound=Kind)


class KindRegistry(Generic[KindT]):
    """Kinds by name; iterating gives them in name order."""

    def __init__(self, what: str) -> None:
        self.what = what  # "agent kind", "executor": for messages
        self._kinds: dict[str, KindT] = {}

    def add(self, kind: KindT) -> KindT:
        if not kind.name or ":" in kind.name:
            raise ValueError(f"{self.what} name {kind.name!r}: give a non-empty name without ':'")
        if kind.name in self._kinds:
            raise ValueError(f"{self.what} {kind.name!r} is registered twice ({self._kinds[kind.name].usage})")
        self._kinds[kind.name] = kind
        return kind

    def remove(self, name: str) -> None:
        """Take a kind away again (tests that registered one)."""
        del self._kinds[name]

    def get(self, name: str) -> KindT | None:
        return self._kinds.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[KindT]:
        return iter(sorted(self._kinds.values(), key=lambda kind: kind.name))

    def usages(self) -> list[str]:
        return [kind.usage for kind in self]
