"""Warm pools: Ray workers that outlive a batch (``sandbox ray start|status|stop``), so the next
``sandbox run --executor ray:ADDRESS`` pays no worker start. Imports ``ray``: the CLI and the
Ray executor import this module only when they run.

A pool named NAME is detached, named actors in the ``NAMESPACE`` namespace: ``pool/NAME``
records its layout (its workers' names, the attempts each runs at once, whether it follows the
nodes); ``pool/NAME/<i>`` are its workers (``ray_pool.AttemptWorker``). A batch that uses a pool
never ends its workers; a worker found dead (at a batch's start, or under an attempt) is
replaced under the same name, on a live node, and so stays in the pool.

A pool started without a number of workers (one per browser slot of the nodes) follows the
nodes: each batch's start, and a running batch every ``LOOK_EVERY_S`` at an attempt's start,
adds a worker on every free browser slot of a node that joined since (``pool/NAME/<node>.<k>``;
a batch beside it names them alike and shares them, and each batch uses the workers the other
added), and each batch's start drops a dead worker that no live node has a free slot for. A
pool of a set number keeps it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from sandbox.runner.executors.ray_pool import (
    ALL_SLOTS,
    ANSWER_TIMEOUT,
    NAMESPACE,
    RayPool,
    RayUnavailable,
    Worker,
    WorkerDidNotStart,
    installed_version,
    named_actor,
    said,
    say_held,
    start_worker,
    start_workers,
    started,
    worker_class,
    worker_places,
)

DEFAULT_POOL = "default"  # the pool `sandbox run --executor ray:ADDRESS` uses when one runs
DEFAULT_CAPACITY = 8  # a pool worker's attempts at once, by default
ORPHAN_HINT = (  # a pool whose record was lost with its node
    "its workers may still run: `sandbox ray stop --name {pool}` ends them, `sandbox ray start --name {pool}` "
    "takes them back"
)


class PoolRecord:
    """A Ray actor: a warm pool's layout. Its calls run one at a time, so two batches changing
    the layout at once both land."""

    def __init__(self, workers: list[str], capacity: int, follow: bool = False, version: str = "") -> None:
        self.layout: dict[str, Any] = {"workers": workers, "capacity": capacity, "follow": follow, "version": version}

    def read(self) -> dict:
        return self.layout

    def node(self) -> str:
        """The node it lives on (the head's: a pool is lost with its record's node)."""
        return ray.get_runtime_context().get_node_id()

    def change(self, added: list[str], dropped: list[str]) -> dict:
        kept = [name for name in self.layout["workers"] if name not in dropped]
        self.layout["workers"] = kept + [name for name in added if name not in kept]
        return self.layout


def record_name(pool: str) -> str:
    return f"pool/{pool}"


def find_record(pool: str) -> Any:
    """The pool's record actor, or None when no pool of that name runs."""
    return named_actor(record_name(pool))


def pool_names() -> list[str]:
    """Every warm pool of the cluster: with its record, or only workers left of it (``orphans``)."""
    return sorted({name.split("/")[1] for name in named_in_namespace()})


def named_in_namespace() -> list[str]:
    return [
        entry["name"] for entry in ray.util.list_named_actors(all_namespaces=True) if entry["namespace"] == NAMESPACE
    ]


def orphans(pool: str) -> list[str]:
    """The workers named for the pool that its record does not list, or all of them when its
    record is gone (lost with its node): they run, and nothing else would find them."""
    named = [name for name in named_in_namespace() if name.startswith(f"{record_name(pool)}/")]
    record = find_record(pool)
    if record is None:
        return sorted(named)
    try:
        listed = set(ray.get(record.read.remote(), timeout=ANSWER_TIMEOUT)["workers"])
    except (ray.exceptions.RayError, TimeoutError):
        return sorted(named)
    return sorted(name for name in named if name not in listed)


async def layout_of(pool: str, record: Any) -> dict:
    """The pool's layout, as its record says; ``RayUnavailable`` when the record is lost."""
    try:
        return await asyncio.wait_for(asyncio.wrap_future(record.read.remote().future()), ANSWER_TIMEOUT)
    except (ray.exceptions.RayError, TimeoutError) as exc:
        lost = f"the record of pool {pool!r} is lost ({type(exc).__name__}: its node died?); "
        raise RayUnavailable(lost + ORPHAN_HINT.format(pool=pool)) from exc


async def answer(handle: Any) -> dict | None:
    """The worker's ``info()``, or None when it is dead or does not answer in time."""
    try:
        return await asyncio.wait_for(asyncio.wrap_future(handle.info.remote().future()), ANSWER_TIMEOUT)
    except (ray.exceptions.RayError, TimeoutError):
        return None


