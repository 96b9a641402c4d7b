"""The faults injected around a tool call (``toolserver.faults`` draws them; the dispatcher calls
these): ``session-refused`` before the call, ``session-dies`` and ``browser-crash`` after it.
Each is recorded as a ``fault_injected`` event."""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import Error as PlaywrightError

from toolserver import browser as br
from toolserver.errors import ProviderUnavailable
from toolserver.registry import Tool
from toolserver.run import CallContext


def refuse_session_start(ctx: CallContext, tool: Tool) -> None:
    """The ``session-refused`` fault: the provider refuses this session start."""
    fault = ctx.run.faults.draw("session-refused") if tool.name == "browser_start_session" and ctx.run.faults else None
    if fault is not None:
        detail = "the provider refused to start a session"
        ctx.run.record_event("fault_injected", {"fault": fault.name, "detail": detail})
        raise ProviderUnavailable(f"provider unavailable (injected fault {fault.name}): {detail}; retry later")


async def end_session_midway(ctx: CallContext) -> None:
    """The ``session-dies`` fault: after the run's N-th call, its session ends under the agent;
    the ``browser-crash`` fault: after it, Chromium itself crashes."""
    run = ctx.run
    crash = run.faults.plan.of("browser-crash") if run.faults else None
    if crash is not None and run.faults is not None and run.seq >= crash.params["after"]:
        browser = run.host.browser
        if browser is not None and browser.is_connected() and run.faults.once("browser-crash") is not None:
            detail = f"Chromium crashed after call {run.seq}"
            run.record_event("fault_injected", {"fault": crash.name, "detail": detail}, call=ctx)
            with contextlib.suppress(PlaywrightError, TimeoutError):  # it dies before it answers
                cdp = await browser.new_browser_cdp_session()
                await asyncio.wait_for(cdp.send("Browser.crash"), 2.0)
    fault = run.faults.plan.of("session-dies") if run.faults else None
    session = run.sessions.get(run.current_session_id or "")
    if fault is None or run.faults is None or session is None or session.closed or run.seq < fault.params["after"]:
        return
    if run.faults.once("session-dies") is not None:
        detail = f"session {session.id} ended after call {run.seq}"
        run.record_event("fault_injected", {"fault": fault.name, "detail": detail}, session=session, call=ctx)
        await br.close_session(session)
