"""Settling: after an action or a navigation, wait exactly as long as the page is busy with
what it started, then hand back its state report.

A session's ``Settling`` holds what the waits wait on (requests in the router, downloads seen,
a popup's first request, each tab's activity) and the waits. Every wait is woken by events (the
router, Playwright's page events, the page's own reports: each calls ``notify``), never by
polling, and is bounded: giving up is recorded as a ``settle_timeout`` event, so a half-loaded
page is never silently used.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from toolserver.browser.reports import action_bound, read_state

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.tab import Tab
    from toolserver.config import ServerConfig

HTTP_URL = re.compile(r"^https?:")


@dataclass(frozen=True)
class Marks:
    """A tab's activity counters just before an action (see ``Settling.settle``)."""

    document: int
    nav_requests: int
    tabs: frozenset[str]
    downloads_seen: int
    pages_seen: int = 0  # pages the context made (a popup closed at once, or by itself, is one)
    navs: int = 0  # the page's own counters, from its report read just before the action
    opens: int = 0
    downloads: int = 0
    closes: int = 0

    def reported(self, state: dict) -> Marks:
        """These marks with the page's own counters from ``state``."""
        return replace(self, **{key: state.get(key, 0) for key in PAGE_COUNTERS})


PAGE_COUNTERS = ("navs", "opens", "downloads", "closes")


