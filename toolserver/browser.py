"""The browser side: one warm Chromium per server, a context per session, tabs, profiles,
and the router that answers every request from the mirror store (or blocks it).

Nothing here reaches a network: every request is fulfilled from the mirror or refused; a
dead proxy in the launch flags catches anything that could escape interception.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import html
import itertools
import json
import logging
import os
import re
import secrets
import shlex
import shutil
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

from playwright._impl._errors import TargetClosedError  # typed, though not re-exported publicly
from playwright.async_api import (
    BrowserContext,
    Dialog,
    Download,
    Page,
    Playwright,
    Request,
    Route,
    WebSocketRoute,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError

from sandbox.core.chromium import chromium_launch_args, resolve_chromium
from sandbox.core.mirrors import MirrorStore
from toolserver import pdf
from toolserver.config import ServerConfig
from toolserver.errors import PageUnresponsive
from toolserver.media import finish_screenshot, start_playwright_trace, stop_playwright_trace

log = logging.getLogger("toolserver.browser")

REF_RE = re.compile(r"\[ref=([A-Za-z0-9_]+)\]")
REPORT_PREFIX = "__sandbox__"
HTTP_URL = re.compile(r"^https?:")


class Recorder(Protocol):
    """What the browser needs from the run that owns a session (the dispatcher's ``Run``):
    its host, config and policy, and a place to record events. The browser never imports the
    dispatcher."""

    host: BrowserHost
    store: MirrorStore
    config: ServerConfig
    policy: Any
    download_bytes: int  # bytes of downloads kept so far (capped by max_download_bytes)
    screenshot_dir: Path | None  # None: no screenshots (toolserver.media)

    def record_event(
        self, kind: str, data: dict, *, session: Session | None = None, tab: Tab | None = None
    ) -> dict: ...

    def record_state_change(
        self,
        action: str,
        *,
        name: str,
        blocked: bool = False,
        detail: dict | None = None,
        session: Session | None = None,
        tab: Tab | None = None,
    ) -> dict: ...

    def record_policy_violation(
        self, url: str, *, origin: str, session: Session | None = None, tab: Tab | None = None, **data: object
    ) -> dict: ...


# Injected into every document: reports form submissions and lets the sandbox veto them.
INIT_SCRIPT = """
(() => {
  if (window.__sandboxInstalled) return; window.__sandboxInstalled = true;
  // Reports go out as console messages with a prefix (cheaper than a binding per context) that
  // holds the session's report key: a page cannot read it (no function the page can reach holds
  // it), so it cannot forge a report. console.debug and JSON.stringify are taken now, before a
  // page script could replace them.
  const debug = console.debug.bind(console), stringify = JSON.stringify;
  const prefix = '__sandbox__' + '__REPORT_KEY__' + ':';
  // A report is serialised from a copy without prototypes, so a toJSON the page puts on
  // Object.prototype or Array.prototype cannot change what it says.
  const create = Object.create, keys = Object.keys, isArray = Array.isArray, setPrototype = Object.setPrototypeOf;
  const bare = (value) => {
    if (value === null || typeof value !== 'object') return value;
    const copy = isArray(value) ? setPrototype([], null) : create(null), names = keys(value);
    for (let i = 0; i < names.length; i++) copy[names[i]] = bare(value[names[i]]);
    return copy;
  };
  const report = (kind, info) => debug(prefix + stringify(bare({kind, info})));
  document.addEventListener('submit', (event) => {
    const form = event.target;
    const info = {action: form.action || '', method: (form.method || 'get').toUpperCase()};
    if (window.__sandboxBlockStateChanges) { event.preventDefault(); info.blocked = true; }
    report('form_submission', info);
  }, true);
  // What the page is doing, so the sandbox waits exactly as long as it is busy (no fixed pause):
  // scripted requests until their answers were read and handled (a task turn after the body was
  // read), and the navigations, popups and downloads it started.
  const net = window.__sandboxNet = {pending: 0, navs: 0, opens: 0, downloads: 0, seq: 0};
  const top = window === window.top;
  const finalState = () => {
    for (const el of document.querySelectorAll('[data-sandbox-final-state]')) {
      if (el.checkVisibility()) return el.getAttribute('data-sandbox-final-state');
    }
    return null;
  };
  // A meta refresh of 0 s starts a navigation right after the load: it is part of loading.
  const refreshing = () => {
    const meta = document.querySelector('meta[http-equiv="refresh" i]');
    return !!meta && /^\\s*0*(\\.0*)?\\s*($|[;,])/.test(meta.content || '');
  };
  const state = () => ({seq: ++net.seq, top, title: document.title, type: document.contentType,
                        ready: document.readyState, pending: net.pending, navs: net.navs, opens: net.opens,
                        downloads: net.downloads, final: finalState(), refresh: refreshing(),
                        paint: window.__sandboxShots ? paint() : null});
  Object.defineProperty(window, '__sandboxState', {value: state});
  // Whether the viewport can look different since the last picture (toolserver.media): asked at
  // a screenshot, read with a snapshot, and part of each state report while the run keeps
  // screenshots; the first ask starts counting what can change it (DOM, scroll, focus, input,
  // loads, animations), so a page pays nothing while screenshots are off.
  // The DOM functions it uses are taken now, before a page script could replace them.
  const doc = Math.random().toString(36).slice(2);
  const Observer = MutationObserver, listen = EventTarget.prototype.addEventListener;
  const query = Document.prototype.querySelector, animations = Document.prototype.getAnimations;
  let changes = null;
  const paint = () => {
    if (changes === null) {
      changes = 0;
      const touch = () => { changes++; };
      new Observer(touch).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
      for (const type of ['scroll', 'resize', 'input', 'change', 'focusin', 'focusout', 'load', 'error',
                          'pointerover', 'pointerout', 'transitionrun', 'animationstart', 'animationiteration',
                          'hashchange', 'popstate'])   // a new :target restyles with no DOM change
        listen.call(window, type, touch, true);
      listen.call(document, 'selectionchange', touch);
    }
    const still = document.readyState === 'complete' && (!document.fonts || document.fonts.status === 'loaded')
      && Array.prototype.every.call(document.images, (img) => img.complete)
      && !query.call(document, 'canvas, video, iframe, frame, embed, object, marquee')
      && !animations.call(document).some((a) => a.playState === 'running');
    return {doc, mark: changes, still};
  };
  Object.defineProperty(window, '__sandboxPaint', {value: paint});
  const begin = () => { net.pending++; };
  const end = () => setTimeout(() => {
    net.pending = Math.max(0, net.pending - 1);
    if (!net.pending && document.readyState === 'complete') report('idle', state());
  }, 0);
  // The load is reported once the page's own load listeners ran (they may start requests): from
  // a pageshow listener added during the load, so after the page's own, which Chromium fires in
  // the same task right after the load (a task turn later, as a fallback, if it did not).
  let shown = false;
  const loaded = () => { if (!shown) { shown = true; report('loaded', state()); } };
  window.addEventListener('load', () => {
    listen.call(window, 'pageshow', (event) => { if (event.isTrusted) loaded(); }, {once: true});
    setTimeout(loaded, 0);
  });
  // Typing (a trusted input event) is reported once the page's own handlers have run, with the
  // field's value then: the sandbox need not ask the page again.
  window.addEventListener('input', (event) => {
    if (event.isTrusted) report('input', {...state(), value: 'value' in event.target ? event.target.value : null});
  });
  if (window.fetch) {
    const fetch = window.fetch;
    const reads = ['json', 'text', 'arrayBuffer', 'blob', 'formData', 'bytes'];
    window.fetch = function (...args) {
      begin();
      let ended = false, reading = false;
      const finish = () => { if (!ended) { ended = true; end(); } };
      return fetch.apply(this, args).then((response) => {
        for (const name of reads) {
          const read = response[name];
          if (typeof read !== 'function') continue;
          response[name] = function (...a) {
            reading = true; const p = read.apply(this, a); p.then(finish, finish); return p;
          };
        }
        setTimeout(() => { if (!reading) finish(); }, 0);   // an answer whose body is never read
        return response;
      }, (error) => { finish(); throw error; });
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    begin(); this.addEventListener('loadend', end, {once: true}); return send.apply(this, args);
  };
  if (window.navigation) {
    navigation.addEventListener('navigate', (event) => {
      if (event.downloadRequest !== null) net.downloads++;
      else if (!event.destination.sameDocument && /^https?:/.test(event.destination.url)) net.navs++;
    });
  }
  // Popups that load an http(s) document (about:blank ones have nothing to wait for).
  const loads = (url) => {
    try { return /^https?:$/.test(new URL(url, location.href).protocol); } catch (e) { return false; }
  };
  const open = window.open;
  window.open = function (...args) {
    const opened = open.apply(this, args);
    if (opened && args[0] && loads(String(args[0]))) net.opens++;
    return opened;
  };
  window.addEventListener('click', (event) => {
    const link = event.target instanceof Element && event.target.closest('a[href][target]');
    if (link && !event.defaultPrevented && !['', '_self', '_parent', '_top'].includes(link.target.toLowerCase())
        && loads(link.href)) net.opens++;
  });
  // WebRTC could send UDP past the router and the proxy (Chromium also runs with non-proxied UDP
  // disabled): the API is removed, and each attempt is recorded as a blocked request.
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection']) {
    if (!window[name]) continue;
    const refuse = function (config) {
      const urls = ((config && config.iceServers) || []).flatMap((s) => [].concat(s.urls || s.url || []));
      report('webrtc', {urls: urls.map(String)});
      throw new DOMException('WebRTC is blocked in the offline sandbox', 'NotAllowedError');
    };
    try { Object.defineProperty(window, name, {value: refuse, configurable: false, writable: false}); } catch (e) {}
  }
  // Service workers are blocked; record each registration attempt instead of letting it fail silently.
  if (navigator.serviceWorker) {
    const register = (url) => {
      report('service_worker', {url: String(url)});
      return Promise.reject(new DOMException('service workers are blocked in the offline sandbox', 'SecurityError'));
    };
    try { Object.defineProperty(navigator.serviceWorker, 'register', {value: register}); } catch (e) {}
  }
})();
"""


async def bounded(awaitable, seconds: float, what: str):
    """Await a browser operation for at most ``seconds``: a page whose script spins never
    answers, and Playwright puts no bound on evaluate/title itself."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        raise PageUnresponsive(
            f"the page did not answer ({what}) within {seconds:g} s: a script on it is probably spinning. "
            "Close the tab (browser_close_tab) or the session (browser_close) and start again."
        ) from None


