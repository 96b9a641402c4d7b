"""The trace: one JSONL file per run, exact tool-call logging.

Line types (field ``type``):
- ``run``: the header (run id, pack, policy, versions, mirror checksum), written first.
- ``event``: something that happened in the browser (``kind``: navigation, redirect,
  blocked_request (WebSockets and service workers included), tab_opened, dialog, download,
  policy_violation, state_change, settle_timeout, final_state_unchecked, server_fault). ``seq`` names the tool call during which it happened (None between calls).
  Events are written the moment they happen, so none is lost if a call never returns.
- ``call``: one tool call, written and flushed when the call ends. ``args`` are stored exactly
  as received (also for rejected calls); ``events`` repeats the events the call caused.
- ``run_end``: written when the run is closed.

Times: ``t_*`` are monotonic seconds from the run start; ``wall_*`` are ISO-8601 UTC.
Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TRACE_FORMAT = 1


def wall_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ToolError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str
    message: str
    details: dict[str, Any] | None = None


class RunHeader(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: Literal["run"] = "run"
    format: int = TRACE_FORMAT
    run_id: str
    pack: str | None = None
    policy: str | None = None
    started_wall: str
    sandbox_version: str | None = None
    mirror_checksum: str | None = None


class EventRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["event"] = "event"
    kind: str
    seq: int | None = None
    t: float
    wall: str
    session_id: str | None = None
    tab: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class CallRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["call"] = "call"
    seq: int
    tool: str
    args: Any
    ok: bool
    result: dict[str, Any] | None = None
    error: ToolError | None = None
    t_start: float
    t_end: float
    wall_start: str
    wall_end: str
    session_id: str | None = None
    tab: str | None = None
    url_before: str | None = None
    url_after: str | None = None
    events: list[dict[str, Any]] = Field(default_factory=list)
    screenshot: str | None = Field(None, description="The active tab's viewport PNG after the call, relative to "
                                                     "the trace's folder (e.g. shots/12.png); None when not taken.")


class RunEnd(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: Literal["run_end"] = "run_end"
    t: float
    wall: str
    reason: str = "closed"


class TraceWriter:
    """Appends lines to a JSONL file; every line is flushed at once (thread-safe)."""

    def __init__(self, path: Path | None, header: RunHeader) -> None:
        self.path = Path(path) if path else None
        self.t0 = time.monotonic()
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self.closed = False
        self._file = open(self.path, "a", encoding="utf-8") if self.path else None
        self.write(header)

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 6)

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
        line = json.dumps(data, ensure_ascii=False, default=str)
        with self._lock:
            self._lines.append(line)
            if self._file and not self._file.closed:
                self._file.write(line + "\n")
                self._file.flush()

    def text(self) -> str:
        with self._lock:
            return "".join(line + "\n" for line in self._lines)

    def close(self, reason: str = "closed") -> None:
        if self.closed:
            return
        self.write(RunEnd(t=self.now(), wall=wall_now(), reason=reason))
        self.closed = True
        if self._file:
            self._file.close()


class Trace(BaseModel):
    """A trace read back: the header, calls and events in file order, and unreadable lines."""
    model_config = ConfigDict(extra="forbid")
    header: dict[str, Any] | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    events: list[EventRecord] = Field(default_factory=list)
    end: dict[str, Any] | None = None
    problems: list[str] = Field(default_factory=list)


def parse_trace(text: str) -> Trace:
    """Read JSONL text; a line that does not parse is kept as a named problem, never fatal."""
    trace = Trace()
    for number, raw in enumerate(text.splitlines(), start=1):
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
                trace.events.append(EventRecord.model_validate(data))
            elif kind == "call":
                trace.calls.append(CallRecord.model_validate(normalise_call(data)))
            else:
                trace.problems.append(f"line {number}: unknown line type {kind!r}")
        except Exception as exc:
            trace.problems.append(f"line {number}: unreadable ({type(exc).__name__}: {str(exc)[:200]})")
    return trace


def normalise_call(data: dict[str, Any]) -> dict[str, Any]:
    """Fill the minimal external format (seq, tool, args, ok?, result?) up to a CallRecord.

    Traces converted from other harnesses may carry only ``seq``, ``tool`` and ``args``
    (plus optional ``ok``, ``result``, ``error``, ``t_start``, ``t_end``).
    """
    out = dict(data)
    out["type"] = "call"
    out.setdefault("ok", out.get("error") is None)
    out.setdefault("t_start", 0.0)
    out.setdefault("t_end", out["t_start"])
    out.setdefault("wall_start", "")
    out.setdefault("wall_end", out["wall_start"])
    if isinstance(out.get("error"), str):
        out["error"] = {"type": "error", "message": out["error"]}
    return out


def read_trace(path: Path) -> Trace:
    return parse_trace(Path(path).read_text(encoding="utf-8"))
