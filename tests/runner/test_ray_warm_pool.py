"""Warm pools on a Ray of this machine (``ray.cluster_utils.Cluster``, two nodes of 4 CPUs):
``sandbox ray start`` starts detached workers that ``sandbox run --executor ray:ADDRESS`` then
uses, leaving them running, so a second batch runs on the same actors and their browsers start
once; ``status`` shows them; ``stop`` ends them. A pool worker that dies is replaced under its
name and stays in the pool. No Ray at the address, no pool of that name: exit 2, one line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import ray
from ray.cluster_utils import Cluster

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions
from sandbox.runner.batch import BatchStopped, run_batch
from sandbox.runner.executors import AttemptSettings, BatchAgent, ray_pool, ray_warm
from sandbox.runner.executors.ray_pool import RayUnavailable
from sandbox.runner.executors.ray_warm import join_pool, pool_status, start_pool, stop_pool
from tests.support.dying_workers import kill_during_the_first_try
from toolserver.contract.trace import read_trace

SANDBOX = Path(sys.executable).parent / "sandbox"


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 4, "include_dashboard": False})
    cluster.add_node(num_cpus=4)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def sandbox(*args) -> subprocess.CompletedProcess:
    return subprocess.run([SANDBOX, *map(str, args)], capture_output=True, text=True, timeout=300)


def test_batches_on_a_warm_pool_start_no_worker_and_leave_it_running(cluster, tmp_path):
    address = cluster.address
    started = sandbox("ray", "start", "--address", address, "--workers", "2", "--json")
    assert started.returncode == 0, started.stderr
    pool = json.loads(started.stdout)
    assert [(w["alive"], w["browser_starts"], w["attempts"]) for w in pool] == [(True, 1, 0)] * 2
    assert len({w["node"] for w in pool}) == 2  # one per node (each node's 4 CPUs: one browser)
    for n in (1, 2):
        ran = sandbox("run", "controlled-form", "--agent", "reference", "--repeats", "2", "--concurrency", "2",
                      "--executor", f"ray:{address}", "--out", tmp_path / str(n), "--no-progress")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
    status = sandbox("ray", "status", "--address", address, "--json")
    assert status.returncode == 0, status.stderr
    after = json.loads(status.stdout)
    assert [w["actor"] for w in after] == [w["actor"] for w in pool]  # the same actors served both batches
    assert [(w["alive"], w["browser_starts"], w["attempts"]) for w in after] == [(True, 1, 2)] * 2
    text = sandbox("ray", "status", "--address", address)
    assert text.returncode == 0 and "pool/default/0" in text.stdout and "pool/default/1" in text.stdout
    stopped = sandbox("ray", "stop", "--address", address)
    assert stopped.returncode == 0 and "2 workers ended" in stopped.stdout, stopped.stderr
    gone = sandbox("ray", "status", "--address", address, "--name", "default")
    assert gone.returncode == 2 and gone.stdout == ""
    assert gone.stderr == (
        "sandbox ray status: no pool named 'default' (no pool runs): "
        "start one with `sandbox ray start --name default`\n"
    )


def test_the_status_table_says_a_worker_runs_fewer_attempts_at_once_than_asked(capsys):
    """A worker clamped to its server's session cap showed the attempts its pool asked for."""
    from sandbox.cli.commands.ray import show

    row = {"worker": "pool/p/0", "node": "n" * 20, "alive": True, "attempts": 0, "running": 0, "waiting": 0}
    show([{**row, "capacity": 64, "slots": 48, "held_by": "max_sessions_per_core 24 × 2 cores"}], as_json=False)
    assert "48 (of 64 asked: max_sessions_per_core 24 × 2 cores)" in capsys.readouterr().out
    show([{**row, "capacity": 8, "slots": 8, "held_by": "max_open_sessions 200"}], as_json=False)
    assert capsys.readouterr().out.splitlines()[-1].rstrip().endswith(" 8")


