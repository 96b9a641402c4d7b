"""Opening and closing a session: its browser context (the profile of its site key, the run's
switches, a backstop proxy of its own) and, at the end, the profile saved and the context closed,
each within its bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable

from playwright.async_api import Browser, BrowserContext
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
        discard(making, backstop, browser, run.config.close_timeout_s)
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
        discard(making, backstop, browser, run.config.close_timeout_s)
        raise
    # Counted among the host's sessions once started: until then its start counts it
    # (toolserver.capacity), and no await comes between this and the start's end.
    host.sessions.add(session)
    return session


def discard(making: asyncio.Future[BrowserContext], backstop: Backstop, browser: Browser, bound: float) -> None:
    """A start that failed or was cut short: its context, once Chromium has made it, is closed as
    a session's is (within ``bound``, else disposed of), not left open and uncounted on the shared
    browser; then its backstop. Nothing waits on Chromium unbounded: a context not made within
    ``bound`` is logged, and closed whenever Chromium makes it (the backstop stays till then)."""
    late = asyncio.get_running_loop().call_later(
        bound, log.warning, "a failed session start's context was not made within %g s: it is closed once made", bound
    )

    def made(_: asyncio.Future) -> None:
        late.cancel()
        task = asyncio.ensure_future(close_discarded(making, backstop, browser, bound))
        DISCARDING[task] = browser
        task.add_done_callback(discarded)

    making.add_done_callback(made)


async def close_discarded(
    made: asyncio.Future[BrowserContext], backstop: Backstop, browser: Browser, bound: float
) -> None:
    """The context Chromium made (if it made one) closed, then the backstop (``discard``)."""
    try:
        if not made.cancelled() and made.exception() is None:  # else Chromium made none
            await close_or_dispose(made.result(), browser, bound, "a failed session start")
    finally:
        await backstop.close()


# Held until done (the loop keeps only weak references to tasks), each with its browser.
DISCARDING: dict[asyncio.Future, Browser] = {}


def discarded(task: asyncio.Future) -> None:
    DISCARDING.pop(task, None)
    if not task.cancelled() and task.exception() is not None:  # retrieved: said here, once
        log.warning("closing a failed session start's context failed: %r", task.exception())


async def closes_ended(browser: Browser | None, timeout: float) -> None:
    """The discards and late context closes on ``browser`` still going on, awaited for at most
    ``timeout`` (the server stops: its browser is closed, so they end), rather than destroyed pending."""
    deadline = asyncio.get_running_loop().time() + timeout
    while going := [f for f, of in (DISCARDING | LATE_CLOSES).items() if of is browser]:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return
        await asyncio.wait(going, timeout=left)


def evicted(forgotten: list[str], run: Recorder) -> dict:
    """The ``profiles_evicted`` data: the site keys ``keep_profile`` forgot."""
    return {"site_keys": forgotten, "max_profile_bytes": run.config.max_profile_bytes}


def close_session(session: Session) -> Awaitable[None]:
    """Save the session's profile (under its site key) and close its context, each bounded. The
    close begins before this returns (the session marked closed, its close a task of its own), so
    a caller knows it is under way before its first wait; the caller awaits what this returns. A
    call cut short (``call_timeout_s``) does not leave the context open on the shared browser, and
    a second close (the run's end) awaits the first."""
    if session.mark_closed():
        session.closing = asyncio.ensure_future(close_all(session))
        return asyncio.shield(session.closing)
    return awaited(session.closing)


async def awaited(closing: asyncio.Future | None) -> None:
    """A close another call began (if any): what it raised is that call's."""
    if closing is not None:
        with contextlib.suppress(Exception):
            await asyncio.shield(closing)


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
    await close_or_dispose(context, session.browser, bound, f"session {session.id}")


async def close_or_dispose(context: BrowserContext, browser: Browser | None, bound: float, whose: str) -> None:
    """Close the context within ``bound``; one that does not close is disposed of (``dispose``),
    and its close goes on (``LATE_CLOSES``): a browser that answers late closes it then."""
    # Shielded: a close cut short is left half done in Playwright, and the context open for good.
    closing = asyncio.ensure_future(context.close())
    try:
        # Closing the context ends its renderers, also one stuck in a script.
        await asyncio.wait_for(asyncio.shield(closing), bound)
    except TimeoutError:
        log.warning("%s: its context did not close within %g s; disposing of it (its close goes on)", whose, bound)
        await dispose(context, browser, bound, whose)
    except PlaywrightError as exc:  # the browser is gone already
        log.warning("closing %s: %r", whose, exc)
    finally:
        if not closing.done():
            LATE_CLOSES[closing] = browser
            closing.add_done_callback(lambda done: closed_late(done, whose))


def closed_late(closing: asyncio.Future, whose: str) -> None:
    LATE_CLOSES.pop(closing, None)
    if not closing.cancelled():
        error = closing.exception()
        log.warning("%s: its context's late close ended%s", whose, f" in {error!r}" if error else ": closed")


# Context closes that outlived their bound, each with its browser, held until they end.
LATE_CLOSES: dict[asyncio.Future, Browser | None] = {}


async def dispose(context: BrowserContext, browser: Browser | None, bound: float, whose: str) -> None:
    """The context would not close: the browser disposes of it (every page closed without its
    ``beforeunload``, its renderers ended when no other context uses them), through CDP on the
    browser's side, which a hung renderer cannot hold up. Bounded; failures are logged."""
    # As long as the close's other steps, and at least a second: quick on a browser that answers,
    # it would wait as long on a frozen one whatever the bound.
    bound, pages = max(bound, 1.0), context.pages
    if browser is None or not browser.is_connected():
        return  # the context went with its browser
    if not pages:
        log.warning("%s: its context has no page to find it by: it is left to the browser's own close", whose)
        return
    try:
        page_cdp = await asyncio.wait_for(context.new_cdp_session(pages[0]), bound)
        info = await asyncio.wait_for(page_cdp.send("Target.getTargetInfo"), bound)
        browser_cdp = await asyncio.wait_for(browser.new_browser_cdp_session(), bound)
        context_id = info["targetInfo"]["browserContextId"]
        await asyncio.wait_for(
            browser_cdp.send("Target.disposeBrowserContext", {"browserContextId": context_id}), bound
        )
        await browser_cdp.detach()
    except (TimeoutError, PlaywrightError, KeyError) as exc:
        log.warning("%s: the browser could not dispose of its context either: %r", whose, exc)
