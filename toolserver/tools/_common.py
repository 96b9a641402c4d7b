"""What several tool groups share: bounded questions to the page, settling, state-change guards."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import TimeoutError as PlaywrightTimeout

from toolserver.browser import Marks, Tab, action_bound, bounded
from toolserver.browser.call_log import never_acted
from toolserver.errors import PolicyViolation, ToolError
from toolserver.run import CallContext, SessionContext


async def ask_page(ctx: CallContext, tab: Tab | None, awaitable: Any, what: str) -> Any:
    """A page operation Playwright does not bound itself (evaluate, count, close), within the
    action timeout: a spinning page is a ``page_unresponsive`` error, never a hung call. A
    question to ``tab`` ends as soon as its page crashes."""
    return await bounded(awaitable, action_bound(ctx.run.config), what, tab)


async def act(ctx: CallContext, action: Awaitable, again: Callable[[float], Awaitable]) -> None:
    """``action``; sent once more (``again``, with twice the action timeout) when it outlasted
    the timeout without acting (``never_acted``) on a page that had answered the call's other
    questions: a machine busy with many sessions, where a fresh page's first action waits for
    Playwright's script to be compiled in it. Sent again, it finds that work done."""
    try:
        await action
    except PlaywrightTimeout as exc:
        if not never_acted(exc):
            raise
        await again(2 * ctx.run.config.action_timeout_ms)


def also_say(exc: ToolError, what: str) -> None:
    """Add to a tool error's message what the call did before it failed (a session started, a tab
    opened), so the agent knows what its next call acts on."""
    exc.message = f"{exc.message.rstrip('.')}. {what}"
    exc.args = (exc.message,)


async def settle(ctx: SessionContext, tab: Tab, before: Marks | None = None, probe: dict | None = None) -> dict | None:
    return await ctx.session.settle(tab, before, probe)


def guard_state_change(ctx: SessionContext, tab: Tab, action: str, name: str, detail: dict, refused: str) -> None:
    """Record a state-changing action the agent asked for; when the run blocks it, refuse it
    (``refused`` says what was and was not done)."""
    run = ctx.run
    blocked = run.state_change_blocked(name)
    run.record_state_change(action, name=name, blocked=blocked, detail=detail, session=ctx.session, tab=tab)
    if blocked:
        raise PolicyViolation(refused)