class Settling:
    """A session's page activity, as far as the waits need it, and the waits."""

    def __init__(self, owner: Owner, config: ServerConfig) -> None:
        self.owner = owner
        self.config = config
        self.inflight = 0  # requests the router is answering
        self.downloads_seen = 0
        self.pages_seen = 0  # pages the context made: tabs, and popups closed at once over the tab cap
        self.popup_requested_at = 0.0  # a popup's first request was seen before its page
        self._pulse = asyncio.Event()  # set (and replaced) whenever activity changes

    def notify(self) -> None:
        """Something the settling waits on changed: wake the waiters."""
        self._pulse.set()
        self._pulse = asyncio.Event()

    async def until(self, ready: Callable[[], bool], deadline: float) -> bool:
        """Wait, woken by activity (never polling), until ``ready()`` or the deadline."""
        while not ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                async with asyncio.timeout(remaining):
                    await self._pulse.wait()
            except TimeoutError:
                return ready()
        return True

    def take_state(self, tab: Tab, state: dict) -> None:
        """Keep a state report of the tab's current document if it is the newest one."""
        activity = tab.activity
        if activity.state is None or state.get("seq", 0) > activity.state.get("seq", 0):
            activity.state = state
            if state.get("refresh") and activity.refresh_from is None:
                activity.refresh_from = activity.nav_requests  # the refresh's navigation is still to come
            self.notify()

    def popup_pending(self, now: float) -> bool:
        return now - self.popup_requested_at < self.config.popup_grace_s

    def marks(self, tab: Tab, state: dict | None) -> Marks:
        """Where things stand just before an action (``state``: the page's report read then)."""
        state = state or {}
        return Marks(
            document=tab.document,
            nav_requests=tab.activity.nav_requests,
            tabs=frozenset(self.owner.tabs),
            downloads_seen=self.downloads_seen,
            pages_seen=self.pages_seen,
            **{key: state.get(key, 0) for key in PAGE_COUNTERS},
        )

    def idle(self, tab: Tab) -> bool:
        """Nothing in the router, the tab's document loaded and its scripted requests handled; or nothing
        more will come: the tab closed, its page crashed, or its browser ended (reported as such, not waited out)."""
        if tab.closed or tab.crashed or self.owner.crashed:
            return True
        activity = tab.activity
        quiet = self.inflight == 0 and not activity.awaiting_commit and not self.popup_pending(time.monotonic())
        if not tab.page.url.startswith(("http:", "https:")):
            return quiet  # about:blank, an error page: no page script reports on them
        state = activity.state
        refreshed = activity.refresh_from is None or activity.nav_requests > activity.refresh_from
        return quiet and refreshed and state is not None and state["ready"] == "complete" and not state["pending"]

    async def settle(self, tab: Tab, before: Marks | None = None, probe: dict | None = None) -> dict | None:
        """Wait exactly as long as the page is busy with what the last action (or navigation)
        started, and return the tab's state report then (None if the tab closed).

        After an action (``before``: the marks taken just before it; ``probe``: the page's state
        read a task turn after it, None when the document was already replaced), the page says
        which navigations, popups and downloads it started: the sandbox waits for the router to
        see each navigation and the document it serves to commit, for each popup's tab, and for
        each download's event. Then — and after a navigation — it waits until the router has no
        request in flight and the document has loaded and handled its scripted requests' answers
        (the page reports that). Every wait is woken by events; giving up at ``settle_timeout_s``
        is recorded as a ``settle_timeout`` event, so a half-loaded page is never silently used."""
        config, tabs = self.config, self.owner.tabs
        started = time.monotonic()
        deadline = started + config.settle_timeout_s
        if probe is not None and tab.document == (before.document if before else tab.document):
            self.take_state(tab, probe)
        waits: list[tuple[str, Callable[[], bool], float]] = []
        if before is not None:
            grace = min(deadline, started + config.popup_grace_s)
            navigated = probe is None or tab.document != before.document or probe["navs"] > before.navs
            if navigated:
                waits.append(
                    (
                        "navigation",
                        lambda: (
                            tab.closed
                            or tab.crashed
                            or self.owner.crashed
                            or tab.document != before.document
                            or (tab.activity.nav_requests > before.nav_requests and not tab.activity.awaiting_commit)
                        ),
                        deadline,
                    )
                )
            opened = probe["opens"] - before.opens if probe is not None else 0
            if opened > 0:  # each popup's page appears, within the grace: a load into a named frame opens none
                waits.append(("popup", lambda: self.pages_seen - before.pages_seen >= opened, grace))
            if probe is not None and probe["downloads"] > before.downloads:
                waits.append(("download", lambda: self.downloads_seen > before.downloads_seen, grace))
            if probe is not None and probe["closes"] > before.closes:  # the page closed its tab
                waits.append(("close", lambda: tab.closed, grace))
        for what, ready, bound in waits:
            if not await self.until(ready, bound) and bound == deadline:
                return self._timed_out(tab, tab, started, what)
        new_tabs = [t for t in tabs.values() if before is not None and t.id not in before.tabs]
        if before is not None and probe is not None and probe["opens"] > before.opens:
            for popup in new_tabs:
                if not await self.popup_loaded(popup, deadline):
                    return self._timed_out(tab, popup, started, "popup")
        for waited in (tab, *new_tabs):
            if not await self.until_idle(waited, deadline):
                return self._timed_out(tab, waited, started, "page activity")
        return None if tab.closed else tab.activity.state

    async def popup_loaded(self, popup: Tab, deadline: float) -> bool:
        """A popup opened with an http(s) URL: its document has committed and loaded (Playwright's
        own events); its first report may come before the sandbox sees the page, so a missing
        one is read from the page."""
        try:
            await popup.page.wait_for_url(
                HTTP_URL, wait_until="load", timeout=max(1.0, (deadline - time.monotonic()) * 1000)
            )
        except PlaywrightError:
            return popup.closed or popup.crashed or popup.page.is_closed()
        if popup.activity.state is None and not popup.closed:
            state = await read_state(popup, self.config)
            if state is not None:
                self.take_state(popup, state)
        return True

    async def until_idle(self, tab: Tab, deadline: float) -> bool:
        """Wait for ``idle(tab)``. When the router is quiet but the page has not reported for an action
        timeout (at most half of ``settle_timeout_s``, so that there is time to ask), ask it directly: a
        page that does not answer is ``page_unresponsive`` (a spinning script), one that does has its
        state taken (a report was lost)."""
        bound = min(action_bound(self.config), self.config.settle_timeout_s / 2)
        while not await self.until(lambda: self.idle(tab), min(deadline, time.monotonic() + bound)):
            if time.monotonic() >= deadline:
                return False
            if self.inflight == 0 and not tab.activity.awaiting_commit:
                state = await read_state(tab, self.config)
                if state is not None:
                    self.take_state(tab, state)
        return True

    def _timed_out(self, tab: Tab, waited: Tab, started: float, what: str) -> dict | None:
        """Record giving up on ``waited`` (the tab acted on, or a popup it opened); the state
        report of the tab acted on (a popup's would give the call its title and final state)."""
        state = waited.activity.state or {}
        self.owner.record_event(
            "settle_timeout",
            {
                "waited_s": round(time.monotonic() - started, 3),
                "waiting_for": what,
                "inflight_requests": self.inflight,
                "page_requests_pending": state.get("pending"),
                "ready_state": state.get("ready"),
            },
            tab=waited,
        )
        return None if tab.closed else tab.activity.state