def test_no_ray_at_the_address_is_one_line_and_exit_2():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for command in ("start", "status", "stop"):
        done = sandbox("ray", command, "--address", f"127.0.0.1:{port}")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"sandbox ray {command}: no Ray at 127.0.0.1:{port} (")
        assert done.stderr.count("\n") == 1, done.stderr
    ran = sandbox("run", "controlled-form", "--agent", "reference", "--executor", f"ray:127.0.0.1:{port}")
    assert ran.returncode == 2 and ran.stderr.startswith(f"sandbox run: no Ray at 127.0.0.1:{port} ("), ran.stderr
    assert ran.stderr.count("\n") == 1, ran.stderr
    # the default address, auto, is $RAY_ADDRESS when set: it hung for minutes before
    done = subprocess.run([SANDBOX, "ray", "status"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "RAY_ADDRESS": f"127.0.0.1:{port}"})  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith(
        f"sandbox ray status: no Ray at 127.0.0.1:{port} ($RAY_ADDRESS) ("
    ), done.stderr


async def test_a_batch_naming_a_pool_that_does_not_run_is_refused(cluster, tmp_path):
    with pytest.raises(RayUnavailable, match="no pool named 'nowhere'"):
        await run_batch([load_pack("controlled-form")], "reference", out=tmp_path, progress=False,
                        executor=f"ray:{cluster.address},pool=nowhere")  # fmt: skip


async def test_a_pool_worker_that_dies_is_replaced_in_the_pool(cluster, tmp_path):
    (before,) = await start_pool("mend", workers=1)
    pool = await join_pool("mend")
    assert pool is not None
    try:
        worker = ray.get_actor(before["worker"], namespace="browser-tool-sandbox")
        outcome = await kill_during_the_first_try(pool, tmp_path, 1, lambda: ray.kill(worker))
        await pool.stop()  # the batch's end: a pool's workers stay
        (after,) = await pool_status("mend")
        assert outcome.status == "completed"
        assert json.loads((tmp_path / "attempt" / "attempt.json").read_text())["tries"] == 2
        assert (after["worker"], after["alive"], after["attempts"]) == (before["worker"], True, 1)
        assert after["actor"] != before["actor"]
        # dead between batches: the next batch's start replaces it
        ray.kill(ray.get_actor(before["worker"], namespace="browser-tool-sandbox"))
        assert (await pool_status("mend"))[0]["alive"] is False
        await join_pool("mend")
        (again,) = await pool_status("mend")
        assert again["alive"] and again["actor"] not in (before["actor"], after["actor"])
    finally:
        stop_pool("mend")


async def test_a_pool_started_meanwhile_by_another_start_is_one_line_and_left_alone(cluster, monkeypatch):
    """Two `sandbox ray start --name X` at once: both find no pool; the one that makes the pool's
    record second is refused, in one line, and the first one's workers go on."""
    from sandbox.runner.executors import ray_warm

    (first,) = await start_pool("twice", workers=1)
    try:
        monkeypatch.setattr(ray_warm, "find_record", lambda pool: None)  # its check ran before the first start
        with pytest.raises(RayUnavailable, match="^a pool named 'twice' was started meanwhile by another"):
            await start_pool("twice", workers=1)
        monkeypatch.undo()
        (still,) = await pool_status("twice")
        assert (still["actor"], still["alive"]) == (first["actor"], True)
    finally:
        stop_pool("twice")


async def test_a_pool_of_every_slot_follows_the_nodes_and_one_of_a_set_size_keeps_it(cluster):
    """Started without --workers, a pool takes the browser slot of a node that joined since at the
    next batch's start (two batches starting at once share the new worker), and drops the worker of
    a node that is gone; with --workers it keeps its size."""
    every = await start_pool("follow")
    fixed = await start_pool("fixed", workers=1)
    try:
        assert len(every) == 2 and len(fixed) == 1
        third = cluster.add_node(num_cpus=4)
        cluster.wait_for_nodes()
        await asyncio.gather(join_pool("follow"), join_pool("follow"), join_pool("fixed"))  # two batches at once
        grown = await pool_status("follow")
        assert [row["alive"] for row in grown] == [True] * 3  # the two batches share the new worker
        assert [row["node"] for row in grown][2] == third.node_id
        assert grown[2]["worker"] == f"pool/follow/{third.node_id[:12]}.0"
        assert [row["actor"] for row in await pool_status("fixed")] == [fixed[0]["actor"]]
        cluster.remove_node(third)
        await join_pool("follow")
        kept = await pool_status("follow")
        assert [(row["worker"], row["actor"], row["alive"]) for row in kept] == [
            (row["worker"], row["actor"], True) for row in every
        ]
    finally:
        stop_pool("follow")
        stop_pool("fixed")


