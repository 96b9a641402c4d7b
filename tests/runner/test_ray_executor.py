"""--executor ray: attempts on a local Ray instance (started here with 2 CPUs), each worker
with its own warm browser; the same table as a local run; a worker that dies fails only its
attempt, recorded with the reason, and --retries re-runs it on a fresh worker."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import ray

from sandbox.evaluation.packs import load_pack
from sandbox.paths import PACKS_DIR
from sandbox.runner.agents import AgentOptions
from sandbox.runner.attempt import AttemptStopped
from sandbox.runner.batch import run_batch, summarise
from sandbox.runner.executors import AttemptSettings, BatchAgent, ray_pool
from sandbox.runner.executors.ray_pool import RayPool, worker_places
from sandbox.runner.folders import AttemptFolder
from sandbox.runner.folders import outcome as outcome_of
from sandbox.runner.selection import interruption
from tests.support.agents import TASK_PROMPT
from tests.support.dying_workers import hanging_attempt, kill_during_the_first_try, scratch_folders


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # not a Ray already running
    yield
    ray.shutdown()


def table(outcomes) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "median_seconds"} for row in summarise(outcomes)]


async def test_ray_batch_gives_the_local_table(local_ray, sandbox, tmp_path):
    packs = [load_pack("controlled-form"), load_pack("bid-intake")]
    on_ray, local = await asyncio.gather(  # at once: the Ray worker's start-up overlaps the local attempts
        run_batch(packs, "reference", concurrency=2, out=tmp_path / "ray", progress=False, executor="ray"),
        run_batch(packs, "reference", concurrency=2, out=tmp_path / "local", progress=False, sandbox=sandbox),
    )
    assert table(on_ray) == table(local)
    assert all(o.qualified_pass for o in on_ray)
    for outcome in on_ray:
        assert outcome.directory.parent.parent == tmp_path / "ray"
        attempt = json.loads((outcome.directory / "attempt.json").read_text())
        assert attempt["qualified_pass"] is True and (outcome.directory / "trace.jsonl").stat().st_size > 0


async def kill_the_worker_during_the_first_try(folder, retries: int):
    """One attempt on a pool of one worker whose agent hangs on its first try; the worker is
    killed while it hangs. Returns the attempt's outcome and its folder."""
    pool = await RayPool.start(1)
    try:
        outcome = await kill_during_the_first_try(pool, folder, retries, lambda: ray.kill(pool.workers[0].handle))
        return outcome, folder / "attempt"
    finally:
        await pool.stop()


@pytest.fixture(scope="module")
async def dead_workers(local_ray, tmp_path_factory) -> dict:
    """Both cases at once, each with its own pool (its worker's start-up is most of the time),
    and the scratch folders they left on this node."""
    before = scratch_folders()
    cases = [kill_the_worker_during_the_first_try(tmp_path_factory.mktemp(f"retries-{n}"), n) for n in (0, 1)]
    outcomes = dict(zip((0, 1), await asyncio.gather(*cases), strict=True))
    left = {folder for folder in scratch_folders() - before if (folder / "attempt").exists()}  # ours, not others'
    return outcomes | {"left": left}


@pytest.mark.parametrize("retries", [0, 1])
def test_a_dead_worker_fails_only_its_attempt(dead_workers, retries):
    outcome, folder = dead_workers[retries]
    attempt = json.loads((folder / "attempt.json").read_text())
    # The dead try's trace, up to the worker's death, came back from its node: in the attempt's
    # folder, or in try-1/ when a retry followed.
    lost_try = folder if retries == 0 else folder / "try-1"
    header = json.loads((lost_try / "trace.jsonl").read_text().splitlines()[0])
    assert header["type"] == "run" and header["pack"] == "controlled-form"
    if retries == 0:
        assert outcome.status == "crashed" and not outcome.qualified_pass
        assert attempt["status"] == "crashed" and "ray worker died" in attempt["error"]
        assert f"its files up to then: {folder.name}" in attempt["error"]
    else:  # the retry ran on a fresh worker: a real attempt with a trace and a score
        assert outcome.status == "completed" and attempt["status"] == "completed"
        assert (folder / "trace.jsonl").is_file() and (folder / "score.json").is_file()


def test_a_dead_worker_leaves_no_scratch_folder(dead_workers):
    assert dead_workers["left"] == set()


def test_one_browser_per_node_of_two_cpus(local_ray):
    node = ray.get_runtime_context().get_node_id()
    assert worker_places(8) == [node]  # 2 CPUs: one browser already uses both
    assert worker_places(1) == [node]


