"""A run's trace as the transports read it back: while the run lives, after it ended, and after
the server forgot it (from the server's ``trace_dir``). A trace file deleted meanwhile is
``unknown_run``, saying so, never a server fault."""

from __future__ import annotations

import re
from pathlib import Path

from toolserver.errors import UnknownRun
from toolserver.run import Run

RUN_ID = re.compile(r"run_[0-9a-f]{12}")


def run_header(run: Run) -> dict:
    """The run's trace header (its first line), as written — kept in memory, never re-read."""
    return run.trace.header


def run_trace_text(run: Run) -> str:
    """The trace of a run the server still holds."""
    try:
        return run.trace.text()
    except OSError as exc:
        raise UnknownRun(f"the trace of run {run.id} cannot be read ({exc})") from exc


def stored_trace_text(trace_dir: str | Path | None, run_id: str) -> str:
    """The trace of a run the server has forgotten, from ``trace_dir``."""
    if trace_dir is not None and RUN_ID.fullmatch(run_id):
        path = Path(trace_dir) / f"{run_id}.jsonl"
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except OSError as exc:
                raise UnknownRun(f"the trace file of run {run_id} cannot be read ({exc})") from exc
    raise UnknownRun(
        f"no run {run_id!r}"
        + (
            ""
            if trace_dir
            else " (ended runs are forgotten after a while; start the server "
            "with a trace directory to keep their traces readable)"
        )
    )
