"""The Ray workers behind ``--executor ray[:ADDRESS]`` (``sandbox.runner.executors.ray``), which
imports this module, and so ``ray``, only when a batch starts.

Each Ray worker is an actor holding its own warm browser (a ``Sandbox`` and the HTTP tool
server for ``cmd:`` agents, both on loopback of its node). An attempt runs there exactly as a
local one does (``run_attempt``: same time limit, same fresh site key, same files); its files
come back to the driver and are written into the batch folder, so the result table is the
one a local run prints. A worker that dies fails only the attempts it was running: each is
recorded as ``crashed`` with the reason (``--retries N`` re-runs it on a fresh worker).

Multi-node: ``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the
others (each with this package and Debian's chromium installed), then
``sandbox run ... --executor ray:HEAD:6379``. ``--executor ray`` alone starts a local Ray.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import shutil
import tempfile
from pathlib import Path

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from sandbox.runner.attempt import AttemptOutcome
from sandbox.runner.executors._kinds import AttemptSettings, BatchAgent

CPUS_PER_BROWSER = 4  # a worker's warm Chromium uses up to this many cores (see worker_places)


class AttemptWorker:
    """A Ray actor: one warm sandbox, running the attempts the driver sends it."""

    async def start(self) -> str:
        from sandbox.runner.executors._loopback import serve_loopback
        from sandbox.runner.wiring import app_sandbox

        self.sandbox = await app_sandbox().start()
        self.http, self.url = await serve_loopback(self.sandbox)
        return self.url

    async def run(
        self,
        pack_id: str,
        agent: BatchAgent,
        settings: AttemptSettings,
        attempt_number: int,
        folder_name: str,
        dispatch_wait: float = 0.0,
    ) -> dict:
        from sandbox.evaluation.packs import load_pack
        from sandbox.runner.agents import make_agent
        from sandbox.runner.attempt import run_attempt

        scratch = Path(tempfile.mkdtemp(prefix="sandbox-ray-"))
        directory = scratch / folder_name
        try:
            outcome = await run_attempt(
                self.sandbox,
                load_pack(pack_id),
                make_agent(agent.spec, agent.options),
                directory,
                sandbox_url=self.url,
                attempt_number=attempt_number,
                label=agent.label or None,
                dispatch_wait=dispatch_wait,
                **settings.arguments(),
            )
            files = {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()}
            return {"outcome": {**outcome.__dict__, "directory": None}, "files": files}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


class RayPool:
    """The driver's side: ``size`` workers, attempts spread over them, dead workers replaced."""

    def __init__(self, address: str | None, concurrency: int) -> None:
        if not ray.is_initialized():
            ray.init(address=address or None, include_dashboard=False, log_to_driver=False)
        self.places = worker_places(concurrency)
        self.size = len(self.places)
        self.per_worker = math.ceil(concurrency / self.size)
        # ray's stubs give remote()'s keyword form only the task options, not an actor's max_concurrency
        self.actor_class = ray.remote(num_cpus=0, max_concurrency=self.per_worker)(AttemptWorker)  # type: ignore[call-overload]
        self.workers: list = []
        self.turn = itertools.count()

    def new_worker(self, index: int):
        return self.actor_class.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=self.places[index], soft=True)
        ).remote()

    async def start(self) -> RayPool:
        self.workers = [self.new_worker(index) for index in range(self.size)]
        await asyncio.gather(*(worker.start.remote() for worker in self.workers))
        return self

    async def replace(self, index: int, dead) -> None:
        if self.workers[index] is dead:  # another attempt on the same worker may have replaced it
            self.workers[index] = self.new_worker(index)
            await self.workers[index].start.remote()

    async def run(
        self,
        directory: Path,
        pack_id: str,
        agent: BatchAgent,
        settings: AttemptSettings,
        *,
        attempt_number: int,
        retries: int,
        dispatch_wait: float = 0.0,
    ) -> AttemptOutcome:
        errors = []
        for _ in range(retries + 1):
            index = next(self.turn) % self.size
            worker = self.workers[index]
            try:
                reply = await worker.run.remote(pack_id, agent, settings, attempt_number, directory.name, dispatch_wait)
            except ray.exceptions.RayActorError as exc:
                errors.append(f"ray worker died: {type(exc).__name__}: {str(exc).splitlines()[0]}")
                await self.replace(index, worker)
                continue
            directory.mkdir(parents=True, exist_ok=True)
            for relative, data in reply["files"].items():
                (directory / relative).parent.mkdir(parents=True, exist_ok=True)
                (directory / relative).write_bytes(data)
            return AttemptOutcome(**{**reply["outcome"], "directory": directory})
        return crashed(directory, pack_id, agent.name, attempt_number, errors)

    def stop(self) -> None:
        for worker in self.workers:
            ray.kill(worker)


def worker_places(concurrency: int) -> list[str]:
    """The node of each worker: one browser per ``CPUS_PER_BROWSER`` CPUs of each live node (at
    least one per node), at most one per concurrent attempt. One Chromium already spreads its
    contexts over several cores (the browser, its GPU and network processes, up to four
    renderers), so a browser per CPU would only add browsers competing for the same cores."""
    places = []
    for node in ray.nodes():
        cpus = int(node.get("Resources", {}).get("CPU", 0))
        if node.get("Alive") and cpus > 0:
            places += [node["NodeID"]] * max(1, cpus // CPUS_PER_BROWSER)
    # Spread over the nodes first (round robin), then cut to the concurrency.
    by_node: dict[str, list[str]] = {}
    for place in places:
        by_node.setdefault(place, []).append(place)
    spread = [place for group in itertools.zip_longest(*by_node.values()) for place in group if place]
    return spread[: max(1, concurrency)] or [ray.get_runtime_context().get_node_id()]


def crashed(directory: Path, pack_id: str, agent_spec: str, attempt_number: int, errors: list[str]) -> AttemptOutcome:
    """An attempt every try of which lost its worker: recorded, with the reasons, as crashed."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "attempt.json").write_text(
        json.dumps(
            {
                "pack": pack_id,
                "agent": agent_spec,
                "attempt": attempt_number,
                "status": "crashed",
                "error": "; ".join(errors),
                "tries": len(errors),
                "executor": "ray",
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    return AttemptOutcome(pack_id, agent_spec, directory, "crashed", 0.0, False, False, 0.0, 0, None)
