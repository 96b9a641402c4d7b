"""What a Ray worker takes from the driver and what from its own environment: a Ray of one node
(``ray.cluster_utils.Cluster``) whose processes have an ``OPENAI_BASE_URL`` of their own, a closed
port on loopback, as a pool or cluster started from another shell would."""

from __future__ import annotations

import json

import pytest
import ray
from ray.cluster_utils import Cluster

from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch
from tests.support.models import scripted_server
from tests.support.serve import free_port, served


@pytest.fixture(scope="module")
def cluster():
    nowhere = f"http://127.0.0.1:{free_port()}/v1"  # the workers' own: nothing listens there
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 4, "include_dashboard": False, "env_vars": {"OPENAI_BASE_URL": nowhere}},
    )
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


async def test_the_drivers_model_endpoint_is_the_one_its_workers_use(cluster, tmp_path, monkeypatch):
    """OPENAI_BASE_URL on the driver: the check before the batch reached it, and every attempt on a
    worker went to the worker's own (there, a closed port; without one, the SDK's default, the real
    network)."""
    runner, url = await served(scripted_server().create_app())
    monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
    try:
        (attempt,) = await run_batch(
            [load_pack("bid-intake")], "openai:scripted-browser-1", out=tmp_path, progress=False,
            executor=f"ray:{cluster.address}",
        )  # fmt: skip
    finally:
        await runner.cleanup()
    record = json.loads((attempt.directory / "attempt.json").read_text())
    assert attempt.status == "completed", attempt.reason
    assert record["agent_details"]["base_url"] == f"{url}/v1" and record["ray_node"]