async def test_executor_ray_without_an_address_starts_its_own_ray_beside_another(tmp_path):
    """`--executor ray` starts a local Ray of its own, as documented, even when another Ray runs
    on the machine (Ray's own ``ray.init()`` joins the one `ray start` or a test cluster recorded)."""
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-c",
        "import sys, ray\nfrom ray.cluster_utils import Cluster\n"
        "cluster = Cluster(initialize_head=True, head_node_args={'num_cpus': 1, 'include_dashboard': False})\n"
        "ray.init(address=cluster.address)\nprint(ray.get_runtime_context().get_node_id(), flush=True)\n"
        "sys.stdin.read()\nray.shutdown()\ncluster.shutdown()\n",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        other_node = (await asyncio.wait_for(other.stdout.readline(), 120)).decode().strip()
        assert other_node, "the other Ray did not start"
        run = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("sandbox")), "run", "controlled-form", "--agent", "reference",
            "--executor", "ray", "--out", str(tmp_path), "--no-progress",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(run.communicate(), 240)
        assert run.returncode == 0, (out + err).decode()[-2000:]
        (attempt,) = tmp_path.glob("*/controlled-form-1/attempt.json")
        assert json.loads(attempt.read_text())["ray_node"] not in ("", None, other_node)
    finally:
        other.stdin.close()
        await asyncio.wait_for(other.wait(), 60)


async def test_a_stop_while_a_dead_workers_files_are_brought_back_records_the_attempt(local_ray, tmp_path, monkeypatch):
    """The stop came as a plain cancellation inside the dead worker's handling: no attempt.json, and
    the attempt was said "not started"."""
    salvaging = asyncio.Event()

    async def slow_salvage(node: str, scratch: str) -> dict:
        salvaging.set()
        await asyncio.sleep(60)
        return {}

    monkeypatch.setattr(ray_pool, "salvaged", slow_salvage)
    pool = await RayPool.start(1)
    try:
        running = await hanging_attempt(pool, tmp_path)
        ray.kill(pool.workers[0].handle)
        await asyncio.wait_for(salvaging.wait(), 60)
        running.cancel()
        with pytest.raises(AttemptStopped) as stopped:
            await running
    finally:
        await pool.stop()
    attempt = json.loads((tmp_path / "attempt" / "attempt.json").read_text())
    assert stopped.value.outcome.status == "stopped" and attempt["status"] == "stopped"
    assert "ray worker died" in attempt["error"] and "stopped before the attempt could run again" in attempt["error"]


async def test_a_pack_of_ones_own_runs_on_the_workers_as_it_does_here(local_ray, tmp_path):
    """The workers loaded the pack by its id: a pack of one's own was "no such pack folder" there,
    and a folder holding an edited copy of a bundled pack ran the bundled one, unsaid."""
    mine = shutil.copytree(PACKS_DIR / "controlled-form", tmp_path / "packs" / "my-form")
    card = json.loads((mine / "card.json").read_text())
    (mine / "card.json").write_text(json.dumps(card | {"pack_id": "my-form", "scoring_pack": "my-form"}))
    edited = shutil.copytree(PACKS_DIR / "controlled-form", tmp_path / "edited" / "controlled-form")
    card = json.loads((edited / "card.json").read_text())
    (edited / "card.json").write_text(json.dumps(card | {"time_limit_seconds": 77}))
    outcomes = await run_batch(
        [load_pack(mine), load_pack(edited)], "reference", concurrency=2, out=tmp_path / "out", progress=False,
        executor="ray",
    )  # fmt: skip
    by_pack = {o.pack: json.loads((o.directory / "attempt.json").read_text()) for o in outcomes}
    assert by_pack["my-form"]["status"] == "completed" and by_pack["my-form"]["qualified_pass"], by_pack["my-form"]
    assert by_pack["controlled-form"]["time_limit_seconds"] == 77
    assert by_pack["controlled-form"]["pack_path"] == str(edited.resolve())


