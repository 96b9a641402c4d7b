"""The trace: one JSONL file per run, exact tool-call logging.

Line types (field ``type``):
- ``run``: the header (run id, pack, policy, versions, mirror checksum), written first.
- ``event``: something that happened in the browser, one model per ``kind``
  (``toolserver.contract.events``).
  ``seq`` names the tool call during which it happened (None between calls).
  Events are written the moment they happen, so none is lost if a call never returns.
- ``call``: one tool call, written and flushed when the call ends. ``args`` are stored exactly
  as received (also for rejected calls); ``events`` repeats the events the call caused.
- ``run_end``: written when the run is closed; the last line (one due later is logged, not written).

A line is whole or absent: each is one write to an append-only file, and one the file system
refuses (a full disk) is cut off again. Every line is strict JSON (no NaN/Infinity) in valid
UTF-8. Text that is not valid Unicode (a lone surrogate in an argument or a page title, invalid
UTF-8 in a request body) is written with each offending code point as the literal text
``\\udXXX``, and the line's ``escaped`` field lists where (e.g. ``["args.text"]``); a non-finite
number is written as its name, a string, and an integer of over 4,300 digits as its digits.

Times: ``t_*`` are monotonic seconds from the run start; ``wall_*`` are ISO-8601 UTC.
Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolserver.contract.events import EventRecord, event_of
from toolserver.contract.lines import encode_line

TRACE_FORMAT = 1
TYPED_MESSAGE, UNKNOWN_ERROR = re.compile(r"([a-z][a-z0-9_]*): "), "unknown"  # "stale_ref: Ref e5 ..."
# A new file only (O_EXCL), every write at its end (O_APPEND), not inherited by child processes.
NEW_FILE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC


def wall_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ToolError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str = Field(description="The error type (see the error reference), e.g. `stale_ref`.")
    message: str = Field(description="What went wrong and what to do next, with the evidence.")
    details: dict[str, Any] | None = Field(default=None, description="Structured evidence, where the error has some.")


class RunHeader(BaseModel):
    """The first line of every trace."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: Literal["run"] = "run"
    format: int = Field(default=TRACE_FORMAT, description="The trace format's version.")
    run_id: str = Field(description="The run's id (also in the HTTP API's paths).")
    pack: str | None = Field(default=None, description="The pack whose allow-list and task the run has, or null.")
    policy: str | None = Field(
        default=None, description="`enforce`, `observe`, or `none` for a run without an allow-list."
    )
    started_wall: str = Field(description="When the run started (ISO-8601 UTC).")
    sandbox_version: str | None = Field(default=None, description="The sandbox's package version.")
    mirror_checksum: str | None = Field(
        default=None, description="A checksum over the mirror manifests the run serves."
    )
    block_state_changes: bool | None = Field(default=None, description="Whether state changes are prevented.")


class CallRecord(BaseModel):
    """One tool call, written and flushed when the call ends."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["call"] = "call"
    seq: int = Field(description="The call's number in the run, from 1.")
    tool: str = Field(description="The tool's name, as asked (also an unknown one).")
    args: Any = Field(description="The arguments exactly as received (malformed JSON kept as its raw text).")
    ok: bool = Field(description="Whether the call succeeded.")
    result: dict[str, Any] | None = Field(default=None, description="The result the agent got (when `ok`).")
    error: ToolError | None = Field(default=None, description="The error the agent got (when not `ok`).")
    t_start: float = Field(description="Seconds since the run started, when the call arrived.")
    t_end: float = Field(description="Seconds since the run started, when it was answered.")
    wall_start: str = Field(description="When the call arrived (ISO-8601 UTC).")
    wall_end: str = Field(description="When it was answered (ISO-8601 UTC).")
    session_id: str | None = Field(default=None, description="The session the call acted on.")
    tab: str | None = Field(default=None, description="The tab the call acted on.")
    url_before: str | None = Field(default=None, description="The active tab's URL before the call.")
    url_after: str | None = Field(default=None, description="The active tab's URL after the call.")
    events: list[dict[str, Any]] = Field(default_factory=list, description="The events the call caused, repeated.")
    escaped: list[str] | None = Field(default=None, description="Where text that is not valid Unicode was escaped.")
    suppressed_events: int | None = Field(
        default=None, description="Refused requests of the page counted but not written since the last call line."
    )
    screenshot: str | None = Field(
        default=None,
        description="The active tab's viewport PNG after the call, relative to "
        "the trace's folder (e.g. shots/12.png); None when not taken.",
    )


class RunEnd(BaseModel):
    """The last line, written when the run is closed."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: Literal["run_end"] = "run_end"
    t: float = Field(description="Seconds since the run started.")
    wall: str = Field(description="When the run ended (ISO-8601 UTC).")
    reason: str = Field(
        default="closed",
        description="Why the run ended: `deleted` (`DELETE /runs/{id}`), `answered` (`POST /answer`), "
        "`idle_timeout`, `mcp_disconnected`, `mcp_idle_timeout` (an MCP HTTP session idle for "
        "`mcp_session_idle_s`), `initialize_failed`, `server_stopped`, `closed` (the Python "
        "API's `close()`), or the status of a `sandbox run` attempt (`completed`, `error`, `timeout`, "
        "`crashed`, `stopped`).",
    )


