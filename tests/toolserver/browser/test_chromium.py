"""Chromium's flags: the features Playwright switches off stay off with ours added (Chromium keeps
only the last --disable-features switch, and ours comes after Playwright's), and the Playwright
switches the sandbox drops are not there."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright._impl._driver import compute_driver_executable

from tests.support.calls import start
from tests.support.processes import descendant_argvs
from toolserver.browser.chromium import DISABLED_FEATURES, DROPPED_PLAYWRIGHT_SWITCHES


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
