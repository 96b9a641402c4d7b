"""Executors, registered by name: where a batch's attempts run. One module each in this package,
registering itself with

    @executor_kind("ray", usage="ray[:ADDRESS]", summary="...", options=RayOptions, value="address")
    async def start(plan: BatchPlan, options: RayOptions) -> RayExecutor: ...

``parse_executor("ray:HEAD:6379", {"retries": 2})`` finds ``ray`` in ``EXECUTORS`` and builds its
options (the spec's value sets ``address``); an option it does not take is an error naming it.
A started executor runs attempts (``run(pack, attempt_number, directory)``) until ``stop()``.
``sandbox.runner.batch`` imports this package; nothing here imports the batch.
"""

from __future__ import annotations

# the executors this package brings: importing an executor's module registers it
from sandbox.runner.executors import local, ray  # noqa: F401
from sandbox.runner.executors._kinds import (
    EXECUTORS,
    AttemptSettings,
    BatchAgent,
    BatchPlan,
    Executor,
    ExecutorChoice,
    ExecutorKind,
    ExecutorKinds,
    ExecutorSpecError,
    ExecutorUnavailable,
    executor_kind,
    parse_executor,
)

__all__ = [
    "EXECUTORS",
    "AttemptSettings",
    "BatchAgent",
    "BatchPlan",
    "Executor",
    "ExecutorChoice",
    "ExecutorKind",
    "ExecutorKinds",
    "ExecutorSpecError",
    "ExecutorUnavailable",
    "executor_kind",
    "parse_executor",
]
