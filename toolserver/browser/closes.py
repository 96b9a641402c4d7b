"""Tabs closed by a page, not by the sandbox: recorded as ``tab_closed`` (reason ``page``), as their
opening was, but never a tab its browser's end closed.

When a browser dies, Playwright closes each of its pages first and says the browser is gone after
(it still calls it connected while the pages' close events run), so a close alone does not say who
closed the tab. A page that calls ``window.close()`` on its own window reports it first (init.js):
its tab's close, within ``REPORT_HOLDS_S``, is recorded at once (also when a ``browser_close_tab``
that failed had begun to close it). A close no report explains (another page closed the window,
or the report was lost) is recorded after ``CLOSE_GRACE_S``, unless the browser ended meanwhile.
A call that saw such a close waits for that decision before it answers (``decided``): a call whose
browser ended under it answers ``browser_crashed``, not ``ok`` with the tabs gone.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.settling import Settling
    from toolserver.browser.tab import Tab

CLOSE_GRACE_S = 0.5  # how long an unexplained close waits for its browser's end (it comes within ms)
REPORT_HOLDS_S = 3.0  # a window.close() explains a close this soon after it (Chromium closes within ms)


class PageCloses:
    """The closes of one session's tabs that the sandbox did not make."""

    def __init__(self, owner: Owner, settling: Settling) -> None:
        self.owner = owner
        self.settling = settling
        self.undecided = 0  # closes no report explained, waiting out the grace

    def closed(self, tab: Tab) -> None:
        """``tab``'s page closed, not by the session's end or the flood guard: recorded now, or after
        the grace. One a call is closing (``browser_close_tab``) is the page's only if it reported it."""
        if self.reported(tab):
            self.record(tab, tab.page.url)
            return
        if tab.closing:
            return
        self.undecided += 1
        asyncio.get_running_loop().call_later(CLOSE_GRACE_S, self.decide, tab, tab.page.url)

    @staticmethod
    def reported(tab: Tab) -> bool:
        """Its page reported a window.close() just now (one long ago Chromium refused after all)."""
        return time.monotonic() - tab.close_reported < REPORT_HOLDS_S

    def decide(self, tab: Tab, url: str) -> None:
        self.undecided -= 1
        self.record(tab, url)
        self.settling.notify()

    def record(self, tab: Tab, url: str) -> None:
        if not (self.owner.closed or self.owner.crashed):
            self.owner.record_event("tab_closed", {"tab": tab.id, "url": url, "reason": "page"}, tab=tab)

    async def decided(self) -> None:
        """Returns once every unexplained close is recorded, or the browser has ended."""
        owner = self.owner
        if self.undecided and not owner.crashed:
            ready = lambda: not self.undecided or owner.crashed or owner.closed  # noqa: E731
            await self.settling.until(ready, time.monotonic() + CLOSE_GRACE_S + 0.1)
