"""The Ray executor against a local batch: the same batch of agents that think before each call
(``think:SECONDS:reference``) run locally (the batch starts its own browser, as ``sandbox run``
does), on a cold Ray pool (``--executor ray`` on a running Ray: the batch starts its workers and
their browsers) and on a warm pool (``sandbox ray start`` before: the batch starts nothing).
Goals: cold pool <= 1.25x local, warm pool <= 1.10x local, every attempt of the three batches a
qualified pass, and the three batches' verdicts identical. The Ray is a local one (its start is
not timed, as a cluster's is not) given the cores this process may use.

    .venv/bin/python scripts/bench.py --only ray [--quick] [--json FILE] [--publish]
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from bench_goals import RAY_COLD_GOAL, RAY_WARM_GOAL


def failed(outcomes: list) -> int:
    """Attempts that are not a qualified pass: a reference agent's attempt always is one."""
    return sum(not outcome.qualified_pass for outcome in outcomes)


def verdicts(outcomes: list) -> list[dict]:
    from sandbox.runner.batch import summarise

    keep = ("pack", "qualified_passes", "error_free_passes", "statuses")
    return [{key: value for key, value in row.items() if key in keep} for row in summarise(outcomes)]


async def ray_side(repeats: int = 12, concurrency: int = 8, think: float = 0.5) -> dict:
    """``repeats`` attempts (the reviewed packs in turn: 12 is each of 6 twice) of an agent
    thinking ``think`` seconds before each call, ``concurrency`` at once: wall times of the local
    batch, the cold Ray pool and the warm one, and the ratios to local."""
    # Playwright and the attempt's modules are imported before the timing: the local batch's
    # figure is its run, not this process's first imports.
    import playwright.async_api  # noqa: F401
    import ray

    import sandbox.runner.attempt  # noqa: F401
    import sandbox.runner.wiring  # noqa: F401
    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.batch import run_batch
    from sandbox.runner.executors.ray_warm import start_pool, stop_pool
    from toolserver.capacity import cores

    reviewed = [p for p in list_packs() if p.card.reviewed]
    packs, rounds = (reviewed[:repeats], 1) if repeats < len(reviewed) else (reviewed, repeats // len(reviewed))
    out = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    agent = f"think:{think:g}:reference"

    async def timed(executor: str) -> tuple[float, list]:
        began = time.perf_counter()
        outcomes = await run_batch(
            packs, agent, repeats=rounds, concurrency=concurrency, out=out, progress=False, executor=executor
        )
        return time.perf_counter() - began, outcomes

    local_s, local = await timed("local")
    ray.init(address="local", num_cpus=cores(), include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        cold_s, cold = await timed(f"ray:{address}")
        pool = await start_pool("bench", capacity=concurrency)
        try:
            warm_s, warm = await timed(f"ray:{address},pool=bench")
        finally:
            stop_pool("bench")
    finally:
        ray.shutdown()
        shutil.rmtree(out, ignore_errors=True)
    return {
        "ray_attempts": len(local),
        "ray_think_s": think,
        "ray_concurrency": concurrency,
        "ray_workers": len(pool),
        "ray_local_s": local_s,
        "ray_cold_s": cold_s,
        "ray_cold_ratio": cold_s / local_s,
        "ray_warm_s": warm_s,
        "ray_warm_ratio": warm_s / local_s,
        "ray_same_verdicts": verdicts(local) == verdicts(cold) == verdicts(warm),
        **{
            f"ray_{name}_failed": failed(outcomes)
            for name, outcomes in (("local", local), ("cold", cold), ("warm", warm))
        },
        "ray_failed_attempts": failed(local) + failed(cold) + failed(warm),
        "ray_cold_goal": RAY_COLD_GOAL,
        "ray_warm_goal": RAY_WARM_GOAL,
    }


def print_ray(results: dict) -> None:
    print(
        f"{results['ray_attempts']} attempts of an agent thinking {results['ray_think_s']:g} s before each call, "
        f"{results['ray_concurrency']} at once: local {results['ray_local_s']:.1f} s (its own browser start, "
        f"as `sandbox run`); Ray, cold pool (the batch starts {results['ray_workers']} worker(s)) "
        f"{results['ray_cold_s']:.1f} s = {results['ray_cold_ratio']:.2f}x local (goal <= {RAY_COLD_GOAL:.2f}x); "
        f"Ray, warm pool (`sandbox ray start` before) {results['ray_warm_s']:.1f} s = "
        f"{results['ray_warm_ratio']:.2f}x local (goal <= {RAY_WARM_GOAL:.2f}x); "
        f"identical verdicts: {results['ray_same_verdicts']} (goal True); attempts not passed: local "
        f"{results['ray_local_failed']}, cold {results['ray_cold_failed']}, warm {results['ray_warm_failed']} (goal 0)"
    )
