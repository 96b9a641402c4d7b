"""--executor ray: attempts on a local Ray instance (started here with 2 CPUs), each worker
with its own warm browser; the same table as a local run; a worker that dies fails only its
attempt, recorded with the reason, and --retries re-runs it on a fresh worker."""

from __future__ import annotations

import asyncio
import json

import pytest
import ray

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions
from sandbox.runner.batch import run_batch, summarise
from sandbox.runner.ray_executor import RayPool


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def table(outcomes) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "median_seconds"} for row in summarise(outcomes)]


async def test_ray_batch_gives_the_local_table(local_ray, sandbox, tmp_path):
    packs = [load_pack("controlled-form"), load_pack("bid-intake")]
    on_ray = await run_batch(packs, "reference", concurrency=2, out=tmp_path / "ray", progress=False, executor="ray")
    local = await run_batch(packs, "reference", concurrency=2, out=tmp_path / "local", progress=False, sandbox=sandbox)
    assert table(on_ray) == table(local)
    assert all(o.qualified_pass for o in on_ray)
    for outcome in on_ray:
        assert outcome.directory.parent.parent == tmp_path / "ray"
        attempt = json.loads((outcome.directory / "attempt.json").read_text())
        assert attempt["qualified_pass"] is True and (outcome.directory / "trace.jsonl").stat().st_size > 0


@pytest.mark.parametrize("retries", [0, 1])
async def test_a_dead_worker_fails_only_its_attempt(local_ray, tmp_path, retries):
    marker = tmp_path / "first-try-started"
    agent = f"cmd:test -e {marker} || (touch {marker}; sleep 30)"   # the first try hangs, a retry returns at once
    pool = await RayPool(None, 1).start()
    try:
        running = asyncio.ensure_future(pool.run(
            tmp_path / "attempt", "controlled-form", agent, AgentOptions(), retries=retries, attempt_number=1,
            time_limit=60, policy=None, block_state_changes=None))
        for _ in range(600):
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        ray.kill(pool.workers[0])
        outcome = await running
    finally:
        pool.stop()
    attempt = json.loads((tmp_path / "attempt" / "attempt.json").read_text())
    if retries == 0:
        assert outcome.status == "crashed" and not outcome.qualified_pass
        assert attempt["status"] == "crashed" and "ray worker died" in attempt["error"]
    else:   # the retry ran on a fresh worker: a real attempt with a trace and a score
        assert outcome.status == "completed" and attempt["status"] == "completed"
        assert (tmp_path / "attempt" / "trace.jsonl").is_file() and (tmp_path / "attempt" / "score.json").is_file()


def test_one_browser_per_node_of_two_cpus(local_ray):
    from sandbox.runner.ray_executor import worker_places

    node = ray.get_runtime_context().get_node_id()
    assert worker_places(8) == [node]   # 2 CPUs: one browser already uses both
    assert worker_places(1) == [node]
