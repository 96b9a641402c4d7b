"""The Ray workers behind ``--executor ray[:ADDRESS]`` (``sandbox.runner.executors.ray``), which
imports this module, and so ``ray``, only when a batch starts.

Each Ray worker is an actor holding its own warm browser (a ``Sandbox`` and the HTTP tool
server for ``cmd:`` agents, both on loopback of its node). An attempt runs there exactly as a
local one does (``run_attempt``: same time limit, same fresh site key, same files); its files
come back to the driver and are written into the batch folder, with the node it ran on
(``ray_node`` in ``attempt.json``), so the result table is the one a local run prints. A worker
that dies fails only the attempts it was running: each is recorded as ``crashed`` with the
reason (``--retries N`` re-runs it on another worker), with what it had written on that node
(``salvage``). The dead worker is replaced on a live
node with a browser slot free; a batch's own workers follow the live nodes (a node gone, its
workers are not replaced when the other nodes' slots are taken; a node that joins gets workers
on its slots, up to the batch's concurrency, looked for at an attempt's start every
``LOOK_EVERY_S``), as does a warm pool (``sandbox.runner.executors.ray_warm``) of every slot;
one of a set size keeps it.

Multi-node: ``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the
others (each with this package and Debian's chromium installed), then
``sandbox run ... --executor ray:HEAD:6379`` on one of them (``ray:ray://HEAD:10001`` from a
machine outside the cluster, through Ray Client). ``--executor ray`` alone starts a local Ray.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import json
import logging
import math
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from sandbox.runner.attempt import STOPPED, UNRUN, AttemptOutcome, AttemptRecord, AttemptStopped
from sandbox.runner.executors._kinds import AttemptSettings, BatchAgent, ExecutorUnavailable
from sandbox.runner.files import write_file
from toolserver.contract.trace import parse_trace

CPUS_PER_BROWSER = 4  # a worker's warm Chromium uses up to this many cores (see worker_places)
NAMESPACE = "browser-tool-sandbox"  # the Ray namespace of warm pools' named actors
CONNECT_TIMEOUT = 5.0  # seconds to reach a HOST:PORT address before saying there is no Ray there
GCS_ANSWER_TIMEOUT = 10.0  # seconds an address that took the connection has to answer as a Ray GCS does
ANSWER_TIMEOUT = 20.0  # seconds a worker has to say how it is; longer: it counts as dead
ALL_SLOTS = 10_000  # worker_places' count for "every browser slot of the live nodes"
SCRATCH_PREFIX = "sandbox-ray-"  # an attempt's scratch folder on its worker's node, in the temp folder
RECORDED = ".recorded"  # in a scratch folder: its stopped attempt is recorded (its outcome), for the driver
STOP_GRACE_S = 15.0  # a stopped attempt's worker records it (its trace ended, scored) within this
DYING_S = 1.0  # a worker found dead may go on writing this long, while Ray ends its process
LOOK_EVERY_S = 5.0  # a running batch looks for nodes that joined at most this often (at an attempt's start)
LOAD_ANSWER_S = 2.0  # a pool worker not saying its load within this counts as the busiest (RayPool.pick)
OWNER = ".owner"  # in a scratch folder: the pid of the worker process that runs its attempt
ABANDONED_S = 600.0  # a scratch folder whose worker died this long ago is removed by a new worker (sweep_abandoned)
UNBOUNDED = 10_000  # a worker actor's calls at once: its own slots hold its attempts to its capacity

log = logging.getLogger(__name__)


class RayUnavailable(ExecutorUnavailable):
    """No Ray at the address, no warm pool of that name, a worker that cannot start: a user's
    situation, said in one line (no traceback)."""


def connect(address: str | None) -> None:
    """Join the Ray at ``address`` (``HOST:PORT`` on a node of the cluster, ``ray://HOST:10001``
    through Ray Client, ``auto``), or start a local one (None); nothing when already joined."""
    if ray.is_initialized():
        keep_ray_messages()
        return
    # "auto" is $RAY_ADDRESS when it is set (else the cluster `ray start` recorded on this machine)
    checked = os.environ.get("RAY_ADDRESS", "") if address == "auto" else address or ""
    if checked and not checked.startswith("ray://") and checked != "auto":
        # ray.init waits minutes for a GCS that is not there: a closed port, or one that is not a
        # GCS's (the dashboard's 8265, say), is said within CONNECT_TIMEOUT + GCS_ANSWER_TIMEOUT.
        check_gcs(checked, f"{checked} ($RAY_ADDRESS)" if checked != address else checked)
    ours = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    stopped: list[int] = []  # a SIGTERM while ray.init ran, held until what it started can be shut down
    try:
        with sigterm_held(stopped):
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
            else:
                # "local": a Ray of its own, even when `ray start` runs one on this machine (ray.init()
                # would join that one, and refuse the options of a new one)
                ray.init(address="local", include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    except SystemExit:  # a SIGTERM to a handler of Ray's all the same (sys.exit): held as well
        stopped.append(signal.SIGTERM)
    except Exception as exc:  # Ray's own kinds, and a bare Exception (a local Ray that timed out starting)
        if not stopped:
            hint = auth_hint(exc) if address else ""
            raise RayUnavailable(f"no Ray at {address or 'a local Ray'}: {str(exc).splitlines()[0]}{hint}") from exc
    finally:  # ray.init puts its own SIGTERM handler (sys.exit) over the batch's stop: the batch's again
        put_back(ours)
    if stopped:  # what it started ends (its GCS, raylet and their agents), then the SIGTERM goes to the batch
        ray.shutdown()
        put_back(ours)  # Ray's core worker, shut down, left SIGTERM at its default below Python's handler
        signal.raise_signal(signal.SIGTERM)
        raise RayStartStopped("stopped by SIGTERM while Ray started")
    keep_ray_messages()


def put_back(handlers: dict[signal.Signals, Any]) -> None:
    """The batch's signal handlers, set again (Python's ``getsignal`` does not see a handler that
    Ray's C++ side set or reset)."""
    if threading.current_thread() is threading.main_thread():
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)