async def test_a_running_batch_on_a_pool_that_follows_the_nodes_takes_a_node_that_joins(cluster, monkeypatch):
    """A batch joined before a node did; another batch then joins and adds the node's worker; the
    first batch's next attempt start finds that worker in the pool's record and uses it, starting
    none of its own. A node that joins later still gets a worker from the running batch."""
    monkeypatch.setattr(ray_pool, "LOOK_EVERY_S", 0.0)
    await start_pool("grows")
    joined = []
    try:
        first = await join_pool("grows")
        assert first is not None and len(first.workers) == 2
        joined.append(cluster.add_node(num_cpus=4))
        cluster.wait_for_nodes()
        second = await join_pool("grows")  # its start adds the new node's worker
        assert second is not None and len(second.workers) == 3
        await first.pick()  # starts its look for nodes, which may end during the pick's own awaits
        if first.looking is not None:
            await first.looking
        assert sorted(w.name for w in first.workers) == sorted(w.name for w in second.workers)
        assert {w.node for w in first.workers} >= {joined[0].node_id}
        joined.append(cluster.add_node(num_cpus=4))
        cluster.wait_for_nodes()
        await first.pick()  # starts its look for nodes, which may end during the pick's own awaits
        if first.looking is not None:
            await first.looking
        status = await pool_status("grows")
        assert len(status) == 4 and all(row["alive"] for row in status)
        assert status[3]["worker"] == f"pool/grows/{joined[1].node_id[:12]}.0"
        assert status[3]["node"] == joined[1].node_id and status[3]["worker"] in {w.name for w in first.workers}
        await first.stop()  # the batch's end: a pool's workers stay
        assert [row["alive"] for row in await pool_status("grows")] == [True] * 4
    finally:
        stop_pool("grows")
        for node in joined:
            cluster.remove_node(node)


def test_the_spec_names_a_pool_after_the_address():
    from sandbox.runner.executors import ExecutorSpecError, parse_executor

    def options(spec: str) -> tuple:
        chosen = parse_executor(spec).options
        return chosen.address, chosen.pool

    assert options("ray:10.0.0.5:6379,pool=night") == ("10.0.0.5:6379", "night")
    assert options("ray:ray://10.0.0.5:10001") == ("ray://10.0.0.5:10001", None)
    assert options("ray:auto,pool=night") == ("auto", "night")
    assert options("ray") == (None, None)
    with pytest.raises(ExecutorSpecError, match=r"'poll=night' after the address: use ray\[:ADDRESS\]\[,pool=NAME\]"):
        parse_executor("ray:10.0.0.5:6379,poll=night")


async def test_a_batch_stopped_on_a_pool_stops_its_attempts_on_the_worker(cluster, tmp_path):
    """A stop of the batch (Ctrl-C, a signal) while a pool worker runs its attempts: each is
    recorded as stopped on the driver, and cancelled on the worker, which goes on serving."""
    await start_pool("stops", workers=1)
    try:
        batch = asyncio.ensure_future(
            run_batch(
                [load_pack("controlled-form")],
                "think:1:reference",
                repeats=2,
                concurrency=2,
                out=tmp_path,
                progress=False,
                executor=f"ray:{cluster.address},pool=stops",
            )  # fmt: skip
        )
        for _ in range(600):  # until the worker runs both
            if (await pool_status("stops"))[0]["running"] == 2:
                break
            await asyncio.sleep(0.05)
        batch.cancel()
        with pytest.raises(BatchStopped) as stopped:
            await batch
        outcomes = stopped.value.outcomes
        assert [outcome.status for outcome in outcomes] == ["stopped", "stopped"], [o.reason for o in outcomes]
        for outcome in outcomes:  # as the worker recorded it, fetched from its node (only attempt.json before)
            attempt = json.loads((outcome.directory / "attempt.json").read_text())
            assert attempt["status"] == "stopped" and attempt["error"].startswith("the batch was stopped after")
            assert attempt["ray_node"] and (outcome.directory / "score.json").is_file()
            trace = read_trace(outcome.directory / "trace.jsonl")
            assert trace.header is not None and trace.end["reason"] == "stopped"
        for _ in range(200):  # the worker's attempts end: they were cancelled, not left to run to the end
            worker = (await pool_status("stops"))[0]
            if worker["running"] == 0:
                break
            await asyncio.sleep(0.05)
        assert (worker["alive"], worker["running"], worker["attempts"]) == (True, 0, 2)
    finally:
        stop_pool("stops")


