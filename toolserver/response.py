"""The response object: the one place a tool's result takes its shape (as Playwright MCP's
``Response``). A handler records what happened — its own fields, the page a tab shows after
the action, what the action changed, the session's tabs — in the order the result lists them;
``render`` reads what is left to read from the browser (a title, the tab list) in one round and
builds the result every transport serialises. No handler builds a page-state dict itself.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from toolserver.browser import Tab, safe_title
from toolserver.run import CallContext

# Which events an action result reports, under which key of ``changes``.
CHANGE_KINDS = {
    "tab_opened": "new_tabs",
    "tab_closed": "closed_tabs",
    "dialog": "dialogs",
    "download": "downloads",
    "blocked_request": "blocked_requests",
    "state_change": "state_changes",
    "policy_violation": "policy_violations",
    "navigation": "navigations",
}


@dataclass(frozen=True)
class PageState:
    """The page a tab shows: ``{"tab", "url", "title"}`` in a result."""

    tab: str
    url: str
    title: str


@dataclass
class _Page:
    tab: Tab
    title: str | None  # None: read when the response renders


@dataclass
class _Changes:
    before: PageState | None


@dataclass
class _Tabs:
    pass


class Response:
    def __init__(self, ctx: CallContext) -> None:
        self.ctx = ctx
        self._parts: list[tuple[str, Any]] = []

    def add(self, **fields: Any) -> Response:
        """The tool's own fields, in order."""
        self._parts.extend(fields.items())
        return self

    def page(self, tab: Tab, title: str | None = None) -> Response:
        """The page ``tab`` shows after the call (``title`` when the call has it already; else read)."""
        self._parts.append(("", _Page(tab, title)))
        return self

    def changes(self, before: PageState | None = None) -> Response:
        """What the call changed: from its events, and against the page ``before`` it (URL, title)."""
        self._parts.append(("changes", _Changes(before)))
        return self

    def tabs(self) -> Response:
        """The session's tabs (when the session is still open)."""
        self._parts.append(("tabs", _Tabs()))
        return self

    async def render(self) -> dict:
        """The result. The titles and the tab list are read at once; a title the call already had
        is not asked again."""
        session = self.ctx.session
        if session is not None:  # a tab closed during the call: by a page, or its browser's end?
            await session.closes.decided()
        pages = [part for _, part in self._parts if isinstance(part, _Page)]
        page = pages[-1] if pages else None
        live = session is not None and not session.closed
        if page is not None and page.tab.closed and live and session is not None and session.active_tab is not None:
            # The page closed its own tab during the call (or the sandbox closed it for a flood):
            # the result shows the tab that is current now, the closed one in changes.closed_tabs.
            page.tab, page.title = session.active_tab, None
        needs_tabs = live and any(isinstance(part, _Tabs) for _, part in self._parts)
        asks: list[Any] = []
        if page is not None and page.title is None and not page.tab.closed:
            asks.append(safe_title(page.tab, self.ctx.run.config))
        if needs_tabs:
            assert session is not None
            known = (page.tab, page.title) if page is not None and page.title is not None else None
            asks.append(session.tab_list(known=known) if known else session.tab_list())
        answers = list(await asyncio.gather(*asks)) if asks else []
        if page is not None and page.title is None and not page.tab.closed:
            page.title = answers.pop(0)
        tab_list = answers.pop(0) if needs_tabs else None

        out: dict[str, Any] = {}
        state: dict | None = None
        for key, part in self._parts:
            if isinstance(part, _Page):
                if not part.tab.closed:
                    state = {"tab": part.tab.id, "url": part.tab.page.url, "title": part.title}
                    out.update(state)
            elif isinstance(part, _Changes):
                out["changes"] = self._changes(part.before, state)
            elif isinstance(part, _Tabs):
                if live:
                    out["tabs"] = tab_list
            else:
                out[key] = part
        return out

    def _changes(self, before: PageState | None, after: dict | None) -> dict:
        changes: dict[str, Any] = {}
        if before is not None and after and after["tab"] == before.tab:
            changes["url_changed"] = before.url != after["url"]
            changes["title_changed"] = before.title != after["title"]
        for event in self.ctx.events:
            key = CHANGE_KINDS.get(event["kind"])
            if key:
                changes.setdefault(key, []).append({"tab": event.get("tab"), **event["data"]})
        return changes


def page_state(tab: Tab, title: str) -> PageState:
    """The page ``tab`` shows now, with a title the caller read."""
    return PageState(tab.id, tab.page.url, title)


async def read_page_state(ctx: CallContext, tab: Tab) -> PageState:
    """The page ``tab`` shows now, its title asked of the page (within the action bound)."""
    return PageState(tab.id, tab.page.url, await safe_title(tab, ctx.run.config))
