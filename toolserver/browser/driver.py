"""Playwright's driver: the Node process between the server and Chromium, started lean, and with
its temporary files (and those of the Chromium it launches: the profile folder, the downloads)
in a folder the host owns, which it removes when that driver is gone.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shlex
import weakref
from pathlib import Path

from playwright.async_api import Playwright, async_playwright

from toolserver.browser.leftovers import make_owned_dir, release

# Playwright's driver is a Node process that lives as long as the server. With V8's defaults its
# heap grows by tens of MB between major collections (the soak saw its RSS swing 135-185 MB);
# --optimize-for-size keeps it near its live size. Node takes that flag only on its command line,
# not in NODE_OPTIONS, so the driver starts through a two-line wrapper around Playwright's node.
DRIVER_NODE_FLAGS = ("--optimize-for-size",)

# While a driver starts, the environment names this module's wrapper (in that driver's temporary
# folder, removed with it): one start at a time sets and restores it, and the user's own Node is
# read under that lock, never one of the wrappers written here.
_STARTING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
_WRAPPERS: set[str] = set()


async def start_playwright(temp_dir: Path | None = None) -> Playwright:
    """Playwright, its driver started with ``DRIVER_NODE_FLAGS`` (unless the user points
    PLAYWRIGHT_NODEJS_PATH at a Node of their own, which is then used as it is, without them).
    With ``temp_dir``, the driver and the Chromium it launches keep their temporary files there
    (TMPDIR): when the driver is killed, nothing else would remove them."""
    async with _STARTING.setdefault(asyncio.get_running_loop(), asyncio.Lock()):
        own = os.environ.get("PLAYWRIGHT_NODEJS_PATH")
        if own in _WRAPPERS:  # left by a start this process did not finish: not the user's
            own = None
        wrapper = _driver_wrapper(own, temp_dir)
        if wrapper is None:
            return await async_playwright().start()
        _WRAPPERS.add(str(wrapper))
        os.environ["PLAYWRIGHT_NODEJS_PATH"] = str(wrapper)  # read when the driver is spawned
        try:
            return await async_playwright().start()
        finally:
            if own is None:
                os.environ.pop("PLAYWRIGHT_NODEJS_PATH", None)
            else:
                os.environ["PLAYWRIGHT_NODEJS_PATH"] = own


def new_temp_dir() -> Path:
    """A folder for one driver's temporary files (removed at exit, if not before by
    ``forget_temp_dir()``'s caller). It is locked as this process's while it lives: if the process
    is killed, the next process's first folder removes it (``leftovers``)."""
    return make_owned_dir("sandbox-browser-")


def forget_temp_dir(folder: Path) -> None:
    """``folder`` is removed (or about to be): not left for the exit hook."""
    release(folder)


def _driver_wrapper(own: str | None, temp_dir: Path | None) -> Path | None:
    """A script that starts the driver's Node (the user's, or Playwright's with our flags) with
    TMPDIR ``temp_dir``; it lives in ``temp_dir``, or without one in a folder made once."""
    if os.name != "posix":
        return None
    flags: tuple[str, ...] = ()
    if own is not None:
        if temp_dir is None:
            return None  # the user's Node, as it is
        node = own
    else:
        import playwright

        path = Path(playwright.__file__).parent / "driver" / "node"
        if not path.is_file():
            return None
        node, flags = str(path), DRIVER_NODE_FLAGS
    script = (temp_dir if temp_dir is not None else _wrapper_folder()) / "node"
    tmp = f"TMPDIR={shlex.quote(str(temp_dir))}\nexport TMPDIR\n" if temp_dir is not None else ""
    script.write_text(f'#!/bin/sh\n{tmp}exec {shlex.quote(node)} {" ".join(flags)} "$@"\n')
    script.chmod(0o700)
    return script


@functools.cache
def _wrapper_folder() -> Path:
    """Where the wrapper of a driver without a temporary folder lives (``start_playwright()``)."""
    return make_owned_dir("sandbox-driver-")  # removed at exit


# The programs Chromium starts to hand a URL to the desktop: a page's mailto: link made it run
# `xdg-settings` and then `xdg-email` with the page's URL (Debian's chromium 156, headless), which
# would open the user's mail program. The browser finds these in PATH, first in a folder of stubs
# that do nothing (they fail), so no page starts a program of the machine's.
DESKTOP_LAUNCHERS = (
    "xdg-open", "xdg-email", "xdg-settings", "xdg-mime", "gio", "gvfs-open", "gnome-open", "kde-open",
    "kde-open5", "kfmclient", "exo-open", "x-www-browser", "www-browser", "sensible-browser",
)  # fmt: skip


def browser_env(temp_dir: Path | None = None) -> dict[str, str | float | bool] | None:
    """The browser's environment: this process's, with ``DESKTOP_LAUNCHERS`` stubbed first in PATH,
    and with ``temp_dir`` its TMPDIR (None on Windows: the environment as it is). Playwright gives
    the browser this environment, not its driver's: without ``temp_dir``, Chromium writes its
    temporary files (a 200 MB blob a page downloads, whole) in the system's, where a killed browser
    leaves them."""
    if os.name != "posix":
        return None
    env: dict[str, str | float | bool] = {**os.environ}
    env["PATH"] = os.pathsep.join((str(_launcher_stubs()), os.environ.get("PATH", os.defpath)))
    if temp_dir is not None:
        env["TMPDIR"] = str(temp_dir)
    return env


@functools.cache
def _launcher_stubs() -> Path:
    folder = make_owned_dir("sandbox-driver-")  # removed at exit
    for name in DESKTOP_LAUNCHERS:
        stub = folder / name
        stub.write_text("#!/bin/sh\n# the sandbox starts no desktop program for a page\nexit 1\n")
        stub.chmod(0o755)
    return folder