async def test_a_pool_whose_record_is_lost_is_said_and_its_workers_can_still_be_stopped(cluster):
    """The record lived on whichever node Ray chose: with that node gone, `status` said no pool
    ran while its workers went on, unseen, and `stop` could not end them."""
    await start_pool("lost", workers=1)
    head = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "node:__internal_head__" in n["Resources"])
    record = ray.get_actor("pool/lost", namespace=ray_pool.NAMESPACE)
    assert ray.get(record.node.remote()) == head  # on the head, which the cluster needs (anywhere before)
    ray.kill(record)  # as its node's death would
    with pytest.raises(RayUnavailable, match=r"pool 'lost' lost its record .* `sandbox ray stop --name lost` ends"):
        await join_pool("lost")
    (row,) = await pool_status("lost")
    assert (row["worker"], row["alive"], row["orphan"]) == ("pool/lost/0", True, True)
    assert stop_pool("lost") == 1
    with pytest.raises(RayUnavailable, match="no pool named 'lost'"):
        await pool_status("lost")


async def test_batches_at_once_on_a_pool_spread_over_its_workers(cluster, tmp_path):
    """Each batch picked the least busy worker by its own count: a batch whose attempt started
    while another batch's ran sent it to that same worker (the pool's first), to wait there, the
    other worker idle."""
    await start_pool("shared", workers=2, capacity=1)
    try:
        first, second = await join_pool("shared"), await join_pool("shared")
        assert first is not None and second is not None
        settings = AttemptSettings(time_limit=60, screenshots="none")

        def attempt(batch, name: str, command: str) -> asyncio.Future:
            agent = BatchAgent(f"cmd:{command}", AgentOptions())
            return asyncio.ensure_future(
                batch.run(tmp_path / name, "controlled-form", agent, settings, attempt_number=1, retries=0)
            )

        running = attempt(first, "a", f"touch {tmp_path / 'began'}; sleep 5")
        while not (tmp_path / "began").exists():
            await asyncio.sleep(0.05)
        await asyncio.gather(running, attempt(second, "b", "true"))
        assert sorted(row["attempts"] for row in await pool_status("shared")) == [1, 1]
        wait = json.loads((tmp_path / "b" / "attempt.json").read_text())["dispatch_wait_seconds"]
        assert wait < 2.5, wait  # not behind the first (5 s); a busy machine's actor call takes tenths
    finally:
        stop_pool("shared")


async def test_a_pool_stopped_under_a_batch_says_so_and_is_not_retried(cluster, tmp_path):
    """`sandbox ray stop` while a batch ran on the pool: its attempts said only that their worker
    died, and --retries sent them on to the pool's other dead workers."""
    await start_pool("ending", workers=2)
    try:
        pool = await join_pool("ending")
        assert pool is not None
        outcome = await kill_during_the_first_try(pool, tmp_path, 2, lambda: stop_pool("ending"))
    finally:
        if ray_warm.find_record("ending") is not None:
            stop_pool("ending")
    record = json.loads((tmp_path / "attempt" / "attempt.json").read_text())
    assert outcome.status == "crashed" and record["tries"] == 1, record
    assert "its warm pool 'ending' was stopped (`sandbox ray stop`) while the batch ran" in record["error"]


