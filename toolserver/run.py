"""A run and what a tool call sees of it.

A run owns its sessions (isolated from other runs), its policy, its mirror store and its trace,
and records what happens: events, policy violations, state changes, call lines. It keeps state
and recording only; the dispatcher (``toolserver.dispatch``) runs the calls, one at a time.

A handler gets a context of its tool's scope: ``CallContext`` (the run), ``SessionContext``
(also the run's current session) or ``TabContext`` (also that session's current tab), each
resolved by the dispatcher before the handler runs, so a handler never checks for them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from playwright.async_api import Download

from toolserver import __version__
from toolserver import browser as br
from toolserver.browser.downloads import Downloads
from toolserver.config import ServerConfig
from toolserver.contract.events import EventKind, event_of
from toolserver.contract.mirrors import MirrorStore
from toolserver.contract.policy import Policy
from toolserver.contract.trace import CallRecord, RunHeader, TraceWriter, wall_now
from toolserver.errors import AlreadyAnswered
from toolserver.faults import RunFaults
from toolserver.floods import PAGE_EVENT_KINDS, EventBudget, budgeted, cut_text
from toolserver.media import RunMedia
from toolserver.registry import ToolRegistry
from toolserver.session_errors import crashed_error, no_session

log = logging.getLogger("toolserver.run")


@dataclass
class CallContext:
    """What a run-scoped handler gets: the run, the call's seq and tool, the events it causes."""

    run: Run
    seq: int
    tool: str
    events: list[dict] = field(default_factory=list)
    session: br.Session | None = None  # set once the call has a session (a start sets it)
    started: float = field(default_factory=time.monotonic)
    paint: dict | None = None  # the page's paint key read during the call (toolserver.media)

    @property
    def tab(self) -> br.Tab | None:
        return self.session.active_tab if self.session else None


@dataclass
class SessionContext(CallContext):
    """A session-scoped handler's context: the run's current session, open and alive."""

    session: br.Session = None  # type: ignore[assignment]  # always given by the dispatcher


@dataclass
class TabContext(SessionContext):
    """A tab-scoped handler's context: the session's current tab, open."""

    @property
    def tab(self) -> br.Tab:
        tab = self.session.active_tab
        assert tab is not None, "the dispatcher gives a tab-scoped handler an open tab"
        return tab


class Dispatch(Protocol):
    """What a run hands its calls to (``toolserver.dispatch.Dispatcher``): one call at a time."""

    async def call(self, run: Run, name: str, raw_args: Any) -> dict: ...

    async def reject(self, run: Run, name: str, raw_args: Any, error: dict) -> None: ...

    async def end(self, run: Run, reason: str) -> None: ...


