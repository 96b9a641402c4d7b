"""The dispatcher: the one error boundary every transport goes through.

For each call it takes the run's turn (one call at a time per run), parses the arguments
(strictly, as ``ToolArgs`` says), resolves the tool's scope (the run's session, its tab), applies
the shared checks once (the URL allowed by the run's policy, and mirrored), runs the handler
within ``call_timeout_s``, translates what the handler raised into the one error shape, and
writes exactly one trace line. Screenshots and Playwright traces hang off the run
(``toolserver.media``). Never imports the tools (a registry is handed in) nor packs (a ``Policy`` is).
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
import weakref
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from toolserver import browser as br
from toolserver.browser import first_line
from toolserver.browser.call_log import action_failure, log_details
from toolserver.contract.lines import strict_json
from toolserver.contract.trace import CallRecord, wall_now
from toolserver.errors import (
    BrowserActionFailed,
    ChromiumUnavailable,
    NotInMirror,
    PageUnresponsive,
    PolicyViolation,
    ProviderUnavailable,
    ToolError,
    UnknownRun,
)
from toolserver.floods import cut_text
from toolserver.injected import end_session_midway, refuse_session_start
from toolserver.registry import Tool, traced_args
from toolserver.response import Response
from toolserver.run import CallContext, Run, SessionContext, TabContext
from toolserver.session_errors import crashed_error, crashed_tab, no_open_tab

TARGET_CRASHED = "Target crashed"  # Playwright's message for a call whose page's renderer ended
CRASH_EXPLAINS = ("browser_action_failed", "page_unresponsive")  # errors a crash during the call explains
log = logging.getLogger("toolserver.dispatch")
Flight = tuple[CallContext, Any, float, str]  # a call holding its run's turn: its context, arguments, start


class Dispatcher:
    """Runs a server's tool calls. One per ``Sandbox``; every run it creates hands its calls here."""

    def __init__(self) -> None:
        # The call holding a run's turn, with what its line needs should the run's end not wait for it
        self._in_flight: weakref.WeakKeyDictionary[Run, Flight] = weakref.WeakKeyDictionary()
        self._ends: set[asyncio.Future] = set()  # runs' ends under way (held till done: ``end``)

    async def call(self, run: Run, name: str, raw_args: Any) -> dict:
        """Run one tool call; always returns {"ok": true, "result"} or {"ok": false, "error"}. A call
        whose turn came after its run's trace was finished never ran, and has no line."""
        async with run.turn:
            await run.media.before_call(run.registry.find(name))  # the last picture, before this call acts
            if run.trace.closed:  # the run's end did not wait for the call before it (``write_unfinished``)
                return {"ok": False, "error": ended(run).to_json()}
            run.seq += 1
            run.last_active = time.monotonic()
            ctx = CallContext(run, run.seq, name)
            run.current = ctx
            t_start, wall_start = run.trace.now(), wall_now()
            flight = self._in_flight[run] = (ctx, raw_args, t_start, wall_start)
            try:
                return await self._call(run, name, flight)
            finally:  # a cancelled call leaves its flight too: no later end writes a line for it
                if self._in_flight.get(run) is flight:
                    del self._in_flight[run]

    async def _call(self, run: Run, name: str, flight: Flight) -> dict:
        ctx, raw_args, t_start, wall_start = flight
        url_before: str | None = None
        call_tab: br.Tab | None = None  # the session's tab as the call began
        result: dict | None = None
        error: dict | None = None
        try:
            if run.browser_start is not None:
                await browser_started(run.browser_start)
            if run.closed:
                raise ended(run)
            tool = run.registry.get(name)
            args = tool.parse(raw_args)
            ctx = run.current = scoped(ctx, tool)
            call_tab = ctx.tab
            url_before = call_tab.url if call_tab else None
            url = getattr(args, "url", None) if tool.url_bearing else None
            if url is not None:
                check_url(ctx, url)
            await run.media.begin_group(ctx)
            if run.faults is not None:
                refuse_session_start(ctx, tool)
            result = await bounded_call(ctx, handle(tool, ctx, args))
        except ToolError as exc:
            error = exc.to_json()
        except UnknownRun as exc:
            error = {"type": "unknown_run", "message": str(exc)}
        except PlaywrightError as exc:
            error = await browser_error(ctx, exc, call_tab)
        except Exception as exc:  # a server fault: recorded, reported, never fatal
            log.exception("server fault in %s", name)
            run.record_event(
                "server_fault", {"tool": name, "error": repr(exc), "traceback": traceback.format_exc(limit=8)}
            )
            error = {"type": "server_fault", "message": f"internal error in {name}: {exc!r}"}
        finally:
            run.current = None
            run.last_active = time.monotonic()
        if (crashed := await crashed_during(ctx)) is not None and (error is None or error["type"] in CRASH_EXPLAINS):
            result, error = None, crashed
        if error is not None and run.closed and error["type"] != "unknown_run":  # its sessions closed under it
            cause = error["message"]
            error = {"type": "unknown_run", "message": f"run {run.id} ended while this call was running: {cause}"}
        try:  # nothing after the handler may lose the call's line
            await run.media.end_group()
            if run.faults is not None:
                await end_session_midway(ctx)
        except Exception:
            log.exception("run %s: after %s", run.id, name)
        session = ctx.session or run.sessions.get(run.current_session_id or "")
        tab = session.active_tab if session and not session.closed and not session.crashed else None
        url_after = tab.url if tab else None
        if result is not None and url_before is None and url_after is None:
            url_after = result.get("url")
        # Page text and an error's message (which may quote a 200 KB argument) are cut at their bound
        # (toolserver.floods); text that is not valid Unicode (a lone surrogate in a title) is escaped, and noted.
        limit = run.config.max_page_text_chars
        result, escaped = strict_json(cut_text(result, limit), "result")
        error, escaped_error = strict_json(cut_text(error, limit), "error")
        if self._in_flight.pop(run, None) is not flight:  # the run's end wrote its line (``write_unfinished``)
            return {"ok": False, "error": error or ended(run).to_json()}
        screenshot = run.media.after_call(ctx, run.registry.find(name), tab)
        suppressed = run.close_event_window(ctx)
        args, noted = traced_args(raw_args) if error and error["type"] == "invalid_arguments" else (raw_args, [])
        escaped = [*noted, *escaped, *escaped_error]
        run.write_call(CallRecord.model_construct(
            seq=ctx.seq, tool=name, args=args, ok=error is None, result=result, error=error,
            t_start=t_start, t_end=run.trace.now(), wall_start=wall_start, wall_end=wall_now(),
            session_id=session.id if session else None, tab=tab.id if tab else None,
            url_before=cut_text(url_before, limit), url_after=cut_text(url_after, limit), events=ctx.events,
            screenshot=screenshot, escaped=escaped or None, suppressed_events=suppressed or None,
        ))  # fmt: skip
        return {"ok": True, "result": result} if error is None else {"ok": False, "error": error}

    async def reject(self, run: Run, name: str, raw_args: Any, error: dict) -> None:
        """A call refused before it reached a tool: its line, after any call in flight; ``unknown_run``
        (no line) if its run's trace was finished meanwhile (while the body was read, or the turn awaited)."""
        async with run.turn:
            if run.trace.closed:
                raise ended(run)
            run.write_rejected(name, raw_args, error)

    async def end(self, run: Run, reason: str) -> None:
        """End the run. Its sessions are closed first, without waiting for a call in flight (a
        call on a hung page then fails at once); the call's line is awaited within
        ``close_timeout_s`` so it lands before ``run_end``. A second end (an answer racing a
        DELETE, a sweep) returns once the first is done, the trace final."""
        if run.ending is not None:  # ended, or ending: done when its trace is final
            return await asyncio.shield(run.ending)
        run.ending, run.closed, run.ended_at = asyncio.get_running_loop().create_future(), True, time.monotonic()
        # Finished even when its caller is cancelled (a sweep stopped at shutdown): run_end is written.
        self._ends.add(finishing := asyncio.ensure_future(self.finish(run, reason)))
        finishing.add_done_callback(self._ends.discard)
        await asyncio.shield(finishing)

    async def finish(self, run: Run, reason: str) -> None:
        assert run.ending is not None
        try:
            try:  # a close that fails (a bug) is logged: the run ends all the same, its trace final
                await run.media.before_call(None)
                await asyncio.gather(*(br.close_session(session) for session in list(run.sessions.values())))
            except Exception:
                log.exception("run %s: closing its sessions failed", run.id)
            turn = run.turn
            try:
                await asyncio.wait_for(turn.acquire(), run.config.close_timeout_s)
            except TimeoutError:
                log.warning("run %s: a call was still running when the run ended", run.id)
                self.write_unfinished(run)
            else:
                turn.release()
            run.close_event_window()
            run.trace.close(reason)
        except OSError as exc:  # its last lines the disk refused: the run is ended all the same
            log.error("run %s: its trace could not be finished: %s", run.id, exc)
        finally:
            run.ending.set_result(None)

    def write_unfinished(self, run: Run) -> None:
        """The line of the call still running when its run's end stopped waiting for it: written
        now, before ``run_end`` (it writes none when it ends), with the arguments it was given."""
        if (flight := self._in_flight.pop(run, None)) is None:
            return
        ctx, args, t_start, wall_start = flight
        said = f"it did not finish within close_timeout_s ({run.config.close_timeout_s:g} s), so its line has no result"
        error = {"type": "unknown_run", "message": f"run {run.id} ended while this call was running; {said}"}
        run.write_call(CallRecord.model_construct(
            seq=ctx.seq, tool=ctx.tool, args=args, ok=False, error=error, t_start=t_start, t_end=run.trace.now(),
            wall_start=wall_start, wall_end=wall_now(), session_id=run.current_session_id, events=ctx.events,
        ))  # fmt: skip


