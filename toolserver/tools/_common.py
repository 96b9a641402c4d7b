"""Shared result pieces: every action result says what changed."""

from __future__ import annotations

import asyncio

from sandbox.core.mirrors import MirrorStore
from toolserver.browser import Marks, Tab, action_bound, bounded, safe_title
from toolserver.dispatch import CallContext
from toolserver.errors import NotInMirror

_CHANGE_KINDS = {
    "tab_opened": "new_tabs",
    "dialog": "dialogs",
    "download": "downloads",
    "blocked_request": "blocked_requests",
    "state_change": "state_changes",
    "policy_violation": "policy_violations",
    "navigation": "navigations",
}


async def page_state(ctx: CallContext, tab: Tab) -> dict:
    return {"tab": tab.id, "url": tab.page.url, "title": await safe_title(tab.page, ctx.run.config)}


async def ask_page(ctx: CallContext, awaitable, what: str):
    """A page operation Playwright does not bound itself (evaluate, count, close), within the
    action timeout: a spinning page is a ``page_unresponsive`` error, never a hung call."""
    return await bounded(awaitable, action_bound(ctx.run.config), what)


async def action_result(ctx: CallContext, tab: Tab | None, before: dict | None, after: dict | None = None) -> dict:
    """The page after an action plus what the action changed (from the call's events).
    ``after``: the tab's settled state report, which saves reading the title again."""
    out: dict = {}
    session = ctx.session
    live = session is not None and not session.closed
    if tab is not None and not tab.closed:
        if after is not None:
            out.update(tab=tab.id, url=tab.page.url, title=after["title"])
            tabs = await session.tab_list(known=(tab, after["title"]))
        else:
            state, tabs = await asyncio.gather(page_state(ctx, tab), session.tab_list())
            out.update(state)
    else:
        tabs = await session.tab_list() if live else None
    changes: dict = {}
    if before is not None and out:
        changes["url_changed"] = before.get("url") != out.get("url")
        changes["title_changed"] = before.get("title") != out.get("title")
    for event in ctx.events:
        key = _CHANGE_KINDS.get(event["kind"])
        if key:
            changes.setdefault(key, []).append({"tab": event.get("tab"), **event["data"]})
    out["changes"] = changes
    if live:
        out["tabs"] = tabs
    return out


async def settle(ctx: CallContext, tab: Tab, before: Marks | None = None, probe: dict | None = None) -> dict | None:
    return await ctx.session.settle(tab, before, probe)


def not_in_mirror(store: MirrorStore, url: str, reached_from: str | None = None) -> NotInMirror:
    """The one not-in-mirror error: what cannot load, why, and the nearest mirrored URLs."""
    nearest = store.nearest(url)
    via = f" (reached from {reached_from!r})" if reached_from and reached_from != url else ""
    return NotInMirror(
        f"{url!r}{via} is not in the offline mirror, so it cannot load (the sandbox never reaches the network)."
        + (f" Nearest mirrored URLs: {', '.join(nearest)}" if nearest else " No mirrored URL is near it."),
        nearest=nearest,
    )


def require_mirrored(store: MirrorStore, url: str) -> None:
    if not store.has(url):
        raise not_in_mirror(store, url)