def test_a_pool_whose_worker_cannot_start_is_one_line_and_not_left_running(cluster):
    """A node where a worker's browser cannot start: `sandbox ray start` said Ray's task header
    (``ray::AttemptWorker.start() (pid=..., ...)``, in colour) and nothing of why."""
    broken = cluster.add_node(num_cpus=4, env_vars={"SANDBOX_CHROMIUM": "/nowhere/chromium"})
    cluster.wait_for_nodes()
    try:
        started = sandbox("ray", "start", "--address", cluster.address, "--name", "broken")
        assert started.returncode == 2 and started.stdout == "", started.stdout
        assert started.stderr == (
            f"sandbox ray start: pool 'broken' is not started: a Ray worker did not start on node {broken.node_id}: "
            "ChromiumUnavailable: SANDBOX_CHROMIUM is /nowhere/chromium, which is not a file: give the path of a "
            "Chromium binary\n"
        )
        assert sandbox("ray", "status", "--address", cluster.address, "--name", "broken").returncode == 2
    finally:
        cluster.remove_node(broken)


async def test_a_replacement_that_does_not_start_leaves_the_batch_the_live_workers(cluster, monkeypatch):
    """A dead worker's replacement that did not start (its node gone meanwhile) sank the batch,
    though the pool's other worker was alive."""
    before = await start_pool("part", workers=2)
    try:
        ray.kill(ray.get_actor(before[1]["worker"], namespace="browser-tool-sandbox"))
        gone = "ab" * 28  # a node that is not there: the replacement does not start
        monkeypatch.setattr(ray_pool.RayPool, "free_places", lambda self, count, slots=None: [gone][:count])
        pool = await join_pool("part")
        assert pool is not None and [worker.name for worker in pool.workers] == [before[0]["worker"]]
    finally:
        stop_pool("part")


async def test_a_pool_of_another_version_of_the_sandbox_is_refused(cluster, monkeypatch):
    """Pool workers keep the code and mirrors they started with: after a `git pull` a batch joined
    the old pool and its attempts failed on mirrors changed since. The record's version, then a
    worker's, not the driver's: refused in one line saying what to do."""
    monkeypatch.setattr(ray_warm, "installed_version", lambda: "0.0.1+source.old+mirrors.old")
    await start_pool("stale", workers=1)  # started by the older sandbox: its record says so
    try:
        monkeypatch.undo()
        with pytest.raises(RayUnavailable) as refused:
            await join_pool("stale")
        assert str(refused.value) == (
            "the warm pool 'stale' runs another version of the sandbox (its record: 0.0.1+source.old+mirrors.old; "
            f"this one: {ray_pool.installed_version()}): `sandbox ray stop --name stale` then "
            "`sandbox ray start --name stale`"
        )
        # the record agrees, a worker does not (it imported another source tree)
        monkeypatch.setattr(ray_warm, "installed_version", lambda: "0.0.1+source.old+mirrors.old")
        with pytest.raises(RayUnavailable, match=r"\(its worker pool/stale/0: [^;]+\+source\.[0-9a-f]{12}\+mirrors\."):
            await join_pool("stale")
    finally:
        stop_pool("stale")


async def test_a_pack_whose_copy_on_the_worker_differs_from_the_drivers_is_not_run(cluster, tmp_path):
    """A pack of your own is loaded by each worker from its folder: a node's copy other than the
    driver's was scored against other rules, silently."""
    import shutil

    from sandbox.paths import PACKS_DIR

    copy = tmp_path / "controlled-form"
    shutil.copytree(PACKS_DIR / "controlled-form", copy)
    pack = load_pack(str(copy))
    checksum = pack.checksum()  # the driver's, read before the copy changed
    (copy / "expected.json").write_text((copy / "expected.json").read_text() + "\n")  # changed on the node
    (before,) = await start_pool("copies", workers=1)
    try:
        pool = await join_pool("copies")
        assert pool is not None
        outcome = await pool.run(tmp_path / "attempt", pack.id, BatchAgent("reference", AgentOptions()),
                                 AttemptSettings(time_limit=60), attempt_number=1, retries=0,
                                 load_from=str(copy), checksum=checksum)  # fmt: skip
    finally:
        stop_pool("copies")
    assert outcome.status == "crashed"
    assert f"PackDiffers: pack controlled-form on node {before['node']} differs from the driver's" in outcome.reason


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_start_stopped_while_its_browsers_start_leaves_no_pool(cluster, stop, code):
    """Ctrl-C or SIGTERM while `sandbox ray start` started its workers' browsers left the record of
    a half-started pool: `status` showed dead workers and the next `start` was refused."""
    name = f"cut-{stop.name.lower()}"
    command = [SANDBOX, "ray", "start", "--address", cluster.address, "--name", name, "--workers", "2"]
    starting = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # until its record is made: its workers start next
            if ray_warm.find_record(name) is not None or starting.poll() is not None:
                break
            time.sleep(0.02)
        starting.send_signal(stop)
        out, err = starting.communicate(timeout=120)
    finally:
        starting.kill()
    assert starting.returncode == code, out + err
    assert ray_warm.find_record(name) is None and ray_warm.orphans(name) == []
    again = sandbox("ray", "start", "--address", cluster.address, "--name", name, "--workers", "1")
    assert again.returncode == 0, again.stderr
    stop_pool(name)


