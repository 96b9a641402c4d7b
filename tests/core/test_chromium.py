"""Chromium's flags: the features Playwright switches off stay off with ours added (Chromium keeps
only the last --disable-features switch, and ours comes after Playwright's)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright._impl._driver import compute_driver_executable

from sandbox.core.chromium import DISABLED_FEATURES
from tests.conftest import start


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
    assert {"PaintHolding", "HttpsUpgrades", "ThirdPartyStoragePartitioning"} <= theirs   # the parse works
    assert theirs - set(DISABLED_FEATURES) == set()


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


async def test_a_running_renderer_has_playwrights_and_our_features_disabled(run):
    await start(run)
    renderers = []
    for pid in descendants(os.getpid()):
        try:
            # Chromium rewrites its children's titles: one string of space-separated switches
            argv = re.split(r"[\0 ]", Path(f"/proc/{pid}/cmdline").read_bytes().decode())
        except OSError:
            continue
        if "--type=renderer" in argv:
            renderers.append(argv)
    assert renderers, "no renderer process found under this test process"
    for argv in renderers:
        disabled = [arg.split("=", 1)[1].split(",") for arg in argv if arg.startswith("--disable-features=")]
        assert len(disabled) == 1 and set(DISABLED_FEATURES) <= set(disabled[0]), disabled