class Run:
    def __init__(
        self,
        host: br.BrowserHost,
        config: ServerConfig,
        policy: Policy,
        registry: ToolRegistry,
        dispatch: Dispatch,
        *,
        trace_path: Path | None = None,
        extra_header: dict | None = None,
        store: MirrorStore | None = None,
        screenshot_dir: Path | None = None,
        playwright_trace_dir: Path | None = None,
        run_id: str | None = None,
        faults: RunFaults | None = None,
    ) -> None:
        self.id = run_id or new_run_id()
        self.host, self.config, self.policy, self.registry = host, config, policy, registry
        self._dispatch = dispatch
        self.store = store or host.store  # a run may carry its own mirror (a changed-mirror test)
        self.screenshot_dir = screenshot_dir  # None: no screenshots (toolserver.media)
        self.playwright_trace_dir = playwright_trace_dir  # None: no Playwright trace
        self.media = RunMedia(self)
        self._snapshot_numbers = itertools.count(1)
        self.sessions: dict[str, br.Session] = {}
        self.current_session_id: str | None = None
        self.closed_by: dict[str, int] = {}  # session id -> the seq of the browser_close that closed it
        self.last_closed: str | None = None  # the session that was current when a browser_close closed it
        self.current: CallContext | None = None
        self.turn = asyncio.Lock()  # held by the call running (the dispatcher's): one at a time
        self.seq = 0
        self.closed = False
        self.answered: tuple[str, dict] | None = None  # the output POST /answer scored, and its report
        self.answering = asyncio.Lock()  # one answer scored at a time
        self.ended_at: float | None = None
        self.ending: asyncio.Future | None = None  # its end under way, then done: a second end waits for it
        # The browser's start, when the transport opened this run before it ended (stdio answers
        # `initialize` while the browser starts): each call waits for it in its turn.
        self.browser_start: asyncio.Future | None = None
        self.last_active = time.monotonic()  # when the last call started or ended (the named-run sweep)
        self.budgets = {  # what a page may write between two call lines (toolserver.floods)
            "blocked_request": EventBudget("blocked_request", config.max_identical_refusals, config.max_refusal_lines),
            **{
                kind: EventBudget(kind, config.max_page_event_lines, config.max_page_event_lines)
                for kind in PAGE_EVENT_KINDS
            },
        }
        self.faults = faults  # injected faults (toolserver.faults), or None
        self.download_bytes, self.downloads_begun = 0, 0  # capped by max_download_bytes, max_downloads
        self.downloads_writing: dict[Download, Downloads] = {}  # being written, across its sessions
        if trace_path is not None:
            Path(trace_path).parent.mkdir(parents=True, exist_ok=True)
        self.trace = TraceWriter(
            trace_path,
            RunHeader(
                run_id=self.id,
                pack=policy.pack,
                policy=self.trace_policy,
                started_wall=wall_now(),
                sandbox_version=__version__,
                mirror_checksum=self.store.checksum(),
                block_state_changes=policy.block_state_changes,
                **(extra_header or {}),
            ),
        )

    async def call(self, name: str, raw_args: Any) -> dict:
        """Run one tool call through the dispatcher: ``{"ok": true, "result"}`` or ``{"ok": false, "error"}``."""
        return await self._dispatch.call(self, name, raw_args)

    async def record_rejected(self, name: str, raw: Any, error: dict) -> None:
        """A call the transport could not even parse (e.g. malformed JSON): still one trace line,
        after any call in flight."""
        await self._dispatch.reject(self, name, raw, error)

    async def close(self, reason: str = "closed") -> None:
        """End the run: its sessions close, a call in flight answers at once, ``run_end`` is written."""
        await self._dispatch.end(self, reason)

    @property
    def trace_policy(self) -> str:
        return self.policy.mode if self.policy.allowed_urls is not None else "none"

    def tools(self) -> list[dict]:
        return self.registry.schemas()

    def next_snapshot_id(self) -> str:
        """Snapshot ids count per run, so the same calls give the same trace."""
        return f"s{next(self._snapshot_numbers)}"

    # --- sessions -------------------------------------------------------------------------
    def current_session(self, crashed_ok: bool = False) -> br.Session:
        session = self.sessions.get(self.current_session_id or "")
        if session is None or session.closed:
            ended = session.id if session is not None else self.last_closed
            raise no_session(ended, self.closed_by.get(ended or ""))
        if session.crashed and not crashed_ok:
            raise crashed_error(session)
        return session

    # --- recording ------------------------------------------------------------------------
    def write_call(self, record: CallRecord) -> None:
        """One call's line, from its model's fields. Built without validation (``model_construct``)
        by the dispatcher and written as the Python values it holds, so writing it can never fail and
        the writer escapes what strict JSON cannot carry (``escaped`` only when text was escaped)."""
        line = dict(record.__dict__)  # the model's fields as they are (no copy of nested values)
        if line["escaped"] is None:
            del line["escaped"]
        self.trace.write(line)

    def write_rejected(self, name: str, raw: Any, error: dict) -> None:
        """The line of a call refused before it reached a tool (the dispatcher holds the run's turn)."""
        self.seq += 1
        t, wall = self.trace.now(), wall_now()
        self.write_call(
            CallRecord.model_construct(
                seq=self.seq,
                tool=name,
                args=raw,
                ok=False,
                result=None,
                error=error,
                t_start=t,
                t_end=t,
                wall_start=wall,
                wall_end=wall,
                session_id=self.current_session_id,
                tab=None,
                url_before=None,
                url_after=None,
                events=[],
                escaped=None,
                screenshot=None,
            )
        )

    def record_event(
        self,
        kind: EventKind,
        data: dict,
        *,
        session: br.Session | None = None,
        tab: br.Tab | None = None,
        call: CallContext | None = None,
    ) -> dict:
        """An event of the call running now (or of ``call``, one that already ended). A refused
        request, navigation or dialog beyond the page's bounds is counted, not written (``toolserver.floods``)."""
        current = call or self.current
        data = cut_text(data, self.config.max_page_text_chars)
        budget = self.budgets.get(kind) if budgeted(kind, data) else None
        if budget is not None and not budget.admit(data):
            return {"kind": kind, "data": data, "suppressed": True}
        event = event_of(
            {
                "kind": kind,
                "seq": current.seq if current else None,
                "t": self.trace.now(),
                "wall": wall_now(),
                "session_id": session.id if session else None,
                "tab": tab.id if tab else None,
                "data": data,
            }
        )
        record = event.model_dump(mode="json", exclude={"escaped"})
        self.trace.write(record)
        if current is not None:
            current.events.append(record)
        return record

    def count_events(self, kind: EventKind, data: dict, count: int) -> None:
        """``count`` events like ``data`` that a page counted itself: no lines, but in the window's
        ``events_suppressed`` count (``toolserver.floods``)."""
        budget = self.budgets.get(kind)
        if budget is not None and count > 0:
            budget.count(cut_text(data, self.config.max_page_text_chars), count)

    def earlier_answer(self, output: str) -> dict | None:
        """The report of the answer this run was given (None: none yet); another output is refused."""
        if self.answered is not None and self.answered[0] != output:
            raise AlreadyAnswered(
                f"run {self.id} was answered already, with another output: one answer per run "
                "(`sandbox score` scores another output against its trace)"
            )
        return self.answered[1] if self.answered is not None else None

    def keep_answer(self, output: str, report: dict) -> dict:
        self.answered = (output, report)
        return report

    def close_event_window(self, call: CallContext | None = None) -> int:
        """Write one ``events_suppressed`` line per kind of event counted since the last call
        line (of ``call``, which ends now); returns how many events were left out."""
        summaries = [summary for budget in self.budgets.values() for summary in budget.close_window()]
        for summary in summaries:
            self.record_event("events_suppressed", summary, call=call)
        return sum(summary["count"] for summary in summaries)

    def record_policy_violation(
        self, url: str, *, origin: str, session: br.Session | None = None, tab: br.Tab | None = None, **data: object
    ) -> dict:
        """The one shape of a ``policy_violation`` event (tool call, page, redirect)."""
        return self.record_event(
            "policy_violation",
            {
                **data,
                "url": url,
                "rule": "allowed_urls",
                "origin": origin,
                "enforced": self.policy.enforcing,
                "allowed_urls": list(self.policy.allowed_urls or ()),
            },
            session=session,
            tab=tab,
        )

    def record_state_change(
        self,
        action: str,
        *,
        name: str,
        blocked: bool = False,
        detail: dict | None = None,
        session: br.Session | None = None,
        tab: br.Tab | None = None,
    ) -> dict:
        allowed = self.policy.state_change_allowed(name)
        return self.record_event(
            "state_change",
            {
                "action": action,
                "name": name,
                "allowed": allowed,
                "blocked": blocked and not allowed,
                "detail": detail or {},
            },
            session=session,
            tab=tab,
        )

    def state_change_blocked(self, name: str) -> bool:
        """Whether this run prevents the named state change (blocking on, and the pack not allowing it)."""
        return self.policy.block_state_changes and not self.policy.state_change_allowed(name)


def new_run_id() -> str:
    return f"run_{secrets.token_hex(6)}"
