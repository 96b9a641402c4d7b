"""The host: Playwright (its Node driver, ``driver``), one warm Chromium shared by all runs of a
server and relaunched when it dies, what they write to disk removed when they are gone, and the
profiles kept per site key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from playwright.async_api import Browser, CDPSession, Playwright, StorageState
from playwright.async_api import Error as PlaywrightError

from toolserver.browser.backstop import Backstop, backstop_spki
from toolserver.browser.chromium import (
    DROPPED_PLAYWRIGHT_SWITCHES,
    cap_renderer_memory,
    chromium_launch_args,
    resolve_chromium,
)
from toolserver.browser.driver import browser_env, forget_temp_dir, new_temp_dir, start_playwright
from toolserver.browser.leftovers import sweep_once
from toolserver.config import ServerConfig
from toolserver.contract.mirrors import MirrorStore
from toolserver.errors import ChromiumUnavailable

log = logging.getLogger("toolserver.browser")

# A browser that does not answer a CDP call within this is not responsive (/health says so; at
# shutdown its sessions are left, not closed): a connected browser may still be frozen.
ANSWER_WITHIN_S = 2.0
ZYGOTE_WAIT_S = 2.0  # how long a launch waits for the zygote to hold it to max_renderer_memory_mb


class Hosted(Protocol):
    """A session on the host's browser (``Session``): told when a browser disconnects; counted
    against the host's capacity while open (``toolserver.capacity``)."""

    closed: bool

    @property
    def crashed(self) -> bool: ...

    def browser_disconnected(self, browser: Browser, reason: str | None = None) -> None: ...


