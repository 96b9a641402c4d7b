"""browser_start_session and browser_close: sessions, providers and per-site-key profiles."""

from __future__ import annotations

import asyncio
from pydantic import Field
from playwright.async_api import Error as PlaywrightError

from toolserver import browser as br
from toolserver.errors import (ApprovalRequired, BrowserActionFailed, NotInMirror, PolicyViolation,
                               ProviderUnavailable, UnknownSession)
from toolserver.registry import ToolArgs, tool
from toolserver.run import CallContext, first_line
from toolserver.tools._common import now, page_state

KERNEL = "kernel"


class StartSessionArgs(ToolArgs):
    provider: str | None = Field(None, description='Browser provider. This service emulates "kernel"; pass provider="kernel".')
    site_key: str | None = Field(None, description="Profile key: cookies and storage persist per site_key within the server.")
    clear_cookies: bool = Field(False, description="Empty the site_key's profile before starting (a JSON boolean).")
    url: str | None = Field(None, description="First page to open (exact URL; only mirrored URLs load).")


class CloseArgs(ToolArgs):
    session_id: str | None = Field(None, description="Close this session of the current run. Omit to close the current session.")
    close_all: bool | None = Field(None, description="Close every session; needs an approval, which only a server started with approvals grants.")


async def goto(ctx: CallContext, tab: br.Tab, url: str) -> dict:
    """Navigate a tab to a mirrored URL and wait for it to settle; the page moves only on success."""
    store = ctx.run.host.store
    if store.lookup(url) is None:
        nearest = store.nearest(url)
        raise NotInMirror(
            f"{url!r} is not in the offline mirror, so it cannot load (the sandbox never reaches the network)."
            + (f" Nearest mirrored URLs: {', '.join(nearest)}" if nearest else ""), nearest=nearest)
    since = now()
    response = None
    try:
        response = await tab.page.goto(url, wait_until="load")
    except PlaywrightError as exc:
        if "Download is starting" not in str(exc):
            blocked = [e for e in ctx.events if e["kind"] == "blocked_request"]
            reason = blocked[-1]["data"].get("reason") if blocked else None
            if reason == "policy":
                raise PolicyViolation(f"navigation to {blocked[-1]['data']['url']!r} was stopped: outside the "
                                      f"allowed URLs ({ctx.run.policy.describe_allowed()})") from exc
            if reason == "state_change_blocked":
                raise PolicyViolation(f"{url!r} would change state (download or non-GET) and state changes are "
                                      "blocked in this run") from exc
            if reason == "not_in_mirror":
                raise NotInMirror(f"{blocked[-1]['data']['url']!r} (reached from {url!r}) is not in the offline "
                                  "mirror") from exc
            raise BrowserActionFailed(f"navigation to {url!r} failed: {first_line(str(exc))}") from exc
    await ctx.session.settle(tab, since)
    return {"status": response.status if response else None}


@tool("browser_start_session", args=StartSessionArgs, side_effect="action", url_bearing=True, needs_session=False,
      description="Start a browser session (provider must be \"kernel\") and optionally open a first URL.")
async def browser_start_session(ctx: CallContext, args: StartSessionArgs) -> dict:
    run = ctx.run
    provider = args.provider
    if provider != KERNEL:
        if not run.config.fallback_provider:
            raise ProviderUnavailable(
                f"provider {provider!r} is not available: this service only starts provider=\"kernel\" "
                "sessions (pass it explicitly)")
        provider = run.config.fallback_provider
    if args.url is not None and run.host.store.lookup(args.url) is None:
        raise NotInMirror(f"{args.url!r} is not in the offline mirror; nearest: {', '.join(run.host.store.nearest(args.url)) or 'none'}")
    session = await br.open_session(run, site_key=args.site_key, provider=provider, clear_cookies=args.clear_cookies)
    run.sessions[session.id] = session
    run.current_session_id = session.id
    ctx.session = session
    result = {"provider": provider, "session_id": session.id, "profile": args.site_key,
              "profile_new": session.profile_new}
    if provider != KERNEL:
        result["fallback"] = f"requested provider {args.provider!r} is unavailable; the service fell back to {provider!r}"
    tab = ctx.require_tab()
    status = None
    if args.url is not None:
        status = (await goto(ctx, tab, args.url))["status"]
    state, tabs = await asyncio.gather(page_state(ctx, tab), session.tab_list())
    return {**result, **state, "status": status, "tabs": tabs}


@tool("browser_close", args=CloseArgs, side_effect="action", needs_session=False,
      description="Close the current session (no arguments), one session of this run (session_id), or all (close_all, needs approval).")
async def browser_close(ctx: CallContext, args: CloseArgs) -> dict:
    run = ctx.run
    if args.close_all:
        if not run.config.approvals:
            raise ApprovalRequired("close_all=true needs an approval, which this server does not grant. "
                                   "Call browser_close with neither session_id nor close_all to close this run's session.")
        targets = [s for s in run.sessions.values() if not s.closed]
    elif args.session_id is not None:
        session = run.sessions.get(args.session_id)
        if session is None:
            raise UnknownSession(f"session {args.session_id!r} is not a session of this run; "
                                 f"this run's sessions: {', '.join(run.sessions) or 'none'}")
        targets = [session]
    else:
        targets = [run.current_session()]
    ctx.session = targets[0] if targets else None
    for session in targets:
        await br.close_session(session)
    open_ids = [sid for sid, s in run.sessions.items() if not s.closed]
    if run.current_session_id not in open_ids:
        run.current_session_id = open_ids[-1] if open_ids else None
    return {"closed": [s.id for s in targets], "open_sessions": open_ids}
