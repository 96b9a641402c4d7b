"""Capacity: before a run is made or a session (a browser context) is opened, the server checks
the machine's real limits, so that at a limit it refuses new work with an error naming the
limit and its figures, instead of running out (an OOM kill, EMFILE in the middle of a call, a
renderer that cannot start) or slowing every run.

    memory            MemAvailable (/proc/meminfo) below ``min_free_memory_mb``
    file_descriptors  this process's open descriptors (/proc/self/fd) leave fewer than
                      ``min_free_fds``, or 10 % of RLIMIT_NOFILE's soft limit if larger, free
    open_sessions     ``max_open_sessions`` sessions open on the server's browser, or
                      ``max_sessions_per_core`` times the cores when that is fewer

One function per limit measures it and returns a ``Shortage``, or None when there is room; two
checks turn a shortage into the caller's error: ``admitted`` (``check_session_capacity``) into
``ServerAtCapacity``, a tool error the agent can retry, for ``browser_start_session``;
``check_run_capacity`` into ``RunRefusedAtCapacity`` (429) for a new run. Where /proc is missing
(not Linux) the memory and descriptor checks find room.

A session start holds its place while its context opens (``admitted``), so starts arriving
together count the ones before them against the session cap; the session joins the host's
sessions when it has started, with no await before the start lets go of its place, so no
session is counted twice. Memory and descriptors are
measured, not reserved: starts arriving together see the figures of before any of them, which
the reserves are there to absorb.

Imports only the configuration and the errors: no browser, no transport.
"""

from __future__ import annotations

import contextlib
import os
import resource
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from toolserver.config import ServerConfig
from toolserver.errors import RunRefusedAtCapacity, ServerAtCapacity

Limit = Literal["memory", "file_descriptors", "open_sessions"]
MEMINFO = Path("/proc/meminfo")
OWN_FDS = Path("/proc/self/fd")
FD_RESERVE_FRACTION = 0.10  # of the soft limit, when that is more than ``min_free_fds``
# Sessions being opened, per browser host: keyed by the host, so servers on different browsers
# never share a count, and sandboxes sharing one browser share its count (its renderers).
OPENING: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()


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


def memory_shortage(config: ServerConfig, available_mb: int | None = None) -> Shortage | None:
    """The machine's available memory is below ``min_free_memory_mb`` (0: never checked)."""
    reserve = config.min_free_memory_mb
    if reserve <= 0:
        return None
    available = available_memory_mb() if available_mb is None else available_mb
    if available is None or available >= reserve:
        return None
    return Shortage(
        "memory",
        available,
        reserve,
        "MB",
        f"the machine has {available} MB of memory available (MemAvailable), below the {reserve} MB "
        "this server keeps free (min_free_memory_mb)",
    )


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


def count_open_sessions(sessions: Iterable[OpenSession]) -> int:
    """Sessions still holding a browser context: neither closed nor on a browser that died."""
    return sum(not session.closed and not session.crashed for session in sessions)


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


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


@contextlib.contextmanager
def admitted(config: ServerConfig, host: object, sessions: Iterable[OpenSession]) -> Iterator[None]:
    """Check the limits for a new session on ``host``'s browser (``ServerAtCapacity``), then hold
    its place among the open sessions while the block opens it. Check and hold happen with no
    ``await`` between them, so starts arriving together are counted one after another."""
    opening = OPENING.get(host, 0)
    check_session_capacity(config, sessions, opening)
    OPENING[host] = opening + 1
    try:
        yield
    finally:
        OPENING[host] -= 1


def check_session_capacity(config: ServerConfig, sessions: Iterable[OpenSession], opening: int = 0) -> None:
    """``ServerAtCapacity`` when a new session would pass a limit: open sessions (and ``opening``,
    those being opened), memory, descriptors."""
    shortage = (
        open_session_shortage(config, count_open_sessions(sessions) + opening)
        or memory_shortage(config)
        or file_descriptor_shortage(config)
    )
    if shortage is not None:
        raise ServerAtCapacity(
            f"server at capacity ({shortage.limit.replace('_', ' ')}): {shortage.explanation}. No session "
            "was started; call browser_start_session again later, when other sessions have closed",
            **shortage.details(),
        )


def check_run_capacity(config: ServerConfig) -> None:
    """``RunRefusedAtCapacity`` (429) when the machine is at a limit a new run would pass: memory, descriptors."""
    shortage = memory_shortage(config) or file_descriptor_shortage(config)
    if shortage is not None:
        raise RunRefusedAtCapacity(
            f"server at capacity ({shortage.limit.replace('_', ' ')}): {shortage.explanation}. "
            "No run was created; retry later, when other runs have ended"
        )
