"""browser_open_tab, browser_switch_tab, browser_close_tab. Tabs are ids like "t2" everywhere."""

from __future__ import annotations

from pydantic import Field

from toolserver.errors import NotInMirror, UnknownTab
from toolserver.registry import ToolArgs, tool
from toolserver.run import CallContext
from toolserver.tools._common import action_result, page_state
from toolserver.tools.session import goto


class OpenTabArgs(ToolArgs):
    url: str = Field(description="Exact URL to open in a new tab, which becomes the current tab.")


class SwitchTabArgs(ToolArgs):
    tab: str = Field(description='Tab id as listed in results, e.g. "t2".')


class CloseTabArgs(ToolArgs):
    tab: str | None = Field(None, description="Tab id to close (default: the current tab).")


def find_tab(ctx: CallContext, tab_id: str):
    tab = ctx.session.tabs.get(tab_id)
    if tab is None:
        raise UnknownTab(f"no tab {tab_id!r} in this session; open tabs: {', '.join(ctx.session.tabs) or 'none'}")
    return tab


@tool("browser_open_tab", args=OpenTabArgs, side_effect="action", url_bearing=True,
      description="Open a URL in a new tab and make it the current tab.")
async def browser_open_tab(ctx: CallContext, args: OpenTabArgs) -> dict:
    session = ctx.session
    store = ctx.run.host.store
    if store.lookup(args.url) is None:
        raise NotInMirror(f"{args.url!r} is not in the offline mirror; nearest: {', '.join(store.nearest(args.url)) or 'none'}")
    session.opening_tab = True
    try:
        page = await session.context.new_page()
    finally:
        session.opening_tab = False
    tab = session.tab_for_page(page) or session.adopt_page(page)
    session.active_tab_id = tab.id
    status = (await goto(ctx, tab, args.url))["status"]
    return {**await action_result(ctx, tab, None), "status": status}


@tool("browser_switch_tab", args=SwitchTabArgs, side_effect="read_only",
      description="Make another tab of this session the current tab.")
async def browser_switch_tab(ctx: CallContext, args: SwitchTabArgs) -> dict:
    tab = find_tab(ctx, args.tab)
    ctx.session.active_tab_id = tab.id
    await tab.page.bring_to_front()
    return {**await page_state(ctx, tab), "tabs": await ctx.session.tab_list()}


@tool("browser_close_tab", args=CloseTabArgs, side_effect="action",
      description="Close a tab (default: the current tab); the most recent remaining tab becomes current.")
async def browser_close_tab(ctx: CallContext, args: CloseTabArgs) -> dict:
    tab = find_tab(ctx, args.tab) if args.tab is not None else ctx.require_tab()
    await tab.page.close()
    session = ctx.session
    session.forget_tab(tab)
    return {"closed_tab": tab.id, "active_tab": session.active_tab_id, "tabs": await session.tab_list()}