@contextlib.contextmanager
def sigterm_held(held: list[int]) -> Iterator[None]:
    """While ray.init runs, a SIGTERM is noted in ``held`` rather than going to the handler
    ray.init puts (sys.exit(15), which cut it short with its processes half started, their
    agents orphaned, and the batch exiting 15, not 143). Ray's setter is held off meanwhile."""
    from ray._private import utils as ray_utils

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    setter = getattr(ray_utils, "set_sigterm_handler", None)
    if setter is None:  # a Ray that renamed it (a private API): its handler may take a SIGTERM meanwhile
        log.warning("ray._private.utils.set_sigterm_handler is missing: a SIGTERM while Ray starts may cut it short")
    else:
        ray_utils.set_sigterm_handler = lambda handler: None
    signal.signal(signal.SIGTERM, lambda number, frame: held.append(number))
    try:
        yield
    finally:
        if setter is not None:
            ray_utils.set_sigterm_handler = setter


class RayStartStopped(RayUnavailable):
    """A SIGTERM while ray.init ran, given back to the batch's handler once Ray is shut down: an
    asyncio caller awaits that handler's stop (``await_the_stop``)."""


async def await_the_stop() -> None:
    """After ``RayStartStopped``: the batch's handler (an asyncio one, ``StopSignals``) cancels this
    task when the loop next runs; without one, SIGTERM's default already ended the process."""
    await asyncio.sleep(STOP_GRACE_S)


HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # preface, empty SETTINGS


def check_gcs(address: str, where: str) -> None:
    """A Ray GCS speaks gRPC: told HTTP/2's opening, it answers with a SETTINGS frame. Anything
    else at ``address`` (an HTTP server, a port that says nothing) is said in one line, in
    bounded time, where ray.init would retry for minutes. Not checked under ``RAY_USE_TLS``
    (the GCS then wants TLS first)."""
    host, _, port = address.rpartition(":")
    try:
        probe = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError) as exc:
        raise RayUnavailable(f"no Ray at {where} ({exc}): start one with `ray start --head`") from exc
    with probe:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        answer = heard_from(probe)
    if len(answer) >= 9 and answer[3] == 4:  # an HTTP/2 SETTINGS frame
        return
    told = answer.decode("latin-1").lstrip().splitlines()[0][:60] if answer.strip() else ""
    silence = f"it closed the connection or said nothing within {GCS_ANSWER_TIMEOUT:.0f} s"
    heard = f"it answered {told!r}" if told else silence
    raise RayUnavailable(
        f"no Ray at {where}: it is not a Ray cluster's GCS ({heard}); give the GCS's address, "
        "HOST:6379 unless `ray start --head --port` chose another (8265 is the dashboard's)"
    )


def heard_from(probe: socket.socket) -> bytes:
    """What ``probe`` answers HTTP/2's opening with: its first 9 bytes (a frame's header) at
    least, however many reads they take, or what came before it closed or ``GCS_ANSWER_TIMEOUT``."""
    answer = b""
    deadline = time.monotonic() + GCS_ANSWER_TIMEOUT
    try:
        probe.sendall(HTTP2_HELLO)
        while len(answer) < 9:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            probe.settimeout(left)
            more = probe.recv(64)
            if not more:  # closed
                break
            answer += more
    except OSError:  # no more in time, or the connection closed on us
        pass
    return answer


RAY_MESSAGES: list[Path] = []  # the file Ray's messages to this driver go to, once it has one (keep_ray_messages)


def keep_ray_messages() -> None:
    """Ray prints what it tells a driver (a raylet that died, with the last 20 lines of its log; a
    node marked dead) on stdout, into the batch's table and its ``--json``: they go to a file in
    Ray's log folder instead (``sandbox-driver-<pid>.log``), which an attempt's error names
    (``messages_said``). Ray has no public switch for it: its printer is replaced."""
    from ray._private import worker as ray_worker

    printer = getattr(ray_worker, "print_to_stdstream", None)
    if RAY_MESSAGES:
        return
    if printer is None:  # a Ray that renamed it (a private API): its messages stay on stdout
        log.warning("ray._private.worker.print_to_stdstream is missing: Ray's messages go to stdout")
        return
    node = getattr(ray_worker, "_global_node", None)
    folder = Path(node.get_logs_dir_path()) if node is not None else Path(tempfile.gettempdir())
    path = folder / f"sandbox-driver-{os.getpid()}.log"
    RAY_MESSAGES.append(path)

    def to_file(data: dict, ignore_prefix: bool = False) -> None:
        try:
            with path.open("a", encoding="utf-8") as messages:
                stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                messages.writelines(f"{stamp} ({data.get('pid')}) {line}\n" for line in data.get("lines", ()))
        except OSError:  # no file: said on stderr rather than lost
            printer({**data, "is_err": True}, ignore_prefix)

    ray_worker.print_to_stdstream = to_file


def messages_said() -> str:
    """Where Ray's messages to this driver are, for an error, once it has sent some."""
    path = RAY_MESSAGES[0] if RAY_MESSAGES else None
    return f" (Ray's messages: {path})" if path is not None and path.is_file() else ""


