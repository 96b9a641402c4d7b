"""``--executor ray[:ADDRESS][,pool=NAME]``: attempts on the workers of a Ray cluster (the
optional ``ray`` extra), each with its own warm browser (``sandbox.runner.executors.ray_pool``).
``ray`` alone starts a local Ray. ADDRESS: ``HOST:6379`` (or ``auto``) on a node of the cluster,
``ray://HOST:10001`` from outside it (Ray Client). When a warm pool runs there
(``sandbox ray start``; ``ray_warm``), the batch uses its workers: the pool ``default``, or the
one ``pool=NAME`` names (an error when it does not run); else it starts its own. Ray itself is
imported when a batch starts, not when this module registers the executor."""

from __future__ import annotations

import dataclasses
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
    address: str | None = None  # HOST:PORT, ray://HOST:10001 or auto, then ",pool=NAME"; None: a local Ray
    retries: int = 0  # re-run an attempt whose worker died up to this many times
    pool: str | None = None  # the warm pool to use (an error when it does not run); None: "default" if it runs

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ExecutorSpecError(f"the ray executor's retries must be at least 0, got {self.retries}")
        # The spec's value carries the pool after the address: ray:HEAD:6379,pool=NAME.
        address, _, rest = (self.address or "").partition(",")
        for item in filter(None, rest.split(",")):
            key, equals, value = item.partition("=")
            if key != "pool" or not equals or not value or "/" in value:
                raise ExecutorSpecError(f"ray executor: {item!r} after the address: use ray[:ADDRESS][,pool=NAME]")
            object.__setattr__(self, "pool", value)  # frozen: set once, while being built
        object.__setattr__(self, "address", address or None)


class RayExecutor:
    capacity: tuple[int, str] | None = None  # none of its own: attempts beyond its workers' slots wait at a worker

    def __init__(self, plan: BatchPlan, pool: RayPool, retries: int) -> None:
        self.plan, self.pool, self.retries = plan, pool, retries
        self.decided: dict[BatchAgent, BatchAgent] = {}  # each agent as its attempts run on a worker

    async def run(
        self, pack: Pack, attempt_number: int, directory: Path, agent: BatchAgent, dispatch_wait: float = 0.0
    ) -> AttemptOutcome:
        if agent not in self.decided:
            self.decided[agent] = endpoint_decided(agent)
        return await self.pool.run(
            directory,
            pack.id,
            self.decided[agent],
            self.plan.attempt,
            attempt_number=attempt_number,
            retries=self.retries,
            dispatch_wait=dispatch_wait,
            load_from=pack_reference(pack),
            checksum=pack.checksum(),
        )

    async def stop(self) -> None:
        await self.pool.stop()


def endpoint_decided(agent: BatchAgent) -> BatchAgent:
    """The agent with the model endpoint the driver chooses written into its options: a worker
    reads ``$OPENAI_BASE_URL`` / ``$ANTHROPIC_BASE_URL`` from its own environment (a pool's, a
    cluster's: not the driver's), and the check before the batch reached the driver's. API keys
    are not sent: a worker reads them from its own environment (docs/guide/ray.md)."""
    from sandbox.runner.agents import AGENT_KINDS, AgentSpecError, make_agent
    from sandbox.runner.agents._model import ModelAgent

    try:  # the agent that does the work (a wrapper's inner agent takes the wrapper's options)
        inner = make_agent(AGENT_KINDS.unwrap(agent.spec), agent.options)
    except AgentSpecError:  # said when the attempt makes it
        return agent
    if not isinstance(inner, ModelAgent):
        return agent
    return dataclasses.replace(agent, options=inner.endpoint_decided())


def pack_reference(pack: Pack) -> str:
    """How a worker loads the pack: a bundled one by its id, one of your own by its folder, which
    every node must have at the same path (as ``--mirrors``): by its id, a worker loaded the
    bundled pack of that id, or none."""
    from sandbox.paths import PACKS_DIR

    return pack.id if pack.dir.resolve().parent == PACKS_DIR.resolve() else str(pack.dir.resolve())


@executor_kind(
    "ray",
    usage="ray[:ADDRESS]",
    summary="a Ray cluster, one warm browser per worker (needs the [ray] extra; 'ray' alone starts a local Ray; "
    "ADDRESS: HOST:6379 or auto on a node, ray://HOST:10001 from outside; uses the warm pool 'default' when "
    "`sandbox ray start` runs one there, ',pool=NAME' after ADDRESS names another)",
    options=RayOptions,
    value="address",
)
async def start(plan: BatchPlan, options: RayOptions) -> RayExecutor:
    from sandbox.runner.executors.ray_pool import RayPool, RayStartStopped, RayUnavailable, await_the_stop, connect
    from sandbox.runner.executors.ray_warm import DEFAULT_POOL, join_pool, no_pool_message

    try:
        connect(options.address)
    except RayStartStopped:  # the SIGTERM is the batch's again: its stop cancels this task meanwhile
        await await_the_stop()
        raise
    pool = await join_pool(options.pool or DEFAULT_POOL)
    if pool is None and options.pool:
        raise RayUnavailable(no_pool_message(options.pool))
    return RayExecutor(plan, pool or await RayPool.start(plan.concurrency), options.retries)
