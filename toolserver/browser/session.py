"""A session: one browser context and its tabs, opened on the profile kept for its site key, and
``Recorder``, what the session records through (the run that owns it).

``open_session`` makes the context and ``Session.start`` wires it (the injected script, the
router, new pages become tabs); ``close_session`` saves the profile and closes the context. A
session handles its pages' events (navigations, dialogs, downloads) and owns its parts: the
``Router``, the ``Settling`` waits, the ``PageReports`` and the ``Downloads``, which record
through it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from playwright.async_api import Browser, BrowserContext, Download, Frame, Page

from toolserver.browser.backstop import Backstop
from toolserver.browser.closes import PageCloses
from toolserver.browser.console import PageReports
from toolserver.browser.dialogs import Dialogs
from toolserver.browser.downloads import Downloads
from toolserver.browser.javascript import init_script
from toolserver.browser.local_documents import LocalDocuments, is_local
from toolserver.browser.reports import bounded, safe_title
from toolserver.browser.router import Router
from toolserver.browser.settling import Marks, Settling
from toolserver.browser.tab import Tab
from toolserver.browser.unrouted import Unrouted
from toolserver.errors import PageUnresponsive
from toolserver.media import RunMedia

if TYPE_CHECKING:
    from toolserver.browser.host import BrowserHost
    from toolserver.config import ServerConfig
    from toolserver.contract.events import EventKind
    from toolserver.contract.mirrors import MirrorStore
    from toolserver.contract.policy import Policy
    from toolserver.faults import RunFaults

log = logging.getLogger("toolserver.browser")


class Recorder(Protocol):
    """The run that owns a session (``toolserver.run.Run``): its host, config and policy, and a
    place to record events. The browser never imports the run or the dispatcher."""

    host: BrowserHost
    store: MirrorStore
    config: ServerConfig
    policy: Policy
    download_bytes: int  # bytes of downloads kept so far (capped by max_download_bytes)
    downloads_begun: int  # downloads its pages began (capped by max_downloads)
    downloads_writing: dict[Download, Downloads]  # those its sessions write (held to that cap with it)
    screenshot_dir: Path | None  # None: no screenshots (toolserver.media)
    media: RunMedia  # the run's pictures and Playwright traces
    faults: RunFaults | None  # injected faults (toolserver.faults), or None

    def record_event(
        self, kind: EventKind, data: dict, *, session: Session | None = None, tab: Tab | None = None
    ) -> dict: ...

    def count_events(self, kind: EventKind, data: dict, count: int) -> None: ...

    def record_state_change(
        self,
        action: str,
        *,
        name: str,
        blocked: bool = False,
        detail: dict | None = None,
        session: Session | None = None,
        tab: Tab | None = None,
    ) -> dict: ...

    def record_policy_violation(
        self, url: str, *, origin: str, session: Session | None = None, tab: Tab | None = None, **data: object
    ) -> dict: ...


@dataclass(eq=False)
class Session:
    id: str
    site_key: str | None
    provider: str
    profile_new: bool
    run: Recorder
    context: BrowserContext
    browser: Browser | None = None  # the Chromium this session lives in
    backstop: Backstop | None = None  # the context's proxy: what escapes the router is refused there
    tabs: dict[str, Tab] = field(default_factory=dict)
    active_tab_id: str | None = None
    closed: bool = False
    closing: asyncio.Future | None = None  # its close, once begun (close_session)
    browser_lost: bool = False  # its browser went with Playwright's driver (which still calls it connected)
    opening_tab: bool = False  # a tool (not the page) is opening the next page
    report_key: str = field(default_factory=lambda: secrets.token_hex(8))  # in init.js's report prefix
    settling: Settling = field(init=False)
    router: Router = field(init=False)
    reports: PageReports = field(init=False)
    closes: PageCloses = field(init=False)
    downloads: Downloads = field(init=False)
    dialogs: Dialogs = field(init=False)
    local_documents: LocalDocuments = field(init=False)
    unrouted: Unrouted = field(init=False)
    tabs_made: int = 0  # tabs are t1, t2, ... in the order they were made
    unannounced: dict[Page, Tab | None] = field(default_factory=dict)  # opened by a page, not yet recorded
    undecided: list[Page] = field(default_factory=list)  # new while a tool opens a tab: its page, or a popup

    def __post_init__(self) -> None:
        self.settling = Settling(self, self.run.config)
        self.router = Router(self, self.settling, self.run.store, self.run.policy, self.run.faults)
        self.reports = PageReports(self, self.settling, self.report_key, self.run.policy)
        self.closes = PageCloses(self, self.settling)
        self.downloads = Downloads(self, self.run)
        self.dialogs = Dialogs(self, self.run.config, self.run.policy)
        self.local_documents = LocalDocuments(self, self.run.policy)
        self.unrouted = Unrouted(self, self.run.store, self.run.policy)
        if self.backstop is not None:
            self.backstop.report, self.backstop.idle = self.unrouted.escaped, self.unrouted.idle_tunnel

    @property
    def active_tab(self) -> Tab | None:
        return self.tabs.get(self.active_tab_id) if self.active_tab_id else None

    @property
    def crashed(self) -> bool:
        return self.browser_lost or (self.browser is not None and not self.browser.is_connected())

    def tab_for_page(self, page: Page | None) -> Tab | None:
        return next((tab for tab in self.tabs.values() if tab.page is page), None)

    async def tab_list(self, known: tuple[Tab, str] | None = None) -> list[dict]:
        """Every tab with its title. ``known``: a tab whose title was just read (not asked again).
        A tab that does not answer within ``other_tab_title_s`` is listed with ``title: null``
        and why: one slow tab never fails the call."""
        bound = min(self.run.config.other_tab_title_s, self.run.config.action_timeout_ms / 1000)

        async def title(tab: Tab) -> dict:
            if known is not None and tab is known[0]:
                return {"title": known[1]}
            if tab.crashed:
                return {"title": None, "title_unavailable": "the page crashed"}
            try:
                return {"title": await bounded(safe_title(tab, self.run.config), bound, "reading the title")}
            except PageUnresponsive:
                return {"title": None, "title_unavailable": f"the tab did not answer within {bound:g} s"}

        tabs = list(self.tabs.values())
        titles = await asyncio.gather(*(title(tab) for tab in tabs))  # one round trip, not N
        return [{**tab.summary(tab.id == self.active_tab_id), **title} for tab, title in zip(tabs, titles, strict=True)]

    # --- opening and closing ------------------------------------------------------------
    async def start(self) -> None:
        """Wire the context (the injected script, the router, new pages become tabs), then
        open the first tab."""
        run, context = self.run, self.context
        script = init_script(
            self.report_key,
            block_state_changes=run.policy.block_state_changes,
            screenshots=run.screenshot_dir is not None,
            max_popups=run.config.max_tabs_per_session,
            max_text=run.config.max_page_text_chars,
        )
        await context.add_init_script(script)
        await context.route("**/*", self.router.route)
        context.on("page", self._on_new_page)
        self.active_tab_id = (await self.open_page()).id

    def mark_closed(self) -> bool:
        """Mark the session closed: False when it was closed already."""
        was, self.closed = self.closed, True
        return not was

    def browser_disconnected(self, browser: Browser, reason: str | None = None) -> None:
        if self.browser is browser and not self.closed:
            self.browser_lost = True
            self.record_event("browser_crashed", {"session_id": self.id} | ({"reason": reason} if reason else {}))
            self.downloads.cut_off()  # what it was writing ended with it
            self.notify()  # a settle wait ends now (``Settling.idle``)

    # --- recording: through the run, with this session filled in --------------------------
    def record_event(self, kind: EventKind, data: dict, *, tab: Tab | None = None) -> dict:
        return self.run.record_event(kind, data, session=self, tab=tab)

    def count_events(self, kind: EventKind, data: dict, count: int) -> None:
        self.run.count_events(kind, data, count)

    def record_state_change(
        self, action: str, *, name: str, blocked: bool = False, detail: dict | None = None, tab: Tab | None = None
    ) -> dict:
        return self.run.record_state_change(action, name=name, blocked=blocked, detail=detail, session=self, tab=tab)

    def record_policy_violation(self, url: str, *, origin: str, tab: Tab | None = None, **data: object) -> dict:
        return self.run.record_policy_violation(url, origin=origin, session=self, tab=tab, **data)

    # --- pages and their events ----------------------------------------------------------
    def adopt_page(self, page: Page) -> Tab:
        self.tabs_made += 1
        tab = Tab(id=f"t{self.tabs_made}", page=page)
        self.tabs[tab.id] = tab
        page.set_default_timeout(self.run.config.action_timeout_ms)
        page.set_default_navigation_timeout(self.run.config.navigation_timeout_ms)
        page.on("framenavigated", lambda frame: self._on_navigated(tab, frame))
        page.on("dialog", lambda dialog: self.dialogs.on_dialog(tab, dialog))
        page.on("download", lambda download: self._on_download(tab, download))
        page.on("close", lambda _page: self._on_close(tab))
        page.on("crash", lambda _page: self._on_crash(tab))
        self.reports.listen(tab)
        page.on("popup", lambda popup: self._opened(popup, tab))
        self.notify()
        return tab

    def _on_new_page(self, page: Page) -> None:
        """A page of the context: the first tab, one a tool opens (``open_page``), or one a page
        opened (``window.open``, a link's target), recorded once its opener is known (``_opened``)."""
        if self.tab_for_page(page) is not None:
            return
        self.settling.pages_seen += 1  # a popup the click waits for, even one closed at once
        self.notify()
        if not self.tabs_made:  # the first tab (not: no tab open now)
            self.settling.popup_requested_at = 0.0
            self.adopt_page(page)
        elif self.opening_tab:  # the tool's page, or a popup whose opener says so next, in this turn
            self.undecided.append(page)
        else:
            self._popup(page)

    def _popup(self, page: Page) -> None:
        # A tab a tool is opening holds its place under the cap (the tool checked there was room).
        if len(self.tabs) + int(self.opening_tab) >= self.run.config.max_tabs_per_session:
            self.unannounced[page] = None  # a page opening popups without end: over the cap each is closed at once
            asyncio.ensure_future(page.close())
        else:
            self.settling.popup_requested_at = 0.0  # its page is here: no popup is still to come
            self.unannounced[page] = self.adopt_page(page)
        # Playwright tells its opener right after this, in the same turn (the opener's "popup" event),
        # with noopener too; it tells none when the opener had closed already.
        asyncio.get_running_loop().call_soon(self._opened, page, None)

    async def open_page(self) -> Tab:
        """A tab of a tool's own: exactly the page the context's ``new_page`` returned. A page a
        page opens meanwhile is a popup as any other (its opener claims it as it appears); one no
        opener claimed (it had closed) is taken for a popup once the tool has its page."""
        self.opening_tab, page = True, None
        try:
            page = await self.context.new_page()
            tab = self.tab_for_page(page) or self.adopt_page(page)  # first: the others' cap counts it
        finally:
            self.opening_tab = False
            others, self.undecided = [p for p in self.undecided if p is not page and not p.is_closed()], []
            for other in others:
                self._popup(other)
        self.settling.popup_requested_at = 0.0
        return tab

    def _opened(self, page: Page, opener: Tab | None, navigating: bool = False) -> None:
        """Record a page a page opened, once: ``tab_opened`` with its opener's tab (None: it had closed) or, over
        the tab cap, a ``blocked_request`` in the opener's tab; then its first document, unless ``navigating``."""
        if page in self.undecided:  # its opener claims it while a tool opens a tab: a popup
            self.undecided.remove(page)
            self._popup(page)
        if page not in self.unannounced:
            return
        tab = self.unannounced.pop(page)
        if tab is None:
            refused = {"url": page.url, "method": "GET", "resource_type": "popup", "reason": "too_many_tabs"}
            self.record_event("blocked_request", refused, tab=opener)
            return
        data = {"tab": tab.id, "opener": opener.id if opener else None, "url": page.url}
        self.record_event("tab_opened", data, tab=tab)
        if page.url != "about:blank" and not navigating:  # its first document committed before it was adopted
            self._on_navigated(tab, page.main_frame)

    def _on_navigated(self, tab: Tab, frame: Frame) -> None:
        url, top = frame.url, frame.parent_frame is None
        if top:
            self._opened(tab.page, None, navigating=True)  # its opening first (no-op once recorded)
        if is_local(url):  # a document the page made itself, in any frame: never seen by the router
            if top:
                tab.activity.new_document_requested = True
            self.local_documents.committed(tab, frame)
        if top and tab.commit(url.split("#", 1)[0]):
            self.notify()
            self.record_event("navigation", {"url": url}, tab=tab)

    def _on_close(self, tab: Tab) -> None:
        """A tab's page closed. One the sandbox did not close (a call, the flood guard, the
        session's end) was closed by a page, or its browser's end (``PageCloses`` tells which)."""
        if not (self.closed or self.crashed or tab.closed or tab.flooded):  # one a call closes: ``PageCloses``
            self.closes.closed(tab)
        self.forget_tab(tab)

    def _on_crash(self, tab: Tab) -> None:
        tab.crash()
        self.record_event("page_crashed", {"url": tab.page.url}, tab=tab)
        self.notify()

    def _on_download(self, tab: Tab, download: Download) -> None:
        """Every download is a state change; under blocking none is written, else they are capped (``Downloads``)."""
        self.settling.downloads_seen += 1
        if download.url == tab.activity.served_url:  # the document served became a download: none commits
            tab.activity.awaiting_commit = False
        self.notify()
        data = {"url": download.url, "filename": download.suggested_filename}
        self.record_event("download", data, tab=tab)
        blocked = self.run.policy.block_state_changes
        if not self.router.took_download(download.url):  # else the router recorded it already
            blocked = self.unrouted.download_refused(download.url, tab) or blocked
            self.record_state_change("download", name=f"download {download.url}", blocked=blocked, detail=data, tab=tab)
        if not blocked:
            self.downloads.started(tab, download)

    def forget_tab(self, tab: Tab) -> None:
        """Drop a closed tab; the most recent remaining tab becomes current if it was."""
        tab.closed = True
        self.notify()
        self.tabs.pop(tab.id, None)
        if self.active_tab_id not in self.tabs:
            self.active_tab_id = next(reversed(self.tabs), None)
            if self.active_tab is not None:
                self.active_tab.snapshot.after_close = tab.id

    # --- settling (toolserver.browser.settling) ----------------------------------------------
    def notify(self) -> None:
        """Something the settling waits on changed: wake the waiters."""
        self.settling.notify()

    def until(self, ready: Callable[[], bool], deadline: float) -> Awaitable[bool]:
        """Wait, woken by activity (never polling), until ``ready()`` or the deadline."""
        return self.settling.until(ready, deadline)

    def marks(self, tab: Tab, state: dict | None) -> Marks:
        return self.settling.marks(tab, state)

    def idle(self, tab: Tab) -> bool:
        return self.settling.idle(tab)

    def settle(self, tab: Tab, before: Marks | None = None, probe: dict | None = None) -> Awaitable[dict | None]:
        """Wait as long as the page is busy with what the last action started (``Settling.settle``)."""
        return self.settling.settle(tab, before, probe)
