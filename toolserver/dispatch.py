"""Runs and the dispatcher: the one error boundary every transport goes through.

A run owns its sessions (isolated from other runs), its policy, its tool registry and its
trace. ``Run.call`` validates arguments, applies the shared checks (session or tab exists,
URL allowed), calls the tool's handler, translates foreign exceptions, and writes exactly one
trace line per call.

Imports the registry and the browser; never the tools (a registry is handed in) and never
packs (a ``Policy`` is handed in).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from sandbox import __version__
from sandbox.core.mirrors import MirrorStore
from sandbox.core.policy import Policy
from sandbox.core.trace import CallRecord, EventRecord, RunHeader, TraceWriter, strict_json, wall_now
from toolserver import browser as br
from toolserver.browser import first_line
from toolserver.config import ServerConfig
from toolserver.errors import (
    BrowserActionFailed,
    BrowserCrashed,
    InvalidArguments,
    NoSession,
    PageUnresponsive,
    PolicyViolation,
    ToolError,
    UnknownRun,
)
from toolserver.media import begin_call_group, end_call_group, finish_screenshot, start_screenshot
from toolserver.registry import ToolRegistry

log = logging.getLogger("toolserver.dispatch")


@dataclass
class CallContext:
    """What a handler gets: the run, the call's seq, and the resolved session/tab."""

    run: Run
    seq: int
    tool: str
    events: list[dict] = field(default_factory=list)
    session: br.Session | None = None
    started: float = field(default_factory=time.monotonic)
    paint: dict | None = None  # the page's paint key read during the call (toolserver.media)

    @property
    def tab(self) -> br.Tab | None:
        return self.session.active_tab if self.session else None

    def require_tab(self) -> br.Tab:
        tab = self.tab
        if tab is None:
            raise NoSession("the session has no open tab; open one with browser_open_tab(url)")
        return tab


