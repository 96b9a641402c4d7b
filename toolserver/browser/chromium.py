"""Which Chromium to run, the headless flags that keep it offline and lean, and the memory its
renderers may hold.

Order: a configured path, ``SANDBOX_CHROMIUM``, a Playwright-managed Chromium if one is
installed, then Debian's ``/usr/bin/chromium``. ``playwright install`` is never used.
"""

from __future__ import annotations

import contextlib
import os
import resource
from pathlib import Path

from toolserver.errors import ChromiumUnavailable

DEBIAN_CHROMIUM = "/usr/bin/chromium"
# Debian's chromium-headless-shell: lighter a session (docs/design/scale-limits.md), chosen by path only.
DEBIAN_HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
UNSERVED_PROXY = "http://127.0.0.1:9"  # the discard port: for browsers that serve no agent
NOWHERE_TLD = "invalid"  # RFC 6761: never resolves
NOWHERE_HOST = f"gaia.sandbox.{NOWHERE_TLD}"  # where Chromium's sign-in requests are sent instead


# Chromium keeps only the last --disable-features switch, and ours comes after Playwright's: so
# ours repeats Playwright's list (chromiumSwitches.ts of the installed driver; a test checks it).
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
DISABLED_FEATURES = PLAYWRIGHT_DISABLED_FEATURES + (
    "IsolateOrigins",
    "site-per-process",
    "Translate",
    "BackForwardCache",
    # Headless Chromium 156 builds each new context's window an omnibox popup from WebUI
    # (chrome://omnibox-popup.top-chrome/), in a renderer of its own that no page ever shows:
    # a new context cost 1.5-1.8 s of CPU (most in that renderer and the browser process), 0.2-0.3 s without.
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    # Form pages would send their field signatures to content-autofill.googleapis.com (through
    # each session's backstop proxy, where they would be refused and recorded at random).
    "AutofillServerCommunication",
)


# Playwright's switches the sandbox drops (``ignore_default_args``). Without
# --disable-ipc-flooding-protection, Chromium throttles a page's navigations and history updates
# as it does for everyone (about 200 in 10 s): a page changing its URL in a loop, with 2 MB URLs,
# kept the one browser process busy and other runs' pages waited seconds for an answer.
DROPPED_PLAYWRIGHT_SWITCHES = ("--disable-ipc-flooding-protection",)