async def test_the_workers_server_gives_the_agent_the_pack_the_batch_runs(local_ray, tmp_path):
    """A worker's server knew only the bundled packs: an agent asking GET /runs/{id}/task got the
    bundled prompt for a changed copy of a pack (and /answer scored against the bundled pack)."""
    copy = shutil.copytree(PACKS_DIR / "controlled-form", tmp_path / "mine" / "controlled-form")
    (copy / "task_prompt.md").write_text((copy / "task_prompt.md").read_text() + "\nTHE COPY'S OWN LINE\n")
    (outcome,) = await run_batch([load_pack(copy)], TASK_PROMPT, out=tmp_path / "runs", progress=False, executor="ray")
    assert outcome.status == "completed", (outcome.directory / "agent.stderr.txt").read_text()
    output = (outcome.directory / "output.txt").read_text()
    assert "THE COPY'S OWN LINE" in output
    assert output.strip() == (outcome.directory / "prompt.txt").read_text().strip()


async def test_an_attempt_that_raises_on_its_worker_is_one_line(local_ray, tmp_path):
    missing = tmp_path / "nowhere" / "my-form"  # a pack folder the worker's node does not have
    pool = await RayPool.start(1)
    try:
        outcome = await pool.run(
            tmp_path / "attempt", "my-form", BatchAgent("reference", AgentOptions()), AttemptSettings(),
            attempt_number=1, retries=0, load_from=str(missing),
        )  # fmt: skip
    finally:
        await pool.stop()
    assert (outcome.status, outcome.pack) == ("crashed", "my-form")  # the pack's id, not the folder it is loaded from
    assert outcome.reason.startswith("the sandbox could not run the attempt on Ray node ")
    error = json.loads((tmp_path / "attempt" / "attempt.json").read_text())["error"]
    assert error.startswith("the sandbox could not run the attempt on Ray node ") and "PackError" in error, error
    # an interruption, as a local attempt the sandbox could not run is, and so read back
    read_back = outcome_of(AttemptFolder.load(tmp_path / "attempt"))
    assert interruption(outcome) == interruption(read_back) == error
    assert "\n" not in error and "\x1b" not in error and "Traceback" not in error


async def test_sigterm_stops_a_ray_batch_as_it_stops_a_local_one(tmp_path):
    """ray.init put its own SIGTERM handler (sys.exit(15)) over the batch's: exit 15 after Ray's
    stack dump and a traceback, no table, no report, the attempts' files left on the workers' node."""
    import psutil

    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("sandbox")), "run", "controlled-form", "--agent", "think:2:reference",
        "--repeats", "2", "--concurrency", "2", "--executor", "ray", "--out", str(tmp_path), "--no-progress",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    for _ in range(1200):  # until its Ray runs (the handler is put when the driver joins it), and a bit
        names = {child.name() for child in psutil.Process(process.pid).children(recursive=True)}
        if any("raylet" in name for name in names):
            break
        assert process.returncode is None, await process.communicate()
        await asyncio.sleep(0.05)
    await asyncio.sleep(3)
    process.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 143, err.decode()[-2000:]
    assert "sandbox run: stopped by SIGTERM" in err.decode() and "Traceback" not in err.decode(), err.decode()[-2000:]


async def test_an_attempt_waiting_for_a_workers_slot_counts_the_wait_as_its_dispatch_wait(local_ray, tmp_path):
    """A worker runs its capacity of attempts at once; Ray queued the others in the actor, unseen:
    such an attempt's ``dispatch_wait_seconds`` was 0, and one stopped while it waited was said to
    have been stopped while it ran."""
    pool = await RayPool.start(1)  # one worker, one attempt at a time
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    try:

        def attempt(directory: Path, command: str) -> asyncio.Future:
            agent = BatchAgent(f"cmd:{command}", AgentOptions())
            return asyncio.ensure_future(
                pool.run(
                    directory,
                    "controlled-form",
                    agent,
                    AttemptSettings(time_limit=60, screenshots="none"),
                    attempt_number=1,
                    retries=0,
                )  # fmt: skip
            )

        running = attempt(first, f"touch {tmp_path / 'began'}; sleep 3")
        while not (tmp_path / "began").exists():
            await asyncio.sleep(0.05)
        waiting = attempt(second, "true")
        stopped = attempt(third, "true")
        await asyncio.sleep(1)
        stopped.cancel()  # it waits at the worker for the first to end
        with pytest.raises(AttemptStopped) as cancelled:
            await stopped
        await asyncio.gather(running, waiting)
    finally:
        await pool.stop()
    record = json.loads((second / "attempt.json").read_text())
    assert record["status"] == "completed" and record["dispatch_wait_seconds"] >= 1.5, record
    assert record["elapsed_seconds"] < record["dispatch_wait_seconds"]  # the wait is not its time
    error = json.loads((third / "attempt.json").read_text())["error"]
    assert cancelled.value.outcome.status == "stopped"
    assert error.startswith("the batch was stopped before the attempt began (it waited for a free slot)"), error