class Run:
    def __init__(
        self,
        host: br.BrowserHost,
        config: ServerConfig,
        policy: Policy,
        registry: ToolRegistry,
        trace_path: Path | None = None,
        extra_header: dict | None = None,
        store: MirrorStore | None = None,
        screenshot_dir: Path | None = None,
        playwright_trace_dir: Path | None = None,
    ) -> None:
        self.id = f"run_{secrets.token_hex(6)}"
        if screenshot_dir is None and config.screenshot_dir is not None:
            screenshot_dir = Path(config.screenshot_dir) / self.id
        self.screenshot_dir = screenshot_dir  # None: no screenshots (toolserver.media)
        if playwright_trace_dir is None and config.playwright_trace_dir is not None:
            playwright_trace_dir = Path(config.playwright_trace_dir) / self.id
        self.playwright_trace_dir = playwright_trace_dir  # None: no Playwright trace
        self.host, self.config, self.policy, self.registry = host, config, policy, registry
        self.store = store or host.store  # a run may carry its own mirror (a changed-mirror test)
        self._snapshot_numbers = itertools.count(1)
        self.sessions: dict[str, br.Session] = {}
        self.current_session_id: str | None = None
        self.current: CallContext | None = None
        self.seq = 0
        self.closed = False
        self.ended_at: float | None = None
        self.download_bytes = 0
        self._lock = asyncio.Lock()
        if trace_path is None and config.trace_dir is not None:
            trace_path = Path(config.trace_dir) / f"{self.id}.jsonl"
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

    @property
    def trace_policy(self) -> str:
        return self.policy.mode if self.policy.allowed_urls is not None else "none"

    async def record_rejected(self, name: str, raw: Any, error: dict) -> None:
        """A call the transport could not even parse (e.g. malformed JSON): still one trace line."""
        async with self._lock:
            self.seq += 1
            t, wall = self.trace.now(), wall_now()
            self.trace.write(
                CallRecord(
                    seq=self.seq,
                    tool=name,
                    args=raw,
                    ok=False,
                    error=error,
                    t_start=t,
                    t_end=t,
                    wall_start=wall,
                    wall_end=wall,
                    session_id=self.current_session_id,
                )
            )

    # --- events ---------------------------------------------------------------------------
    def record_event(
        self,
        kind: str,
        data: dict,
        *,
        session: br.Session | None = None,
        tab: br.Tab | None = None,
        call: CallContext | None = None,
    ) -> dict:
        """An event of the call running now (or of ``call``, one that already ended)."""
        current = call or self.current
        event = EventRecord(
            kind=kind,
            seq=current.seq if current else None,
            t=self.trace.now(),
            wall=wall_now(),
            session_id=session.id if session else None,
            tab=tab.id if tab else None,
            data=data,
        )
        record = event.model_dump(mode="json", exclude={"escaped"})
        self.trace.write(record)
        if current is not None:
            current.events.append(record)
        return record

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

    def next_snapshot_id(self) -> str:
        """Snapshot ids count per run, so the same calls give the same trace."""
        return f"s{next(self._snapshot_numbers)}"

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

    # --- sessions -------------------------------------------------------------------------
    def current_session(self, crashed_ok: bool = False) -> br.Session:
        session = self.sessions.get(self.current_session_id or "")
        if session is None or session.closed:
            raise NoSession("no open browser session in this run; call browser_start_session first")
        if session.crashed and not crashed_ok:
            raise crashed_error(session)
        return session

    # --- the dispatcher -------------------------------------------------------------------
    async def call(self, name: str, raw_args: Any) -> dict:
        """Run one tool call; always returns {"ok": true, "result"} or {"ok": false, "error"}."""
        async with self._lock:
            await finish_screenshot(self, name)  # the previous call's picture, before this call acts
            self.seq += 1
            ctx = CallContext(self, self.seq, name)
            self.current = ctx
            t_start, wall_start = self.trace.now(), wall_now()
            url_before = url_after = None
            result: dict | None = None
            error: dict | None = None
            try:
                if self.closed:
                    raise UnknownRun(f"run {self.id} has ended")
                tool = self.registry.get(name)
                require_strict_json(name, raw_args)
                args = tool.parse(raw_args)
                if tool.scope != "run":
                    ctx.session = self.current_session()
                if tool.scope == "tab":
                    ctx.require_tab()
                url_before = ctx.tab.url if ctx.tab else None
                if tool.url_bearing and args.url is not None:
                    self.check_url(ctx, args.url)
                await begin_call_group(self, ctx)
                result = await self.bounded_call(ctx, tool.handler(ctx, args))
            except ToolError as exc:
                error = exc.to_json()
            except UnknownRun as exc:
                error = {"type": "unknown_run", "message": str(exc)}
            except PlaywrightError as exc:
                error = await self.browser_error(ctx, exc)
            except Exception as exc:  # a server fault: recorded, reported, never fatal
                log.exception("server fault in %s", name)
                self.record_event(
                    "server_fault", {"tool": name, "error": repr(exc), "traceback": traceback.format_exc(limit=8)}
                )
                error = {"type": "server_fault", "message": f"internal error in {name}: {exc!r}"}
            finally:
                self.current = None
            await end_call_group(self)
            session = ctx.session or self.sessions.get(self.current_session_id or "")
            tab = session.active_tab if session and not session.closed and not session.crashed else None
            url_after = tab.url if tab else None
            if result is not None and url_before is None and url_after is None:
                url_after = result.get("url")
            # Page text that is not valid Unicode (a lone surrogate in a title) is escaped, and noted.
            result, escaped = strict_json(result, "result")
            screenshot = start_screenshot(self, ctx, name, tab)
            record = dict(
                type="call",
                seq=ctx.seq,
                tool=name,
                args=raw_args,
                ok=error is None,
                result=result,
                error=error,
                t_start=t_start,
                t_end=self.trace.now(),
                wall_start=wall_start,
                wall_end=wall_now(),
                session_id=session.id if session else None,
                tab=tab.id if tab else None,
                url_before=url_before,
                url_after=url_after,
                events=ctx.events,
                screenshot=screenshot,
                **({"escaped": escaped} if escaped else {}),
            )
            self.trace.write(record)  # a plain dict: writing the line can never fail validation
            return {"ok": True, "result": result} if error is None else {"ok": False, "error": error}

    def check_url(self, ctx: CallContext, url: str) -> None:
        """The allow-list rule for URL-bearing calls, on the URL exactly as sent."""
        if self.policy.url_ok(url):
            return
        self.record_policy_violation(url, origin="tool_call", tool=ctx.tool, session=ctx.session, tab=ctx.tab)
        if self.policy.enforcing:
            raise PolicyViolation(
                f"URL not allowed by this run's pack ({self.policy.pack}): {url!r}. Rule 'allowed_urls': "
                f"only these exact URLs may be opened (a fragment may be added): {self.policy.describe_allowed()}",
                rule="allowed_urls",
                allowed_urls=list(self.policy.allowed_urls or ()),
            )

    async def browser_error(self, ctx: CallContext, exc: PlaywrightError) -> dict:
        """What a Playwright failure means: the browser died, the run ended, the page hangs
        (a timeout on a page that does not answer a trivial question), or the action failed."""
        if ctx.session is not None and ctx.session.crashed:
            return crashed_error(ctx.session).to_json()
        if self.closed:
            return {"type": "unknown_run", "message": f"run {self.id} ended while this call was running"}
        tab = ctx.tab
        if isinstance(exc, PlaywrightTimeout) and tab is not None and not tab.closed:
            try:
                await br.bounded(tab.page.evaluate("1"), self.config.responsive_probe_s, "a trivial question")
            except PageUnresponsive as unresponsive:
                return unresponsive.to_json()
            except PlaywrightError:
                pass
        return BrowserActionFailed(first_line(str(exc))).to_json()

    async def bounded_call(self, ctx: CallContext, handler_call) -> dict:
        """The whole call within ``call_timeout_s``: whatever a page does, the call returns."""
        bound = self.config.call_timeout_s
        try:
            result = await asyncio.wait_for(handler_call, bound)
        except TimeoutError:
            raise PageUnresponsive(
                f"{ctx.tool} did not finish within {bound:g} s: the page is not answering. "
                "Close the tab (browser_close_tab) or the session (browser_close) and start "
                "again."
            ) from None
        if self.closed:
            raise UnknownRun(f"run {self.id} ended while this call was running")
        return result

    async def close(self, reason: str = "closed") -> None:
        """End the run. Its sessions are closed first, without waiting for a call in flight (a
        call on a hung page then fails at once); the call's line is awaited within
        ``close_timeout_s`` so it lands before ``run_end``."""
        if self.closed:
            return
        self.closed = True
        self.ended_at = time.monotonic()
        await finish_screenshot(self)
        await asyncio.gather(*(br.close_session(session) for session in list(self.sessions.values())))
        try:
            await asyncio.wait_for(self._lock.acquire(), self.config.close_timeout_s)
        except TimeoutError:
            log.warning("run %s: a call was still running when the run ended", self.id)
        else:
            self._lock.release()
        self.trace.close(reason)

    def tools(self) -> list[dict]:
        return self.registry.schemas()


def require_strict_json(name: str, raw_args: Any) -> None:
    """Arguments a strict JSON parser could read back: no NaN/Infinity, no absurd nesting."""
    try:
        json.dumps(raw_args, allow_nan=False, default=str)
    except ValueError:
        raise InvalidArguments(
            f"{name}: NaN, Infinity and -Infinity are not JSON numbers; pass a finite number"
        ) from None
    except RecursionError:
        raise InvalidArguments(f"{name}: the arguments are nested too deeply; pass a flat JSON object") from None


def crashed_error(session: br.Session) -> BrowserCrashed:
    return BrowserCrashed(
        f"the browser crashed under session {session.id} (recorded as a browser_crashed event); "
        "its tabs are gone. Start a new session with browser_start_session (a new browser is "
        "running).",
        session_id=session.id,
    )
