"""Chromium's flags: the features Playwright switches off stay off with ours added (Chromium keeps
only the last --disable-features switch, and ours comes after Playwright's), and the Playwright
switches the sandbox drops are not there."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright._impl._driver import compute_driver_executable

from tests.support.calls import start
from tests.support.nobody import NOBODY
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


# A stand-in for a browser with two zygotes, one of them nobody's (titled by the shell's $0).
TWO_ZYGOTES = (
    "import subprocess, sys\n"
    "zygote = ['sh', '-c', 'sleep 20; true', '--type=zygote']\n"
    "nobodys = subprocess.Popen(zygote, user=65534, group=65534, extra_groups=[])\n"
    "roots = subprocess.Popen(zygote)\n"
    "print(nobodys.pid, roots.pid, flush=True)\n"
    "nobodys.wait(); roots.wait()\n"
)


def cap_as_nobody(browser: int) -> tuple[list[int], list[str]]:
    """``cap_renderer_memory`` called by a forked child that became nobody (real user too: prlimit
    checks it), whose modules are already imported (nobody may not read the Python install)."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        try:
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            problems: list[str] = []
            held = cap_renderer_memory(browser, 4096, problems)
            os.write(writing, json.dumps([held, problems]).encode())
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as said:
        held, problems = json.loads(said.read())
    os.waitpid(child, 0)
    return held, problems


@pytest.mark.skipif(os.geteuid() != 0, reason="starting another user's process takes root")
def test_a_zygote_not_ours_to_hold_is_said_once():
    """A zygote that could not be held was said again at each reading of the tree after the first
    (the tree is read again after a reading that held another zygote)."""
    browser = subprocess.Popen([sys.executable, "-c", TWO_ZYGOTES], stdout=subprocess.PIPE, text=True)
    try:
        assert browser.stdout is not None
        nobodys, roots = map(int, browser.stdout.readline().split())
        held, problems = cap_as_nobody(browser.pid)
        assert held == [nobodys], held  # it can hold its own
        assert problems == [f"zygote {roots}: [Errno 1] Operation not permitted"], problems
        assert data_limit(nobodys) == str(4096 << 20) and data_limit(roots) == "unlimited"
    finally:
        for pid in [*descendant_argvs(browser.pid), browser.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        browser.wait()
