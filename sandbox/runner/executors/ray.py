"""``--executor ray[:ADDRESS]``: attempts on the workers of a Ray cluster (the optional ``ray``
extra), each with its own warm browser (``sandbox.runner.executors.ray_pool``). ``ray`` alone
starts a local Ray. Ray itself is imported when a batch starts, not when this module registers
the executor."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.runner.executors._kinds import BatchAgent, BatchPlan, ExecutorSpecError, executor_kind

if TYPE_CHECKING:
    from sandbox.evaluation.packs import Pack
    from sandbox.runner.attempt import AttemptOutcome
    from sandbox.runner.executors.ray_pool import RayPool


@dataclass(frozen=True, kw_only=True)
class RayOptions:
    address: str | None = None  # the head node (HOST:PORT); None: start a local Ray
    retries: int = 0  # re-run an attempt whose worker died up to this many times

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ExecutorSpecError(f"the ray executor's retries must be at least 0, got {self.retries}")


class RayExecutor:
    def __init__(self, plan: BatchPlan, pool: RayPool, retries: int) -> None:
        self.plan, self.pool, self.retries = plan, pool, retries

    async def run(
        self, pack: Pack, attempt_number: int, directory: Path, agent: BatchAgent, dispatch_wait: float = 0.0
    ) -> AttemptOutcome:
        return await self.pool.run(
            directory,
            pack.id,
            agent,
            self.plan.attempt,
            attempt_number=attempt_number,
            retries=self.retries,
            dispatch_wait=dispatch_wait,
        )

    async def stop(self) -> None:
        self.pool.stop()


@executor_kind(
    "ray",
    usage="ray[:ADDRESS]",
    summary="a Ray cluster, one warm browser per worker (needs the [ray] extra; 'ray' alone starts a local Ray)",
    options=RayOptions,
    value="address",
)
async def start(plan: BatchPlan, options: RayOptions) -> RayExecutor:
    from sandbox.runner.executors.ray_pool import RayPool

    return RayExecutor(plan, await RayPool(options.address, plan.concurrency).start(), options.retries)