async def test_an_attempt_stopped_just_after_it_began_is_said_to_have_begun(local_ray, tmp_path, monkeypatch):
    """Its worker wrote ``.owner`` (a slot was free) but had not recorded it yet: the stop came
    while it ran, not while it waited for a slot."""
    import uuid

    monkeypatch.setattr(ray_pool, "STOP_GRACE_S", 0.5)
    scratch = f"{ray_pool.SCRATCH_PREFIX}{uuid.uuid4().hex}"
    folder = ray_pool.scratch_folder(scratch)
    folder.mkdir()
    (folder / ray_pool.OWNER).write_text("1")
    node = ray.get_runtime_context().get_node_id()
    recorded, began = await ray_pool.stopped_on_worker(tmp_path / "attempt", node, scratch, 1)
    assert (recorded, began) == (None, True)
    assert not folder.exists()


async def test_a_new_worker_removes_the_scratch_folders_of_workers_that_died_long_ago(local_ray):
    """A worker whose node's Ray died (its raylet killed, its machine alive) left its attempt's
    scratch folder, which no driver could fetch, in the temp folder for good."""
    import os
    import subprocess
    import uuid

    ended = subprocess.Popen(["true"])  # noqa: S607
    ended.wait()
    dead_pid = ended.pid
    folders = {}
    for owner in ("dead", "alive", "recent"):
        folder = Path(tempfile.gettempdir()) / f"{ray_pool.SCRATCH_PREFIX}{uuid.uuid4().hex}"
        (folder / "attempt").mkdir(parents=True)
        (folder / "attempt" / "trace.jsonl").write_text("{}\n")
        (folder / ".owner").write_text(str(os.getpid() if owner == "alive" else dead_pid))  # its worker's pid
        if owner != "recent":
            for path in [folder / "attempt" / "trace.jsonl", folder / "attempt", folder / ".owner", folder]:
                os.utime(path, (time.time() - 3600, time.time() - 3600))
        folders[owner] = folder
    try:
        pool = await RayPool.start(1)  # a worker's start sweeps its node's temp folder
        await pool.stop()
        assert not folders["dead"].exists()
        assert folders["alive"].exists() and folders["recent"].exists()  # a live worker's; one just left
    finally:
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)


def test_a_local_ray_that_does_not_start_is_one_line(monkeypatch):
    """ray.init raises a bare Exception when its raylet does not register within 30 s (a loaded
    machine): it went past the CLI as a traceback."""
    from sandbox.runner.executors.ray_pool import RayUnavailable, connect

    def timed_out(**options):
        raise Exception(  # noqa: TRY002  # as ray/_private/node.py raises it
            "The current node timed out during startup. This could happen because some of the raylet failed "
            "to startup or the GCS has become overloaded."
        )

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", timed_out)
    with pytest.raises(RayUnavailable, match=r"^no Ray at a local Ray: The current node timed out during startup\."):
        connect(None)


async def test_a_killed_raylet_ends_the_batch_with_the_attempts_files_and_rays_messages_in_a_file(tmp_path):
    """The local raylet killed under an attempt: the batch hung for good (the dead worker's
    replacement went to the dead node), Ray printed the raylet's last 20 log lines into the table
    on stdout, and the attempt's scratch folder was left in the temp folder, its trace with it."""
    import psutil

    before = scratch_folders()
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("sandbox")), "run", "controlled-form", "--agent", "think:1:reference",
        "--executor", "ray", "--out", str(tmp_path), "--no-progress",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        raylet = None
        for _ in range(2400):  # until its attempt runs (its scratch folder is made)
            children = psutil.Process(process.pid).children(recursive=True)
            raylet = next((child for child in children if "raylet" in child.name()), None)
            if raylet is not None and scratch_folders() - before:
                break
            assert process.returncode is None, await process.communicate()
            await asyncio.sleep(0.05)
        assert raylet is not None
        await asyncio.sleep(2)
        raylet.kill()
        out, err = await asyncio.wait_for(process.communicate(), 150)
    finally:
        if process.returncode is None:  # it hung: Ctrl-C ends it, and its Ray with it
            process.send_signal(signal.SIGINT)
            await asyncio.wait_for(process.communicate(), 60)
    said = (out + err).decode()
    assert process.returncode == 1 and "Raylet" not in said and "state-dump" not in said, said[-3000:]
    (attempt,) = tmp_path.glob("*/controlled-form-1/attempt.json")
    record = json.loads(attempt.read_text())
    assert record["status"] == "crashed" and record["error"].startswith("ray worker died on node "), record
    assert record["error"] in said  # the reason line under the table
    messages = re.search(r"\(Ray's messages: (\S+)\)", record["error"])
    assert messages is not None and "Raylet is terminated" in Path(messages[1]).read_text()
    header = json.loads((attempt.parent / "trace.jsonl").read_text().splitlines()[0])  # brought back
    left = [folder for folder in scratch_folders() - before if header["run_id"] in "".join(
        path.read_text(errors="replace") for path in folder.rglob("trace.jsonl"))]  # fmt: skip
    assert left == []


