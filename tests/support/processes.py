"""Processes from /proc: a process's descendants and their command lines (the browser's and
the Playwright driver's flags are checked on the real processes), and a process group's end."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

from toolserver.capacity import process_tree


def descendant_argvs(root: int) -> dict[int, list[str]]:
    """The command lines of ``root``'s descendant processes by pid, from /proc (Chromium rewrites its
    children's titles into one string of space-separated switches: split on both)."""
    argvs = {}
    for pid in process_tree(root)[1:]:  # the root comes first
        try:
            argvs[pid] = [a for a in re.split(r"[\0 ]", Path(f"/proc/{pid}/cmdline").read_bytes().decode()) if a]
        except OSError:
            continue
    return argvs


def living_processes_in_group(group: int) -> list[int]:
    """Pids of the process group that are alive (zombies waiting to be reaped do not count)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _parent, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(pgrp) == group and state != "Z":
            alive.append(int(stat.parent.name))
    return alive


async def wait_until_gone(group: int, seconds: float = 3.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := living_processes_in_group(group)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return alive


def drivers() -> set[int]:
    """This process's Playwright drivers (node ... run-driver)."""
    return {pid for pid, argv in descendant_argvs(os.getpid()).items() if "run-driver" in argv}


async def kill_new_driver(host, before: set[int]) -> None:
    """SIGKILL the one driver started since ``before`` (``drivers()``), then wait up to 5 s for
    ``host`` (a ``BrowserHost``) to count the crash."""
    (driver,) = drivers() - before
    os.kill(driver, signal.SIGKILL)
    for _ in range(100):
        if host.crashes:
            break
        await asyncio.sleep(0.05)
