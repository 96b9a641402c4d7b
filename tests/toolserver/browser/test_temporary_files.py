"""What the browser writes to disk (its profile folder, the downloads it keeps) does not outlive
it: a driver that dies takes its Chromium with it, and what they had written is removed when a
new one starts, as it is when the server stops; what a killed server left is removed by the next."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
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


# A process that makes a driver's folder (as the server does for each driver), starts a driver
# without one (whose wrapper gets a folder of its own), and waits to be killed.
OWNER = """
import asyncio, time
from toolserver.browser.driver import new_temp_dir, start_playwright
new_temp_dir()
asyncio.run(start_playwright())
print("started", flush=True)
time.sleep(120)
"""


def in_temp(temp: Path, code: str) -> subprocess.Popen:
    """A Python process running ``code`` with ``temp`` as its temporary folder."""
    return subprocess.Popen(
        [sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.PIPE, text=True
    )


def next_server(temp: Path) -> None:
    """A process that makes its first driver's folder in ``temp`` (and removes it at exit)."""
    code = "from toolserver.browser.driver import new_temp_dir; new_temp_dir()"
    subprocess.run([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(temp)}, check=True, timeout=30)


def owner(temp: Path) -> tuple[subprocess.Popen, set[Path]]:
    """A process running ``OWNER`` in ``temp``, and the folders it made there."""
    before = set(temp.iterdir())
    child = in_temp(temp, OWNER)
    assert child.stdout is not None and child.stdout.readline() == "started\n"
    made = set(temp.iterdir()) - before
    assert sorted(folder.name.split("-")[1] for folder in made) == ["browser", "driver"], made
    return child, made


def test_a_killed_servers_folders_are_removed_by_the_next_and_a_living_ones_kept(tmp_path):
    """A server killed (SIGKILL, out of memory) left its drivers' folders in /tmp for good: the
    browser's profile and the downloads kept, and thousands of wrapper folders were seen."""
    living, kept = owner(tmp_path)
    try:
        dead, left = owner(tmp_path)
        dead.kill()
        dead.communicate(timeout=30)
        assert all(folder.is_dir() for folder in left), left
        next_server(tmp_path)
        assert not any(folder.exists() for folder in left), left
        assert all(folder.is_dir() for folder in kept), kept
    finally:
        living.kill()
        living.communicate(timeout=30)


def test_a_folder_without_a_lock_is_removed_once_untouched_for_a_day(tmp_path):
    """Older versions' folders have no lock file: their owner cannot be told, so they are removed
    only once nothing in them changed for a day (a live one's browser writes in its profile)."""
    day_ago = time.time() - 24 * 3600 - 60
    names = ("sandbox-driver-old", "sandbox-browser-old", "sandbox-browser-new", "other-old")
    folders = {name: tmp_path / name for name in names}
    for folder in folders.values():
        (folder / "profile").mkdir(parents=True)
        (folder / "profile" / "Preferences").write_text("{}")
        for path in (folder / "profile" / "Preferences", folder / "profile", folder):
            os.utime(path, (day_ago, day_ago))
    os.utime(folders["sandbox-browser-new"] / "profile" / "Preferences")  # written just now
    next_server(tmp_path)
    assert {name for name, folder in folders.items() if folder.exists()} == {"sandbox-browser-new", "other-old"}


def test_a_folder_its_server_gave_up_on_is_removed_by_the_next(tmp_path):
    """The host forgets a dead driver's folder once it removed it, or gave up (a child of the
    killed browser writing on): its lock goes with it, so the next process removes what was left."""
    child = in_temp(
        tmp_path,
        "import time; from toolserver.browser.driver import new_temp_dir, forget_temp_dir\n"
        "folder = new_temp_dir(); forget_temp_dir(folder); print(folder, flush=True); time.sleep(120)",
    )
    try:
        assert child.stdout is not None
        left = Path(child.stdout.readline().strip())
        assert left.is_dir()
        next_server(tmp_path)
        assert not left.exists()
    finally:
        child.kill()
        child.communicate(timeout=30)