def ended(run: Run) -> UnknownRun:  # the words of every refusal of a run that has ended
    return UnknownRun.ended(run.id, served=run.trace.header.get("transport") != "mcp-stdio")


def scoped(ctx: CallContext, tool: Tool) -> CallContext:
    """The context of the tool's scope: with the run's current session, and its current tab."""
    if tool.scope == "run":
        return ctx
    session = ctx.run.current_session()
    if tool.scope == "session":
        return SessionContext(ctx.run, ctx.seq, ctx.tool, ctx.events, session, ctx.started)
    if session.active_tab is None:
        raise no_open_tab()
    if session.active_tab.crashed:
        raise crashed_tab(session.active_tab)
    return TabContext(ctx.run, ctx.seq, ctx.tool, ctx.events, session, ctx.started)


def check_url(ctx: CallContext, url: str) -> None:
    """The shared checks of a URL-bearing call, on the URL exactly as sent: the allow-list rule
    (a violation is recorded, and refused when enforced), then the mirror (the sandbox is offline)."""
    run = ctx.run
    if not run.policy.url_ok(url):
        run.record_policy_violation(url, origin="tool_call", tool=ctx.tool, session=ctx.session, tab=ctx.tab)
        if run.policy.enforcing:
            raise PolicyViolation(
                f"URL not allowed by this run's pack ({run.policy.pack}): {url!r}. Rule 'allowed_urls': "
                f"only these exact URLs may be opened (a fragment may be added): {run.policy.describe_allowed()}",
                rule="allowed_urls",
                allowed_urls=list(run.policy.allowed_urls or ()),
            )
    if not run.store.has(url):
        raise not_in_mirror(run, url)


