"""Capacity: before a run is made or a session (a browser context) is opened, the server checks
the machine's real limits, so that at a limit it refuses new work with an error naming the
limit and its figures, instead of running out (an OOM kill, EMFILE in the middle of a call, a
renderer that cannot start) or slowing every run.

    memory            MemAvailable (/proc/meminfo), or what this process's memory cgroup still
                      allows if less (a container's limit), below ``min_free_memory_mb``
    file_descriptors  this process's open descriptors (/proc/self/fd) leave fewer than
                      ``min_free_fds``, or 10 % of RLIMIT_NOFILE's soft limit if larger, free
    open_sessions     ``max_open_sessions`` sessions open on the server's browser, or
                      ``max_sessions_per_core`` times the cores when that is fewer
    tasks             fewer than ``min_free_tasks`` more processes and threads may start: under
                      the process's pids cgroup (a container's ``--pids-limit``, a pod's), the
                      kernel's pid_max and threads-max, or RLIMIT_NPROC (not for root). Every
                      session's renderer is a process of about a dozen threads

One function per limit measures it and returns a ``Shortage``, or None when there is room; two
checks turn a shortage into the caller's error: ``admitted`` (``check_session_capacity``) into
``ServerAtCapacity``, a tool error the agent can retry, for ``browser_start_session``;
``check_run_capacity`` into ``RunRefusedAtCapacity`` (429) for a new run. Where /proc is missing
(not Linux) the memory and descriptor checks find room.

A session start holds its place while its context opens (``admitted``), so starts arriving
together count the ones before them against the session cap; the session joins the host's
sessions when it has started, with no await before the start lets go of its place, so no
session is counted twice. Memory, descriptors and tasks are measured, not reserved: starts
arriving together see the figures of before any of them, which the reserves are there to absorb.

Imports only the configuration, the errors and ``toolserver.cgroups``: no browser, no transport.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from toolserver.cgroups import cgroup_cpu_limit, cgroup_room_mb, cgroup_task_room
from toolserver.config import ServerConfig
from toolserver.errors import RunRefusedAtCapacity, ServerAtCapacity

Limit = Literal["memory", "file_descriptors", "open_sessions", "tasks"]
MEMINFO = Path("/proc/meminfo")
LOADAVG = Path("/proc/loadavg")  # its fourth field: running/all tasks of the machine
KERNEL_LIMITS = (Path("/proc/sys/kernel/pid_max"), Path("/proc/sys/kernel/threads-max"))
OWN_FDS = Path("/proc/self/fd")
FD_RESERVE_FRACTION = 0.10  # of the soft limit, when that is more than ``min_free_fds``


@dataclass(frozen=True)
class Shortage:
    """A limit reached: which, the figure measured, the threshold it crossed, and in words."""

    limit: Limit
    measured: int
    threshold: int
    unit: str
    explanation: str

    def details(self) -> dict[str, object]:
        return {"limit": self.limit, "measured": self.measured, "threshold": self.threshold, "unit": self.unit}


class OpenSession(Protocol):
    """A session as the count sees it (``toolserver.browser.Session``)."""

    closed: bool

    @property
    def crashed(self) -> bool: ...


def available_memory_mb() -> int | None:
    """MemAvailable from /proc/meminfo, in MB (None where there is no /proc/meminfo)."""
    try:
        lines = MEMINFO.read_text().splitlines()
    except OSError:
        return None
    kib = next((int(line.split()[1]) for line in lines if line.startswith("MemAvailable:")), None)
    return None if kib is None else kib // 1024


def machine_tasks() -> int | None:
    """The tasks (processes and threads) of the whole machine, from ``/proc/loadavg``."""
    try:
        return int(LOADAVG.read_text().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return None


def machine_task_room(existing: int | None) -> int | None:
    """How many more tasks the kernel allows the machine: the lower of pid_max and threads-max,
    less the ``existing`` ones. None where those figures are missing."""
    try:
        return None if existing is None else min(int(path.read_text()) for path in KERNEL_LIMITS) - existing
    except (OSError, ValueError):
        return None


def user_task_room(enough: int | None = None, existing: int | None = None) -> int | None:
    """How many more tasks RLIMIT_NPROC's soft limit allows this process's user (it counts the
    user's threads on the whole machine). None: no limit, root (whom it does not bind), or at
    least ``enough`` left even were all the machine's ``existing`` tasks the user's: then the
    user's tasks are not counted (a walk of /proc, on every session start)."""
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if soft == resource.RLIM_INFINITY or os.geteuid() == 0:
        return None
    if enough is not None and existing is not None and soft - existing >= enough:
        return None
    uid, used = os.getuid(), 0
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if entry.stat().st_uid == uid:
                        used += len(os.listdir(entry / "task"))
    return soft - used


def task_shortage(config: ServerConfig, rooms: dict[str, int | None] | None = None) -> Shortage | None:
    """Fewer than ``min_free_tasks`` more processes and threads may start (0: never checked), under
    the tightest of: the pids cgroup, the kernel's limits, RLIMIT_NPROC. ``rooms``: given figures
    by limit instead of this machine's (keys ``cgroup``, ``machine``, ``user``)."""
    reserve = config.min_free_tasks
    if reserve <= 0:
        return None
    if rooms is None:
        existing = machine_tasks()
        rooms = {
            "cgroup": cgroup_task_room(),
            "machine": machine_task_room(existing),
            "user": user_task_room(enough=reserve, existing=existing),
        }
    known = {limit: room for limit, room in rooms.items() if room is not None}
    if not known:
        return None
    limit = min(known, key=lambda name: known[name])
    room = max(0, known[limit])
    if room >= reserve:
        return None
    said = {
        "cgroup": f"this server's pids cgroup allows {room} more tasks (pids.max less pids.current; a container's "
        "--pids-limit)",
        "machine": f"the machine allows {room} more tasks (the lower of kernel.pid_max and kernel.threads-max, less "
        "the tasks that exist)",
        "user": f"this user may start {room} more tasks (RLIMIT_NPROC; a higher limit: ulimit -u)",
    }[limit]
    return Shortage(
        "tasks",
        room,
        reserve,
        "tasks",
        f"{said}, below the {reserve} this server keeps free (min_free_tasks); a session's renderer is a process "
        "of about a dozen threads",
    )


def memory_shortage(
    config: ServerConfig, available_mb: int | None = None, cgroup_mb: int | None = None
) -> Shortage | None:
    """The memory available to this server is below ``min_free_memory_mb`` (0: never checked):
    the machine's MemAvailable, or what its memory cgroup still allows if that is less.
    ``available_mb`` and ``cgroup_mb``: given figures instead of this machine's."""
    reserve = config.min_free_memory_mb
    if reserve <= 0:
        return None
    machine = available_memory_mb() if available_mb is None else available_mb
    group = cgroup_room_mb() if cgroup_mb is None else cgroup_mb
    if group is not None and (machine is None or group < machine):
        available = group
        said = f"this server's memory cgroup allows it {group} MB more (its limit less its use)"
    elif machine is not None:
        available, said = machine, f"the machine has {machine} MB of memory available (MemAvailable)"
    else:
        return None
    if available >= reserve:
        return None
    kept = f"below the {reserve} MB this server keeps free (min_free_memory_mb)"
    return Shortage("memory", available, reserve, "MB", f"{said}, {kept}")


def open_file_descriptors() -> int | None:
    """This process's open file descriptors (None where there is no /proc/self/fd)."""
    try:
        return len(os.listdir(OWN_FDS))
    except OSError:
        return None


def file_descriptor_shortage(
    config: ServerConfig, open_fds: int | None = None, soft_limit: int | None = None
) -> Shortage | None:
    """Fewer than ``min_free_fds`` (or 10 % of RLIMIT_NOFILE's soft limit, if more) descriptors
    are left below the soft limit (0: never checked). ``open_fds`` and ``soft_limit``: given
    figures instead of this process's."""
    if config.min_free_fds <= 0:
        return None
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY or soft_limit <= 0:
        return None
    used = open_file_descriptors() if open_fds is None else open_fds
    reserve = max(config.min_free_fds, int(soft_limit * FD_RESERVE_FRACTION))
    threshold = soft_limit - reserve
    if used is None or used < threshold:
        return None
    return Shortage(
        "file_descriptors",
        used,
        threshold,
        "descriptors",
        f"this process has {used} open file descriptors of its soft limit of {soft_limit} (RLIMIT_NOFILE); "
        f"it keeps {reserve} free (min_free_fds {config.min_free_fds}, or 10 % of the limit if more), so it "
        f"starts nothing new from {threshold} on (a higher limit: ulimit -n)",
    )


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants, from /proc, ``root`` first: a server's tree is its Python
    process, the Playwright driver and every Chromium process (what the soak, the scale bench and
    the tests of Chromium's processes measure); empty of descendants where /proc is missing."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:  # ended meanwhile
                    continue
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def count_open_sessions(sessions: Iterable[OpenSession]) -> int:
    """Sessions still holding a browser context: neither closed nor on a browser that died."""
    return sum(not session.closed and not session.crashed for session in sessions)


@functools.cache
def cores() -> int:
    """The CPU cores this process may run on, and its cpu cgroup lets it use (a container's CPU
    limit leaves the cores it may run on as they are)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return min(cpus, cgroup_cpu_limit() or cpus)


def session_cap(config: ServerConfig) -> tuple[int, str]:
    """How many sessions the server's browser holds open at once, and why: ``max_open_sessions``,
    or ``max_sessions_per_core`` times the cores when that is fewer."""
    cap, why = config.max_open_sessions, f"max_open_sessions {config.max_open_sessions}"
    per_core = config.max_sessions_per_core
    if per_core and per_core * cores() < cap:
        cap, why = per_core * cores(), f"max_sessions_per_core {per_core} × {cores()} cores"
    return cap, why


def open_session_shortage(config: ServerConfig, open_sessions: int) -> Shortage | None:
    """The session cap (``session_cap``) is reached: sessions (browser contexts, with their
    renderers) open already, counting those being opened."""
    cap, why = session_cap(config)
    if open_sessions < cap:
        return None
    return Shortage(
        "open_sessions",
        open_sessions,
        cap,
        "sessions",
        f"this server's browser has {open_sessions} open sessions, counting those being opened ({why})",
    )


class SessionHost(Protocol):
    """A browser's sessions as the count sees them (``toolserver.browser.BrowserHost``): those
    open, and how many are being opened. Sandboxes sharing one browser share its count."""

    @property
    def sessions(self) -> Iterable[OpenSession]: ...

    opening: int


@contextlib.contextmanager
def admitted(config: ServerConfig, host: SessionHost) -> Iterator[None]:
    """Check the limits for a new session on ``host``'s browser (``ServerAtCapacity``), then hold
    its place among the open sessions while the block opens it. Check and hold happen with no
    ``await`` between them, so starts arriving together are counted one after another."""
    check_session_capacity(config, host.sessions, host.opening)
    host.opening += 1
    try:
        yield
    finally:
        host.opening -= 1


def check_session_capacity(config: ServerConfig, sessions: Iterable[OpenSession], opening: int = 0) -> None:
    """``ServerAtCapacity`` when a new session would pass a limit: open sessions (and ``opening``,
    those being opened), memory, descriptors, tasks."""
    shortage = (
        open_session_shortage(config, count_open_sessions(sessions) + opening)
        or memory_shortage(config)
        or file_descriptor_shortage(config)
        or task_shortage(config)
    )
    if shortage is not None:
        raise ServerAtCapacity(
            f"server at capacity ({shortage.limit.replace('_', ' ')}): {shortage.explanation}. No session "
            "was started; call browser_start_session again later, when other sessions have closed",
            **shortage.details(),
        )


def check_run_capacity(config: ServerConfig) -> None:
    """``RunRefusedAtCapacity`` (429) when the machine is at a limit a new run would pass: memory,
    descriptors, tasks (a run could start no session)."""
    shortage = memory_shortage(config) or file_descriptor_shortage(config) or task_shortage(config)
    if shortage is not None:
        raise RunRefusedAtCapacity(
            f"server at capacity ({shortage.limit.replace('_', ' ')}): {shortage.explanation}. "
            "No run was created; retry later, when other runs have ended"
        )
