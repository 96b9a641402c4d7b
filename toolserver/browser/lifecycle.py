"""Opening and closing a session: its browser context (the profile of its site key, the run's
switches, a backstop proxy of its own) and, at the end, the profile saved and the context closed,
each within its bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

from toolserver.browser.backstop import Backstop
from toolserver.browser.reports import bounded
from toolserver.browser.session import Recorder, Session
from toolserver.errors import PageUnresponsive

log = logging.getLogger("toolserver.browser")


async def open_session(run: Recorder, *, site_key: str | None, provider: str, clear_cookies: bool) -> Session:
    host = run.host
    # A session without a site key keeps no profile: no later session could ask for it, and it
    # would take a keyed profile's place under max_profiles.
    key = site_key or None
    if key is not None and clear_cookies:
        host.profiles.pop(key, None)
    profile_new = key is None or key not in host.profiles
    width, height = run.config.viewport
    browser = await host.ready_browser()
    backstop = await Backstop().start()  # what escapes the router goes here, and no further
    making = asyncio.ensure_future(
        browser.new_context(
            proxy={"server": backstop.url, "bypass": "<-loopback>"},
            storage_state=host.profiles.get(key) if key is not None else None,
            service_workers="block",
            accept_downloads=not run.policy.block_state_changes,  # blocked: Chromium writes no download at all
            viewport={"width": width, "height": height},
            locale="en-US",
            timezone_id="America/Chicago",
        )
    )
    try:  # a start cut short (its call's timeout) does not cut the making short: Chromium makes it anyway
        context = await asyncio.shield(making)
        await run.media.start_trace(context)
    except BaseException:
        discard(making, backstop, run.config.close_timeout_s)
        raise
    forgotten: list[str] = []
    if key is not None:  # its profile becomes the most recent now (the session may never close to save it)
        forgotten = host.keep_profile(key, host.profiles.get(key) or {"cookies": [], "origins": []})
    session = Session(
        id=f"ses_{secrets.token_hex(6)}",
        site_key=site_key,
        provider=provider,
        profile_new=profile_new,
        run=run,
        context=context,
        browser=browser,
        backstop=backstop,
    )
    if forgotten:
        session.record_event("profiles_evicted", evicted(forgotten, run))
    try:
        await session.start()
    except BaseException:  # closed as a session: its first tab's closing is not the page's
        session.mark_closed()
        discard(making, backstop, run.config.close_timeout_s)
        raise
    # Counted among the host's sessions once started: until then its start counts it
    # (toolserver.capacity), and no await comes between this and the start's end.
    host.sessions.add(session)
    return session


def discard(making: asyncio.Future[BrowserContext], backstop: Backstop, bound: float) -> None:
    """A start that failed or was cut short: its context, once made, is closed (not left open and
    uncounted on the shared browser), then its backstop."""

    async def closing() -> None:
        with contextlib.suppress(BaseException):
            await close_quietly(await making, bound)
        await backstop.close()

    DISCARDING.add(task := asyncio.ensure_future(closing()))
    task.add_done_callback(DISCARDING.discard)


DISCARDING: set[asyncio.Future] = set()  # held until done (the loop keeps only weak references to tasks)


def evicted(forgotten: list[str], run: Recorder) -> dict:
    """The ``profiles_evicted`` data: the site keys ``keep_profile`` forgot."""
    return {"site_keys": forgotten, "max_profile_bytes": run.config.max_profile_bytes}


async def close_quietly(context: BrowserContext, bound: float) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(context.close(), bound)


async def close_session(session: Session) -> None:
    """Save the session's profile (under its site key) and close its context, each bounded. The
    close is a task of its own: a call cut short (``call_timeout_s``) does not leave the context
    open on the shared browser, and a second close (the run's end) awaits the first."""
    if session.mark_closed():
        session.closing = asyncio.ensure_future(close_all(session))
        await asyncio.shield(session.closing)
    elif session.closing is not None:  # a close another call began: what it raised is that call's
        with contextlib.suppress(Exception):
            await asyncio.shield(session.closing)


async def close_all(session: Session) -> None:
    try:
        await close_context(session)
    finally:
        # Last: while the context lives, what its renderers send past the router still comes here
        # (recorded), and no other listener can take the port.
        if session.backstop is not None:
            asyncio.ensure_future(session.backstop.close())


async def close_context(session: Session) -> None:
    run, key, context = session.run, session.site_key, session.context
    bound = run.config.close_timeout_s
    if session.crashed:
        return  # the context died with its browser; the profile keeps its last saved state
    # The last call's picture is taken while the profile is saved; both before the context closes.
    picture = asyncio.ensure_future(run.media.finish_pictures())
    try:
        if key:
            forgotten = run.host.keep_profile(key, await bounded(context.storage_state(), bound, "saving the profile"))
            if forgotten:
                session.record_event("profiles_evicted", evicted(forgotten, run))
    except (PlaywrightError, PageUnresponsive) as exc:
        log.warning("could not save profile %s: %s", key, exc)
    finally:
        await picture
    await run.media.stop_trace(context)
    tab = next((t for t in session.tabs.values() if not t.crashed), None)
    await session.downloads.stop(tab, run.host.end_downloads, bound)  # closing the context would not
    try:
        # Closing the context ends its renderers, also one stuck in a script.
        await asyncio.wait_for(context.close(), bound)
    except TimeoutError:
        log.warning("session %s: its context did not close within %g s; disposing of it", session.id, bound)
        await dispose(session)
    except PlaywrightError as exc:  # the browser is gone already
        log.warning("closing session %s: %r", session.id, exc)


async def dispose(session: Session) -> None:
    """The context would not close: the browser disposes of it (every page closed without its
    ``beforeunload``, its renderers ended when no other context uses them), through CDP on the
    browser's side, which a hung renderer cannot hold up. Bounded; failures are logged."""
    # As long as the close's other steps, and at least a second: quick on a browser that answers,
    # it would wait as long on a frozen one whatever the bound.
    browser, bound = session.browser, max(session.run.config.close_timeout_s, 1.0)
    pages = session.context.pages
    if browser is None or not pages or not browser.is_connected():
        return
    try:
        page_cdp = await asyncio.wait_for(session.context.new_cdp_session(pages[0]), bound)
        info = await asyncio.wait_for(page_cdp.send("Target.getTargetInfo"), bound)
        browser_cdp = await asyncio.wait_for(browser.new_browser_cdp_session(), bound)
        context_id = info["targetInfo"]["browserContextId"]
        await asyncio.wait_for(
            browser_cdp.send("Target.disposeBrowserContext", {"browserContextId": context_id}), bound
        )
        await browser_cdp.detach()
    except (TimeoutError, PlaywrightError, KeyError) as exc:
        log.warning("session %s: the browser could not dispose of its context either: %r", session.id, exc)