def chromium_launch_args(proxy: str = UNSERVED_PROXY, trusted_spki: str | None = None) -> list[str]:
    """Headless flags; the background-networking ones keep Chromium from dialling out, and
    ``proxy`` (the host's backstop, ``toolserver.browser.backstop``) catches anything that might
    ever escape request interception outside a context (each context has a backstop of its own).
    Browsers the sandbox does not serve agents from (a plain test browser, a benchmark's raw
    side) may keep the default, a loopback port nothing is meant to listen on. ``trusted_spki``:
    the one certificate key Chromium accepts unverified, the backstops'."""
    args = [
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-domain-reliability",
        "--no-pings",
        "--metrics-recording-only",
        f"--proxy-server={proxy}",
        # Two background requests no switch turns off (Debian's Chromium 156): the component update
        # check goes to a data: URL (fails at once), and the sign-in ListAccounts (sent for every
        # profile once its network is up) to a .invalid host that bypasses the proxy. Everything
        # else, loopback included, goes through the proxy (an IP literal), so the browser needs no
        # host name resolved: every name resolves to nothing in the browser itself, and no DNS
        # query leaves it whatever the machine's resolver (a DNS-over-HTTPS upgrade included).
        "--component-updater=url-source=data:,",
        f"--gaia-url=http://{NOWHERE_HOST}/",
        f"--proxy-bypass-list=<-loopback>;*.{NOWHERE_TLD}",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        # WebRTC sends UDP, which neither request interception nor the proxy sees: allow none. Each
        # build reads one of the two: chromium the first (Chrome's), Debian's headless shell only
        # the second (without it, it sent STUN packets). Both are needed.
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        # CPU: every session is a new context (a new renderer); on small machines the browser is
        # the bottleneck, so share renderers per site and drop features an offline sandbox never uses.
        "--disable-site-isolation-trials",
        "--process-per-site",
        "--renderer-process-limit=4",
        "--disable-features=" + ",".join(DISABLED_FEATURES),
        "--disable-extensions",
        "--disable-breakpad",
        "--mute-audio",
        # Chromium classifies the machine for on-device AI models 3 minutes after start, in a new
        # On-Device Model Service process (+46 MB, in every fresh profile): a given class skips it.
        "--optimization-guide-performance-class=2",
    ]
    if trusted_spki:  # the backstop's own certificate (toolserver.browser.backstop), and no other
        args.append(f"--ignore-certificate-errors-spki-list={trusted_spki}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.insert(0, "--no-sandbox")
    return args


def resolve_chromium(configured: str | None, playwright_default: str | None) -> str:
    """The Chromium to run. A path the user gave (``configured``, ``SANDBOX_CHROMIUM``) that does
    not exist is an error, not a reason to run another browser than the one asked for."""
    for given, said in (
        (configured, "the configured chromium"),
        (os.environ.get("SANDBOX_CHROMIUM"), "SANDBOX_CHROMIUM"),
    ):
        if given:
            if not Path(given).is_file():
                raise ChromiumUnavailable(f"{said} is {given}, which is not a file: give the path of a Chromium binary")
            return given
    for candidate in (playwright_default, DEBIAN_CHROMIUM):
        if candidate and Path(candidate).exists():
            return candidate
    raise ChromiumUnavailable(
        "No Chromium found: install Debian's package (`apt-get install chromium`, or `make setup`) "
        "or set SANDBOX_CHROMIUM to a Chromium binary. `playwright install` is not used here."
    )


def cap_renderer_memory(browser_pid: int, megabytes: int, problems: list[str] | None = None) -> list[int]:
    """Hold every renderer the browser ``browser_pid`` starts from now on to ``megabytes`` of data
    (RLIMIT_DATA, which on Linux counts a process's private writable mappings and heap, reserved
    or touched alike: a mapping past it is refused, even one never written): the limit is set on
    the browser's zygotes, which fork its renderers and whose limits they inherit (a sandboxed
    Chromium's zygote runs under one of its own: every zygote in the tree is held). Not on the
    zygote marked ``--no-zygote-sandbox``, which forks the GPU process that composites every
    session's pages. Returns the zygotes held (none where /proc or ``prlimit`` is missing); a
    zygote that could not be held (not ours to limit) is said once in ``problems``, the others held.

    The tree is read again after a reading that held a zygote (three readings at most): a child
    forked after /proc was read but before its parent was held escaped the hold; one forked after
    inherits it. (A zygote's child is a zygote by its title until it names itself a renderer.)"""
    if not hasattr(resource, "prlimit"):
        return []
    held: list[int] = []
    said: list[str] = []
    for _ in range(3):
        now = [pid for pid in _descendants(browser_pid) if pid not in held and _hold_zygote(pid, megabytes, said)]
        if not now:
            break
        held += now
    if problems is not None:
        problems += dict.fromkeys(said)  # a zygote refused at each reading is said once
    return held


def _hold_zygote(pid: int, megabytes: int, problems: list[str]) -> bool:
    """Hold ``pid`` to ``megabytes`` of data if it is a zygote that forks renderers."""
    try:
        # Chromium rewrites its children's titles into one string of space-separated switches.
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:  # ended meanwhile
        return False
    if b"--type=zygote" not in argv or b"--no-zygote-sandbox" in argv:
        return False
    try:
        resource.prlimit(pid, resource.RLIMIT_DATA, (megabytes << 20, megabytes << 20))
    except ProcessLookupError:  # ended meanwhile
        return False
    except OSError as exc:  # not ours to limit (another user's process)
        problems.append(f"zygote {pid}: {exc}")
        return False
    return True


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except OSError:  # ended meanwhile
                    continue
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found
