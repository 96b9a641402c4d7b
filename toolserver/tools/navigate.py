"""browser_navigate and browser_scroll."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from toolserver.browser import evaluate
from toolserver.browser.javascript import read_expression
from toolserver.registry import LENIENT_INT, ToolArgs, tool
from toolserver.response import PageState, Response, read_page_state
from toolserver.run import TabContext
from toolserver.tools._common import ask_page
from toolserver.tools.session import goto

_SCROLL_JS = read_expression("scroll.js")


class NavigateArgs(ToolArgs):
    url: str = Field(description="Exact URL to open in the current tab (only mirrored URLs load).")


class ScrollArgs(ToolArgs):
    direction: Literal["up", "down", "left", "right"] = Field(description="Scroll direction.")
    amount: Annotated[int, Field(ge=1, le=100000), LENIENT_INT] | None = Field(
        None, description="Pixels to scroll (default: 80% of the viewport)."
    )


@tool(
    "browser_navigate",
    args=NavigateArgs,
    title="Navigate to a URL",
    side_effect="action",
    description="Open a URL in the current tab.",
)
async def browser_navigate(ctx: TabContext, args: NavigateArgs, response: Response) -> None:
    tab = ctx.tab
    # The page being left as it last reported itself (loaded, idle, after each action): asking it
    # again would wait for the paint that follows a load (~7 ms of a ~55 ms navigation). A page
    # with no report yet is asked, before the navigation starts (a title read during it is
    # Chromium's "Loading ...").
    last = tab.state
    before = PageState(tab.id, tab.page.url, last["title"]) if last else await read_page_state(ctx, tab)
    went = await goto(ctx, tab, args.url)
    response.page(tab, went["title"]).changes(before).tabs().add(status=went["status"])


@tool(
    "browser_scroll",
    args=ScrollArgs,
    title="Scroll",
    side_effect="action",
    description="Scroll the current tab; returns the new scroll position and whether the end was reached.",
)
async def browser_scroll(ctx: TabContext, args: ScrollArgs, response: Response) -> None:
    tab = ctx.tab
    viewport = tab.page.viewport_size or {"width": 1280, "height": 720}
    vertical = args.direction in ("up", "down")
    amount = args.amount or int((viewport["height"] if vertical else viewport["width"]) * 0.8)
    sign = 1 if args.direction in ("down", "right") else -1
    pos = await ask_page(
        ctx,
        tab,
        evaluate(tab, f"({_SCROLL_JS})({0 if vertical else sign * amount}, {sign * amount if vertical else 0})"),
        "scrolling",
    )
    if vertical:
        at_end = pos["y"] >= pos["max_y"] - 1 if sign > 0 else pos["y"] <= 0
    else:
        at_end = pos["x"] >= pos["max_x"] - 1 if sign > 0 else pos["x"] <= 0
    response.add(
        tab=tab.id,
        url=tab.page.url,
        direction=args.direction,
        amount=amount,
        scroll_x=pos["x"],
        scroll_y=pos["y"],
        max_scroll_x=pos["max_x"],
        max_scroll_y=pos["max_y"],
        at_end=at_end,
    )


TOOLS = [browser_scroll, browser_navigate]
