"""The reports ``init.js`` sends on its own, as console messages: the page's state (loaded, idle,
typing), its window.close(), form submissions, clicks on controls marked as state-changing, and attempts at what it
refuses (WebRTC, WebTransport, service workers, popups over the tab cap, navigations to overlong URLs).
A worker's console messages reach the server too (init.js drops a page's own, but does not run
in workers): a tab whose workers flood them is closed (``flooding``), and its messages are no
longer listened to.

A report starts with ``REPORT_PREFIX`` and the session's report key, which no function a page can
reach holds: a page cannot forge one.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from toolserver.browser.flooding import flooding
from toolserver.browser.javascript import REPORT_PREFIX

if TYPE_CHECKING:
    from playwright.async_api import ConsoleMessage

    from toolserver.browser.owner import Owner
    from toolserver.browser.settling import Settling
    from toolserver.browser.tab import Tab
    from toolserver.contract.policy import Policy


class PageReports:
    """Takes the reports of one session's pages."""

    def __init__(self, owner: Owner, settling: Settling, report_key: str, policy: Policy | None = None) -> None:
        self.owner = owner
        self.policy = policy  # a blocked form submission's URL is checked against it
        self.settling = settling  # keeps the state reports
        self.prefix = f"{REPORT_PREFIX}{report_key}:"

    def listen(self, tab: Tab) -> None:
        """Takes the reports of the tab's pages from their console messages."""

        def heard(message: ConsoleMessage) -> None:
            if not self.on_console(tab, message):  # it floods: no more of its messages cross the driver
                tab.page.remove_listener("console", heard)

        tab.page.on("console", heard)

    def on_console(self, tab: Tab, message: ConsoleMessage) -> bool:
        """Takes a report; False when the tab's workers flood the console and it is being closed."""
        if message.worker is not None:
            return not flooding(self.owner, self.settling.config, tab, console=True)
        text, prefix = message.text, self.prefix
        if not text.startswith(prefix):
            return True  # the browser's own (a failed load's: bounded by max_page_requests), or a made-up report
        try:
            payload = json.loads(text[len(prefix) :])
            kind, info = str(payload["kind"]), dict(payload.get("info") or {})
        except (ValueError, KeyError, TypeError):
            return True
        self.take(tab, kind, info)
        return True

    def take(self, tab: Tab | None, kind: str, info: dict[str, Any]) -> None:
        """A state report is kept (a typing one is also counted); a blocked API is a
        ``blocked_request`` event; a form submission or a click on a marked control is a state change."""
        owner = self.owner
        if kind in ("loaded", "idle", "input"):
            if tab is not None and info.get("top"):
                self.settling.take_state(tab, info)
                if kind == "input":
                    tab.activity.inputs, tab.activity.input_state = tab.activity.inputs + 1, info
            return
        if kind == "closing":  # window.close(): its tab's close, when it comes, is the page's
            if tab is not None:
                tab.close_reported = time.monotonic()
            return
        refusal = self.refusal(tab, kind, info)
        if refusal is not None:
            untold = info.get("untold")  # tries beyond the page's first 20 of this kind, counted in the page
            if untold is None:
                owner.record_event("blocked_request", refusal, tab=tab)
            else:
                owner.count_events("blocked_request", refusal, int(untold))
        if kind == "marked_click":
            name = str(info.get("name", ""))
            detail = {"tag": str(info.get("tag", "")), "text": str(info.get("text", ""))}
            owner.record_state_change("final_state_click", name=name, detail=detail, tab=tab)
        if kind == "form_submission":
            self.blocked_submission(tab, info)
            owner.record_state_change(
                "form_submission",
                name=f"submit {info.get('method')} {info.get('action')}",
                blocked=bool(info.get("blocked")),
                detail=info,
                tab=tab,
            )

    def blocked_submission(self, tab: Tab | None, info: dict[str, Any]) -> None:
        """A submission blocked in the page (``block_state_changes``) never reaches the router: the
        URL it would have requested, off the allow-list, is a policy violation all the same."""
        url = info.get("url")
        if not (info.get("blocked") and isinstance(url, str) and url) or self.policy is None or self.policy.url_ok(url):
            return
        origin, method = "frame" if info.get("frame") else "page", str(info.get("method", ""))
        self.owner.record_policy_violation(url, origin=origin, method=method, resource_type="document", tab=tab)

    @staticmethod
    def refusal(tab: Tab | None, kind: str, info: dict[str, Any]) -> dict[str, Any] | None:
        """The ``blocked_request`` data of what init.js refused (None: not a refusal)."""
        here = tab.page.url if tab else ""
        if kind == "webrtc":
            urls = " ".join(info.get("urls") or []) or "webrtc:"
            return {"url": urls, "method": "UDP", "resource_type": "webrtc", "reason": "webrtc"}
        if kind == "webtransport":  # HTTP/3's CONNECT, over UDP
            url = urljoin(here, str(info.get("url", "")))
            return {"url": url, "method": "CONNECT", "resource_type": "webtransport", "reason": "webtransport"}
        if kind == "websocket":
            url = urljoin(here, str(info.get("url", "")))
            return {"url": url, "method": "GET", "resource_type": "websocket", "reason": "websocket"}
        if kind == "popup_refused":
            url = urljoin(here, str(info.get("url", "")))
            return {"url": url, "method": "GET", "resource_type": "popup", "reason": "too_many_tabs"}
        if kind == "service_worker":
            url = urljoin(here, str(info.get("url", "")))
            return {"url": url, "method": "GET", "resource_type": "service_worker", "reason": "service_worker"}
        if kind == "url_refused":  # a navigation to a URL over max_page_text_chars (its first 1,024 characters)
            url, length = urljoin(here, str(info.get("url", ""))), int(info.get("length") or 0)
            kind_of_load = "popup" if info.get("popup") else "document"
            refusal: dict[str, Any] = {"url": url, "method": "GET", "resource_type": kind_of_load}
            return {**refusal, "reason": "url_too_long", "length": length}
        return None
