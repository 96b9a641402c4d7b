"""browser_start_session and browser_close: sessions, providers and per-site-key profiles."""

from __future__ import annotations

from typing import Annotated

from playwright.async_api import Error as PlaywrightError
from pydantic import AfterValidator, Field

from toolserver import browser as br
from toolserver import capacity
from toolserver.browser import first_line
from toolserver.contract.site_keys import check_site_key
from toolserver.dispatch import not_in_mirror
from toolserver.errors import (
    BrowserActionFailed,
    PolicyViolation,
    ProviderUnavailable,
    ToolError,
    TooManySessions,
    UnknownRun,
)
from toolserver.registry import ToolArgs, tool
from toolserver.response import Response
from toolserver.run import CallContext, Run
from toolserver.tools._common import also_say

KERNEL = "kernel"


class StartSessionArgs(ToolArgs):
    provider: str | None = Field(
        None, description='Browser provider. This service emulates "kernel"; pass provider="kernel".'
    )
    site_key: Annotated[str, AfterValidator(check_site_key)] | None = Field(
        None, description="Profile key: cookies and storage persist per site_key within the server."
    )
    clear_cookies: bool = Field(False, description="Empty the site_key's profile before starting (a JSON boolean).")
    url: str | None = Field(None, description="First page to open (exact URL; only mirrored URLs load).")


async def goto(ctx: CallContext, tab: br.Tab, url: str) -> dict:
    """Navigate a tab to a URL the dispatcher checked is allowed and mirrored, and wait for it to
    settle; the page moves only on success. Returns the status and the settled page's title
    (None when its state could not be read)."""
    assert ctx.session is not None
    reply = None
    try:
        reply = await tab.page.goto(url, wait_until="load")
    except PlaywrightError as exc:
        if not started_download(ctx):
            raise navigation_failure(ctx, tab, url, exc) from exc
    state = await ctx.session.settle(tab)
    return {"status": reply.status if reply else None, "title": state["title"] if state is not None else None}


def check_session_room(run: Run) -> None:
    """``TooManySessions`` when the run has ``max_sessions_per_run`` open sessions (each is a
    browser context, tens of MB); a closed or crashed one holds nothing."""
    held = [sid for sid, session in run.sessions.items() if not session.closed and not session.crashed]
    limit = run.config.max_sessions_per_run
    if len(held) >= limit:
        raise TooManySessions(
            f"this run has {len(held)} open sessions (max_sessions_per_run {limit}): close one with "
            f"browser_close(session_id=...) before starting another; open: {', '.join(held)}",
            open_sessions=held,
        )


def started_download(ctx: CallContext) -> bool:
    """Playwright fails a goto that ends in a download; the router has recorded it."""
    return any(e["kind"] == "state_change" and e["data"]["action"] == "download" for e in ctx.events)


def navigation_failure(ctx: CallContext, tab: br.Tab, url: str, exc: PlaywrightError) -> Exception:
    """Why a navigation failed, from the documents the router refused in its tab during this call
    (a script or an image refused is none of its doing: a page slow to load is a timeout)."""
    blocked = [
        e["data"]
        for e in ctx.events
        if e["kind"] == "blocked_request" and e["tab"] == tab.id and e["data"].get("resource_type") == "document"
    ]
    reason = blocked[-1].get("reason") if blocked else None
    if reason == "policy":
        return PolicyViolation(
            f"navigation to {blocked[-1]['url']!r} was stopped: outside the "
            f"allowed URLs ({ctx.run.policy.describe_allowed()})"
        )
    if reason == "state_change_blocked":
        return PolicyViolation(
            f"{url!r} would change state (download or non-GET) and state changes are blocked in this run"
        )
    if reason == "not_in_mirror":
        return not_in_mirror(ctx.run, blocked[-1]["url"], reached_from=url)
    return BrowserActionFailed(f"navigation to {url!r} failed: {first_line(str(exc))}")


@tool(
    "browser_start_session",
    args=StartSessionArgs,
    title="Start browser session",
    scope="run",
    side_effect="action",
    description='Start a browser session (provider must be "kernel") and optionally open a first URL.',
)
async def browser_start_session(ctx: CallContext, args: StartSessionArgs, response: Response) -> None:
    run = ctx.run
    provider = args.provider
    if provider != KERNEL:
        if not run.config.fallback_provider:
            given = "no provider was given" if provider is None else f"provider {provider!r} is not available"
            raise ProviderUnavailable(
                f'{given}: this service only starts provider="kernel" sessions (pass it explicitly)'
            )
        provider = run.config.fallback_provider
    check_session_room(run)
    with capacity.admitted(run.config, run.host):  # server_at_capacity at a limit of the machine
        session = await br.open_session(
            run, site_key=args.site_key, provider=provider, clear_cookies=args.clear_cookies
        )
    if run.closed:  # the run ended while the session opened: its end closed the sessions it had
        await br.close_session(session)
        raise UnknownRun(f"run {run.id} ended while its session was starting; the session is closed")
    run.sessions[session.id] = session
    run.current_session_id = session.id
    ctx.session = session
    response.add(provider=provider, session_id=session.id, profile=args.site_key, profile_new=session.profile_new)
    if provider != KERNEL:
        response.add(
            fallback=f"requested provider {args.provider!r} is unavailable; the service fell back to {provider!r}"
            if args.provider is not None
            else f"no provider was given; the service fell back to {provider!r}"
        )
    tab = session.active_tab
    assert tab is not None, "a new session has its first tab"
    try:
        went = await goto(ctx, tab, args.url) if args.url is not None else {"status": None, "title": None}
    except ToolError as exc:  # said, so the agent navigates this session rather than starting another
        also_say(
            exc,
            f"Session {session.id} was started and is the current session (tab {tab.id}): go on in it "
            "(browser_navigate) rather than starting another.",
        )
        exc.details["session_id"] = session.id
        raise
    response.page(tab, went["title"]).add(status=went["status"]).tabs()


TOOLS = [browser_start_session]
