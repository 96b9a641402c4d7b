"""browser_open_tab, browser_switch_tab, browser_close_tab, and browser_close (sessions).

Tabs are ids like "t2" everywhere."""

from __future__ import annotations

import asyncio
import re

from pydantic import Field

from toolserver import browser as br
from toolserver.errors import ApprovalRequired, ToolError, TooManyTabs, UnknownSession, UnknownTab
from toolserver.registry import ToolArgs, tool
from toolserver.response import Response
from toolserver.run import CallContext, SessionContext
from toolserver.session_errors import crashed_tab, no_open_tab, no_session
from toolserver.tools._common import also_say, ask_page
from toolserver.tools.session import goto


class OpenTabArgs(ToolArgs):
    url: str = Field(description="Exact URL to open in a new tab, which becomes the current tab.")


class SwitchTabArgs(ToolArgs):
    tab: str = Field(description='Tab id as listed in results, e.g. "t2".')


class CloseTabArgs(ToolArgs):
    tab: str | None = Field(None, description="Tab id to close (default: the current tab).")


class CloseArgs(ToolArgs):
    session_id: str | None = Field(
        None, description="Close this session of the current run. Omit to close the current session."
    )
    close_all: bool | None = Field(
        None, description="Close every session; needs an approval, which only a server started with approvals grants."
    )


def find_tab(ctx: SessionContext, tab_id: str) -> br.Tab:
    session = ctx.session
    tab = session.tabs.get(tab_id)
    if tab is None:
        number = re.fullmatch(r"t([1-9][0-9]{0,9})", tab_id)  # ASCII digits only: int("²") raises
        made = number is not None and int(number[1]) <= session.tabs_made
        said = f"tab {tab_id!r} is closed" if made else f"no tab {tab_id!r} in this session"
        raise UnknownTab(f"{said}; open tabs: {', '.join(session.tabs) or 'none'}")
    return tab


@tool(
    "browser_open_tab",
    args=OpenTabArgs,
    title="Open tab",
    scope="session",
    side_effect="action",
    description="Open a URL in a new tab and make it the current tab.",
)
async def browser_open_tab(ctx: SessionContext, args: OpenTabArgs, response: Response) -> None:
    session = ctx.session
    cap = ctx.run.config.max_tabs_per_session
    if len(session.tabs) >= cap:
        raise TooManyTabs(f"this session holds {len(session.tabs)} tabs (max_tabs_per_session {cap}): close one first")
    tab = await ask_page(ctx, None, session.open_page(), "opening a tab")
    before = session.active_tab_id
    # Current from now on, also when its page fails: a hang or crash of that page is answered as
    # this tab's, and the advice then (close the tab) is about it.
    session.active_tab_id = tab.id
    try:
        went = await goto(ctx, tab, args.url)
    except ToolError as exc:  # said, so the agent knows which tab its next call acts on
        was = f" (tab {before} is still open)" if before else ""
        also_say(exc, f"Tab {tab.id} was opened and is now the current tab{was}.")
        raise
    response.page(tab, went["title"]).changes().tabs().add(status=went["status"])


@tool(
    "browser_switch_tab",
    args=SwitchTabArgs,
    title="Switch tab",
    scope="session",
    side_effect="action",
    description="Make another tab of this session the current tab.",
)
async def browser_switch_tab(ctx: SessionContext, args: SwitchTabArgs, response: Response) -> None:
    tab = find_tab(ctx, args.tab)
    if tab.crashed:
        raise crashed_tab(tab)
    await ask_page(ctx, tab, tab.page.bring_to_front(), "bringing the tab to the front")
    ctx.session.active_tab_id = tab.id  # once it is in front: a switch that fails switches nothing
    tab.snapshot.after_close = None  # the agent's choice: its refs are its own again
    response.page(tab).tabs()


@tool(
    "browser_close_tab",
    args=CloseTabArgs,
    title="Close tab",
    scope="session",
    side_effect="destructive",
    description="Close a tab (default: the current tab); the most recent remaining tab becomes current.",
)
async def browser_close_tab(ctx: SessionContext, args: CloseTabArgs, response: Response) -> None:
    session = ctx.session
    tab = find_tab(ctx, args.tab) if args.tab else session.active_tab  # "" as not given, as for a ref
    if tab is None:
        raise no_open_tab()
    tab.closing = True  # a close its page reported (window.close()) is still the page's: ``PageCloses``
    await ask_page(ctx, None, tab.page.close(), "closing the tab")  # not ended by a crash: a crashed tab closes too
    session.forget_tab(tab)
    if session.active_tab is not None:  # current by the agent's own close, which says so
        session.active_tab.snapshot.after_close = None
    response.add(closed_tab=tab.id, active_tab=session.active_tab_id).tabs()


@tool(
    "browser_close",
    args=CloseArgs,
    title="Close browser session",
    scope="run",
    side_effect="destructive",
    page_effect="ends_session",
    description="Close the current session (no arguments), one session of this run (session_id), "
    "or all (close_all, needs approval). A session closed already is listed in already_closed.",
)
async def browser_close(ctx: CallContext, args: CloseArgs, response: Response) -> None:
    run = ctx.run
    if args.close_all:
        if not run.config.approvals:
            raise ApprovalRequired(
                "close_all=true needs an approval, which this server does not grant. "
                "Call browser_close with neither session_id nor close_all to close this run's session."
            )
        targets = [s for s in run.sessions.values() if not s.closed]
    elif args.session_id:  # "" as not given, as for a ref
        session = run.sessions.get(args.session_id)
        if session is None:
            raise UnknownSession(
                f"session {args.session_id!r} is not a session of this run; "
                f"this run's sessions: {', '.join(run.sessions) or 'none'}"
            )
        targets = [session]
    else:  # the current session; after a close, the one that was current (closed already, said so)
        current = run.sessions.get(run.current_session_id or run.last_closed or "")
        if current is None:
            raise no_session(None, None)
        targets = [current]
    ctx.session = targets[0] if targets else None
    already = [s.id for s in targets if s.closed]  # said as such, not as closed by this call
    targets = [s for s in targets if not s.closed]
    # Each close begins now (the session marked closed), and the run says so before the first
    # wait: a close cut short by the call's timeout still closes, and leaves no closed session current.
    closes = [br.close_session(session) for session in targets]
    run.closed_by |= {session.id: ctx.seq for session in targets}
    if run.current_session_id in [*already, *(session.id for session in targets)]:
        run.last_closed = run.current_session_id
    open_ids = [sid for sid, s in run.sessions.items() if not s.closed]
    if run.current_session_id not in open_ids:
        run.current_session_id = open_ids[-1] if open_ids else None
    await asyncio.gather(*closes)
    response.add(closed=[s.id for s in targets], open_sessions=open_ids)
    if already:
        response.add(already_closed=already)


TOOLS = [browser_open_tab, browser_switch_tab, browser_close_tab, browser_close]
