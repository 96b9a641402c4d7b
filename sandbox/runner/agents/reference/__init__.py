"""Scripted reference agents, one module per workflow: ``async def solve(tools, task) -> str``.

``SOLVERS`` maps a pack's workflow name (``card.json`` ``workflow``) to its solver. Each
solver reads only its ``AgentTask`` and tool results, never packs, fixtures or mirrors.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from sandbox.runner.agents.reference import (addenda_trace, bid_intake, controlled_form, court_docket,
                                             ecfr_regulation, sec_contract)
from sandbox.runner.task import AgentTask, Tools

Solver = Callable[[Tools, AgentTask], Awaitable[str]]

SOLVERS: dict[str, Solver] = {
    "controlled-form": controlled_form.solve,
    "sec-contract": sec_contract.solve,
    "court-docket": court_docket.solve,
    "ecfr-regulation": ecfr_regulation.solve,
    "addenda-trace": addenda_trace.solve,
    "bid-intake": bid_intake.solve,
}

__all__ = ["SOLVERS", "Solver"]