async def gone(name: str) -> bool:
    """Whether no live actor has that name (a killed one's name is freed within a few seconds)."""
    for _ in range(100):
        if ray_pool.named_actor(name) is None:
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_worker_added_while_its_pool_is_stopped_is_ended(cluster, monkeypatch):
    """A batch added a worker for a free slot, then found the pool's record gone (`sandbox ray
    stop` meanwhile): the worker ran on, in no record, unseen by the stop."""
    await start_pool("added", workers=1)  # one worker, so the other node's slot is free
    record = ray_warm.find_record("added")
    real = ray_warm.start_worker
    names = []

    async def then_stopped(kind, node, name=None):
        worker = await real(kind, node, name)
        names.append(name)
        ray.kill(record)  # `sandbox ray stop` lands while it started
        assert await gone("pool/added")  # and has ended the record (a kill ends it a moment later: it raced)
        return worker

    monkeypatch.setattr(ray_warm, "start_worker", then_stopped)
    running = ray_pool.RayPool([], ray_pool.worker_class(8), size=ray_pool.ALL_SLOTS, fill=False)
    try:
        with pytest.raises(ray.exceptions.RayError):
            await ray_warm.following("added", record)(running)
        assert len(names) == 1 and await gone(names[0])
    finally:
        with contextlib.suppress(RayUnavailable):
            stop_pool("added")


async def test_a_replacement_started_while_its_pool_is_stopped_is_ended(cluster, monkeypatch):
    """A dead pool worker's replacement started as `sandbox ray stop` ran: the stop had ended the
    worker of that name already, and the replacement ran on under it."""
    await start_pool("refill", workers=1)
    pool = await join_pool("refill")
    assert pool is not None
    (dead,) = pool.workers
    real = ray_pool.start_worker

    async def then_stopped(kind, node, name=None):
        worker = await real(kind, node, name)
        ray.kill(ray_warm.find_record("refill"))  # `sandbox ray stop` lands while it started
        assert await gone("pool/refill")  # and has ended the record (its name is freed a moment later)
        return worker

    monkeypatch.setattr(ray_pool, "start_worker", then_stopped)
    try:
        ray_pool.end_worker(dead)
        await pool.replace(dead)
        assert pool.workers == [] and await gone(dead.name)
    finally:
        with contextlib.suppress(RayUnavailable):
            stop_pool("refill")


async def test_a_start_takes_back_the_workers_a_following_pool_added(cluster):
    """`sandbox ray start --name NAME` after its record was lost took back pool/NAME/<i> only: the
    workers added for nodes that joined (pool/NAME/<node>.<k>) ran on, unseen by `status`."""
    first = await start_pool("back")
    node = first[0]["node"]
    added = await ray_pool.start_worker(ray_pool.worker_class(8), node, f"pool/back/{node[:12]}.0")
    ray.kill(ray_warm.find_record("back"))  # lost, as with its node
    try:
        again = await start_pool("back")
        assert [row["worker"] for row in again] == [row["worker"] for row in first] + [added.name]
        assert all(row["alive"] for row in again) and ray_warm.orphans("back") == []
    finally:
        stop_pool("back")