# Playwright's driver is a Node process that lives as long as the server. With V8's defaults its
# heap grows by tens of MB between major collections (the soak saw its RSS swing 135-185 MB);
# --optimize-for-size keeps it near its live size. Node takes that flag only on its command line,
# not in NODE_OPTIONS, so the driver starts through a two-line wrapper around Playwright's node.
DRIVER_NODE_FLAGS = ("--optimize-for-size",)


async def start_playwright() -> Playwright:
    """Playwright, its driver started with ``DRIVER_NODE_FLAGS`` (unless the user points
    PLAYWRIGHT_NODEJS_PATH at a Node of their own, which is then used as it is)."""
    wrapper = None if os.environ.get("PLAYWRIGHT_NODEJS_PATH") else _driver_wrapper()
    if wrapper is None:
        return await async_playwright().start()
    os.environ["PLAYWRIGHT_NODEJS_PATH"] = str(wrapper)  # read when the driver is spawned
    try:
        return await async_playwright().start()
    finally:
        os.environ.pop("PLAYWRIGHT_NODEJS_PATH", None)


@functools.cache
def _driver_wrapper() -> Path | None:
    import playwright

    node = Path(playwright.__file__).parent / "driver" / "node"
    if os.name != "posix" or not node.is_file():
        return None
    folder = Path(tempfile.mkdtemp(prefix="sandbox-driver-"))
    atexit.register(shutil.rmtree, folder, True)
    script = folder / "node"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(str(node))} {" ".join(DRIVER_NODE_FLAGS)} "$@"\n')
    script.chmod(0o700)
    return script