async def worker_state(name: str) -> tuple[Any, dict | None]:
    """The worker of that name (None: there is none) and what it says of itself (None: dead)."""
    handle = named_actor(name)
    return handle, (await answer(handle) if handle is not None else None)


async def start_pool(pool: str, workers: int | None = None, capacity: int = DEFAULT_CAPACITY) -> list[dict]:
    """Start the pool: ``workers`` workers (None: one per browser slot of the live nodes), each
    running up to ``capacity`` attempts at once. Returns its status."""
    if find_record(pool) is not None:
        raise RayUnavailable(f"a pool named {pool!r} already runs: `sandbox ray stop --name {pool}` first")
    places = worker_places(workers or ALL_SLOTS, fill=workers is not None)
    if not places:
        raise RayUnavailable("no live Ray node to start a worker on")
    names = [f"{record_name(pool)}/{index}" for index in range(len(places))]
    head = next((n["NodeID"] for n in ray.nodes() if n["Alive"] and "node:__internal_head__" in n["Resources"]), None)
    # On the head, hard: with soft affinity Ray 2.60 put it on a worker node about half of the time,
    # and the pool was lost with that node (its workers running on, unseen).
    keep = {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=head, soft=False)} if head else {}
    try:
        record = (
            ray.remote(num_cpus=0)(PoolRecord)
            .options(name=record_name(pool), namespace=NAMESPACE, lifetime="detached", **keep)
            .remote(names, capacity, workers is None, installed_version())
        )
    except ray.exceptions.ActorAlreadyExistsError as exc:  # another `sandbox ray start` made it since the check
        raise RayUnavailable(f"a pool named {pool!r} was started meanwhile by another `sandbox ray start`") from exc
    kind = worker_class(capacity)
    try:
        say_held(await asyncio.gather(*map(start_worker, [kind] * len(places), places, names)), capacity)
    except (ray.exceptions.RayError, WorkerDidNotStart) as exc:
        stop_pool(pool)
        why = str(exc) if isinstance(exc, WorkerDidNotStart) else f"a worker did not start: {said(exc)}"
        raise RayUnavailable(f"pool {pool!r} is not started: {why}") from exc
    except BaseException:  # stopped while its browsers started (Ctrl-C, SIGTERM): no half-started pool is left
        with contextlib.suppress(RayUnavailable):
            stop_pool(pool)
        raise
    await take_back(pool, record, follow=workers is None)
    return await pool_status(pool)


async def take_back(pool: str, record: Any, follow: bool) -> None:
    """The workers left of a lost record that the new one does not name (those a pool following
    the nodes added, ``pool/NAME/<node>.<k>``): recorded again when the pool follows the nodes,
    ended when it keeps a set number; else they ran on, unseen by ``status``."""
    left = orphans(pool)
    if left and follow:
        await record.change.remote(left, [])
    for handle in [] if follow else filter(None, map(named_actor, left)):
        ray.kill(handle)


async def pool_status(pool: str) -> list[dict]:
    """One row per worker of the pool: its name, whether it is alive, and what it says of itself
    (actor id, node, attempts run, attempts running, browser starts)."""
    record = find_record(pool)
    if record is None:
        left = orphans(pool)
        if not left:
            raise RayUnavailable(no_pool_message(pool))
        layout: dict[str, Any] = {"workers": left, "capacity": 0}  # its record is gone: the workers left of it
    else:
        layout = await layout_of(pool, record)
    states = await asyncio.gather(*(worker_state(name) for name in layout["workers"]))
    return [
        {"pool": pool, "worker": name, "alive": info is not None, "capacity": layout["capacity"], **(info or {})}
        | ({} if record is not None else {"orphan": True})
        for name, (_, info) in zip(layout["workers"], states, strict=True)
    ]


async def join_pool(pool: str) -> RayPool | None:
    """The pool's workers for a batch (None: no pool of that name runs). A dead worker is
    replaced first, under its name, on a live node."""
    record = find_record(pool)
    if record is None:
        if orphans(pool):
            raise RayUnavailable(f"pool {pool!r} lost its record (its node died?): {ORPHAN_HINT.format(pool=pool)}")
        return None
    layout = await layout_of(pool, record)
    kind = worker_class(layout["capacity"])
    states = dict(zip(layout["workers"], await asyncio.gather(*map(worker_state, layout["workers"])), strict=True))
    said_versions = {name: info.get("version") for name, (_, info) in states.items() if info}
    check_version(pool, layout.get("version"), said_versions)
    live = [Worker.of(handle, info, name) for name, (handle, info) in states.items() if info]
    follow = layout.get("follow", False)
    grow = following(pool, record) if follow else None
    running = RayPool(live, kind, size=ALL_SLOTS if follow else len(states), fill=not follow, grow=grow)
    dead = [name for name, (_, info) in states.items() if info is None]
    for name in dead:
        if states[name][0] is not None:  # alive to Ray but not answering: ended, so its name is free again
            ray.kill(states[name][0])
    places = running.free_places(len(dead))
    try:  # a replacement that does not start leaves the batch the live workers (none: its WorkerDidNotStart)
        running.workers += await start_workers(kind, places, dead[: len(places)]) if places else []
    except WorkerDidNotStart:
        if not running.workers:
            raise
    say_held(running.workers, kind.capacity)
    if grow is not None:  # the dead that found no slot leave; the slots still free (new nodes) get workers
        await record.change.remote([], dead[len(places) :])
        running.workers += await grow(running)
    return running