class TraceWriter:
    """Writes lines to a new JSONL file (never an existing one), thread-safe. Each line is one
    ``write`` to an append-mode descriptor, unbuffered, so it is in the file when ``write``
    returns; a failed or short write (a full disk) is cut off again, so the file holds whole
    lines only and later lines start on a line of their own. Lines are kept in memory only when
    there is no file: a long-lived server holds no trace text of its own."""

    def __init__(self, path: Path | None, header: RunHeader) -> None:
        self.path = Path(path) if path else None
        self.t0 = time.monotonic()
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self.closed = False
        # Open for the writer's life, closed by close(); O_EXCL: never two runs in one file.
        self._fd = os.open(self.path, NEW_FILE_FLAGS, 0o666) if self.path else None
        self._whole = 0  # the file's size after its last whole line
        self.header: dict[str, Any] = header.model_dump(mode="json")  # the first line, kept for readers
        try:
            self.write(self.header)
        except BaseException:
            self._close_file()
            if self.path is not None:  # no header (a full disk): no empty trace file left behind
                self.path.unlink(missing_ok=True)
            raise

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 6)

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Append one line; ``OSError`` (the file still whole) if the file system refused it."""
        data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
        line = encode_line(data)
        with self._lock:
            if self.closed:  # after run_end: no line may follow it (a late event, say)
                logging.getLogger("toolserver.trace").warning("a line after the trace's end not written: %.200s", line)
            elif self.path is None:
                self._lines.append(line)
            elif self._fd is not None:
                self._append((line + "\n").encode("utf-8"))

    def _append(self, data: bytes) -> None:
        assert self._fd is not None
        if os.fstat(self._fd).st_nlink == 0:  # the file (or its folder) was deleted: lines would go nowhere
            self._relink()
        try:
            written = os.write(self._fd, data)
        except OSError as exc:
            os.ftruncate(self._fd, self._whole)  # the part the write may have left
            message = f"trace line not written ({exc.strerror}); the trace keeps its whole lines"
            raise OSError(exc.errno, message) from exc
        if written < len(data):
            os.ftruncate(self._fd, self._whole)
            raise OSError(
                errno.ENOSPC,
                f"trace line not written: only {written} of {len(data)} bytes fit (the disk is probably full); "
                "the trace keeps its whole lines",
            )
        self._whole += written

    def _relink(self) -> None:
        """Write the trace anew at its path from the open file, and go on there."""
        assert self._fd is not None and self.path is not None
        kept = os.pread(self._fd, self._whole, 0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, NEW_FILE_FLAGS, 0o666)
        if os.write(fd, kept) != len(kept):
            os.close(fd)
            raise OSError(errno.ENOSPC, f"trace {self.path} was deleted and cannot be written again whole")
        os.close(self._fd)
        self._fd = fd
        logging.getLogger("toolserver.trace").warning(
            "trace %s was deleted; written again from its open copy", self.path
        )

    def text(self) -> str:
        """The trace's whole lines: from the open file while the run lives (also if the file was
        deleted), then from its path."""
        with self._lock:
            if self._fd is not None:
                return os.pread(self._fd, self._whole, 0).decode("utf-8")
            if self.path is not None:
                if not self.path.exists():
                    raise OSError(errno.ENOENT, f"the trace file {self.path} was deleted")
                return self.path.read_text(encoding="utf-8")
            return "".join(line + "\n" for line in self._lines)

    def close(self, reason: str = "closed") -> None:
        """Write ``run_end`` and close the file (closed also when that line cannot be written)."""
        if self.closed:
            return
        try:
            self.write(RunEnd(t=self.now(), wall=wall_now(), reason=reason))
        finally:
            self.closed = True
            self._close_file()

    def _close_file(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class Trace(BaseModel):
    """A trace read back: the header, calls and events in file order, and unreadable lines."""

    model_config = ConfigDict(extra="forbid")
    header: dict[str, Any] | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    events: list[EventRecord] = Field(default_factory=list)  # each one its kind's model
    end: dict[str, Any] | None = None
    problems: list[str] = Field(default_factory=list)


def parse_trace(text: str) -> Trace:
    """Read JSONL text; a line that does not parse is kept as a named problem, never fatal."""
    trace = Trace()
    for number, raw in enumerate(text.split("\n"), start=1):  # only \n ends a JSONL line
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
            kind = data.get("type", "call") if isinstance(data, dict) else None
            if kind == "run":
                trace.header = data
            elif kind == "run_end":
                trace.end = data
            elif kind == "event":
                trace.events.append(event_of(data))
            elif kind == "call":
                trace.calls.append(CallRecord.model_validate(normalise_call(data)))
            else:
                trace.problems.append(f"line {number}: unknown line type {kind!r}")
        except Exception as exc:
            trace.problems.append(f"line {number}: unreadable ({type(exc).__name__}: {str(exc)[:200]})")
    written = (trace.header or {}).get("format")
    if isinstance(written, int) and written > TRACE_FORMAT:
        trace.problems.insert(
            0,
            f"the trace is format {written}, newer than this sandbox reads (format {TRACE_FORMAT}): upgrade the "
            "sandbox; what it could not read is listed",
        )
    return trace


def normalise_call(data: dict[str, Any]) -> dict[str, Any]:
    """Fill the minimal external format (seq, tool, args, ok?, result?) up to a CallRecord.

    Traces converted from other harnesses may carry only ``seq``, ``tool`` and ``args`` (plus ``ok``, ``result``,
    ``t_start``, ``t_end``, ``error``: a text is of the type it starts with, else of type ``UNKNOWN_ERROR``).
    """
    out = dict(data)
    out["type"] = "call"
    out.setdefault("ok", out.get("error") is None)
    out.setdefault("t_start", 0.0)
    out.setdefault("t_end", out["t_start"])
    out.setdefault("wall_start", "")
    out.setdefault("wall_end", out["wall_start"])
    if isinstance(out.get("error"), str):
        typed = TYPED_MESSAGE.match(out["error"])
        out["error"] = {"type": typed[1] if typed else UNKNOWN_ERROR, "message": out["error"]}
    return out


def read_trace(path: Path) -> Trace:
    return parse_trace(Path(path).read_text(encoding="utf-8"))