class BrowserHost:
    """The warm browser shared by all runs of a server, and the profiles kept per site key.

    When Chromium dies, the sessions on it are marked crashed (their runs get a
    ``browser_crashed`` event) and a new browser is launched for the sessions that follow."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.store = MirrorStore.load(*config.mirror_roots)
        self.profiles: dict[str, dict[str, Any]] = {}
        self._pw: Playwright | None = None
        self.browser = None
        self.executable: str | None = None
        self.sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        self.launches = 0
        self.crashes = 0
        self._relaunch: asyncio.Future | None = None
        self._stopping = False

    async def start(self) -> None:
        self._pw = await start_playwright()
        try:
            default = self._pw.chromium.executable_path
        except Exception:
            default = None
        self.executable = resolve_chromium(self.config.chromium, default)
        await self._launch()

    async def _launch(self) -> None:
        browser = await self._pw.chromium.launch(
            executable_path=self.executable, headless=True, args=chromium_launch_args()
        )
        browser.on("disconnected", self._on_disconnected)
        self.browser = browser
        self.launches += 1

    def keep_profile(self, key: str, state: dict[str, Any]) -> None:
        """Store a site key's profile as the most recent; a long-lived server forgets the least
        recently used beyond ``max_profiles``."""
        self.profiles.pop(key, None)
        self.profiles[key] = state
        while len(self.profiles) > self.config.max_profiles:
            self.profiles.pop(next(iter(self.profiles)))

    @property
    def connected(self) -> bool:
        return self.browser is not None and self.browser.is_connected()

    def _on_disconnected(self, browser) -> None:
        if self._stopping or browser is not self.browser:
            return
        self.crashes += 1
        log.error("Chromium disconnected (crash %d); relaunching for new sessions", self.crashes)
        for session in list(self.sessions):
            if session.browser is browser and not session.closed:
                session.run.record_event("browser_crashed", {"session_id": session.id}, session=session)
        self._relaunch = asyncio.ensure_future(self._launch())

    async def ready_browser(self):
        """The live browser, relaunched first if it died."""
        if self._relaunch is not None:
            relaunch, self._relaunch = self._relaunch, None
            try:
                await relaunch
            except Exception as exc:  # try once more below
                log.error("relaunching Chromium failed: %s", exc)
        if not self.connected:
            await self._launch()
        return self.browser

    async def stop(self) -> None:
        """Close the browser and the driver, each within the shutdown bound (a hung renderer
        never holds shutdown: stopping the driver ends the browser it launched)."""
        self._stopping = True
        bound = self.config.shutdown_timeout_s
        for what, closing in (("browser", self.browser), ("driver", self._pw)):
            if closing is None:
                continue
            try:
                await asyncio.wait_for(closing.close() if what == "browser" else closing.stop(), bound)
            except (TimeoutError, PlaywrightError) as exc:
                log.warning("closing the %s did not finish cleanly: %r", what, exc)


@dataclass
class Tab:
    id: str
    page: Page
    snapshot_id: str | None = None
    snapshot_refs: frozenset[str] = frozenset()
    snapshot_document: int = -1
    document: int = 0  # bumped on every main-frame navigation
    pdf_pages: list[str] | None = None
    pdf_name: str | None = None
    pending_pdf: tuple[str, str, list[str]] | None = None  # (url, name, pages) being loaded
    committed_url: str = "about:blank"
    new_document_requested: bool = False  # the router served a main-frame document
    closed: bool = False
    # What the sandbox knows of the page's activity (see INIT_SCRIPT), for settling:
    state: dict | None = None  # the current document's latest state report (None: not loaded yet)
    nav_requests: int = 0  # main-frame navigation requests the router answered or refused
    awaiting_commit: bool = False  # the router answered one with a document that has not committed yet
    refresh_from: int | None = None  # the document refreshes at once (meta refresh 0): nav_requests then
    inputs: int = 0  # typing reports (trusted input events) of the tab's documents
    input_state: dict | None = None  # the latest one (a state report with the field's ``value``)

    @property
    def url(self) -> str:
        return self.page.url

    def summary(self, active: bool) -> dict:
        return {"tab": self.id, "url": self.page.url, "active": active}


@dataclass(eq=False)
class Session:
    id: str
    site_key: str | None
    provider: str
    profile_new: bool
    run: Recorder
    context: BrowserContext
    browser: Any = None  # the Chromium this session lives in
    tabs: dict[str, Tab] = field(default_factory=dict)
    active_tab_id: str | None = None
    closed: bool = False
    inflight: int = 0  # requests the router is answering
    downloads_seen: int = 0
    opening_tab: bool = False  # a tool (not the page) is opening the next page
    popup_requested_at: float = 0.0  # a popup's first request was seen before its page
    router_downloads: set[str] = field(default_factory=set)  # attachment downloads the router recorded
    report_key: str = field(default_factory=lambda: secrets.token_hex(8))  # in INIT_SCRIPT's report prefix
    _tab_numbers: itertools.count = field(default_factory=lambda: itertools.count(1))
    _pulse: asyncio.Event = field(default_factory=asyncio.Event)  # set (and replaced) whenever activity changes

    @property
    def active_tab(self) -> Tab | None:
        return self.tabs.get(self.active_tab_id) if self.active_tab_id else None

    @property
    def crashed(self) -> bool:
        return self.browser is not None and not self.browser.is_connected()

    def tab_for_page(self, page: Page | None) -> Tab | None:
        for tab in self.tabs.values():
            if tab.page is page:
                return tab
        return None

    async def tab_list(self, known: tuple[Tab, str] | None = None) -> list[dict]:
        """Every tab with its title. ``known``: a tab whose title was just read (not asked again)."""

        async def title(tab: Tab) -> str:
            if known is not None and tab is known[0]:
                return known[1]
            return await safe_title(tab.page, self.run.config)

        tabs = list(self.tabs.values())
        titles = await asyncio.gather(*(title(tab) for tab in tabs))  # one round trip, not N
        return [
            {**tab.summary(tab.id == self.active_tab_id), "title": title}
            for tab, title in zip(tabs, titles, strict=True)
        ]

    # --- page wiring -------------------------------------------------------------------
    def adopt_page(self, page: Page, opener: str | None = None) -> Tab:
        tab = Tab(id=f"t{next(self._tab_numbers)}", page=page)
        self.tabs[tab.id] = tab
        page.set_default_timeout(self.run.config.action_timeout_ms)
        page.set_default_navigation_timeout(self.run.config.navigation_timeout_ms)
        page.on("framenavigated", lambda frame: self._on_navigated(tab, frame))
        page.on("dialog", lambda dialog: asyncio.ensure_future(self._on_dialog(tab, dialog)))
        page.on("download", lambda download: self._on_download(tab, download))
        page.on("close", lambda _page: self._on_page_closed(tab))
        page.on("console", lambda message: self.on_console(tab, message))
        if opener is not None:
            self.run.record_event(
                "tab_opened", {"tab": tab.id, "opener": opener, "url": page.url}, session=self, tab=tab
            )
        self.notify()
        return tab

    def _on_navigated(self, tab: Tab, frame) -> None:
        if frame.parent_frame is not None:
            return
        url = frame.url.split("#", 1)[0]
        pending, tab.pending_pdf = tab.pending_pdf, None
        requested, tab.new_document_requested = tab.new_document_requested, False
        if url == tab.committed_url and not requested:
            return  # same-document (fragment) navigation: refs stay valid
        tab.committed_url = url
        if requested:
            # A new document (the router served it): refs and the page's state reports start over.
            # Without one it is the same document under a new URL (history.pushState): refs stay valid.
            tab.document += 1
            tab.state, tab.awaiting_commit, tab.refresh_from = None, False, None
            if pending is not None and pending[0].split("#", 1)[0] == url:
                tab.pdf_name, tab.pdf_pages = pending[1], pending[2]
            else:
                tab.pdf_name, tab.pdf_pages = None, None
        self.notify()
        self.run.record_event("navigation", {"url": frame.url}, session=self, tab=tab)

    async def _on_dialog(self, tab: Tab, dialog: Dialog) -> None:
        accept = self.run.config.dialogs == "accept" and not self.run.policy.block_state_changes
        data = {
            "dialog_type": dialog.type,
            "message": dialog.message,
            "response": "accepted" if accept else "dismissed",
        }
        self.run.record_event("dialog", data, session=self, tab=tab)
        if accept and dialog.type != "alert":
            self.run.record_state_change(
                "dialog_accepted", name=f"dialog:{dialog.type}", detail=data, session=self, tab=tab
            )
        with contextlib.suppress(PlaywrightError):  # the page may be gone already
            await (dialog.accept() if accept else dialog.dismiss())

    def _on_download(self, tab: Tab, download: Download) -> None:
        """Every download is a state change. Under blocking the context does not accept
        downloads, so none is written; otherwise the bytes kept per run are capped."""
        self.downloads_seen += 1
        self.notify()
        data = {"url": download.url, "filename": download.suggested_filename}
        self.run.record_event("download", data, session=self, tab=tab)
        if download.url in self.router_downloads:
            self.router_downloads.discard(download.url)  # the router recorded this one already
        else:
            self.run.record_state_change(
                "download",
                name=f"download {download.url}",
                blocked=self.run.policy.block_state_changes,
                detail=data,
                session=self,
                tab=tab,
            )
        if not self.run.policy.block_state_changes:
            asyncio.ensure_future(self._cap_download(tab, download))

    async def _cap_download(self, tab: Tab, download: Download) -> None:
        try:
            path = await download.path()
            size = os.path.getsize(path) if path else 0
        except (PlaywrightError, OSError):  # cancelled, or the context closed first
            return
        run, cap = self.run, self.run.config.max_download_bytes
        if run.download_bytes + size <= cap:
            run.download_bytes += size
            return
        await download.delete()
        run.record_event(
            "download_discarded",
            {"url": download.url, "bytes": size, "kept_bytes": run.download_bytes, "max_download_bytes": cap},
            session=self,
            tab=tab,
        )

    def _on_page_closed(self, tab: Tab) -> None:
        self.forget_tab(tab)

    def forget_tab(self, tab: Tab) -> None:
        """Drop a closed tab; the most recent remaining tab becomes current if it was."""
        tab.closed = True
        self.notify()
        self.tabs.pop(tab.id, None)
        if self.active_tab_id not in self.tabs:
            self.active_tab_id = next(reversed(self.tabs), None)

    # --- the router ---------------------------------------------------------------------
    async def route(self, route: Route, request: Request) -> None:
        # The browser's own after-load requests (favicon: type "other") are not page work to wait for.
        counted = request.resource_type != "other"
        self.inflight += counted
        try:
            await self._answer(route, request)
        except Exception as exc:  # never leave a request hanging, never let it through
            log.debug("route failed for %s: %s", request.url, exc)
            if not (self.closed or isinstance(exc, TargetClosedError)):
                self.run.record_event(
                    "server_fault", {"where": "router", "url": request.url, "error": repr(exc)}, session=self
                )
            with contextlib.suppress(Exception):
                await route.abort("failed")
        finally:
            self.inflight -= counted
            self.notify()

    async def _answer(self, route: Route, request: Request) -> None:
        run, policy = self.run, self.run.policy
        url, method = request.url, request.method
        is_nav = request.is_navigation_request()
        frame = None
        if is_nav:
            try:
                frame = request.frame
            except Exception:  # a popup's first navigation comes before its frame exists
                frame = None
                self.popup_requested_at = time.monotonic()
                asyncio.get_running_loop().call_later(self.run.config.popup_grace_s, self.notify)
        main_frame_nav = is_nav and (frame is None or frame.parent_frame is None)
        tab = self.tab_for_page(frame.page) if frame is not None else None
        if main_frame_nav and tab is not None:
            tab.nav_requests += 1
        base = {"url": url, "method": method, "resource_type": request.resource_type}

        if method not in ("GET", "HEAD", "OPTIONS"):
            blocked = policy.block_state_changes
            run.record_state_change(
                "non_get_request", name=f"{method} {url}", blocked=blocked, detail=base, session=self, tab=tab
            )
            if blocked:
                return await self._refuse(route, main_frame_nav, "state_change_blocked", base, tab)

        entry = run.store.entry(url)  # the manifest only: no body is read for a refused request
        headers = {k.lower(): v for k, v in entry.headers.items()} if entry else {}
        if is_nav and "attachment" in headers.get("content-disposition", ""):
            refused = policy.block_state_changes or (main_frame_nav and policy.enforcing and not policy.url_ok(url))
            run.record_state_change(
                "download", name=f"download {url}", blocked=refused, detail=base, session=self, tab=tab
            )
            self.router_downloads.add(url)
            if policy.block_state_changes:
                return await self._refuse(route, True, "state_change_blocked", base, tab)

        if main_frame_nav and not policy.url_ok(url):
            run.record_policy_violation(
                url, origin="page", method=method, resource_type=request.resource_type, session=self, tab=tab
            )
            if policy.enforcing:
                return await self._refuse(route, True, "policy", base, tab)

        if entry is None:
            return await self._refuse(route, main_frame_nav, "not_in_mirror", base, tab)

        if 300 <= entry.status < 400 and "location" in headers:
            return await self._redirect(route, request, urljoin(url, headers["location"]), main_frame_nav, base, tab)
        mirrored = await asyncio.to_thread(run.store.lookup, url)  # never block the event loop on a disk
        if main_frame_nav and tab is not None:
            tab.new_document_requested = True
            # A document commits (unless it is an attachment, which becomes a download, or a 204).
            tab.awaiting_commit = "attachment" not in headers.get("content-disposition", "") and mirrored.status != 204
        if (
            main_frame_nav
            and headers.get("content-type", "").startswith("application/pdf")
            and "attachment" not in headers.get("content-disposition", "")
        ):
            name = urlsplit(url).path.rsplit("/", 1)[-1] or "document.pdf"
            pages = pdf.extract_pages(mirrored.body)
            if tab is not None:
                tab.pending_pdf = (url, name, pages)
            return await route.fulfill(
                status=mirrored.status, content_type="text/html; charset=utf-8", body=pdf.viewer_html(name, pages)
            )

        await route.fulfill(status=mirrored.status, headers=mirrored.headers, body=mirrored.body)

    async def _redirect(
        self,
        route: Route,
        request: Request,
        target: str,
        main_frame_nav: bool,
        base: dict,
        tab: Tab | None,
        hops: int = 0,
    ) -> None:
        """Chromium sends a fulfilled redirect's next request past interception, so the router
        follows redirects itself: the target is checked and answered like any other request."""
        run, policy = self.run, self.run.policy
        run.record_event("redirect", {**base, "location": target}, session=self, tab=tab)
        if main_frame_nav:
            if not policy.url_ok(target):
                run.record_policy_violation(
                    target,
                    origin="redirect",
                    method=base["method"],
                    resource_type=base["resource_type"],
                    session=self,
                    tab=tab,
                )
                if policy.enforcing:
                    return await self._refuse(route, True, "policy", {**base, "url": target}, tab)
            if not run.store.has(target):
                return await self._refuse(route, True, "not_in_mirror", {**base, "url": target}, tab)
            # A stub document replaces itself with the target: that navigation is routed again.
            if tab is not None:
                tab.awaiting_commit = True
            stub = (
                f"<!doctype html><meta http-equiv='refresh' content='0;url={html.escape(target)}'>"
                f"<script>location.replace({json.dumps(target)})</script>"
            )
            return await route.fulfill(status=200, content_type="text/html", body=stub)
        mirrored = await asyncio.to_thread(run.store.lookup, target)
        if mirrored is None or hops >= 5:
            return await self._refuse(route, False, "not_in_mirror", {**base, "url": target}, tab)
        location = {k.lower(): v for k, v in mirrored.headers.items()}.get("location")
        if 300 <= mirrored.status < 400 and location:
            return await self._redirect(route, request, urljoin(target, location), False, base, tab, hops + 1)
        await route.fulfill(status=mirrored.status, headers=mirrored.headers, body=mirrored.body)

    async def _refuse(self, route: Route, main_frame_nav: bool, reason: str, base: dict, tab: Tab | None) -> None:
        self.run.record_event("blocked_request", {**base, "reason": reason}, session=self, tab=tab)
        if main_frame_nav and (tab is None or tab.document == 0):
            # A new tab's first navigation: show why it is empty (a 204 would leave no tab at all).
            if tab is not None:
                tab.awaiting_commit = True
            await route.fulfill(
                status=200,
                content_type="text/html; charset=utf-8",
                body=(
                    "<!doctype html><title>Blocked by the sandbox</title><h1>Blocked by the sandbox</h1>"
                    f"<p>{html.escape(reason)}: {html.escape(base['url'])} was not requested.</p>"
                ),
            )
        elif main_frame_nav:
            # 204 keeps the current document: the page does not move and no byte leaves.
            await route.fulfill(status=204, body=b"")
        else:
            await route.abort("blockedbyclient")

    async def refuse_websocket(self, ws: WebSocketRoute) -> None:
        self.run.record_event(
            "blocked_request",
            {"url": ws.url, "method": "GET", "resource_type": "websocket", "reason": "websocket"},
            session=self,
        )
        await ws.close(code=1008, reason="offline sandbox: WebSocket refused")

    def on_console(self, tab: Tab, message) -> None:
        """INIT_SCRIPT reports the page's state, form submissions and blocked APIs as console messages."""
        text, prefix = message.text, f"{REPORT_PREFIX}{self.report_key}:"
        if not text.startswith(prefix):
            return  # the page's own message, or a report it made up
        try:
            payload = json.loads(text[len(prefix) :])
            kind, info = str(payload["kind"]), dict(payload.get("info") or {})
        except (ValueError, KeyError, TypeError):
            return
        self.report(tab, kind, info)

    def report(self, tab: Tab | None, kind: str, info: dict) -> None:
        if kind in ("loaded", "idle", "input"):
            if tab is not None and info.get("top"):
                self.take_state(tab, info)
                if kind == "input":
                    tab.inputs, tab.input_state = tab.inputs + 1, info
            return
        if kind == "webrtc":
            self.run.record_event(
                "blocked_request",
                {
                    "url": " ".join(info.get("urls") or []) or "webrtc:",
                    "method": "UDP",
                    "resource_type": "webrtc",
                    "reason": "webrtc",
                },
                session=self,
                tab=tab,
            )
        if kind == "service_worker":
            url = urljoin(tab.page.url if tab else "", str(info.get("url", "")))
            self.run.record_event(
                "blocked_request",
                {"url": url, "method": "GET", "resource_type": "service_worker", "reason": "service_worker"},
                session=self,
                tab=tab,
            )
        if kind == "form_submission":
            self.run.record_state_change(
                "form_submission",
                name=f"submit {info.get('method')} {info.get('action')}",
                blocked=bool(info.get("blocked")),
                detail=info,
                session=self,
                tab=tab,
            )

    # --- waiting ------------------------------------------------------------------------
    def notify(self) -> None:
        """Something the settling waits on changed: wake the waiters."""
        self._pulse.set()
        self._pulse = asyncio.Event()

    async def until(self, ready, deadline: float) -> bool:
        """Wait, woken by activity (never polling), until ``ready()`` or the deadline."""
        while not ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._pulse.wait(), remaining)
            except TimeoutError:
                return ready()
        return True

    def take_state(self, tab: Tab, state: dict) -> None:
        """Keep a state report of the tab's current document if it is the newest one."""
        if tab.state is None or state.get("seq", 0) > tab.state.get("seq", 0):
            tab.state = state
            if state.get("refresh") and tab.refresh_from is None:
                tab.refresh_from = tab.nav_requests  # the refresh's navigation is still to come
            self.notify()

    def popup_pending(self, now: float) -> bool:
        return now - self.popup_requested_at < self.run.config.popup_grace_s

    def marks(self, tab: Tab, state: dict | None) -> Marks:
        """Where things stand just before an action (``state``: the page's report read then)."""
        state = state or {}
        return Marks(
            document=tab.document,
            nav_requests=tab.nav_requests,
            tabs=frozenset(self.tabs),
            downloads_seen=self.downloads_seen,
            navs=state.get("navs", 0),
            opens=state.get("opens", 0),
            downloads=state.get("downloads", 0),
        )

    def idle(self, tab: Tab) -> bool:
        """Nothing in the router, the tab's document loaded and its scripted requests handled."""
        if tab.closed:
            return True
        quiet = self.inflight == 0 and not tab.awaiting_commit and not self.popup_pending(time.monotonic())
        if not tab.page.url.startswith(("http:", "https:")):
            return quiet  # about:blank, an error page: no page script reports on them
        state = tab.state
        refreshed = tab.refresh_from is None or tab.nav_requests > tab.refresh_from
        return quiet and refreshed and state is not None and state["ready"] == "complete" and not state["pending"]

    async def settle(self, tab: Tab, before: Marks | None = None, probe: dict | None = None) -> dict | None:
        """Wait exactly as long as the page is busy with what the last action (or navigation)
        started, and return the tab's state report then (None if the tab closed).

        After an action (``before``: the marks taken just before it; ``probe``: the page's state
        read a task turn after it, None when the document was already replaced), the page says
        which navigations, popups and downloads it started: the sandbox waits for the router to
        see each navigation and the document it serves to commit, for each popup's tab, and for
        each download's event. Then — and after a navigation — it waits until the router has no
        request in flight and the document has loaded and handled its scripted requests' answers
        (the page reports that). Every wait is woken by events; giving up at ``settle_timeout_s``
        is recorded as a ``settle_timeout`` event, so a half-loaded page is never silently used."""
        config = self.run.config
        started = time.monotonic()
        deadline = started + config.settle_timeout_s
        if probe is not None and tab.document == (before.document if before else tab.document):
            self.take_state(tab, probe)
        waits: list[tuple[str, Any, float]] = []
        if before is not None:
            grace = min(deadline, started + config.popup_grace_s)
            navigated = probe is None or tab.document != before.document or probe["navs"] > before.navs
            if navigated:
                waits.append(
                    (
                        "navigation",
                        lambda: (
                            tab.closed
                            or tab.document != before.document
                            or (tab.nav_requests > before.nav_requests and not tab.awaiting_commit)
                        ),
                        deadline,
                    )
                )
            opened = probe["opens"] - before.opens if probe is not None else 0
            if opened > 0:  # each popup's tab appears
                waits.append(("popup", lambda: len(set(self.tabs) - before.tabs) >= opened, deadline))
            if probe is not None and probe["downloads"] > before.downloads:
                waits.append(("download", lambda: self.downloads_seen > before.downloads_seen, grace))
        for what, ready, bound in waits:
            if not await self.until(ready, bound) and bound == deadline:
                return self._timed_out(tab, started, what)
        new_tabs = [t for t in self.tabs.values() if before is not None and t.id not in before.tabs]
        if before is not None and probe is not None and probe["opens"] > before.opens:
            for popup in new_tabs:
                if not await self.popup_loaded(popup, deadline):
                    return self._timed_out(popup, started, "popup")
        for waited in (tab, *new_tabs):
            if not await self.until_idle(waited, deadline):
                return self._timed_out(waited, started, "page activity")
        return None if tab.closed else tab.state

    async def popup_loaded(self, popup: Tab, deadline: float) -> bool:
        """A popup opened with an http(s) URL: its document has committed and loaded (Playwright's
        own events); its first report may come before the sandbox sees the page, so a missing
        one is read from the page."""
        try:
            await popup.page.wait_for_url(
                HTTP_URL, wait_until="load", timeout=max(1.0, (deadline - time.monotonic()) * 1000)
            )
        except PlaywrightError:
            return popup.closed or popup.page.is_closed()
        if popup.state is None and not popup.closed:
            state = await read_state(popup, self.run.config)
            if state is not None:
                self.take_state(popup, state)
        return True

    async def until_idle(self, tab: Tab, deadline: float) -> bool:
        """Wait for ``idle(tab)``. When the router is quiet but the page has not reported for an
        action timeout, ask it directly: a page that does not answer is ``page_unresponsive``
        (a spinning script), one that does has its state taken (a report was lost)."""
        bound = action_bound(self.run.config)
        while not await self.until(lambda: self.idle(tab), min(deadline, time.monotonic() + bound)):
            if time.monotonic() >= deadline:
                return False
            if self.inflight == 0 and not tab.awaiting_commit:
                state = await read_state(tab, self.run.config)
                if state is not None:
                    self.take_state(tab, state)
        return True

    def _timed_out(self, tab: Tab, started: float, what: str) -> dict | None:
        state = tab.state or {}
        self.run.record_event(
            "settle_timeout",
            {
                "waited_s": round(time.monotonic() - started, 3),
                "waiting_for": what,
                "inflight_requests": self.inflight,
                "page_requests_pending": state.get("pending"),
                "ready_state": state.get("ready"),
            },
            session=self,
            tab=tab,
        )
        return None if tab.closed else tab.state