async def test_an_address_that_answers_but_is_not_a_ray_gcs_is_one_line_at_once(tmp_path):
    """An HTTP server at the address (a dashboard's 8265 given for the GCS's 6379): ray.init
    said "Failed to connect to GCS ... within 5 seconds" over and over for minutes."""
    from aiohttp import web

    from tests.support.serve import free_port

    async def dashboard(request: web.Request) -> web.Response:
        return web.Response(text="a dashboard")

    app = web.Application()
    app.router.add_get("/", dashboard)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("sandbox")), "run", "controlled-form", "--agent", "reference",
            "--executor", f"ray:127.0.0.1:{port}", "--out", str(tmp_path), "--no-progress",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            _, err = await asyncio.wait_for(process.communicate(), 60)
        except TimeoutError:
            process.kill()
            await process.communicate()
            raise
        lines = err.decode().strip().splitlines()
        assert process.returncode == 2 and len(lines) == 1, err.decode()[-2000:]
        assert lines[0].startswith(f"sandbox run: no Ray at 127.0.0.1:{port}: it is not a Ray cluster's GCS"), lines
        assert time.monotonic() - started < 30
    finally:
        await runner.cleanup()


def test_an_address_that_takes_the_connection_and_says_nothing_is_not_a_gcs(monkeypatch):
    import socket

    from sandbox.runner.executors.ray_pool import RayUnavailable, check_gcs

    monkeypatch.setattr(ray_pool, "GCS_ANSWER_TIMEOUT", 0.5)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(RayUnavailable, match=r"not a Ray cluster's GCS \(it closed the connection or said nothing"):
            check_gcs(address, address)


def answering(*parts: bytes) -> tuple[socket.socket, threading.Thread]:
    """A loopback server that reads HTTP/2's opening and answers ``parts``, 0.2 s apart."""
    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(len(ray_pool.HTTP2_HELLO))
            for part in parts:
                conn.sendall(part)
                time.sleep(0.2)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return server, thread


def test_a_settings_frame_in_two_reads_passes_the_check():
    settings = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
    server, thread = answering(settings[:4], settings[4:])
    with server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        ray_pool.check_gcs(address, address)  # no error: the frame's header came in two reads
    thread.join(5)


def test_an_answer_that_begins_with_a_newline_is_quoted():
    server, thread = answering(b"\r\nHTTP/1.1 400 Bad Request\r\n\r\n")
    with server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(ray_pool.RayUnavailable, match=r"it answered 'HTTP/1.1 400 Bad Request'"):
            ray_pool.check_gcs(address, address)
    thread.join(5)


def test_a_ray_gcs_passes_the_check(local_ray):
    from sandbox.runner.executors.ray_pool import check_gcs

    address = ray._private.worker.global_worker.node.gcs_address
    check_gcs(address, address)  # no error


async def test_concurrent_picks_spread_over_the_workers():
    """pick reserves the worker it chooses (its ``running``) with no await between: the picks of
    one batch's attempts, made at once, do not all choose the same least busy worker."""
    workers = [ray_pool.Worker(handle=None, node=node) for node in ("a", "b", "c")]
    workers[0].running = 1  # an attempt of this batch already on its way there
    pool = RayPool(workers, ray_pool.WorkerKind(None, 2), size=3, fill=False, grow=None)
    picked = await asyncio.gather(*(pool.pick() for _ in range(5)))
    assert sorted(worker.node for worker in picked) == ["a", "b", "b", "c", "c"]
    assert [worker.running for worker in workers] == [2, 2, 2]


