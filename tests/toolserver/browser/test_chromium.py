"""Chromium's flags: the features Playwright switches off stay off with ours added (Chromium keeps
only the last --disable-features switch, and ours comes after Playwright's), and the Playwright
switches the sandbox drops are not there."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from playwright._impl._driver import compute_driver_executable

from tests.support.calls import start
from tests.support.processes import descendant_argvs
from toolserver.browser.chromium import DISABLED_FEATURES, DROPPED_PLAYWRIGHT_SWITCHES, cap_renderer_memory


def playwright_disabled_features() -> set[str]:
    """The list in the installed driver's chromiumSwitches (bundled into coreBundle.js)."""
    package = Path(compute_driver_executable()[1]).parent
    bundle = (package / "lib" / "coreBundle.js").read_text()
    body = re.search(r"disabledFeatures = \[(.*?)\]\.filter", bundle, re.S)
    assert body, "chromiumSwitches' disabledFeatures list not found in the Playwright driver"
    code = "\n".join(line.split("//")[0] for line in body.group(1).splitlines())
    return set(re.findall(r'"([^"]+)"', code))


def test_our_list_repeats_every_feature_the_installed_playwright_disables():
    theirs = playwright_disabled_features()
    assert {"PaintHolding", "HttpsUpgrades", "ThirdPartyStoragePartitioning"} <= theirs  # the parse works
    assert theirs - set(DISABLED_FEATURES) == set()


async def test_a_running_renderer_has_playwrights_and_our_features_disabled(run):
    await start(run)
    ours = [
        pid
        for pid, argv in descendant_argvs(os.getpid()).items()  # the sandbox's browser, not a test's plain one
        if "--type" not in " ".join(argv) and any(arg.startswith("--proxy-bypass-list=<-loopback>") for arg in argv)
    ]
    assert ours, "the sandbox's browser is not a process under this test process"
    for pid in ours:  # Chromium throttles a page's navigations, as for everyone (Playwright turns that off)
        argv = descendant_argvs(os.getpid())[pid]
        assert "--no-first-run" in argv and not set(DROPPED_PLAYWRIGHT_SWITCHES) & set(argv), argv
    renderers = [argv for pid in ours for argv in descendant_argvs(pid).values() if "--type=renderer" in argv]
    assert renderers, "no renderer process found under the sandbox's browser"
    for argv in renderers:
        disabled = [arg.split("=", 1)[1].split(",") for arg in argv if arg.startswith("--disable-features=")]
        assert len(disabled) == 1 and set(DISABLED_FEATURES) <= set(disabled[0]), disabled


async def test_a_session_gets_no_browser_ui_page_of_its_own(run):
    """Chromium builds each new context's headless window an omnibox popup from WebUI unless its
    features are off: a renderer no page shows, which costs more CPU than the session's pages."""
    await start(run)
    cdp = await run.host.browser.new_browser_cdp_session()
    try:
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    finally:
        await cdp.detach()
    ui = [target["url"] for target in targets if target["type"] == "browser_ui" or "top-chrome" in target["url"]]
    assert [target for target in targets if target["type"] == "page"], targets  # the listing works
    assert ui == []


# A stand-in for a browser whose zygote forks: a process (the "browser") runs one titled as a
# zygote, which forks a child a millisecond for 0.6 s, each keeping its title, then says so.
BROWSER = "import subprocess, sys; subprocess.run([sys.executable, '-c', sys.argv[1], '--type=zygote'])"
ZYGOTE = (
    "import os, sys, time\n"
    "end = time.monotonic() + 0.6\n"
    "while time.monotonic() < end:\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(20); os._exit(0)\n"
    "    time.sleep(0.001)\n"
    "print('done', flush=True); time.sleep(20)\n"
)


def data_limit(pid: int) -> str:
    line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if x.startswith("Max data size"))
    return line.split()[3]


def test_a_zygote_forked_while_the_tree_is_read_is_held_too():
    """The zygotes were held in one reading of /proc: a child a zygote forked after /proc was read
    but before its parent was held kept no limit (in one full run, one of the browser's zygotes
    had none). The tree is read again after a reading that held one."""
    browser = subprocess.Popen(
        [sys.executable, "-c", BROWSER, ZYGOTE],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while len(descendant_argvs(browser.pid)) < 20 and time.monotonic() < deadline:  # forking
            time.sleep(0.005)
        held = cap_renderer_memory(browser.pid, 4096)
        assert browser.stdout is not None and browser.stdout.readline() == "done\n"  # no more forks
        zygotes = [pid for pid, argv in descendant_argvs(browser.pid).items() if "--type=zygote" in argv]
        assert len(zygotes) > 100 and held, (len(zygotes), held)
        unheld = [pid for pid in zygotes if data_limit(pid) != str(4096 << 20)]
        assert not unheld, f"{len(unheld)} of {len(zygotes)} not held"
    finally:
        for pid in [*descendant_argvs(browser.pid), browser.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        browser.wait()
