"""Documents a page makes itself, at ``blob:``, ``data:`` and ``filesystem:`` URLs: no request
brings them, so the router never sees them. Each is checked against the allow-list when it
commits, in the top frame or in any frame of it: off the list it is a ``policy_violation``
(origin ``page`` for the top frame, ``frame`` for a frame) and, enforced, the frame is taken off
it and shows the sandbox's blocked page instead (a snapshot waits for this: ``Tab.leaving``).

A frame is taken off one document at a time: one its page sends back meanwhile (a frame given a
``data:`` document every few milliseconds) is taken off when that ends, so the round trips are
bounded by the sandbox's pace, not the page's, and a snapshot waits for one, not for a backlog.

Imports Playwright, the router (its blocked page) and the types of its owner; never the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

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


class LocalDocuments:
    """Checks the local documents one session's frames commit, and takes them off refused ones."""

    def __init__(self, owner: Owner, policy: Policy) -> None:
        self.owner, self.policy = owner, policy
        self._leaving: dict[Frame, asyncio.Future] = {}  # frames being taken off a document now

    def committed(self, tab: Tab, frame: Frame) -> None:
        """A frame of ``tab`` (its top frame or any other) committed a document at a local URL:
        recorded when it is off the allow-list and, enforced, taken off it."""
        url = frame.url
        if self.policy.url_ok(url):
            return
        origin = "page" if frame.parent_frame is None else "frame"
        self.owner.record_policy_violation(url, origin=origin, method="GET", resource_type="document", tab=tab)
        if self.policy.enforcing and frame not in self._leaving:  # else taken off when the leave in flight ends
            self._leave(tab, frame)

    def _leave(self, tab: Tab, frame: Frame) -> None:
        leaving = self._leaving[frame] = asyncio.ensure_future(self._show_blocked(tab, frame, frame.url))
        leaving.add_done_callback(lambda _done: self._left(tab, frame))
        previous = tab.leaving  # a snapshot waits for every frame's leave in flight
        tab.leaving = leaving if previous is None or previous.done() else asyncio.gather(previous, leaving)

    def _left(self, tab: Tab, frame: Frame) -> None:
        """A leave ended: a frame its page sent back to a refused document meanwhile leaves again."""
        del self._leaving[frame]
        url = frame.url
        if not (tab.closed or tab.crashed or frame.is_detached()) and is_local(url) and not self.policy.url_ok(url):
            self._leave(tab, frame)

    @staticmethod
    async def _show_blocked(tab: Tab, frame: Frame, url: str) -> None:
        with contextlib.suppress(PlaywrightError):  # the frame (or its page) may be gone already
            if frame.parent_frame is None:
                tab.activity.new_document_requested = True
            await frame.goto("about:blank")
            # A data: URL is its document: the blocked page names its type, not its text.
            shown = url.split(",", 1)[0] + ",…" if url.startswith("data:") else url
            await frame.set_content(blocked_page("policy", shown))
