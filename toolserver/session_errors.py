"""The errors of a call that finds no session or tab to act on (none started, closed, crashed),
each saying what to do next. A session ``browser_close`` closed is said to be over, with no
advice to start another: a benchmark counts the starts. Imports only the errors and the
browser's types."""

from __future__ import annotations

from toolserver import browser as br
from toolserver.errors import BrowserCrashed, NoSession, NoTab, PageCrashed


def no_session(session_id: str | None, closed_by: int | None) -> NoSession:
    """No open session: ``session_id`` is the one the run last had, and ``closed_by`` the call
    (seq) of the ``browser_close`` that closed it (None: none did, or none was started)."""
    if session_id is not None and closed_by is not None:
        return NoSession(
            f"session {session_id} was closed by call {closed_by} (browser_close): this run's session is over"
        )
    return NoSession("no open browser session in this run; call browser_start_session first")


def no_open_tab() -> NoTab:
    return NoTab("the session has no open tab; open one with browser_open_tab(url)")


def crashed_tab(tab: br.Tab) -> PageCrashed:
    return PageCrashed(
        f"tab {tab.id}'s page crashed (its renderer ended; recorded as a page_crashed event): close it "
        "with browser_close_tab and open another with browser_open_tab"
    )


def crashed_error(session: br.Session) -> BrowserCrashed:
    return BrowserCrashed(
        f"the browser crashed under session {session.id} (recorded as a browser_crashed event); "
        "its tabs are gone. Start a new session with browser_start_session (a new browser is "
        "running).",
        session_id=session.id,
    )
