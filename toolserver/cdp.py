"""A tab's CDP session, and the sandbox's questions to its page asked through it.

Chromium evaluates each question itself (CDP ``Runtime.evaluate``, in the page's main world):
Playwright's ``page.evaluate`` runs a helper of its own in that world, which a page that replaced
built-ins (Array's iterator, ``Function.prototype.call``) breaks, and costs about 0.25 ms more.
The questions use only what init.js took before the page's scripts ran (``toolserver.browser``).
Here, below the browser and the media, so both ask through the tab's one session.
"""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError


async def cdp_session(tab: Any) -> CDPSession:
    """The tab's CDP session (``tab.cdp``), made at its first question. Once made, asking for it
    does not wait, so questions sent at once go to the page in the order asked (a tab's first
    question is its first snapshot's: a click or typing needs a ref from one)."""
    if tab.cdp is None:
        tab.cdp = asyncio.ensure_future(tab.page.context.new_cdp_session(tab.page))
        tab.cdp.add_done_callback(seen)
    return await asyncio.shield(tab.cdp)  # shared by the tab's questions: one cancelled leaves it


def seen(made: asyncio.Future) -> None:
    if not made.cancelled():
        made.exception()  # a page closed before its session was made: every question says so, none is logged


async def evaluate(tab: Any, expression: str) -> Any:
    """The value of ``expression`` in the tab's document, as JSON values (a promise is awaited);
    a ``PlaywrightError`` if it throws or the document went away."""
    session = await cdp_session(tab)
    asked = {"expression": expression, "returnByValue": True, "awaitPromise": True}
    answer = await session.send("Runtime.evaluate", asked)
    thrown = answer.get("exceptionDetails")
    if thrown is not None:
        said = (thrown.get("exception") or {}).get("description") or thrown.get("text") or "an exception"
        raise PlaywrightError(f"Page.evaluate: {said.strip().splitlines()[0]}")
    return answer["result"].get("value")
