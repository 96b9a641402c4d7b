"""Documents a page makes itself, at ``blob:``, ``data:`` and ``filesystem:`` URLs: no request
brings them, so the router never sees them. Each is checked against the allow-list when it
commits, in the top frame or in any frame of it: off the list it is a ``policy_violation``
(origin ``page`` for the top frame, ``frame`` for a frame) and, enforced, the frame is taken off
it and shows the sandbox's blocked page instead (a snapshot waits for this: ``Tab.leaving``).

Imports Playwright, the router (its blocked page) and the types of its owner; never the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from toolserver.browser.router import blocked_page

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.tab import Tab
    from toolserver.contract.policy import Policy

LOCAL_SCHEMES = ("blob:", "data:", "filesystem:")


def is_local(url: str) -> bool:
    """A document the page made itself: never seen by the router."""
    return url.startswith(LOCAL_SCHEMES)


def check_local_document(owner: Owner, policy: Policy, tab: Tab, frame: Frame) -> None:
    """A frame of ``tab`` (its top frame or any other) committed a document at a local URL:
    recorded when it is off the allow-list and, enforced, taken off it."""
    url = frame.url
    if policy.url_ok(url):
        return
    origin = "page" if frame.parent_frame is None else "frame"
    owner.record_policy_violation(url, origin=origin, method="GET", resource_type="document", tab=tab)
    if policy.enforcing:
        tab.leaving = asyncio.ensure_future(_after(tab.leaving, _leave(tab, frame, url)))


async def _after(previous: asyncio.Future | None, leave: Coroutine[Any, Any, None]) -> None:
    """``leave`` once the tab's earlier leaving (another frame's, say) is done: a snapshot waits for both."""
    if previous is not None and not previous.done():
        await asyncio.wait([previous])
    await leave


async def _leave(tab: Tab, frame: Frame, url: str) -> None:
    with contextlib.suppress(PlaywrightError):  # the frame (or its page) may be gone already
        if frame.parent_frame is None:
            tab.activity.new_document_requested = True
        await frame.goto("about:blank")
        # A data: URL is its document: the blocked page names its type, not its text.
        shown = url.split(",", 1)[0] + ",…" if url.startswith("data:") else url
        await frame.set_content(blocked_page("policy", shown))