@dataclass(frozen=True)
class Marks:
    """A tab's activity counters just before an action (see ``Session.settle``)."""

    document: int
    nav_requests: int
    tabs: frozenset[str]
    downloads_seen: int
    navs: int
    opens: int
    downloads: int


async def open_session(run: Recorder, *, site_key: str | None, provider: str, clear_cookies: bool) -> Session:
    host = run.host
    key = site_key or f"anonymous-{secrets.token_hex(4)}"
    if clear_cookies:
        host.profiles.pop(key, None)
    profile_new = key not in host.profiles
    width, height = run.config.viewport
    browser = await host.ready_browser()
    context = await browser.new_context(
        storage_state=host.profiles.get(key),
        service_workers="block",
        accept_downloads=not run.policy.block_state_changes,  # blocked: Chromium writes no download at all
        viewport={"width": width, "height": height},
        locale="en-US",
        timezone_id="America/Chicago",
    )
    await start_playwright_trace(run, context)
    host.keep_profile(key, host.profiles.get(key) or {"cookies": [], "origins": []})
    session = Session(
        id=f"ses_{secrets.token_hex(6)}",
        site_key=site_key,
        provider=provider,
        profile_new=profile_new,
        run=run,
        context=context,
        browser=browser,
    )
    host.sessions.add(session)
    await context.add_init_script(
        INIT_SCRIPT.replace("__REPORT_KEY__", session.report_key)
        + ("window.__sandboxBlockStateChanges = true;" if run.policy.block_state_changes else "")
        + ("window.__sandboxShots = true;" if run.screenshot_dir is not None else "")
    )
    await context.route("**/*", session.route)
    await context.route_web_socket("**/*", session.refuse_websocket)
    context.on("page", lambda page: _on_new_page(session, page))
    page = await context.new_page()
    session.active_tab_id = session.tab_for_page(page).id if session.tab_for_page(page) else session.adopt_page(page).id
    return session