def test_the_private_ray_functions_replaced_are_in_the_installed_ray():
    """keep_ray_messages replaces ray._private.worker.print_to_stdstream and sigterm_held
    ray._private.utils.set_sigterm_handler: a Ray that renames either fails here, not quietly."""
    from ray._private import utils as ray_utils
    from ray._private import worker as ray_worker

    assert callable(getattr(ray_worker, "print_to_stdstream", None))
    assert callable(getattr(ray_utils, "set_sigterm_handler", None))


def test_a_ray_without_them_is_warned_of(monkeypatch, caplog):
    from ray._private import utils as ray_utils
    from ray._private import worker as ray_worker

    monkeypatch.delattr(ray_worker, "print_to_stdstream")
    monkeypatch.delattr(ray_utils, "set_sigterm_handler")
    monkeypatch.setattr(ray_pool, "RAY_MESSAGES", [])
    ours = signal.getsignal(signal.SIGTERM)
    try:
        with ray_pool.sigterm_held([]):
            pass
    finally:
        signal.signal(signal.SIGTERM, ours)
    ray_pool.keep_ray_messages()
    said = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert any("set_sigterm_handler is missing" in line for line in said), said
    assert any("print_to_stdstream is missing" in line for line in said), said


async def test_sigterm_while_ray_starts_exits_143_and_leaves_no_ray_process(tmp_path):
    """A SIGTERM while ray.init ran went to its own handler (sys.exit(15)): exit 15, not 143, and
    ray::DashboardAgent / ray::RuntimeEnvAgent of the half-started Ray left running."""
    import psutil

    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("sandbox")), "run", "controlled-form", "--agent", "reference",
        "--executor", "ray", "--out", str(tmp_path), "--no-progress",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    session = None
    for _ in range(2400):  # until its GCS runs: ray.init has started its Ray, and goes on starting it
        for child in psutil.Process(process.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "gcs_server" in child.name():
                    match = re.search(r"session_[\w-]+", " ".join(child.cmdline()))
                    session = match[0] if match else None
        if session:
            break
        assert process.returncode is None, await process.communicate()
        await asyncio.sleep(0.02)
    assert session, "its Ray's GCS never started"
    process.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 143, err.decode()[-2000:]
    assert "stopped by SIGTERM" in err.decode() and "Traceback" not in err.decode(), err.decode()[-2000:]

    def of_its_ray() -> list[str]:
        left = []
        for other in psutil.process_iter(["cmdline", "name"]):
            with contextlib.suppress(psutil.Error):
                if any(session in a for a in other.info["cmdline"] or ()):
                    left.append(f"{other.pid} {other.info['name']}")
        return left

    for _ in range(100):  # Ray's processes end within seconds of their GCS and raylet
        if not of_its_ray():
            break
        await asyncio.sleep(0.1)
    assert not of_its_ray(), of_its_ray()


async def test_a_dead_workers_attempt_whose_files_show_it_finished_says_so(tmp_path, monkeypatch):
    """A worker that died after its attempt finished (an orphan whose raylet died): the folder
    brought back held score.json and a trace ending run_end 'completed', and attempt.json said
    crashed with only "ray worker died", as if the attempt had been cut short."""
    from sandbox.runner.executors.ray_pool import Worker, WorkerKind

    run_end = {"type": "run_end", "t": 3.2, "wall": "2026-12-05T23:00:00Z", "reason": "completed"}
    files = {
        "attempt/trace.jsonl": (json.dumps({"type": "run", "t": 0}) + "\n" + json.dumps(run_end) + "\n").encode(),
        "attempt/score.json": b'{"passed": true}\n',
    }

    async def brought_back(node: str, scratch: str, wait_s: float = 0.0) -> dict[str, bytes]:
        return files  # what salvage brings back from the dead worker's node

    async def replaced(dead: Worker) -> None:
        return None

    monkeypatch.setattr(ray_pool, "salvaged", brought_back)
    monkeypatch.setattr(ray_pool, "end_worker", lambda worker: None)  # no actor: Worker(None, ...)
    pool = RayPool([], WorkerKind(None, 1), size=1, fill=False)
    monkeypatch.setattr(pool, "replace", replaced)
    errors = ["ray worker died on node n1: ActorDiedError"]
    await pool.after_death(Worker(None, "n1"), tmp_path / "attempt", "scratch", 1, True, errors)
    assert "its files show the attempt finished on the worker before it died (trace ended 'completed'" in errors[-1]

    files.pop("attempt/score.json")  # cut short: no score
    (tmp_path / "attempt" / "score.json").unlink()
    errors = ["ray worker died on node n1: ActorDiedError"]
    await pool.after_death(Worker(None, "n1"), tmp_path / "attempt", "scratch", 1, True, errors)
    assert "finished" not in errors[-1], errors


async def test_a_dead_workers_finished_attempt_is_no_pass_read_back_either(tmp_path, monkeypatch):
    """A worker that died after scoring its qualified attempt: the summary said crashed, no pass,
    while the folder read back (its score.json brought back, attempt.json the executor's) was a
    qualified pass with the score's field accuracy."""
    from sandbox.runner.executors.ray_pool import Worker, WorkerKind, unfinished
    from sandbox.runner.folders import AttemptFolder, outcome
    from tests.support.attempt_folders import REFERENCE

    files = {f"attempt/{name}": (REFERENCE / name).read_bytes() for name in ("trace.jsonl", "score.json", "output.txt")}
    files["attempt/attempt.json"] = (REFERENCE / "attempt.json").read_bytes()  # the worker's, written last

    async def brought_back(node: str, scratch: str, wait_s: float = 0.0) -> dict[str, bytes]:
        return files

    async def replaced(dead: Worker) -> None:
        return None

    monkeypatch.setattr(ray_pool, "salvaged", brought_back)
    monkeypatch.setattr(ray_pool, "end_worker", lambda worker: None)  # no actor: Worker(None, ...)
    pool = RayPool([], WorkerKind(None, 1), size=1, fill=False)
    monkeypatch.setattr(pool, "replace", replaced)
    folder = tmp_path / "attempt"
    errors = ["ray worker died on node n1: ActorDiedError"]
    await pool.after_death(Worker(None, "n1"), folder, "scratch", 1, True, errors)
    live = unfinished(folder, "controlled-form", "reference", 1, errors, "n1", 1)
    read = outcome(AttemptFolder.load(folder))
    assert json.loads((folder / "score.json").read_text())["qualified_pass"] is True  # kept, as brought back
    said = ("status", "qualified_pass", "error_free", "field_accuracy", "elapsed_seconds", "cost_usd", "tool_calls")
    assert {k: getattr(read, k) for k in said} == {k: getattr(live, k) for k in said}
    assert read.qualified_pass is False and read.status == "crashed" and read.tool_calls > 0


async def test_a_worker_runs_no_more_attempts_at_once_than_its_server_holds_and_says_so(local_ray, caplog):
    """A worker's server had the defaults (64 runs, 24 sessions a core) whatever its slots: at
    ``--concurrency`` beyond them, runs and sessions were refused and the attempts recorded as crashed."""
    from sandbox.runner.wiring import app_config
    from toolserver.capacity import session_cap

    cap, why = session_cap(app_config())  # the worker's node is this machine
    pool = await RayPool.start(cap + 10)
    try:
        said = f"a Ray worker runs at most {cap} attempts at once, not {cap + 10}: its server holds {cap} sessions"
        assert said in caplog.text
        (worker,) = pool.workers  # this Ray's 2 CPUs: one browser
        assert (await worker.handle.info.remote())["slots"] == worker.slots == cap and worker.held_by == why
    finally:
        await pool.stop()


@pytest.mark.parametrize(("asked", "slots"), [(100, 100), (500, 192)])
async def test_a_workers_server_holds_a_run_for_each_of_its_slots(local_ray, monkeypatch, asked, slots):
    from toolserver import capacity

    monkeypatch.setattr(capacity, "cores", lambda: 8)  # 24 sessions a core: 192
    worker = ray_pool.AttemptWorker(asked)  # in this process: its server's configuration is readable
    try:
        said = await worker.start()
        assert worker.sandbox.config.max_runs >= slots + 8
        assert said["slots"] == slots
    finally:
        await worker.http.cleanup()
        await worker.sandbox.stop()


async def test_a_worker_taken_for_dead_is_ended_before_it_is_replaced(local_ray, tmp_path):
    """``ActorUnavailableError`` ("may or may not have been executed") counted as death, and the
    worker, alive, ran on beside its replacement (with --retries, its attempt beside the re-run)."""
    pool = await RayPool.start(1)
    try:
        (taken,) = pool.workers
        errors = ["ray worker died on node n1: ActorUnavailableError"]
        await pool.after_death(taken, tmp_path / "attempt", ray_pool.new_scratch_name(), 1, True, errors)
        with pytest.raises(ray.exceptions.RayActorError):
            await asyncio.wait_for(taken.handle.info.remote(), 30)
        (replacement,) = pool.workers
        assert replacement is not taken and (await replacement.handle.info.remote())["browser_starts"] == 1
    finally:
        await pool.stop()


async def test_a_batch_goes_on_with_the_workers_that_started(local_ray, monkeypatch, caplog):
    """One of several workers that did not start (its node gone meanwhile) sank the batch's start,
    and the others, started, were never ended."""
    here = ray.get_runtime_context().get_node_id()
    gone = "ab" * 28  # a node that is not there: its worker does not start
    monkeypatch.setattr(ray_pool, "worker_places", lambda count, fill=False: [here, gone])
    pool = await RayPool.start(2)
    try:
        assert [worker.node for worker in pool.workers] == [here]
    finally:
        await pool.stop()
    assert f"a Ray worker did not start on node {gone}" in caplog.text


async def test_a_cmd_agent_on_a_worker_runs_in_the_drivers_working_directory(local_ray, tmp_path, monkeypatch):
    """The worker made the agent in its own working directory (the one Ray started in): a relative
    ``cmd:python3 agent.py`` was not found there (exit status 2)."""
    (tmp_path / "agent.py").write_text("import os\nprint(os.getcwd())\n")
    monkeypatch.chdir(tmp_path)
    outcomes = await run_batch(
        [load_pack("controlled-form")],
        [BatchAgent("cmd:python3 agent.py", AgentOptions()), BatchAgent("think:0.50:reference", AgentOptions())],
        out=tmp_path / "runs", progress=False, executor="ray",
    )  # fmt: skip
    ran, reference = sorted(outcomes, key=lambda outcome: outcome.agent or "")
    attempt = json.loads((ran.directory / "attempt.json").read_text())
    assert attempt["status"] == "completed", attempt["error"]
    assert (ran.directory / "output.txt").read_text().strip() == str(tmp_path)
    assert reference.agent == "think:0.5:reference" and reference.qualified_pass


async def test_a_stop_after_the_worker_answered_keeps_the_finished_attempt(local_ray, tmp_path):
    """The batch's stop landed after the worker had sent its reply but before the driver read it:
    ray.cancel did nothing, the worker's scratch folder was gone, and the finished attempt was
    recorded as stopped before it began."""
    pool = await RayPool.start(1)
    try:
        running = asyncio.ensure_future(
            pool.run(
                tmp_path / "attempt",
                "controlled-form",
                BatchAgent("reference", AgentOptions()),
                AttemptSettings(time_limit=60),
                attempt_number=1,
                retries=0,
            )  # fmt: skip
        )
        await asyncio.sleep(0.5)  # the attempt is sent
        handle = pool.workers[0].handle
        # the event loop held (no await) until the worker has answered: the driver has not resumed
        while ray.get(handle.info.remote())["attempts"] < 1:
            time.sleep(0.05)
        time.sleep(1.0)  # its reply reaches the driver's object store
        running.cancel()
        with pytest.raises(AttemptStopped) as stopped:
            await running
    finally:
        await pool.stop()
    attempt = json.loads((tmp_path / "attempt" / "attempt.json").read_text())
    assert stopped.value.outcome.status == attempt["status"] == "completed", attempt.get("error")
    assert attempt["ray_node"] and (tmp_path / "attempt" / "score.json").is_file()


async def test_a_stop_while_a_retry_picks_its_worker_keeps_the_first_tries_record(local_ray, tmp_path):
    """A stop while the retry chose its worker came as a plain cancellation: the folder held only
    try-1/, no attempt.json."""
    pool = await RayPool.start(1)
    picks, picking_again = 0, asyncio.Event()
    pick = pool.pick

    async def slow_second_pick():  # the retry's choice takes a while (every worker busy, say)
        nonlocal picks
        picks += 1
        if picks == 2:
            picking_again.set()
            await asyncio.sleep(60)
        return await pick()

    pool.pick = slow_second_pick  # type: ignore[method-assign]
    try:
        running = await hanging_attempt(pool, tmp_path)
        ray.kill(pool.workers[0].handle)
        await asyncio.wait_for(picking_again.wait(), 60)
        running.cancel()
        with pytest.raises(AttemptStopped) as stopped:
            await running
    finally:
        await pool.stop()
    attempt = json.loads((tmp_path / "attempt" / "attempt.json").read_text())
    assert stopped.value.outcome.status == attempt["status"] == "stopped" and attempt["tries"] == 1
    assert "ray worker died" in attempt["error"] and "stopped before the attempt could run again" in attempt["error"]
