"""The page's state report, asked for (``read_state``; the reports the page sends on its own
are taken by ``console``), its title, and a bound on every question to the page.

A state report says the document's title, content type, ready state, final state and activity
counters (requests pending, navigations, popups and downloads started); ``settling`` waits on them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from playwright.async_api import Error as PlaywrightError

from toolserver.browser.javascript import read_expression
from toolserver.cdp import evaluate
from toolserver.config import ServerConfig
from toolserver.errors import PageUnresponsive

if TYPE_CHECKING:
    from toolserver.browser.tab import Tab

T = TypeVar("T")

# The page's state report as it is now (an expression: see state.js).
STATE_NOW_JS = read_expression("state.js").replace("__TURN__", "false")
# The same a task turn from now: what the last input event started (timers of 0 ms, promise
# chains) has begun by then.
STATE_JS = read_expression("state.js").replace("__TURN__", "true")


async def bounded(awaitable: Awaitable[T], seconds: float, what: str, tab: Tab | None = None) -> T:
    """Await a browser operation for at most ``seconds``: a page whose script spins never
    answers, and Playwright puts no bound on evaluate/title itself. A question to ``tab`` ends
    when its page crashes, and one to a page that crashed already fails at once (Playwright's
    "Target crashed" error): a crashed page never answers."""
    if tab is not None and tab.crashed:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()  # never awaited: no warning
        elif asyncio.isfuture(awaitable):
            awaitable.cancel()  # a gather of questions: each ends
        raise PlaywrightError(f"Target crashed while {what}")
    try:
        async with asyncio.timeout(seconds) as bound:  # in this task (wait_for would start one per question)
            if tab is None:
                return await awaitable
            tab.questions.add(bound)
            try:
                return await awaitable
            finally:
                tab.questions.discard(bound)
    except TimeoutError:
        if tab is not None and tab.crashed:
            raise PlaywrightError(f"Target crashed while {what}") from None
        raise PageUnresponsive(
            f"the page did not answer ({what}) within {seconds:g} s: a script on it may be spinning, the page "
            "may be too large to read in that time, or the machine too busy (many sessions at once). Close "
            "the tab (browser_close_tab) and open another (browser_open_tab): the session stays."
        ) from None


def action_bound(config: ServerConfig) -> float:
    return config.action_timeout_ms / 1000


async def read_state(tab: Tab, config: ServerConfig, turn: bool = True) -> dict | None:
    """The page's state report a task turn from now (``turn=False``: now); None when the
    document is being replaced."""
    try:
        return await bounded(
            evaluate(tab, STATE_JS if turn else STATE_NOW_JS), action_bound(config), "reading the page state", tab
        )
    except PlaywrightError:  # navigating (the context was destroyed) or closed
        return None


# The title as init.js reads it (cut at max_page_text_chars, with the getter it took before the
# page's scripts ran); a document without init.js has only its own, which the dispatcher cuts.
TITLE_JS = "typeof window.__sandboxTitle === 'function' ? window.__sandboxTitle() : document.title"


async def safe_title(tab: Tab, config: ServerConfig) -> str:
    """The tab's title ("" while it navigates); a page that does not answer is page_unresponsive."""
    try:
        title = await bounded(evaluate(tab, TITLE_JS), action_bound(config), "reading the title", tab)
    except PlaywrightError:
        return ""
    return title if isinstance(title, str) else ""  # longer than max_page_text_chars: cut in the result


def first_line(text: str) -> str:
    """The first line of a browser error's message (Playwright appends its call log)."""
    return text.strip().splitlines()[0] if text.strip() else "browser error"
