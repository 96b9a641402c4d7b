"""Processes from /proc: a process's descendants and their command lines (the browser's and
the Playwright driver's flags are checked on the real processes)."""

from __future__ import annotations

import re
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