def said(exc: BaseException) -> str:
    """A Ray error in one line: the cause of a task's error (``RayTaskError``: what it raised on
    its worker, without Ray's traceback and colours), else the error's first line."""
    cause = getattr(exc, "cause", None) if isinstance(exc, ray.exceptions.RayTaskError) else None
    shown = cause if isinstance(cause, BaseException) else exc
    text = str(shown).splitlines()[0] if str(shown) else ""
    return f"{type(shown).__name__}: {text}" if text else type(shown).__name__


class WorkerDidNotStart(RayUnavailable):
    """A worker that could not start (its browser, a node that went meanwhile), in one line."""


def auth_hint(exc: BaseException) -> str:
    """A port that answers and a Ray that will not take us: most often Ray's token authentication,
    which ``ray start`` turns on where a token file exists (~/.ray/auth_token)."""
    if os.environ.get("RAY_AUTH_MODE") == "token" and "auth" not in str(exc).lower():
        return ""
    return (
        "; if the cluster uses Ray's token authentication, set RAY_AUTH_MODE=token here too, "
        "with the cluster's token (~/.ray/auth_token or RAY_AUTH_TOKEN)"
    )


class AttemptWorker:
    """A Ray actor: one warm sandbox, running the attempts the driver sends it. ``info`` has a
    concurrency group of its own, so a full worker still answers; it runs on that group's own
    event loop, so it only reads counters (the browser belongs to the default group's loop)."""

    def __init__(self, capacity: int = 1) -> None:
        from sandbox.runner.wiring import app_config
        from toolserver.capacity import session_cap
        from toolserver.config import ServerConfig

        self.sandbox: Any = None
        self.starting: asyncio.Lock | None = None
        self.url = ""
        self.attempts = 0  # attempts run (finished) since it started
        self.running = 0
        self.waiting = 0  # attempts sent here waiting for one of its slots (their dispatch wait)
        # As a local batch's server: at most as many attempts at once as its server holds sessions (an
        # attempt holds one; beyond it a start is refused), and runs for each of them and a few besides.
        cap, self.held_by = session_cap(app_config())
        self.capacity = min(capacity, cap)
        self.config = app_config(max_runs=max(ServerConfig.max_runs, self.capacity + 8))
        self.slots = asyncio.Semaphore(self.capacity)  # its attempts at once
        self.raylet = os.getppid()  # its node's raylet started it
        self.browser_starts = 0

    async def start(self) -> dict:
        """Start the browser and the tool server, once: a second call (another batch joining
        the same pool worker) finds them warm."""
        from sandbox.runner.executors._loopback import serve_loopback
        from sandbox.runner.wiring import app_sandbox

        self.starting = self.starting or asyncio.Lock()
        async with self.starting:
            if self.sandbox is None:
                await asyncio.to_thread(sweep_abandoned)
                self.sandbox = await app_sandbox(self.config).start()
                self.http, self.url = await serve_loopback(self.sandbox)
                self.browser_starts += 1
        return self.describe()

    @ray.method(concurrency_group="control")
    async def info(self) -> dict:
        return self.describe()

    def describe(self) -> dict:
        context = ray.get_runtime_context()
        return {
            "actor": context.get_actor_id(),
            "node": context.get_node_id(),
            "attempts": self.attempts,
            "running": self.running,
            "waiting": self.waiting,
            "browser_starts": self.browser_starts,
            "slots": self.capacity,  # its attempts at once: those asked, or fewer (``held_by``)
            "held_by": self.held_by,
            "version": installed_version(),  # what it imported and read when it started (join_pool checks it)
        }

    async def run(
        self,
        pack_id: str,
        agent: BatchAgent,
        settings: AttemptSettings,
        attempt_number: int,
        folder_name: str,
        dispatch_wait: float = 0.0,
        scratch_name: str = "",
        checksum: str = "",
    ) -> dict:
        """Run the attempt, once one of this worker's slots is free (the wait is its dispatch
        wait), in a scratch folder of this node (``scratch_name``, given by the driver so that
        ``salvage`` finds it if this worker dies), and return its outcome and files. ``checksum``:
        the pack's on the driver (``Pack.checksum``), which this node's copy must have."""
        waiting = time.monotonic()
        self.waiting += 1
        try:
            await self.slots.acquire()
        finally:
            self.waiting -= 1
        try:
            return await self.run_in_slot(
                pack_id, agent, settings, attempt_number, folder_name, dispatch_wait + time.monotonic() - waiting,
                scratch_name, checksum,
            )  # fmt: skip
        finally:
            self.slots.release()

    async def run_in_slot(
        self,
        pack_id: str,
        agent: BatchAgent,
        settings: AttemptSettings,
        attempt_number: int,
        folder_name: str,
        dispatch_wait: float,
        scratch_name: str,
        checksum: str,
    ) -> dict:
        from sandbox.evaluation.packs import load_pack
        from sandbox.runner.agents import make_agent
        from sandbox.runner.attempt import run_attempt

        scratch = scratch_folder(scratch_name or new_scratch_name())
        scratch.mkdir(mode=0o700)
        (scratch / OWNER).write_text(str(os.getpid()))
        directory = scratch / folder_name
        self.running += 1
        kept = False
        try:
            pack = load_pack(pack_id)
            if checksum and pack.checksum() != checksum:  # scored against other rules than the driver reads
                node = ray.get_runtime_context().get_node_id()
                raise PackDiffers(
                    f"pack {pack.id} on node {node} differs from the driver's (its scoring files' checksum "
                    f"{pack.checksum()[:12]}, the driver's {checksum[:12]}): give every node the driver's copy"
                )
            # As a local batch's server: GET /runs/{id}/task and POST .../answer use the pack this attempt
            # runs (one of the user's own, a changed copy), not only the bundled one of its id.
            self.sandbox.tasks.add(pack)
            outcome = await run_attempt(
                self.sandbox,
                pack,
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
        except AttemptStopped as stopped:  # the batch's stop, recorded: kept for the driver's ``salvage``, a while
            # whole or not at all: the driver reads it as soon as it is there (one CI run read it empty)
            write_file(scratch / RECORDED, json.dumps({**stopped.outcome.__dict__, "directory": None}))
            kept = True
            asyncio.get_running_loop().call_later(2 * STOP_GRACE_S, shutil.rmtree, scratch, True)
            raise
        except Exception as exc:  # said in one line, in an exception Ray can bring back (a PackError it cannot)
            raise RuntimeError(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        finally:
            self.running -= 1
            self.attempts += 1
            if not kept and os.getppid() == self.raylet:  # else its reply is lost with its node's Ray: kept
                shutil.rmtree(scratch, ignore_errors=True)  # for the driver, or swept later (sweep_abandoned)


class PackDiffers(RuntimeError):
    """The pack a worker's node has is not the driver's (another version, a folder changed since)."""


@functools.cache
def installed_version() -> str:
    """What a warm pool's workers and the batches that join it must share: the package's version,
    a sha256 of its installed source (``sandbox`` and ``toolserver``, the ``.py`` and ``.js`` files)
    and one of the bundled mirrors' manifests, which a worker's mirror store reads when it starts.
    A ``git pull`` or ``pip install -U`` changes it; a worker keeps what it imported."""
    import sandbox
    import toolserver
    from sandbox.paths import MIRRORS_DIR

    source, mirrors = hashlib.sha256(), hashlib.sha256()
    for package in (sandbox, toolserver):
        root = Path(str(package.__file__)).parent
        for path in sorted(root.rglob("*")):
            if path.suffix in {".py", ".js"} and "__pycache__" not in path.parts:
                source.update(f"{path.relative_to(root.parent)}\0".encode() + path.read_bytes())
    for manifest in sorted(MIRRORS_DIR.glob("*/manifest.json")):
        mirrors.update(f"{manifest.parent.name}\0".encode() + manifest.read_bytes())
    return f"{toolserver.__version__}+source.{source.hexdigest()[:12]}+mirrors.{mirrors.hexdigest()[:12]}"


def new_scratch_name() -> str:
    return f"{SCRATCH_PREFIX}{uuid.uuid4().hex}"


def scratch_folder(name: str) -> Path:
    """An attempt's scratch folder on the node this runs on (driver and worker agree on its name)."""
    if not name.startswith(SCRATCH_PREFIX) or "/" in name or name in {".", ".."}:
        raise ValueError(f"not a scratch folder's name: {name!r}")
    return Path(tempfile.gettempdir()) / name


def collect(scratch_name: str, wait_s: float = 0.0) -> dict[str, bytes]:
    """What an attempt left in its scratch folder, read on its node and the folder removed: a dead
    worker's (its trace up to the worker's death, its screenshots), or, waiting up to ``wait_s``
    for its worker to have recorded it (``RECORDED``, its outcome), a stopped one's."""
    scratch = scratch_folder(scratch_name)
    began = time.monotonic()

    def waiting() -> bool:  # a folder not made within a second (stopped before it began), or gone: none to wait for
        now = time.monotonic()
        if not scratch.exists():
            return wait_s > 0 and now - began < min(1.0, wait_s)
        return not (scratch / RECORDED).exists() and now - began < wait_s

    while waiting():
        time.sleep(0.05)
    files = taken(scratch)
    if not wait_s:  # a worker Ray is killing may still be writing (its trace writes itself again): once more
        time.sleep(DYING_S)
        files |= taken(scratch)
    return files


salvage = ray.remote(num_cpus=0, max_retries=0)(collect)  # collect, on the node of the attempt's worker


def taken(scratch: Path) -> dict[str, bytes]:
    """The files of a scratch folder (``OWNER`` among them: its attempt began), and the folder removed."""
    try:
        files = scratch.rglob("*")
        return {str(p.relative_to(scratch)): p.read_bytes() for p in files if p.is_file()}  # OWNER: it began
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def salvaged(node: str, scratch_name: str, wait_s: float = 0.0) -> dict[str, bytes]:
    """``salvage`` on ``node``; when the node is gone or does not answer in time (its Ray died,
    its machine maybe not), the folder is read here if it is on this machine, else nothing."""
    strategy = NodeAffinitySchedulingStrategy(node_id=node, soft=False)
    remote = salvage.options(scheduling_strategy=strategy).remote
    ref = remote(scratch_name, wait_s)  # type: ignore[call-arg]  # ray's stubs miss the default argument
    try:
        return await asyncio.wait_for(ref, ANSWER_TIMEOUT + wait_s)
    except (TimeoutError, ray.exceptions.RayError) as exc:
        ray.cancel(ref, force=True)
        if scratch_folder(scratch_name).exists():  # its name is unique: it is that attempt's folder
            return await asyncio.to_thread(collect, scratch_name, wait_s)
        log.warning("the files of an attempt on the lost Ray node %s could not be read: %r", node, exc)
        return {}


def sweep_abandoned() -> None:
    """Remove the scratch folders of this machine whose worker died more than ``ABANDONED_S``
    ago with its node's Ray, so that no driver could fetch them (a driver reads such a folder
    only on its own machine, ``salvaged``); a live worker's are left alone."""
    for scratch in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        try:
            owner = int((scratch / OWNER).read_text())
            changed = max(path.lstat().st_mtime for path in [scratch, *scratch.rglob("*")])
        except (OSError, ValueError):  # not one of ours, or being removed
            continue
        if time.time() - changed > ABANDONED_S and not process_alive(owner):
            shutil.rmtree(scratch, ignore_errors=True)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def named_actor(name: str) -> Any:
    """The live actor of that name in ``NAMESPACE``, or None."""
    try:
        return ray.get_actor(name, namespace=NAMESPACE)
    except ValueError:
        return None


@dataclass(frozen=True)
class WorkerKind:
    """``AttemptWorker`` as a Ray actor class, and the attempts each of its workers runs at once."""

    actor_class: Any
    capacity: int


def worker_class(capacity: int) -> WorkerKind:
    """Workers running up to ``capacity`` attempts at once. Ray lets in any number of their calls:
    the further attempts wait for a slot in the worker, which counts the wait as theirs."""
    # ray's stubs give remote()'s keyword form only the task options, not an actor's max_concurrency
    actor_class = ray.remote(num_cpus=0, max_concurrency=UNBOUNDED, concurrency_groups={"control": 4})(AttemptWorker)  # type: ignore[call-overload]
    return WorkerKind(actor_class, capacity)


@dataclass(eq=False)
class Worker:
    """The driver's view of one worker: its actor, its node, what this driver runs on it."""

    handle: Any  # the Ray actor handle
    node: str
    name: str | None = None  # a warm pool's worker: its Ray name; None: the batch's own
    running: int = 0
    slots: int | None = None  # its attempts at once, as it said (None: not said)
    held_by: str = ""  # why not more: its server's session cap

    @classmethod
    def of(cls, handle: Any, info: dict, name: str | None = None) -> Worker:
        """The worker as its ``info()`` describes it."""
        return cls(handle, info["node"], name, slots=info.get("slots"), held_by=info.get("held_by", ""))


def say_held(workers: list[Worker], asked: int) -> None:
    """Warn, once per reason, when workers run fewer attempts at once than asked (as a local
    batch does when its server holds fewer sessions than ``--concurrency``)."""
    held = {(worker.slots, worker.held_by) for worker in workers if worker.slots is not None and worker.slots < asked}
    for slots, why in sorted(held, key=str):
        log.warning(
            "a Ray worker runs at most %d attempts at once, not %d: its server holds %d sessions (%s); the others "
            "wait their turn (dispatch_wait_seconds)",
            slots,
            asked,
            slots,
            why,
        )


async def start_worker(kind: WorkerKind, place: str, name: str | None = None) -> Worker:
    """A worker on the node ``place``, started. ``name``: a warm pool's detached, named worker (the
    live one of that name, if there is one). ``WorkerDidNotStart`` says why not, in one line."""
    # Hard affinity: Ray 2.60 puts a zero-CPU actor with soft affinity on another node about half
    # of the time. The places are live nodes; one that died since fails this worker's start.
    options: dict[str, Any] = {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=place, soft=False)}
    if name:
        options |= {"name": name, "namespace": NAMESPACE, "lifetime": "detached", "get_if_exists": True}
    handle = kind.actor_class.options(**options).remote(kind.capacity)
    try:
        info = await handle.start.remote()
    except ray.exceptions.RayError as exc:
        ray.kill(handle)  # a pool's worker, detached, would stay, browserless, under its name
        raise WorkerDidNotStart(f"a Ray worker did not start on node {place}: {said(exc)}") from exc
    except BaseException:  # stopped while it started (the batch's stop): the batch's own would run on, unused
        if name is None:  # a pool's may be another batch's already (get_if_exists): the pool keeps it
            ray.kill(handle)
        raise
    return Worker.of(handle, info, name)


def started(results: list[Worker | BaseException]) -> list[Worker]:
    """The workers that started among ``asyncio.gather(..., return_exceptions=True)``'s results;
    the others are logged (a node that went while its worker started)."""
    for failure in (r for r in results if isinstance(r, BaseException)):
        log.warning("%s", str(failure).splitlines()[0] if str(failure) else type(failure).__name__)
    return [r for r in results if isinstance(r, Worker)]


async def start_workers(kind: WorkerKind, places: list[str], names: list[str | None] | None = None) -> list[Worker]:
    """Workers on ``places`` (with ``names``), started at once: those that start; one that does not
    is logged, and ``WorkerDidNotStart`` says why when none does. Stopped meanwhile, the batch's
    own that started are ended (a pool's stay in the pool)."""
    named = names if names is not None else [None] * len(places)
    starts = [asyncio.ensure_future(start_worker(kind, place, name)) for place, name in zip(places, named, strict=True)]
    try:
        results = await asyncio.gather(*starts, return_exceptions=True)
    except BaseException:
        await asyncio.wait(starts)  # each ends its own worker when it is cut short (start_worker)
        for start in starts:
            if not start.cancelled() and start.exception() is None and start.result().name is None:
                ray.kill(start.result().handle)
        raise
    workers = started(results)
    failures = [result for result in results if isinstance(result, BaseException)]
    if failures and not workers:
        raise failures[0]
    return workers


class RayPool:
    """The driver's side: attempts go to the least busy worker; a dead worker is replaced on a
    live node with a free browser slot (``worker_places`` over the nodes alive now); ``grow``
    starts workers on the slots of nodes that joined since, looked for at an attempt's start."""

    def __init__(
        self,
        workers: list[Worker],
        kind: WorkerKind,
        *,
        size: int,
        fill: bool,
        grow: Callable[[RayPool], Awaitable[list[Worker]]] | None = None,
    ) -> None:
        self.workers = workers
        self.kind = kind
        self.size, self.fill = size, fill  # the places to keep filled (fill: beyond the nodes' slots)
        self.grow = grow  # None: the pool takes no node that joins mid-batch
        self.replacing: dict[Worker, asyncio.Future] = {}
        self.turn = itertools.count()
        self.looked = time.monotonic()
        self.looking: asyncio.Future | None = None
        self.stopped = False

    @classmethod
    async def start(cls, concurrency: int) -> RayPool:
        """The batch's own workers: one per browser slot of the live nodes, at most ``concurrency``;
        nodes that join get workers too, up to ``concurrency`` in all."""
        places = worker_places(concurrency)
        if not places:
            raise RayUnavailable(f"no live Ray node to start a worker on{messages_said()}")
        kind = worker_class(math.ceil(concurrency / len(places)))
        workers = await start_workers(kind, places)  # one that does not start: the batch goes on with the others
        say_held(workers, kind.capacity)
        return cls(workers, kind, size=concurrency, fill=False, grow=own_workers_on_new_nodes)

    def free_places(self, count: int, slots: list[str] | None = None) -> list[str]:
        """Up to ``count`` places no live worker holds, among ``slots`` (None: those of the nodes
        alive now, ``worker_places``)."""
        free = Counter(worker_places(self.size, fill=self.fill) if slots is None else slots)
        free.subtract(worker.node for worker in self.workers)
        return list(itertools.islice(free.elements(), count))

    def look_for_nodes(self) -> None:
        """At most every ``LOOK_EVERY_S``: workers for the slots of nodes that joined since,
        started beside the batch (no attempt waits for them)."""
        if self.grow is None or self.looking is not None or self.stopped:
            return
        if any(not replacing.done() for replacing in self.replacing.values()):
            return  # a replacement holds a slot that looks free
        if time.monotonic() - self.looked >= LOOK_EVERY_S:
            self.looking = asyncio.ensure_future(self.add_workers(self.grow))

    async def add_workers(self, grow: Callable[[RayPool], Awaitable[list[Worker]]]) -> None:
        try:
            self.workers.extend(await grow(self))
        except ray.exceptions.RayError as exc:  # its warm pool was stopped meanwhile (its record is gone)
            self.grow = None
            log.warning("no longer looking for Ray nodes that join: %s", str(exc).splitlines()[0])
        except Exception:  # a fault of ours: the batch goes on with the workers it has
            self.grow = None
            log.exception("no longer looking for Ray nodes that join")
        finally:
            self.looked, self.looking = time.monotonic(), None

    async def pick(self) -> Worker:
        """The least busy worker, in turn among equals, reserved: its ``running`` counts the
        caller's attempt (the caller takes it back). A warm pool's workers are shared with the
        batches running beside this one: each says how many attempts it runs and holds."""
        self.look_for_nodes()
        if not self.workers and self.replacing:
            await asyncio.gather(*self.replacing.values(), return_exceptions=True)
        if not self.workers:
            raise RuntimeError(
                f"no live Ray worker: every worker died and no live node could take a new one{messages_said()}"
            )
        start = next(self.turn) % len(self.workers)
        workers = self.workers[start:] + self.workers[:start]
        loads = dict(zip(workers, await asyncio.gather(*map(load_of, workers)), strict=True))
        # what it says it holds (this batch's attempts on their way to it not yet among them), then ours;
        # chosen and reserved with no await between, so that the picks of one batch spread
        chosen = min(workers, key=lambda worker: (max(loads[worker], worker.running), worker.running))
        chosen.running += 1
        return chosen

    async def replace(self, dead: Worker) -> None:
        """Once per dead worker, however many of its attempts saw it die."""
        if dead not in self.replacing:
            self.replacing[dead] = asyncio.ensure_future(self.replace_once(dead))
        await self.replacing[dead]

    async def replace_once(self, dead: Worker) -> None:
        self.workers.remove(dead)
        if dead.name and named_actor(dead.name.rpartition("/")[0]) is None:
            return  # its warm pool was stopped (its record is gone): not refilled
        places = self.free_places(1)
        if places:  # else the live nodes' slots are all taken: the pool follows the nodes
            replacement = await start_worker(self.kind, places[0], dead.name)
            if dead.name and named_actor(dead.name.rpartition("/")[0]) is None:
                ray.kill(replacement.handle)  # its pool was stopped while it started: `sandbox ray stop` missed it
                return
            if dead.name is None or dead.name not in {worker.name for worker in self.workers}:
                self.workers.append(replacement)  # else a look for new nodes took it from the pool meanwhile

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
        load_from: str | None = None,
        checksum: str = "",
    ) -> AttemptOutcome:
        """``pack_id``: the attempt's pack, as recorded; ``load_from``: how its worker loads it (a
        pack of your own: its folder; None: by its id); ``checksum``: the pack's on the driver,
        which the worker's copy must have ("": not checked)."""
        errors: list[str] = []
        node = None
        for tries in range(1, retries + 2):
            try:
                worker = await self.pick()
            except RuntimeError as exc:  # no worker left to retry on: the earlier tries' reasons are kept
                errors.append(str(exc))
                return unfinished(directory, pack_id, agent.name, attempt_number, errors, node, tries - 1)
            except asyncio.CancelledError:
                if tries == 1:
                    raise
                # stopped while a worker for the next try was chosen: the earlier tries' record is kept
                errors.append("the batch was stopped before the attempt could run again")
                raise AttemptStopped(
                    unfinished(directory, pack_id, agent.name, attempt_number, errors, node, tries - 1, STOPPED)
                ) from None
            node = worker.node  # reserved by pick: worker.running counts this try
            scratch = new_scratch_name()
            ref = worker.handle.run.remote(
                load_from or pack_id, agent, settings, attempt_number, directory.name, dispatch_wait, scratch, checksum
            )
            try:
                reply = await ref
            except asyncio.CancelledError:  # the batch is being stopped: so is the attempt on its worker
                finished = reply_ready(ref)
                if finished is not None:  # its worker had answered (and removed its scratch folder): kept
                    write_reply(directory, finished["files"], node, tries)
                    raise AttemptStopped(AttemptOutcome(**{**finished["outcome"], "directory": directory})) from None
                ray.cancel(ref)
                recorded, began = await stopped_on_worker(directory, node, scratch, tries)
                when = "while the attempt ran" if began else "before the attempt began (it waited for a free slot)"
                stop = [f"the batch was stopped {when} on Ray node {node}"]
                raise AttemptStopped(
                    recorded or unfinished(directory, pack_id, agent.name, attempt_number, stop, node, tries, STOPPED)
                ) from None
            except ray.exceptions.RayTaskError as exc:  # the attempt raised on its worker (AttemptWorker.run)
                cause = getattr(exc, "cause", None)  # AttemptWorker.run's one line
                told = str(cause).splitlines()[0] if cause is not None and str(cause) else type(exc).__name__
                errors.append(f"{UNRUN} on Ray node {node}: {told}")  # as a local one it could not run
                return unfinished(directory, pack_id, agent.name, attempt_number, errors, node, tries)
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as exc:
                # ObjectLostError: the worker's reply was in its node's object store when the node went.
                errors.append(f"ray worker died on node {node}: {said(exc)}")
                gone = pool_stopped(worker)
                last = tries == retries + 1 or gone is not None
                try:
                    await self.after_death(worker, directory, scratch, tries, last, errors)
                except asyncio.CancelledError:  # the batch is being stopped meanwhile: recorded so
                    errors.append("the batch was stopped before the attempt could run again")
                    raise AttemptStopped(
                        unfinished(directory, pack_id, agent.name, attempt_number, errors, node, tries, STOPPED)
                    ) from None
                if gone is not None:  # no retry: the pool's workers are ended
                    errors[-1] += f"; {gone}, so it was not run again"
                    return unfinished(directory, pack_id, agent.name, attempt_number, errors, node, tries)
                continue
            finally:
                worker.running -= 1
            write_reply(directory, reply["files"], node, tries)
            return AttemptOutcome(**{**reply["outcome"], "directory": directory})
        return unfinished(directory, pack_id, agent.name, attempt_number, errors, node, retries + 1)

    async def after_death(
        self, dead: Worker, directory: Path, scratch: str, tries: int, last: bool, errors: list[str]
    ) -> None:
        """What a try left on the dead worker's node (its trace up to the death) is kept: in the
        attempt's folder after its last try, else in try-N/ beside the next try's files; then the
        worker is replaced. It is ended first: Ray's error may not mean it died (``ActorUnavailableError``:
        the call "may or may not have been executed"; ``ObjectFetchTimedOutError``), and a worker
        that lives on would go on running the attempt beside its re-run, and its browser beside its
        replacement's."""
        end_worker(dead)
        kept = directory if last else directory / f"try-{tries}"
        if write_files(kept, (await salvaged(dead.node, scratch)).items(), prefix=directory.name + "/"):
            errors[-1] += f" (its files up to then: {kept.relative_to(directory.parent)}){finished_in(kept)}"
        errors[-1] += messages_said()
        try:
            await self.replace(dead)
        except (ray.exceptions.RayError, WorkerDidNotStart) as again:
            errors.append(f"its replacement did not start: {said(again)}")

    async def stop(self) -> None:
        """Ends the batch's own workers, those being started for a node that joined included
        (once started); a warm pool's stay for the next batch."""
        self.stopped = True
        if self.looking is not None:
            await asyncio.wait([self.looking], timeout=ANSWER_TIMEOUT)
        for worker in self.workers:
            if worker.name is None:
                ray.kill(worker.handle)


