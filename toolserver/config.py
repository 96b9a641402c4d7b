"""Server configuration: one frozen object passed to ``Sandbox`` / the transports, holding
every limit and every wait the server uses (no timing literal lives elsewhere)."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal

from toolserver.faults import FaultPlan


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"  # the address sandbox serve listens on (a non-loopback one needs a token)
    port: int = 8765  # the port sandbox serve listens on
    mirror_roots: tuple[Path, ...] = ()  # mirror store folders, in order (the application passes its own)
    trace_dir: Path | None = None  # None: traces kept in memory only (GET /runs/{id}/trace)
    chromium: str | None = None  # None: SANDBOX_CHROMIUM, Playwright's own, then Debian's
    fallback_provider: str | None = None  # e.g. "browserbase": emulate the service's fallback
    approvals: bool = False  # allow browser_close(close_all=true)
    policy: Literal["enforce", "observe"] = "enforce"  # refuse, or only record, calls outside the allow-list
    block_state_changes: bool = False  # prevent state-changing actions instead of recording them
    require_pack: bool = False  # refuse runs without a pack (they would have no allow-list)
    dialogs: Literal["dismiss", "accept"] = "dismiss"  # what happens to a JavaScript dialog
    viewport: tuple[int, int] = (1280, 720)  # every page's viewport, width and height in CSS pixels
    screenshot_dir: Path | None = None  # a viewport PNG after each call, in <dir>/<run id>/<seq>.png (None: off)
    screenshot_timeout_ms: int = 2000  # give up on one screenshot (recorded as ``screenshot_failed``)
    playwright_trace_dir: Path | None = None  # a Playwright trace per session in <dir>/<run id>/ (None: off)
    action_timeout_ms: int = 5000  # Playwright's bound on one action (click, fill, evaluate)
    navigation_timeout_ms: int = 15000  # Playwright's bound on one navigation
    # Settling: after an action, wait until the page has finished what the action started.
    # Every wait is woken by events (router, navigation, new page, the page's own reports), never a poll.
    settle_timeout_s: float = 5.0  # give up waiting (recorded as a ``settle_timeout`` event)
    popup_grace_s: float = 1.0  # a popup or download the page started shows up within this
    # Hardening: nothing hangs, nothing grows without bound.
    call_timeout_s: float = 30.0  # the dispatcher's bound on one whole tool call (page_unresponsive)
    responsive_probe_s: float = 1.0  # after a Playwright timeout: does the page still answer at all?
    close_timeout_s: float = 3.0  # each: saving a profile, closing a context, disposing of it, awaiting a call
    shutdown_timeout_s: float = 8.0  # closing the browser and the driver at shutdown
    request_body_timeout_s: float = 10.0  # an HTTP request body must arrive within this (else 408)
    max_body_bytes: int = 1024 * 1024  # HTTP request bodies larger than this are refused (413)
    max_json_depth: int = 64  # deeper JSON in a request body (400) or an MCP message, stdio too (-32600), is refused
    max_runs: int = 64  # live runs at once; POST /runs beyond it is refused (429)
    max_ended_runs: int = 50  # ended runs kept in memory (their traces stay on disk) ...
    ended_run_ttl_s: float = 600.0  # ... and for at most this long after they end
    max_profiles: int = 500  # site keys' profiles kept (none without a key); the least recently used go first
    max_profile_bytes: int = 256 * 1024 * 1024  # ... and their keys, cookies and storage, as JSON (profiles_evicted)
    max_download_bytes: int = 20 * 1024 * 1024  # kept per run, with those being written; beyond: download_discarded
    download_check_s: float = 0.05  # how often the bytes of downloads being written are held to that cap
    max_downloads: int = 100  # downloads a run's pages may begin; each later one: cancelled, download_discarded
    # Memory one renderer process may hold (its data segment, RLIMIT_DATA; a session's pages of one
    # site share one): a page beyond it crashes its renderer (page_crashed), no other session's.
    # Chromium gives its renderers 16 GB when it runs sandboxed, and nothing as root (--no-sandbox).
    # 0: not set.
    max_renderer_memory_mb: int = 2048
    # The local attack surface: which Host names may reach the server, and an optional bearer token.
    # Host names beyond loopback ones (localhost, 127.0.0.0/8, ::1); "*" allows any. A web page's
    # Origin is allowed when it is loopback or one of these names ("*" allows no page).
    allowed_hosts: tuple[str, ...] = ()
    token: str | None = None  # if set, every request needs "Authorization: Bearer <token>" (not empty)
    # MCP over streamable HTTP.
    mcp_disconnect_poll_s: float = 0.25  # how often an open MCP event stream checks that its client is still there
    # An MCP HTTP session with no request in flight (an open event stream counts) for this long
    # ends, and so does its run (end reason mcp_idle_timeout).
    mcp_session_idle_s: float = 1800.0
    # A named run (POST /runs {"name"}, /mcp?name=, sandbox mcp --attach) with no tool call for this
    # long ends (end reason idle_timeout): it belongs to no connection, so nothing else ends it.
    named_run_idle_s: float = 300.0
    # Runs no connection ends, and what one run may hold: a client that abandons its
    # runs, or opens sessions without end, cannot fill the server for good.
    http_run_idle_s: float = 1800.0  # a POST /runs run (no name) with no tool call for this long ends (idle_timeout)
    max_sessions_per_run: int = 8  # open sessions (browser contexts) per run; another start: too_many_sessions
    # The machine's real limits (toolserver.capacity): at one, a new session is refused with
    # server_at_capacity and a new run with 429 server_at_capacity, naming the limit and its figures.
    max_open_sessions: int = 512  # sessions open on the server's browser, all runs together
    # ... and per CPU core (0: not checked): each open session's page competes for the cores. On 2
    # cores, 128 agents thinking 1 s a call at once had calls time out; 32 a core, 2 of 256
    # attempts; 24 a core, none (docs/benchmarks, the scale curve).
    max_sessions_per_core: int = 24
    min_free_memory_mb: int = 512  # memory kept free: MemAvailable, or a memory cgroup's room if less (0: not checked)
    min_free_fds: int = 256  # file descriptors kept free below RLIMIT_NOFILE, or 10 % of it if more (0: not checked)
    # processes and threads that may still start, under the pids cgroup, the kernel's limits and
    # RLIMIT_NPROC (0: not checked); an idle server has about 60, each session about 13 more
    min_free_tasks: int = 128
    # A page that floods refused requests (toolserver.floods): per window between call lines, a
    # blocked_request line for the first this-many refusals of one kind (reason, type, host) ...
    max_identical_refusals: int = 20
    # ... and for at most this many in all; the rest are counted (events_suppressed).
    max_refusal_lines: int = 200
    # A page that floods navigations (history.pushState in a loop), refused ones (a frame sent off
    # the list in a loop), dialogs (alert in a loop) or popups (each closing its opener): per window
    # between call lines, at most this many navigation, policy_violation (of each origin: top frame,
    # redirect, frame), dialog, tab_opened and tab_closed (a page's window.close()) lines each; the
    # rest are counted (events_suppressed). State changes, and the tabs the sandbox closes, are always written.
    max_page_event_lines: int = 50
    # A tab whose pages make more requests than this in one FLOOD_WINDOW_S window (2 s) is closed
    # (a tab_closed event, reason request_flood): each request crosses the one driver and event
    # loop every run shares, and about 1,000 a second stalled the other runs. A heavy page's load
    # makes a few hundred.
    max_page_requests: int = 1000
    # A tab served more body bytes than this in one FLOOD_WINDOW_S window (2 s) is closed (a
    # tab_closed event, reason byte_flood): each body crosses the driver base64-encoded, on the
    # event loop every run shares. The bundled mirrors' biggest site is 124 KB in all.
    max_page_bytes: int = 64 << 20
    # A tab whose pages open more JavaScript dialogs than this in one such window is closed (a
    # tab_closed event, reason dialog_flood): each dialog is a round trip on the one driver, even
    # with no call running, and alert() in a loop would make one for as long as the page is open.
    max_page_dialogs: int = 100
    # A tab whose pages' workers write more console messages than this in one such window is
    # closed (a tab_closed event, reason console_flood): a page's own are dropped in the page, but
    # a worker's cross the driver, and a worker logging in a loop made another run's session
    # start time out.
    max_page_console_messages: int = 200
    # Text a page makes is cut beyond this many characters in results and trace lines (a title, a
    # URL, a dialog's message, an error's message quoting an argument; a snapshot is not cut; the
    # trace keeps a call's arguments whole), and a navigation the page starts to a longer
    # URL is refused (a blocked_request, reason url_too_long): most web servers refuse URLs over 8 KB.
    max_page_text_chars: int = 8192
    # Tabs one session may hold: a popup over the cap is closed at once (a blocked_request with
    # reason too_many_tabs); browser_open_tab over it is refused.
    max_tabs_per_session: int = 20
    other_tab_title_s: float = 1.0  # a tab list gives up on another tab's title after this long (title null)

    # Faults every run of the server is given (--faults, toolserver.faults), or none.
    faults: FaultPlan | None = None

    def __post_init__(self) -> None:
        # Every wait and bound: NaN ends a wait at once (asyncio.timeout(nan)), inf never, 0 polls busily.
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name.endswith("_s") and not (number(value) and math.isfinite(value) and value > 0):
                raise ValueError(f"{field.name} must be a positive number of seconds, not {value!r}")
            if field.name.endswith("_ms") and not (whole(value) and value >= 1):
                raise ValueError(f"{field.name} must be a whole number of milliseconds of at least 1, not {value!r}")
            # 0 would refuse every run, session, tab or body (aiohttp reads a max_body_bytes of 0 as no bound)
            if field.name.startswith("max_") and field.name not in MAY_BE_ZERO and not (whole(value) and value >= 1):
                raise ValueError(f"{field.name} must be a whole number of at least 1, not {value!r}")
        for name in (*MAY_BE_ZERO, "min_free_memory_mb", "min_free_fds", "min_free_tasks"):
            reserve = getattr(self, name)
            if not (whole(reserve) and reserve >= 0):
                raise ValueError(
                    f"{name} must be a whole number >= 0 (0: {MAY_BE_ZERO.get(name, 'not checked')}), not {reserve!r}"
                )
        if len(self.viewport) != 2 or not all(whole(side) and side >= 1 for side in self.viewport):
            raise ValueError(f"viewport must be two whole numbers of CSS pixels of at least 1, not {self.viewport!r}")
        missing = [str(root) for root in self.mirror_roots if not Path(root).is_dir()]
        if missing:  # else every page of it is refused as not mirrored, and an agent fails for no reason it can see
            raise ValueError(f"no such mirror folder: {', '.join(missing)}")
        if self.token is not None and (not self.token or self.token != self.token.strip()):
            raise ValueError(  # no client could send it: every request would be refused
                "the bearer token is empty or begins or ends with white space, which an HTTP header "
                "cannot carry: give another with --token or SANDBOX_TOKEN"
            )
        if self.token is None and not is_loopback(self.host):
            raise ValueError(
                f"binding to {self.host!r} (not a loopback address) needs a bearer token: "
                "pass --token or set SANDBOX_TOKEN (clients then send 'Authorization: Bearer <token>')"
            )


# Limits whose 0 has a meaning of its own (said in the error for a negative one).
MAY_BE_ZERO = {
    "max_downloads": "none kept",
    "max_download_bytes": "none kept",
    "max_ended_runs": "none kept",
    "max_profiles": "none kept",
    "max_profile_bytes": "none kept",
    "max_identical_refusals": "none written",
    "max_refusal_lines": "none written",
    "max_page_event_lines": "none written",
    "max_sessions_per_core": "not checked",
    "max_renderer_memory_mb": "not checked",
}


def whole(value: object) -> bool:
    """A whole number, not a bool (``True`` is an ``int`` to Python, and was taken as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def number(value: object) -> bool:
    """A number, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_loopback(host: str) -> bool:
    """localhost, *.localhost, 127.0.0.0/8 and ::1 (a Host header's name, without its port)."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