def _on_new_page(session: Session, page: Page) -> None:
    if session.tab_for_page(page) is not None:
        return
    session.popup_requested_at = 0.0
    opener = None
    if session.tabs and not session.opening_tab:  # opened by the page (window.open, target=_blank)
        opener = session.active_tab_id or ""
    session.adopt_page(page, opener=opener)


async def close_session(session: Session) -> None:
    if session.closed:
        return
    session.closed = True
    host = session.run.host
    key = session.site_key
    bound = session.run.config.close_timeout_s
    if session.crashed:
        return  # the context died with its browser; the profile keeps its last saved state
    # The last call's picture is taken while the profile is saved; both before the context closes.
    picture = asyncio.ensure_future(finish_screenshot(session.run))
    try:
        if key:
            host.keep_profile(key, await bounded(session.context.storage_state(), bound, "saving the profile"))
    except (PlaywrightError, PageUnresponsive) as exc:
        log.warning("could not save profile %s: %s", key, exc)
    finally:
        await picture
    await stop_playwright_trace(session.run, session.context)
    try:
        # Closing the context ends its renderers, also one stuck in a script.
        await asyncio.wait_for(session.context.close(), bound)
    except (TimeoutError, PlaywrightError) as exc:  # the browser is gone already, or hung
        log.warning("closing session %s: %r", session.id, exc)