def check_version(pool: str, recorded: str | None, workers: dict[str, str | None]) -> None:
    """A pool started by another version of the sandbox (before a ``git pull``, a ``pip install -U``,
    a change to the mirrors) runs the code and mirrors it had then: refused, rather than attempts
    failing on mirrors changed since, and replacements running the new code beside the old."""
    ours = installed_version()
    other = next(((f"its worker {name}", version) for name, version in workers.items() if version != ours), None)
    if recorded != ours:
        other = ("its record", recorded or "none recorded")
    if other is not None:
        raise RayUnavailable(
            f"the warm pool {pool!r} runs another version of the sandbox ({other[0]}: {other[1]}; this one: {ours}): "
            f"`sandbox ray stop --name {pool}` then `sandbox ray start --name {pool}`"
        )


def following(pool: str, record: Any) -> Callable[[RayPool], Awaitable[list[Worker]]]:
    """How a batch's pool that follows the nodes grows, at the batch's start and as it runs: it
    takes the workers another batch added since, then adds one on each browser slot still free (a
    node that joined), recorded."""

    async def grow(running: RayPool) -> list[Worker]:
        layout = await record.read.remote()
        others = [name for name in layout["workers"] if name not in {worker.name for worker in running.workers}]
        states = dict(zip(others, await asyncio.gather(*map(worker_state, others)), strict=True))
        known = {worker.name for worker in running.workers}  # again: a replacement may have joined meanwhile
        running.workers.extend(
            Worker.of(handle, info, name) for name, (handle, info) in states.items() if info and name not in known
        )
        slots = await asyncio.to_thread(worker_places, ALL_SLOTS)  # ray.nodes(): a call to Ray's GCS
        new = new_worker_names(pool, running, taken=set(layout["workers"]), slots=slots)
        starts = [start_worker(running.kind, node, name) for name, node in new]
        added = started(await asyncio.gather(*starts, return_exceptions=True))
        if added:
            try:
                await record.change.remote([worker.name for worker in added], [])
            except ray.exceptions.RayError:  # the pool was stopped meanwhile: they are in no record, ended
                for worker in added:
                    ray.kill(worker.handle)
                raise
        return added

    return grow


def new_worker_names(pool: str, running: RayPool, taken: set[str], slots: list[str]) -> list[tuple[str, str]]:
    """A name and a node for each free browser slot among ``slots`` (``worker_places``' reading):
    ``pool/NAME/<node>.<k>``, the smallest k no worker of the pool has, so two batches starting at
    once pick the same names."""
    names = []
    for node in running.free_places(ALL_SLOTS, slots):
        name = next(n for k in itertools.count() if (n := f"{record_name(pool)}/{node[:12]}.{k}") not in taken)
        taken.add(name)
        names.append((name, node))
    return names


def stop_pool(pool: str) -> int:
    """End the pool's workers (those its record lists, and any named for it that it does not: a
    lost record's) and its record; the number of workers ended."""
    record = find_record(pool)
    names = orphans(pool)
    if record is None and not names:
        raise RayUnavailable(no_pool_message(pool))
    if record is not None:
        with contextlib.suppress(ray.exceptions.RayError, TimeoutError):  # lost with its node: orphans are all
            names += ray.get(record.read.remote(), timeout=ANSWER_TIMEOUT)["workers"]
        ray.kill(record)  # first: a batch on the pool then does not refill it
    workers = [handle for handle in map(named_actor, dict.fromkeys(names)) if handle is not None]
    for handle in workers:
        ray.kill(handle)
    return len(workers)


def no_pool_message(pool: str) -> str:
    others = [name for name in pool_names() if name != pool]
    running = f"pools running: {', '.join(others)}" if others else "no pool runs"
    return f"no pool named {pool!r} ({running}): start one with `sandbox ray start --name {pool}`"
