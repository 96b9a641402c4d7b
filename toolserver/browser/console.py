"""The reports ``init.js`` sends on its own, as console messages: the page's state (loaded, idle,
typing), form submissions, clicks on controls marked as state-changing, and attempts at the APIs
it blocks (WebRTC, service workers).

A report starts with ``REPORT_PREFIX`` and the session's report key, which no function a page can
reach holds: a page cannot forge one.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from toolserver.browser.javascript import REPORT_PREFIX

if TYPE_CHECKING:
    from playwright.async_api import ConsoleMessage

    from toolserver.browser.owner import Owner
    from toolserver.browser.settling import Settling
    from toolserver.browser.tab import Tab


class PageReports:
    """Takes the reports of one session's pages."""

    def __init__(self, owner: Owner, settling: Settling, report_key: str) -> None:
        self.owner = owner
        self.settling = settling  # keeps the state reports
        self.prefix = f"{REPORT_PREFIX}{report_key}:"

    def on_console(self, tab: Tab, message: ConsoleMessage) -> None:
        text, prefix = message.text, self.prefix
        if not text.startswith(prefix):
            return  # the page's own message, or a report it made up
        try:
            payload = json.loads(text[len(prefix) :])
            kind, info = str(payload["kind"]), dict(payload.get("info") or {})
        except (ValueError, KeyError, TypeError):
            return
        self.take(tab, kind, info)

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
        if kind == "webrtc":
            owner.record_event(
                "blocked_request",
                {
                    "url": " ".join(info.get("urls") or []) or "webrtc:",
                    "method": "UDP",
                    "resource_type": "webrtc",
                    "reason": "webrtc",
                },
                tab=tab,
            )
        if kind == "popup_refused":
            url = urljoin(tab.page.url if tab else "", str(info.get("url", "")))
            data = {"url": url, "method": "GET", "resource_type": "popup", "reason": "too_many_tabs"}
            owner.record_event("blocked_request", data, tab=tab)
        if kind == "service_worker":
            url = urljoin(tab.page.url if tab else "", str(info.get("url", "")))
            owner.record_event(
                "blocked_request",
                {"url": url, "method": "GET", "resource_type": "service_worker", "reason": "service_worker"},
                tab=tab,
            )
        if kind == "marked_click":
            name = str(info.get("name", ""))
            detail = {"tag": str(info.get("tag", "")), "text": str(info.get("text", ""))}
            owner.record_state_change("final_state_click", name=name, detail=detail, tab=tab)
        if kind == "form_submission":
            owner.record_state_change(
                "form_submission",
                name=f"submit {info.get('method')} {info.get('action')}",
                blocked=bool(info.get("blocked")),
                detail=info,
                tab=tab,
            )
