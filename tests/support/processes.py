"""Processes from /proc: a process's descendants and their command lines (the browser's and
the Playwright driver's flags are checked on the real processes)."""

from __future__ import annotations

import re
from pathlib import Path


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants, from /proc (the same walk as scripts/soak.py's)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


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
