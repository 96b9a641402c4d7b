"""What the browser writes to disk (its profile folder, the downloads it keeps) does not outlive
it: a driver that dies takes its Chromium with it, and what they had written is removed when a
new one starts, as it is when the server stops."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest_asyncio
from playwright.async_api import Download

from tests.support.calls import ref_of
from tests.support.hostile import build_hostile_mirror, hostile_run, start_hostile
from tests.support.processes import drivers, kill_new_driver


@pytest_asyncio.fixture(scope="module")
def hostile_root(tmp_path_factory):
    return build_hostile_mirror(tmp_path_factory.mktemp("hostile"))


def profile_folder(browser: int) -> Path:
    """The profile folder Playwright made for the browser process ``browser`` (its ``--user-data-dir``)."""
    argv = Path(f"/proc/{browser}/cmdline").read_bytes().decode().split("\0")
    return Path(next(a for a in argv if a.startswith("--user-data-dir=")).split("=", 1)[1])


async def test_a_dead_drivers_downloads_and_profile_are_removed(own_sandbox, hostile_root):
    """They stayed in /tmp for good: the downloads a run had kept (up to max_download_bytes each)
    and the browser's profile folder, about 5 MB, for every driver that died."""
    before = drivers()
    async with own_sandbox(own_browser=True) as own:
        run = hostile_run(own, hostile_root, "/downloads", mode="observe")
        await start_hostile(run, "/downloads")
        (browser,) = own.host.browser_pids()
        profile = profile_folder(browser)
        page = run.current_session().active_tab.page
        downloaded: asyncio.Future[Download] = asyncio.get_running_loop().create_future()
        page.once("download", lambda download: downloaded.set_result(download))
        snapshot = (await run.call("browser_snapshot", {}))["result"]["snapshot"]
        assert (await run.call("browser_click", {"ref": ref_of(snapshot, "blob 0")}))["ok"]
        kept = Path(await (await downloaded).path())
        assert kept.is_file() and profile.is_dir()
        await kill_new_driver(own.host, before)
        again = hostile_run(own, hostile_root, "/calm")
        await start_hostile(again, "/calm")  # a new driver and browser
        await again.close()
        await run.close()
        assert not kept.exists() and not profile.exists(), (kept, profile)