def not_in_mirror(run: Run, url: str, reached_from: str | None = None) -> NotInMirror:
    """The one not-in-mirror error: what cannot load, why, and the nearest mirrored URLs."""
    nearest = run.store.nearest(url)
    via = f" (reached from {reached_from!r})" if reached_from and reached_from != url else ""
    return NotInMirror(
        f"{url!r}{via} is not in the offline mirror, so it cannot load (the sandbox never reaches the network)."
        + (f" Nearest mirrored URLs: {', '.join(nearest)}" if nearest else " No mirrored URL is near it."),
        nearest=nearest,
    )


async def browser_error(ctx: CallContext, exc: PlaywrightError, began_on: br.Tab | None) -> dict:
    """What a Playwright failure means: the browser died, the page hangs (a timeout on a page that
    does not answer a trivial question), or the action failed (a run that ended under the call: any
    failure is ``unknown_run``). The page asked is the session's tab now (a tab the call opened),
    unless the tab the call began on closed under it: then none, not a tab with no part in the call."""
    run = ctx.run
    tab = ctx.session.active_tab if ctx.session is not None else None
    if began_on is not None and began_on.closed:
        tab = began_on
    if ctx.session is not None and ctx.session.crashed:
        return crashed_error(ctx.session).to_json()
    if run.closed:  # its tabs are gone: nothing to probe
        return BrowserActionFailed(first_line(str(exc))).to_json()
    if tab is not None and await page_crashed(ctx, tab, exc):
        return crashed_tab(tab).to_json()
    if isinstance(exc, PlaywrightTimeout) and tab is not None and not tab.closed:
        try:
            await br.bounded(br.evaluate(tab, "1"), run.config.responsive_probe_s, "a trivial question", tab)
        except PageUnresponsive as unresponsive:
            return unresponsive.to_json()
        except PlaywrightError:
            pass
    return BrowserActionFailed(action_failure(exc), **log_details(exc)).to_json()