def reply_ready(ref: Any) -> dict | None:
    """The worker's reply, when it came before the batch's stop did (the driver had not yet resumed
    to read it); None when the attempt still runs or raised."""
    ready, _ = ray.wait([ref], timeout=0)
    if not ready:
        return None
    try:
        return ray.get(ref, timeout=0)
    except (ray.exceptions.RayError, TimeoutError):
        return None


def end_worker(worker: Worker) -> None:
    """End the worker's actor, whether or not it still runs (a warm pool's too: ``replace`` starts
    another under its name)."""
    try:
        ray.kill(worker.handle)
    except ray.exceptions.RayError as exc:  # Ray itself unreachable: the worker goes with it
        log.warning("a Ray worker taken for dead could not be ended: %s", said(exc))


async def load_of(worker: Worker) -> int:
    """The attempts a warm pool's worker runs and holds, for every batch (0: a batch's own
    worker, which only this batch uses); one that does not say in time counts as the busiest."""
    if worker.name is None:
        return 0
    try:
        info = await asyncio.wait_for(asyncio.wrap_future(worker.handle.info.remote().future()), LOAD_ANSWER_S)
    except (TimeoutError, ray.exceptions.RayError):
        return UNBOUNDED
    return int(info.get("running", 0)) + int(info.get("waiting", 0))


