"""What an attempt folder and a batch folder hold: one table each, the source of the generated
files reference (``docs/reference/files.md``). A test runs a batch and checks every file it
wrote is named here. ``write_file`` writes each of them."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

NAME_MAX = 255  # bytes in one file name (Linux, macOS)


def write_file(path: Path, text: str) -> Path:
    """``text`` into ``path`` whole or not at all: written beside it, then renamed over it, so a full
    disk leaves the earlier file or none, never half of one. A character UTF-8 cannot carry (half a
    surrogate pair, from an answer's JSON escape) is written escaped (``\\ud800``)."""
    path = Path(path)
    temporary = temporary_beside(path)
    try:
        temporary.write_text(text, encoding="utf-8", errors="backslashreplace")
        os.replace(temporary, path)
    except OSError as exc:  # said of the file asked for, not of the temporary one beside it
        forget(temporary)
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        forget(temporary)
        raise
    return path


def temporary_beside(path: Path) -> Path:
    """The file ``write_file`` writes first: ``.<name>.<pid>.tmp``, the name cut so that the whole
    stays a name the file system takes (``<name>`` itself may be as long as it allows)."""
    suffix = f".{os.getpid()}.tmp"
    return path.with_name(os.fsdecode(b"." + os.fsencode(path.name)[: NAME_MAX - 1 - len(suffix)]) + suffix)


def forget(temporary: Path) -> None:
    """Remove a temporary file if it is there; an error removing it is not the one to report."""
    with contextlib.suppress(OSError):
        temporary.unlink(missing_ok=True)


def folder_file(folder: Path, name: str) -> tuple[Path | None, str | None]:
    """``folder / name`` to read, when it is a file inside ``folder``; else None and what it is
    instead (None too when it is missing). A symbolic link is followed only within the folder: an
    attempt folder from elsewhere whose ``output.txt`` leads to ``~/.ssh/id_rsa`` must not have it
    read into an export, a score or a report."""
    path = Path(folder) / name
    if not os.path.lexists(path):
        return None, None
    try:
        target, inside = path.resolve(), Path(folder).resolve()
    except (RuntimeError, OSError):  # a loop: Python 3.11's resolve raises RuntimeError for it
        return None, f"{name} is a loop of symbolic links"
    if not target.is_relative_to(inside):
        return None, f"{name} is a symbolic link out of the folder (to {target}): not read"
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None, f"{name} is a symbolic link to {target}, which is missing"
        return None, f"{name} is unreadable ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return None, f"{name} is a folder, not a file"
    if not stat.S_ISREG(mode):
        return None, f"{name} is not a regular file"
    return path, None


STDERR_TAIL_BYTES = 64 * 1024  # what the reason lines read of an agent's stderr: its end


def read_tail(path: Path, limit: int = STDERR_TAIL_BYTES) -> str:
    """The text of the file's last ``limit`` bytes (``…`` before them when there was more): a reason
    line quotes the end of an agent's stderr, which may be gigabytes."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - limit))
        data = handle.read()
    return ("…" if size > limit else "") + data.decode("utf-8", errors="replace")


def rerun_name(folder: str, k: int) -> str:
    """The folder of the ``k``-th re-run of the attempt in ``folder`` (run selection's replacements)."""
    return f"{folder}-r{k}"


def rerun_of(name: str) -> tuple[str, int] | None:
    """``(the first attempt's folder, k)`` of a re-run's folder name (``rerun_name``); None for
    the folder of a first attempt."""
    base, dash, k = name.rpartition("-r")
    return (base, int(k)) if dash and k.isdigit() and int(k) >= 1 else None


ATTEMPT_FILES: dict[str, str] = {
    "prompt.txt": "the prompt the agent was given (the pack's prompt for the attempt's site key)",
    "trace.jsonl": "the run's trace: every tool call and browser event (see the trace reference)",
    "output.txt": "the agent's final answer, exactly as given",
    "score.json": "the score report: fields, evidence, gates, qualified pass, error-free",
    "score.txt": "the verdict for people: every wrong field, every gate failure, why it did not qualify",
    "attempt.json": "pack, agent, site key, times, exit status, tool-call counts, token usage, versions, checksums, "
    "injected faults",
    "report.html": "the attempt's page: verdict, field table, gate violations, the timeline of calls",
    "shots/<seq>.png": "the active tab's viewport after call <seq> (`--screenshots`)",
    "agent.stderr.txt": "a `cmd:` agent's standard error (its last 16 MiB, once it ended)",
    "agent.stdout.txt": "what a `cmd:` agent ended at its time limit (or by a stop) had printed on stdout, its "
    "first 16 MiB: not an answer, never scored",
    "usage.json": "a `cmd:` agent's own report of its model and tokens (`input_tokens` without the cached ones, "
    "`cached_input_tokens`, `output_tokens`), which `--prices` costs",
    "transcript.jsonl": "a model agent's whole conversation (messages, tool calls, usage per turn)",
    "playwright-trace.zip": "the session's Playwright trace (`--playwright-trace`; later sessions "
    "`playwright-trace-2.zip`, ...)",
    "replay-report.html": "the attempt's page with the first divergence of `sandbox replay --report`",
    "inspect.eval": "the attempt as an Inspect eval log, one sample (`sandbox export --format inspect ATTEMPT_DIR`)",
}

BATCH_FILES: dict[str, str] = {
    "<pack>-<n>/": "one attempt folder per attempt; with several agents `<agent>--<pack>-<n>/` (the agent's "
    "label or spec, made a file name); a re-run of an interrupted attempt `<folder>-r<k>/`. The readers take "
    "only these names: another folder with attempt files (a copy, `bid-intake-1.bak/`) is left out, and said, "
    "as is an attempt folder that is a symbolic link",
    "summary.json": "the table's rows and every attempt's outcome and reason; a time not known (an attempt the "
    "sandbox could not run) is `null`, never 0",
    "report.html": "the batch page: the summary table and each attempt's verdict, linking to its page",
    "inspect.eval": "the batch as an Inspect eval log, one sample per attempt (`sandbox export --format inspect DIR`)",
}