async def crashed_during(ctx: CallContext) -> dict | None:
    """The error the call answers when its session's browser ended during the call (a
    ``browser_crashed`` event of this call: once the tabs that closed are known to be the crash's),
    or the page of the tab it ends on crashed (a ``page_crashed`` event): that, not the page as it
    stood before (an action whose settle wait the crash ended), nor how the crash made it fail."""
    session = ctx.session
    if session is None or session.closed:
        return None
    await session.closes.decided()
    if session.crashed and any((e["kind"], e["session_id"]) == ("browser_crashed", session.id) for e in ctx.events):
        return crashed_error(session).to_json()
    tab = session.active_tab
    crash = ("page_crashed", session.id, tab.id if tab is not None else None)
    if tab is not None and tab.crashed and any((e["kind"], e["session_id"], e["tab"]) == crash for e in ctx.events):
        return crashed_tab(tab).to_json()
    return None


async def page_crashed(ctx: CallContext, tab: br.Tab, exc: PlaywrightError) -> bool:
    """Whether the call failed because the tab's page crashed under it ("Target crashed" comes before
    or after the tab's ``page_crashed`` event, which is awaited for at most ``responsive_probe_s``)."""
    if tab.crashed:
        return True
    if TARGET_CRASHED not in str(exc) or ctx.session is None or tab.closed:
        return False
    return await ctx.session.until(lambda: tab.crashed, time.monotonic() + ctx.run.config.responsive_probe_s)


async def browser_started(start: asyncio.Future) -> None:
    """The browser's start, awaited in the call's turn; a start that failed is every call's ``provider_unavailable``."""
    try:
        await asyncio.shield(start)  # a call cut short never cancels the start for the others
    except ChromiumUnavailable as exc:
        raise ProviderUnavailable(f"{first_line(str(exc))}; the server's log has the details") from exc
    except Exception as exc:
        reason = f"{type(exc).__name__}: {first_line(str(exc))}"
        raise ProviderUnavailable(f"the browser could not start ({reason}); the server's log has the details") from exc


async def handle(tool: Tool, ctx: CallContext, args: Any) -> dict:
    """The handler records what happened on a response; the response shapes the result."""
    response = Response(ctx)
    await tool.handler(ctx, args, response)
    return await response.render()


async def bounded_call(ctx: CallContext, handler_call: Any) -> dict:
    """The whole call within ``call_timeout_s``: whatever a page does, the call returns."""
    bound = ctx.run.config.call_timeout_s
    try:
        async with asyncio.timeout(bound):  # in this task: no task of its own to start and wake
            result = await handler_call
    except TimeoutError:
        session = ctx.session
        if session is None or session.closed or session.active_tab is None:  # no page to blame: a start, a close
            raise PageUnresponsive(
                f"{ctx.tool} did not finish within {bound:g} s: the browser did not answer (the machine may be "
                "too busy, with many sessions at once). Try again later, or run fewer sessions at once."
            ) from None
        raise PageUnresponsive(
            f"{ctx.tool} did not finish within {bound:g} s: the page is not answering (a script on it may be "
            "spinning, or the machine too busy). Close the tab (browser_close_tab) and open another "
            "(browser_open_tab): the session stays."
        ) from None
    if ctx.run.closed:
        raise UnknownRun(f"run {ctx.run.id} ended while this call was running")
    return result
