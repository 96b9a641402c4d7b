"""The router of a session: every request its pages make is answered from the mirror store or
refused; nothing reaches a network (a dead proxy in the launch flags catches anything that
could escape interception).

One step per method, in the order a request meets them: whose navigation it is, the allow-list
(a navigation off it is recorded first, whatever else refuses it), the method (a non-GET is a
state change), an attachment (a download), the mirror, a redirect (followed here), the document's
commit bookkeeping, the PDF viewer (``pdf_viewer``). Each check records what it saw and says
whether the request is refused; ``_refuse`` then answers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Request, Route

from toolserver.browser.flooding import flooding
from toolserver.browser.pdf_viewer import serve_pdf

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.settling import Settling
    from toolserver.browser.tab import Tab
    from toolserver.contract.mirrors import MirroredResponse, MirrorStore
    from toolserver.contract.policy import Policy
    from toolserver.faults import RunFaults

log = logging.getLogger("toolserver.browser")

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
MAX_REDIRECTS = 20  # in a row, as Chromium's own limit: a mirror's redirect loop is refused after it


@dataclass(frozen=True)
class Routed:
    """A request being answered: what every event about it says, and whose navigation it is."""

    base: dict[str, str]  # url, method, resource_type
    tab: Tab | None  # the tab whose frame made it (None: a service worker's, or a popup's first navigation)
    is_nav: bool
    main_frame_nav: bool

    @property
    def url(self) -> str:
        return self.base["url"]


def blocked_page(reason: str, url: str) -> str:
    """What a tab shows instead of a document the sandbox refused."""
    return (
        "<!doctype html><title>Blocked by the sandbox</title><h1>Blocked by the sandbox</h1>"
        f"<p>{html.escape(reason)}: {html.escape(url)} was not requested.</p>"
    )


def described(request: Request) -> dict[str, str]:
    """What every event about ``request`` says of it."""
    return {"url": request.url, "method": request.method, "resource_type": request.resource_type}


def target_closed(exc: BaseException) -> bool:
    """Whether Playwright failed because the page, context or browser closed: its
    ``TargetClosedError``, a subclass of the public ``Error`` that Playwright does not export."""
    return isinstance(exc, PlaywrightError) and any(cls.__name__ == "TargetClosedError" for cls in type(exc).__mro__)


class Router:
    """Answers every request of one session's pages (``route``) and refuses its WebSockets."""

    def __init__(
        self, owner: Owner, settling: Settling, store: MirrorStore, policy: Policy, faults: RunFaults | None = None
    ) -> None:
        self.owner = owner
        self.faults = faults  # injected faults (toolserver.faults): late or failed mirror answers
        self.settling = settling  # told of each request in flight, and of a popup's first request
        self.store = store
        self.policy = policy
        self.downloads: Counter[str] = Counter()  # attachment downloads recorded here (see ``took_download``)

    def took_download(self, url: str) -> bool:
        """Whether the router recorded the download of ``url`` already (then the browser's
        download event does not record it again); it forgets that one now (each navigation to
        an attachment is one download: two to one URL are two)."""
        if self.downloads[url] <= 0:
            return False
        self.downloads[url] -= 1
        if not self.downloads[url]:
            del self.downloads[url]
        return True

    async def route(self, route: Route, request: Request) -> None:
        settling = self.settling
        # The browser's own after-load requests (favicon: type "other") are not page work to wait for.
        counted = request.resource_type != "other"
        settling.inflight += counted
        try:
            await self.answer(route, request)
        except Exception as exc:  # never leave a request hanging, never let it through
            log.debug("route failed for %s: %s", request.url, exc)
            if not (self.owner.closed or target_closed(exc)):
                self.owner.record_event("server_fault", {"where": "router", "url": request.url, "error": repr(exc)})
            with contextlib.suppress(Exception):
                await route.abort("failed")
        finally:
            settling.inflight -= counted
            settling.notify()

    async def answer(self, route: Route, request: Request) -> None:
        frame = self._frame(request)
        tab = self.owner.tab_for_page(frame.page) if frame is not None else None
        if self._flooding(tab):  # aborted unrecorded, but a navigation off the list is still a violation
            if request.is_navigation_request():
                top = frame is None or frame.parent_frame is None
                self._url_refused(Routed(described(request), tab, True, top))
            return await route.abort("blockedbyclient")
        routed = self._identify(request, frame, tab)
        # The allow-list first: a navigation off it is a violation, whatever else refuses it.
        policy_refused = self._url_refused(routed)
        if self._method_blocked(routed, policy_refused):
            return await self._refuse(route, routed.main_frame_nav, "state_change_blocked", routed.base, routed.tab)
        entry = self.store.entry(routed.url)  # the manifest only: no body is read for a refused request
        headers = {k.lower(): v for k, v in entry.headers.items()} if entry else {}
        if self._download_blocked(routed, headers, policy_refused):
            return await self._refuse(route, True, "state_change_blocked", routed.base, routed.tab)
        if policy_refused:
            return await self._refuse(route, routed.main_frame_nav, "policy", routed.base, routed.tab)
        if entry is None:
            return await self._refuse(route, routed.main_frame_nav, "not_in_mirror", routed.base, routed.tab)
        if 300 <= entry.status < 400 and "location" in headers:
            target = urljoin(routed.url, headers["location"])
            return await self._redirect(route, target, routed, routed.base)
        # A body served before comes from memory; else from disk, in a thread (never block the event loop on a disk).
        mirrored = self.store.cached(routed.url) or await asyncio.to_thread(self.store.lookup, routed.url)
        if mirrored is None:  # the entry is there: only a store changed under the router gets here
            return await self._refuse(route, routed.main_frame_nav, "not_in_mirror", routed.base, routed.tab)
        if self.faults is not None and await self._injected(route, routed):
            return
        attachment = routed.is_nav and "attachment" in headers.get("content-disposition", "")
        await self._serve(route, routed, mirrored, download=routed.url if attachment else None)

    async def _serve(self, route: Route, routed: Routed, mirrored: MirroredResponse, download: str | None) -> None:
        """Answers with a mirrored body, unless it would flood its tab. ``download``: the body is an
        attachment, a download (a state change) the router records as it serves it, which the
        browser's download event will name so (``took_download``)."""
        if self._flooding(routed.tab, len(mirrored.body)):
            return await route.abort("blockedbyclient")
        if download is not None:
            self.downloads[download] += 1  # before it is served: its download event may come at once
        if routed.main_frame_nav and routed.tab is not None:
            routed.tab.redirects = 0  # a document (or a download) at last: the next redirect starts a new chain
        self._expect_commit(routed, download is not None, mirrored)
        content_type = {k.lower(): v for k, v in mirrored.headers.items()}.get("content-type", "")
        if routed.main_frame_nav and content_type.startswith("application/pdf") and download is None:
            return await serve_pdf(route, routed.url, routed.tab, mirrored)
        try:
            await route.fulfill(status=mirrored.status, headers=mirrored.headers, body=mirrored.body)
        except BaseException:
            # Never served: no download event will take it; unless one took it already (it happened).
            if download is not None and not self.took_download(download):
                self._record_download(routed, blocked=False)
            raise
        if download is not None:
            self._record_download(routed, blocked=False)

    async def _injected(self, route: Route, routed: Routed) -> bool:
        """The mirror faults: a late answer (``mirror-delay``), or a document answered 503
        (``mirror-5xx``, which then answers the request: True)."""
        assert self.faults is not None
        late = self.faults.draw("mirror-delay")
        if late is not None:
            detail = f"{routed.url} answered {late.params['ms']:g} ms late"
            self.owner.record_event("fault_injected", {"fault": late.name, "detail": detail}, tab=routed.tab)
            await asyncio.sleep(late.params["ms"] / 1000)
        failed = self.faults.draw("mirror-5xx") if routed.is_nav else None
        if failed is None:
            return False
        detail = f"{routed.url} answered 503"
        self.owner.record_event("fault_injected", {"fault": failed.name, "detail": detail}, tab=routed.tab)
        if routed.main_frame_nav and routed.tab is not None:
            routed.tab.activity.new_document_requested = True
            routed.tab.activity.awaiting_commit = True
        await route.fulfill(status=503, content_type="text/plain", body="503 Service Unavailable (injected fault)")
        return True

    def _frame(self, request: Request) -> Frame | None:
        """The frame that made the request, whose page's tab it is recorded in: any request of a
        page, a navigation, a subresource or the browser's own for the page (its icon). None for a
        service worker's, and for a popup's first navigation (made before its frame exists: the
        popup is then on its way, and the settling waits for it)."""
        try:
            return request.frame
        except Exception:  # Playwright's Error, or its assertion that a request with no frame is a service worker's
            if request.is_navigation_request():
                self.settling.popup_requested_at = time.monotonic()
                asyncio.get_running_loop().call_later(self.settling.config.popup_grace_s, self.settling.notify)
            return None

    def _flooding(self, tab: Tab | None, size: int | None = None) -> bool:
        """The tab made too many requests, or was served too many bytes (``flooding``): refuse."""
        return flooding(self.owner, self.settling.config, tab, size=size)

    def _identify(self, request: Request, frame: Frame | None, tab: Tab | None) -> Routed:
        """Whether the request is a navigation, of which frame (a main-frame one is counted for settling)."""
        is_nav = request.is_navigation_request()
        main_frame_nav = is_nav and (frame is None or frame.parent_frame is None)
        if main_frame_nav and tab is not None:
            tab.activity.nav_requests += 1
        return Routed(described(request), tab, is_nav, main_frame_nav)

    def _method_blocked(self, routed: Routed, policy_refused: bool) -> bool:
        """A request other than GET, HEAD or OPTIONS is a state change (refused when blocked). Its
        ``blocked`` says whether it was refused by either check (``policy_refused``: by the allow-list)."""
        method = routed.base["method"]
        if method in SAFE_METHODS:
            return False
        blocked = self.policy.block_state_changes
        name = f"{method} {routed.url}"
        self.owner.record_state_change(
            "non_get_request", name=name, blocked=blocked or policy_refused, detail=routed.base, tab=routed.tab
        )
        return blocked

    def _download_blocked(self, routed: Routed, headers: dict[str, str], policy_refused: bool) -> bool:
        """A navigation to an attachment is a download, a state change (refused when blocked)."""
        if not (routed.is_nav and "attachment" in headers.get("content-disposition", "")):
            return False
        # Refused by either check (``policy_refused``: the allow-list refuses it): then no download event
        # follows. One not refused is recorded as it is served (``_serve``).
        if self.policy.block_state_changes or policy_refused:
            self._record_download(routed, blocked=True)
        return self.policy.block_state_changes

    def _record_download(self, routed: Routed, blocked: bool) -> None:
        name, tab = f"download {routed.url}", routed.tab
        self.owner.record_state_change("download", name=name, blocked=blocked, detail=routed.base, tab=tab)

    def _url_refused(self, routed: Routed, url: str | None = None, origin: str | None = None) -> bool:
        """A navigation off the allow-list, of the top frame or of any frame in it (an iframe
        that navigates itself), is a policy violation (refused when enforced)."""
        url = url or routed.url
        if not routed.is_nav or self.policy.url_ok(url):
            return False
        self.owner.record_policy_violation(
            url,
            origin=origin or ("page" if routed.main_frame_nav else "frame"),
            method=routed.base["method"],
            resource_type=routed.base["resource_type"],
            tab=routed.tab,
        )
        return self.policy.enforcing

    def _expect_commit(self, routed: Routed, attachment: bool, mirrored: MirroredResponse) -> None:
        """A main-frame document served to a tab is a new document, which commits (unless it is
        an attachment, which becomes a download, or a 204)."""
        if routed.main_frame_nav and routed.tab is not None:
            routed.tab.activity.new_document_requested = True
            routed.tab.activity.awaiting_commit = not attachment and mirrored.status != 204
            routed.tab.activity.served_url = routed.url

    async def _redirect(self, route: Route, target: str, routed: Routed, base: dict[str, str], hops: int = 0) -> None:
        """Chromium sends a fulfilled redirect's next request past interception, so the router
        follows redirects itself: the target is checked and answered like any other request."""
        tab, main_frame_nav = routed.tab, routed.main_frame_nav
        self.owner.record_event("redirect", {**base, "location": target}, tab=tab)
        origin = "redirect" if main_frame_nav else "frame"  # a frame's redirect is the frame's own navigation
        if self._url_refused(routed, target, origin=origin):
            return await self._refuse(route, main_frame_nav, "policy", {**base, "url": target}, tab)
        if main_frame_nav:
            entry = self.store.entry(target)
            if entry is None:
                return await self._refuse(route, True, "not_in_mirror", {**base, "url": target}, tab)
            headers = {k.lower(): v for k, v in entry.headers.items()}
            if "attachment" in headers.get("content-disposition", ""):
                return await self._redirect_to_download(route, routed, target, headers)
            if tab is not None:
                tab.redirects += 1
                if tab.redirects > MAX_REDIRECTS:
                    tab.redirects = 0
                    return await self._refuse(route, True, "too_many_redirects", {**base, "url": target}, tab, True)
            # A stub document replaces itself with the target: that navigation is routed again.
            if tab is not None:
                tab.activity.awaiting_commit = True
            stub = (
                f"<!doctype html><meta http-equiv='refresh' content='0;url={html.escape(target)}'>"
                f"<script>location.replace({json.dumps(target)})</script>"
            )
            return await route.fulfill(status=200, content_type="text/html", body=stub)
        mirrored = await asyncio.to_thread(self.store.lookup, target)
        if mirrored is None or hops >= 5:
            return await self._refuse(route, False, "not_in_mirror", {**base, "url": target}, tab)
        location = {k.lower(): v for k, v in mirrored.headers.items()}.get("location")
        if 300 <= mirrored.status < 400 and location:
            return await self._redirect(route, urljoin(target, location), routed, base, hops + 1)
        await self._serve(route, routed, mirrored, download=None)  # a frame's download: its event records it

    async def _redirect_to_download(self, route: Route, routed: Routed, target: str, headers: dict[str, str]) -> None:
        """A redirect to an attachment is answered with it, as a link straight to it: the page
        stays (a stub's document would stay instead, empty, awaiting a commit that never comes)."""
        download = Routed({**routed.base, "url": target}, routed.tab, True, True)
        if self._download_blocked(download, headers, policy_refused=False):  # ``_redirect`` checked its URL
            return await self._refuse(route, True, "state_change_blocked", download.base, routed.tab)
        mirrored = self.store.cached(target) or await asyncio.to_thread(self.store.lookup, target)
        if mirrored is None:
            return await self._refuse(route, True, "not_in_mirror", download.base, routed.tab)
        await self._serve(route, download, mirrored, download=routed.url)  # its event names the URL asked

    async def _refuse(
        self, route: Route, main_frame_nav: bool, reason: str, base: dict, tab: Tab | None, shown: bool = False
    ) -> None:
        """``shown``: a main frame gets the blocked page even when it has a document (a redirect
        stub's, which a 204 would leave loading)."""
        self.owner.record_event("blocked_request", {**base, "reason": reason}, tab=tab)
        if main_frame_nav and tab is not None:
            tab.redirects = 0  # the chain, if any, ends here
        if main_frame_nav and (shown or tab is None or tab.document == 0):
            # A new tab's first navigation: show why it is empty (a 204 would leave no tab at all).
            if tab is not None:  # a document of its own: its commit starts the tab's state over
                tab.activity.awaiting_commit = tab.activity.new_document_requested = True
            await route.fulfill(
                status=200, content_type="text/html; charset=utf-8", body=blocked_page(reason, base["url"])
            )
        elif main_frame_nav:
            # 204 keeps the current document: the page does not move and no byte leaves; nothing commits.
            if tab is not None:
                tab.activity.awaiting_commit = False
            await route.fulfill(status=204, body=b"")
        else:
            await route.abort("blockedbyclient")
