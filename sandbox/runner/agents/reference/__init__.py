"""Scripted reference agents, one module per workflow, each declaring

    WORKFLOW = "bid-intake"               # a pack's ``card.json`` workflow
    async def solve(tools, task) -> str

``solvers()`` finds them (modules whose names start with ``_`` are shared helpers). A new
workflow's reference agent is one module here. Each solver reads only its ``AgentTask`` and
tool results, never packs, fixtures or mirrors, and has one shape: ``read_sources`` browses
and keeps what the tools returned; pure ``derive_*`` functions parse and decide from it;
``assemble`` builds the output record; ``solve`` runs them under ``_reading.run_guarded``,
which answers with the record once it keeps the task's output schema. A ``BenchmarkError``, a
failed tool call, a source read as something it is not (a KeyError, TypeError, ...) or a record
that breaks the schema ends the run with the benchmark-error answer, saying why.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from functools import cache

from sandbox.runner.task import AgentTask, Tools

Solver = Callable[[Tools, AgentTask], Awaitable[str]]


@cache
def solvers() -> dict[str, Solver]:
    found: dict[str, Solver] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if module.WORKFLOW in found:
            raise RuntimeError(f"two reference agents for workflow {module.WORKFLOW!r}")
        found[module.WORKFLOW] = module.solve
    return found


__all__ = ["Solver", "solvers"]