def pool_stopped(worker: Worker) -> str | None:
    """Why a warm pool's dead worker is not replaced: its pool was stopped (its record is gone)."""
    pool = worker.name.rpartition("/")[0] if worker.name else None
    if pool is None or named_actor(pool) is not None:
        return None
    return f"its warm pool {pool.partition('/')[2]!r} was stopped (`sandbox ray stop`) while the batch ran"


async def own_workers_on_new_nodes(pool: RayPool) -> list[Worker]:
    """A batch's own workers for the browser slots free now (nodes that joined), up to its
    concurrency in all."""
    slots = await asyncio.to_thread(worker_places, ALL_SLOTS)  # ray.nodes(): a call to Ray's GCS
    places = pool.free_places(max(0, pool.size - len(pool.workers)), slots)
    return started(await asyncio.gather(*(start_worker(pool.kind, p) for p in places), return_exceptions=True))


def worker_places(count: int, fill: bool = False) -> list[str]:
    """The node of each worker: one browser per ``CPUS_PER_BROWSER`` CPUs of each live node (at
    least one per node), spread over the nodes first, at most ``count`` (``fill``: exactly
    ``count``, going round the nodes again). One Chromium already spreads its contexts over
    several cores (the browser, its GPU and network processes, up to four renderers), so a
    browser per CPU would only add browsers competing for the same cores."""
    by_node: dict[str, list[str]] = {}
    for node in ray.nodes():
        cpus = int(node.get("Resources", {}).get("CPU", 0))
        if node.get("Alive") and cpus > 0:
            by_node[node["NodeID"]] = [node["NodeID"]] * max(1, cpus // CPUS_PER_BROWSER)
    spread = [place for group in itertools.zip_longest(*by_node.values()) for place in group if place]
    if not spread:  # no node with CPUs (a head of num-cpus 0): this one, if it lives; none when no node does
        here = ray.get_runtime_context().get_node_id()
        alive = [node["NodeID"] for node in ray.nodes() if node.get("Alive")]
        spread = [here] if here in alive else alive[:1]
        if not spread:
            return []
    return list(itertools.islice(itertools.cycle(spread), max(1, count))) if fill else spread[: max(1, count)]


async def stopped_on_worker(directory: Path, node: str, scratch: str, tries: int) -> tuple[AttemptOutcome | None, bool]:
    """The stopped attempt as its worker recorded it (its trace, screenshots, score, attempt.json),
    fetched from its node, and whether it began there; None when nothing was recorded (stopped
    before it began, waiting for a slot) or a second stop cuts the wait short."""
    from sandbox.runner.attempt import uncancel

    uncancel()  # the stop goes on once the attempt is fetched: AttemptStopped carries it
    try:
        files = await salvaged(node, scratch, wait_s=STOP_GRACE_S)
    except asyncio.CancelledError:
        return None, True
    began = files.pop(OWNER, None) is not None  # its worker wrote it once a slot was free
    recorded = files.pop(RECORDED, None)  # the outcome its worker recorded, as a local attempt's
    if recorded is None:
        return None, began
    prefix = directory.name + "/"
    write_reply(directory, {name.removeprefix(prefix): data for name, data in files.items()}, node, tries)
    return AttemptOutcome(**{**json.loads(recorded), "directory": directory}), True


def finished_in(folder: Path) -> str:
    """When the files brought back from a dead worker show its attempt finished there (its trace
    ended with ``run_end``, its score written: the worker died after it, with its reply), said so
    in the ``crashed`` record, which would otherwise read as an attempt cut short. It stays
    ``crashed``: its outcome (cost, tokens, timings) came back with the reply that was lost."""
    try:
        lines = (folder / "trace.jsonl").read_text(encoding="utf-8").strip().splitlines()
        last = json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return ""
    if not isinstance(last, dict) or last.get("type") != "run_end" or not (folder / "score.json").is_file():
        return ""
    return (
        f"; its files show the attempt finished on the worker before it died (trace ended "
        f"{last.get('reason', 'closed')!r}, score.json written): only its reply was lost"
    )


def write_reply(directory: Path, files: dict[str, bytes], node: str, tries: int) -> None:
    """The attempt's files from its worker, ``attempt.json`` with the node it ran on (and how
    many workers it took, when an earlier one died under it)."""
    write_files(directory, files.items())
    path = directory / "attempt.json"
    if path.is_file():
        facts: dict[str, Any] = {"ray_node": node} | ({"tries": tries} if tries > 1 else {})
        record = AttemptRecord.model_validate_json(path.read_bytes()).model_copy(update=facts)
        write_file(path, record.to_json())


def write_files(directory: Path, files: Iterable[tuple[str, bytes]], prefix: str = "") -> int:
    """Write ``files`` (paths relative to ``directory``, after ``prefix``, which the others lack)
    into ``directory``; returns how many were written."""
    written = 0
    for name, data in files:
        if not name.startswith(prefix) or ".." in Path(name).parts:
            continue
        path = directory / name.removeprefix(prefix)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written += 1
    return written


def unfinished(
    directory: Path,
    pack_id: str,
    agent_spec: str,
    attempt_number: int,
    errors: list[str],
    node: str | None,
    tries: int,
    status: str = "crashed",
) -> AttemptOutcome:
    """An attempt whose worker never answered, recorded with the reasons (and the node of the
    last worker it ran on): ``crashed`` when every try lost its worker, ``stopped`` when the batch
    was stopped while it ran."""
    error = "; ".join(errors)
    directory.mkdir(parents=True, exist_ok=True)
    # Its verdict is no pass, here as in the summary: a score.json brought back from a worker that
    # died after scoring is not counted (``AttemptFolder.qualified``), its reply being lost.
    calls = calls_traced(directory / "trace.jsonl")  # the calls of a trace brought back, as read back
    record = AttemptRecord(
        pack=pack_id, agent=agent_spec, attempt=attempt_number, status=status, error=error,
        tool_calls_total=calls, qualified_pass=False, error_free=False, tries=tries, executor="ray", ray_node=node,
    )  # fmt: skip
    write_file(directory / "attempt.json", record.to_json())
    return AttemptOutcome(pack_id, agent_spec, directory, status, None, False, False, 0.0, calls, None, error)


def calls_traced(trace: Path) -> int:
    """The call lines of a trace brought back from a dead worker's node (0: none brought back)."""
    try:
        return len(parse_trace(trace.read_text(encoding="utf-8", errors="replace")).calls) if trace.is_file() else 0
    except OSError:
        return 0