class BrowserHost:
    """The warm browser shared by all runs of a server, and the profiles kept per site key.

    When Chromium dies, the sessions on it are marked crashed (their runs get a
    ``browser_crashed`` event) and a new browser is launched for the sessions that follow."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.store = MirrorStore.load(*config.mirror_roots)
        self.profiles: dict[str, StorageState] = {}
        self.profile_bytes: dict[str, int] = {}  # the size of each kept profile and its key, as JSON
        self._pw: Playwright | None = None
        self.backstop = Backstop()  # the browser's proxy: sees what Chromium does outside any context
        self.browser: Browser | None = None
        self.executable: str | None = None
        self.sessions: weakref.WeakSet[Hosted] = weakref.WeakSet()
        self.opening = 0  # sessions being opened, not yet among ``sessions`` (toolserver.capacity.admitted)
        self.launches = 0
        self.crashes = 0
        self._relaunch: asyncio.Future[Browser] | None = None
        self._stopping = False
        self._probe: CDPSession | None = None  # the browser's own CDP session, for ``responsive``
        self.temp_dir: Path | None = None  # the driver's TMPDIR: its browser's profile folder, downloads
        self._browser_temp_dir: Path | None = None  # the browser's TMPDIR, in temp_dir
        self._renderers_capped: Browser | None = None  # the browser whose zygote is held to the memory cap
        self._renderers_warned: Browser | None = None  # the browser said to be uncapped (once)

    async def start(self) -> None:
        self._pw = await self._start_driver()
        try:
            default = self._pw.chromium.executable_path
        except Exception:
            default = None
        self.executable = resolve_chromium(self.config.chromium, default)
        await self.backstop.start()
        try:
            await self._launch()
        except PlaywrightError as exc:
            said = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            raise ChromiumUnavailable(f"Chromium ({self.executable}) did not start: {said}") from None

    async def _launch(self) -> Browser:
        if self._pw is None:
            raise RuntimeError("BrowserHost.start() was not awaited: Playwright is not running")
        browser = await self._pw.chromium.launch(
            executable_path=self.executable,
            headless=True,
            args=chromium_launch_args(self.backstop.url, trusted_spki=backstop_spki()),
            ignore_default_args=list(DROPPED_PLAYWRIGHT_SWITCHES),
            # its own TMPDIR (what a crash leaves goes with it), and no desktop program for a page's mailto: link
            env=browser_env(await self._new_browser_temp_dir()),
        )
        browser.on("disconnected", self._on_disconnected)
        self._probe = await browser.new_browser_cdp_session()
        self.browser = browser
        self.launches += 1
        await self._cap_renderers_at_launch(browser)
        return browser

    async def _new_browser_temp_dir(self) -> Path | None:
        """A folder in the driver's for the browser about to launch, its TMPDIR; the previous
        browser's, dead by now (crashed, or its driver gone), is removed with what it left."""
        old, self._browser_temp_dir = self._browser_temp_dir, None
        if old is not None:
            await asyncio.to_thread(shutil.rmtree, old, True)
        if self.temp_dir is None:
            return None
        self._browser_temp_dir = self.temp_dir / f"chromium-{self.launches + 1}"
        self._browser_temp_dir.mkdir(exist_ok=True)
        return self._browser_temp_dir

    def _cap_renderers(self, browser: Browser, *, warn: bool = True) -> bool:
        """Hold the browser's renderers to ``max_renderer_memory_mb``, before a session starts one
        (whether they are: at launch, its zygote may not have been given its command line yet).
        What kept them uncapped is said once per browser."""
        megabytes = self.config.max_renderer_memory_mb
        if not megabytes or self._renderers_capped is browser:
            return True
        problems: list[str] = []
        if [zygote for pid in self.browser_pids() for zygote in cap_renderer_memory(pid, megabytes, problems)]:
            self._renderers_capped = browser
            if problems:
                log.warning("some of Chromium's zygotes are not held to %d MB: %s", megabytes, "; ".join(problems))
            return True
        if warn and self._renderers_warned is not browser:
            self._renderers_warned = browser
            said = "; ".join(problems) or "no zygote process found"
            log.warning("Chromium's renderers are not held to %d MB yet: %s", megabytes, said)
        return False

    async def _cap_renderers_at_launch(self, browser: Browser) -> None:
        """Tried until the zygote is found, within ``ZYGOTE_WAIT_S``: sessions do not start uncapped."""
        for _ in range(int(ZYGOTE_WAIT_S / 0.05)):
            if self._cap_renderers(browser, warn=False):
                return
            await asyncio.sleep(0.05)
        self._cap_renderers(browser)

    async def responsive(self, within: float = ANSWER_WITHIN_S) -> bool:
        """Whether the browser answers a CDP call within ``within`` seconds (``Browser.getVersion``,
        answered by the browser's own process): False for one down, or up but frozen."""
        browser, probe = self.browser, self._probe
        if browser is None or probe is None or not browser.is_connected():
            return False
        try:
            await asyncio.wait_for(probe.send("Browser.getVersion"), within)
        except (TimeoutError, PlaywrightError):
            return False
        return True

    async def end_downloads(self, context_id: str) -> None:
        """Chromium denies the browser context ``context_id`` every download from now on, and
        cancels each it is writing for it (Playwright's artifacts are named by Chromium's download
        ids; another context's are not found in it): their files are removed. Sent through the
        browser's own CDP session, which lives as long as the browser (a session's download
        settings end when it detaches)."""
        probe, folder = self._probe, self.temp_dir
        if probe is None:
            return
        await probe.send("Browser.setDownloadBehavior", {"behavior": "deny", "browserContextId": context_id})
        for partial in folder.glob("playwright-artifacts-*/*.crdownload") if folder is not None else ():
            try:
                await probe.send("Browser.cancelDownload", {"guid": partial.stem, "browserContextId": context_id})
            except PlaywrightError:  # another context's, or finished meanwhile
                continue
            partial.unlink(missing_ok=True)

    async def abandon_if_frozen(self) -> None:
        """At shutdown, a browser connected but not ``responsive`` is left: its sessions are marked
        lost, unclosed (each close would wait out its bounds), with a ``browser_crashed`` event
        (``reason`` ``unresponsive``); ``stop`` ends the browser with its driver."""
        browser = self.browser
        if browser is None or not browser.is_connected() or await self.responsive():
            return
        log.warning("Chromium does not answer: its sessions are left unclosed and it is killed")
        self.browser = None
        for session in list(self.sessions):
            session.browser_disconnected(browser, "unresponsive")
        self._kill_browsers()  # the driver's own close of it would wait for an answer

    def _kill_browsers(self) -> None:
        for pid in self.browser_pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def browser_pids(self) -> list[int]:
        """The browser process (not its children) of this host: the Chromium whose command line
        names this host's backstop proxy (none where ``/proc`` cannot be read)."""
        marker = f"--proxy-server={self.backstop.url}".encode()
        found = []
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:  # gone meanwhile, or not ours to read
                continue
            if marker in argv and not any(arg.startswith(b"--type=") for arg in argv):
                found.append(int(entry.name))
        return found

    def keep_profile(self, key: str, state: StorageState) -> list[str]:
        """Store a site key's profile as the most recent; a long-lived server forgets the least
        recently used beyond ``max_profiles`` profiles or ``max_profile_bytes`` bytes (their site
        keys, cookies and storage as JSON: a long key is held as long as its profile). Returns the
        keys forgotten (the key itself when its profile alone is over the byte cap)."""
        self.profiles.pop(key, None)
        self.profile_bytes.pop(key, None)
        self.profiles[key] = state
        self.profile_bytes[key] = len(json.dumps(key)) + len(json.dumps(state, separators=(",", ":")))
        forgotten = []
        while self.profiles and (
            len(self.profiles) > self.config.max_profiles
            or sum(self.profile_bytes.values()) > self.config.max_profile_bytes
        ):
            oldest = next(iter(self.profiles))
            self.profiles.pop(oldest)
            self.profile_bytes.pop(oldest, None)
            forgotten.append(oldest)
        return forgotten

    @property
    def connected(self) -> bool:
        return self.browser is not None and self.browser.is_connected()

    def _on_disconnected(self, browser: Browser) -> None:
        if self._stopping or browser is not self.browser:
            return
        self.crashes += 1
        log.error("Chromium disconnected (crash %d); relaunching for new sessions", self.crashes)
        self.browser = None  # gone: no session starts on it, and the one relaunch below replaces it
        for session in list(self.sessions):
            session.browser_disconnected(browser)  # a session on it records browser_crashed
        self._relaunch = asyncio.ensure_future(self._launch())

    async def _start_driver(self) -> Playwright:
        """Playwright's driver, watched: when it ends (killed, out of memory), its browser goes
        with it, though Playwright still calls that browser connected."""
        await asyncio.to_thread(sweep_once)  # dead servers' folders, off the loop (a cancel leaves no folder)
        folder = new_temp_dir()
        try:
            driver = await start_playwright(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            forget_temp_dir(folder)
            raise
        self.temp_dir = folder
        connection = getattr(getattr(driver, "_impl_obj", None), "_connection", None)  # no public event for it
        if connection is not None and hasattr(connection, "once"):
            connection.once("close", lambda: self._on_driver_closed(driver))
        return driver

    def _on_driver_closed(self, driver: Playwright) -> None:
        # Not: stopped, an old driver, or one that never launched a browser. A browser of None is
        # no sign: it is None while Chromium is relaunched after a crash, on this driver.
        if self._stopping or driver is not self._pw or not self.launches:
            return
        self.crashes += 1
        log.error("the Playwright driver ended (crash %d); restarting it and Chromium for new sessions", self.crashes)
        browser, self.browser = self.browser, None  # not connected (/health says so) until the restart
        for session in list(self.sessions):
            if browser is not None:
                session.browser_disconnected(browser)  # a session on it records browser_crashed
        self._relaunch = asyncio.ensure_future(self._restart_driver())

    async def _restart_driver(self) -> Browser:
        await self._remove_temp_dir()  # the dead driver's: its browser's profile, the downloads kept
        self._pw = await self._start_driver()
        return await self._launch()

    async def _remove_temp_dir(self) -> None:
        """Remove the current driver's temporary folder, once the driver is gone: its browser is
        ended first (a dead driver's browser has nothing left to serve, and would write on)."""
        folder, self.temp_dir = self.temp_dir, None
        if folder is not None:
            self._kill_browsers()
            for _ in range(10):  # a child of the killed browser may write on a moment (a folder left)
                await asyncio.to_thread(shutil.rmtree, folder, True)
                if not folder.exists():
                    break
                await asyncio.sleep(0.1)
            forget_temp_dir(folder)

    async def ready_browser(self) -> Browser:
        """The live browser, relaunched first if it died: one relaunch at a time, which every
        session starting meanwhile awaits (shielded: one cut short leaves it to the others); a
        failed one is tried once more."""
        for attempt in range(3):  # the third only looks at what the second relaunch made
            browser = self.browser
            if browser is not None and browser.is_connected():
                self._cap_renderers(browser)
                return browser
            if attempt == 2:
                break
            relaunch = self._relaunch
            if relaunch is None or relaunch.done():  # a done one left no browser: it failed, or that one died
                if relaunch is not None and not relaunch.cancelled() and relaunch.exception() is not None:
                    log.error("relaunching Chromium failed: %s", relaunch.exception())
                relaunch = self._relaunch = asyncio.ensure_future(self._launch())
            try:
                await asyncio.shield(relaunch)
            except Exception as exc:
                if attempt:
                    raise
                log.error("relaunching Chromium failed: %s", exc)
        raise RuntimeError("Chromium died again after each of two relaunches")

    async def stop(self) -> None:
        """Close the browser and the driver, each within the shutdown bound (a hung renderer
        never holds shutdown: stopping the driver ends the browser it launched; an abandoned
        browser is left to it)."""
        self._stopping = True
        if self._relaunch is not None:  # a restart after a crash nobody awaited: not left pending
            relaunch, self._relaunch = self._relaunch, None
            relaunch.cancel()
            await asyncio.wait([relaunch])
            if not relaunch.cancelled() and relaunch.exception() is not None:  # retrieved: said here, once
                log.warning("the relaunch after a crash had failed: %r", relaunch.exception())
        if self.browser is not None:
            await self._close_within("browser", self.browser.close)
        if self._pw is not None:
            await self._close_within("driver", self._pw.stop)
        await self._remove_temp_dir()
        await self.backstop.close()

    async def _close_within(self, what: str, close: Callable[[], Awaitable[None]]) -> None:
        try:
            await asyncio.wait_for(close(), self.config.shutdown_timeout_s)
        except (TimeoutError, PlaywrightError) as exc:
            log.warning("closing the %s did not finish cleanly: %r", what, exc)
