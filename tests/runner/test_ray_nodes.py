"""--executor ray over two Ray nodes on this machine (``ray.cluster_utils.Cluster``: a head and a
second node, each with its own 4 CPUs, so one browser each): a batch's attempts run on both
nodes, each attempt.json naming its node; a node removed mid-batch loses only the attempts it
was running (crashed, with the reason), which --retries 1 re-runs on the surviving node; nodes
that join mid-batch get workers, up to the batch's concurrency."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import ray
from ray.cluster_utils import Cluster

from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch
from sandbox.runner.executors import ray_pool
from sandbox.runner.executors.ray_pool import RayPool, worker_places


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 4, "include_dashboard": False})
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def second_node(cluster):
    """The cluster's second node, alive (a test before may have removed it: then a new one)."""
    if not cluster.worker_nodes:
        cluster.add_node(num_cpus=4)
        cluster.wait_for_nodes()
    return next(iter(cluster.worker_nodes))


def record(outcome) -> dict:
    return json.loads((outcome.directory / "attempt.json").read_text())


async def batch(out: Path, agent: str, repeats: int, retries: int | None = None):
    return await run_batch(
        [load_pack("controlled-form")],
        agent,
        repeats=repeats,
        concurrency=4,
        out=out,
        progress=False,
        executor="ray",
        retries=retries,
    )


async def test_a_batch_runs_on_both_nodes(cluster, second_node, tmp_path):
    outcomes = await batch(tmp_path, "reference", repeats=4)
    assert all(o.qualified_pass for o in outcomes)
    assert {record(o)["ray_node"] for o in outcomes} == {cluster.head_node.node_id, second_node.node_id}


async def test_a_dead_worker_is_replaced_on_a_free_slot_of_a_live_node(cluster, second_node):
    head, second = cluster.head_node.node_id, second_node.node_id
    pool = await RayPool.start(concurrency=4)  # one worker per node
    try:
        (on_second,) = [worker for worker in pool.workers if worker.node == second]
        ray.kill(on_second.handle)  # its process dies, its node lives: replaced there
        await pool.replace(on_second)
        assert sorted(worker.node for worker in pool.workers) == sorted([head, second])
        assert on_second not in pool.workers
        (on_second,) = [worker for worker in pool.workers if worker.node == second]
        cluster.remove_node(second_node)  # its node goes, the head's one browser slot is taken: not replaced
        await pool.replace(on_second)
        assert [worker.node for worker in pool.workers] == [head]
    finally:
        await pool.stop()


async def remove_mid_batch(cluster, node, out: Path, retries: int):
    """8 attempts of an agent thinking 0.2 s before each call (3-4 s each), 4 at once over the two
    nodes; ``node`` is removed as soon as an attempt has completed on it, when the driver has
    just sent it the next one."""
    running = asyncio.ensure_future(batch(out, "think:0.2:reference", repeats=8, retries=retries))
    while not running.done():
        try:
            if any(json.loads(p.read_text()).get("ray_node") == node.node_id for p in out.glob("*/*/attempt.json")):
                break
        except json.JSONDecodeError:  # being written
            pass
        await asyncio.sleep(0.05)
    cluster.remove_node(node)
    return await running


async def test_a_removed_node_fails_only_the_attempts_it_was_running(cluster, second_node, tmp_path):
    lost = second_node.node_id
    outcomes = await remove_mid_batch(cluster, second_node, tmp_path, retries=0)
    assert worker_places(8) == [cluster.head_node.node_id]  # the places follow the live nodes
    crashed = [record(o) for o in outcomes if o.status == "crashed"]
    assert len(outcomes) == 8 and 1 <= len(crashed) <= 2, [o.status for o in outcomes]
    for attempt in crashed:
        assert (attempt.get("ray_node"), attempt.get("tries")) == (lost, 1), attempt["error"]
        assert attempt["error"].startswith(f"ray worker died on node {lost}: ")
    others = [o for o in outcomes if o.status != "crashed"]
    assert all(o.qualified_pass for o in others)
    assert lost in {record(o).get("ray_node") for o in others}  # it ran attempts before it went


async def test_retries_rerun_a_removed_nodes_attempts_on_the_surviving_node(cluster, second_node, tmp_path):
    outcomes = await remove_mid_batch(cluster, second_node, tmp_path, retries=1)
    assert len(outcomes) == 8 and all(o.qualified_pass for o in outcomes), [o.reason for o in outcomes]
    retried = [record(o) for o in outcomes if record(o).get("tries") == 2]
    assert 1 <= len(retried) <= 2
    assert {attempt["ray_node"] for attempt in retried} == {cluster.head_node.node_id}


async def test_a_batchs_own_workers_take_nodes_that_join_up_to_its_concurrency(cluster, monkeypatch):
    # The head alone first (one browser slot), a batch of concurrency 2: one worker. Two nodes join;
    # the next attempt's start looks for them and starts one worker beside it (the second would go
    # over the concurrency), without the attempt waiting for it.
    for node in list(cluster.worker_nodes):
        cluster.remove_node(node)
    monkeypatch.setattr(ray_pool, "LOOK_EVERY_S", 0.0)
    head = cluster.head_node.node_id
    pool = await RayPool.start(concurrency=2)
    joined = []
    try:
        assert [worker.node for worker in pool.workers] == [head]
        joined = [cluster.add_node(num_cpus=4), cluster.add_node(num_cpus=4)]
        cluster.wait_for_nodes()
        picked = await pool.pick()
        looking = pool.looking
        assert picked.node == head and looking is not None and len(pool.workers) == 1
        await looking
        nodes = [worker.node for worker in pool.workers]
        assert len(nodes) == 2 and nodes[0] == head and nodes[1] in {node.node_id for node in joined}, nodes
        await pool.pick()
        assert pool.looking is not None
        await pool.looking
        assert [worker.node for worker in pool.workers] == nodes  # full: nothing more
    finally:
        await pool.stop()
        for node in joined:
            cluster.remove_node(node)