# The page's state report (title, final state, activity counters) as it is now.
# Expressions, not functions: Playwright evaluates a function's source, then calls it (~0.5 ms more).
STATE_NOW_JS = """({...(window.__sandboxState ? window.__sandboxState()
  : {seq: 0, top: true, title: document.title, ready: document.readyState, pending: 0, navs: 0, opens: 0,
     downloads: 0, final: null}), content_type: document.contentType})"""
# The same a task turn from now: what the last input event started (timers of 0 ms, promise
# chains) has begun by then.
STATE_JS = f"new Promise((resolve) => setTimeout(() => resolve({STATE_NOW_JS}), 0))"


def action_bound(config: ServerConfig) -> float:
    return config.action_timeout_ms / 1000


async def read_state(tab: Tab, config: ServerConfig, turn: bool = True) -> dict | None:
    """The page's state report a task turn from now (``turn=False``: now); None when the
    document is being replaced."""
    try:
        return await bounded(
            tab.page.evaluate(STATE_JS if turn else STATE_NOW_JS), action_bound(config), "reading the page state"
        )
    except PlaywrightError:  # navigating (the context was destroyed) or closed
        return None


async def safe_title(page: Page, config: ServerConfig) -> str:
    """The page's title ("" while it navigates); a page that does not answer is page_unresponsive."""
    try:
        return await bounded(page.title(), action_bound(config), "reading the title")
    except PlaywrightError:
        return ""


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "browser error"
