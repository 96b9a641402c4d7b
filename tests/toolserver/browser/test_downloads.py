"""What a page's downloads may write: within max_download_bytes while they are written, not only
once they have finished, no more than max_downloads of them, and nothing after their session has
closed or their browser has crashed (the trace saying which were cut off, each once)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
import pytest_asyncio

from tests.support.hostile import HOSTILE, build_hostile_mirror, hostile_run, start_hostile
from toolserver.api import Sandbox
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.faults import parse_faults

CAP = 8 << 20
BLOB = 200 << 20  # each download of /download-flood


@pytest_asyncio.fixture(scope="module")
def hostile_root(tmp_path_factory):
    return build_hostile_mirror(tmp_path_factory.mktemp("hostile"))


def download_bytes(own: Sandbox) -> int:
    """Bytes of downloads on disk for ``own``'s browser, finished or still being written."""
    assert own.host.temp_dir is not None
    total = 0
    for file in Path(own.host.temp_dir).glob("playwright-artifacts-*/*"):
        try:
            total += file.stat().st_size
        except OSError:  # deleted meanwhile
            continue
    return total


async def most_bytes(own: Sandbox, seconds: float, until=lambda: False) -> int:
    """The most download bytes seen on disk within ``seconds`` (or until ``until()``), looked at
    every 20 ms."""
    most = 0
    for _ in range(int(seconds / 0.02)):
        most = max(most, download_bytes(own))
        if until():
            break
        await asyncio.sleep(0.02)
    return most


def discarded(run) -> list[dict]:
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == "download_discarded"]


def began(run) -> list[dict]:
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == "download"]


async def test_downloads_being_written_are_held_to_the_cap(own_sandbox, hostile_root):
    """The cap was checked when a download had finished: a page downloading a 200 MB blob every
    50 ms had 1.3 GB on disk after 3 s, 2.3 GB after 8 s, and none had finished."""
    # what it leaves stays its own; the count (max_downloads) never binds here
    async with own_sandbox(own_browser=True, max_download_bytes=CAP, max_downloads=10_000) as own:
        run = hostile_run(own, hostile_root, "/download-flood", mode="observe")
        await start_hostile(run, "/download-flood")
        most = await most_bytes(own, 15.0, until=lambda: len(discarded(run)) >= 3)
        most = max(most, await most_bytes(own, 6.0))  # about 120 downloads more begin
        await run.close()
    # Past the cap, only what Chromium writes before Playwright reports a download and within one
    # check (download_check_s, 50 ms) is on disk for a moment: about one 200 MB blob (252 MB was
    # the most seen), never two on top of the cap; without the watch, 1.3 GB after 3 s.
    assert most < CAP + 2 * BLOB, most >> 20
    dropped = discarded(run)
    assert any(d["in_flight"] for d in dropped) and {d["max_download_bytes"] for d in dropped} == {CAP}, dropped[:3]


def download_files(own: Sandbox) -> set[str]:
    """Chromium's download ids of the files on disk for ``own``'s browser (finished or not)."""
    assert own.host.temp_dir is not None
    return {file.name.split(".")[0] for file in Path(own.host.temp_dir).glob("playwright-artifacts-*/*")}


async def test_a_closed_sessions_downloads_being_written_are_cancelled_and_removed(own_sandbox, hostile_root):
    """Closing a context neither cancels its downloads nor removes them: they went on being
    written after their run had ended (a page's flood left 7.7 GB on disk 3 s after its run
    ended). Downloads the page asked for that Chromium begins only after the context has gone are
    beyond reach (the security page's known gaps): this test looks at those being written."""
    async with own_sandbox(own_browser=True, max_download_bytes=1 << 30) as own:  # room for many: none cancelled
        run = hostile_run(own, hostile_root, "/download-flood", mode="observe")
        await start_hostile(run, "/download-flood")
        await most_bytes(own, 15.0, until=lambda: len(download_files(own)) >= 3)
        writing = download_files(own)
        loop, lost = asyncio.get_running_loop(), []
        loop.set_exception_handler(lambda _loop, context: lost.append(context))
        try:
            await run.close()
            await asyncio.sleep(0.3)
            for _ in range(100):  # a file Chromium still held at the close goes a moment later (1 run in 8)
                if not writing & download_files(own):
                    break
                await asyncio.sleep(0.02)
            left = writing & download_files(own)
            pending = [t for t in asyncio.all_tasks() if not t.done() and "downloads.py" in repr(t.get_coro())]
        finally:
            loop.set_exception_handler(None)
    lines = [json.loads(line) for line in run.trace.text().splitlines()]
    kinds = Counter(line.get("kind") or line.get("type") for line in lines)  # a browser_crashed, a page_crashed?
    assert writing and not left, (len(writing), len(left), kinds)
    assert not pending and not lost, (pending[:3], lost[:3])  # the session's work on them ended with it
    # The trace says they were cut off (it did not: the close was recorded, they were not), each once,
    # before the run's end line.
    cut = [d for d in discarded(run) if d.get("reason") == "session_closed"]
    assert cut and all(d["in_flight"] for d in cut), discarded(run)[:3]
    # Past max_page_event_lines (50) in a window, begun downloads are counted, not written: on a
    # quick machine more than 50 began before the close (61 were cut off, against 50 lines).
    counted = sum(e.data["count"] for e in parse_trace(run.trace.text()).events if e.kind == "events_suppressed"
                  and e.data["kind"] == "download")  # fmt: skip
    assert len(discarded(run)) <= len(began(run)) + counted and lines[-1].get("type") == "run_end", (
        len(discarded(run)),
        len(began(run)),
        counted,
        lines[-1],
    )


COUNT = 5  # max_downloads in the test below


async def test_downloads_beyond_the_runs_count_are_cancelled_and_removed(own_sandbox, hostile_root):
    """max_download_bytes bounds bytes, not downloads: a page downloading an empty blob every
    20 ms made a file, a download event and a state change for each, without end."""
    async with own_sandbox(own_browser=True, max_downloads=COUNT) as own:
        run = hostile_run(own, hostile_root, "/download-flood", mode="observe")
        await start_hostile(run, "/download-flood#empty-12")
        for _ in range(750):  # up to 15 s
            if len(began(run)) > COUNT + 2:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(1.0)  # the page has clicked its 12 times (Chromium began 10 or 12 of them)
        for _ in range(250):  # a cancelled one's file goes once Chromium says it ended (up to 5 s here)
            if len(download_files(own)) <= COUNT:
                break
            await asyncio.sleep(0.02)
        files, dropped, count = download_files(own), discarded(run), len(began(run))
        await run.close()
    assert count > COUNT and len(files) == COUNT, (count, len(files))
    assert [d["reason"] for d in dropped] == ["max_downloads"] * (count - COUNT), dropped[:3]
    assert {d["max_downloads"] for d in dropped} == {COUNT} and all(d["in_flight"] for d in dropped)


async def test_a_download_flood_writes_a_bounded_number_of_download_lines(own_sandbox, hostile_root):
    """Each download past the cap wrote a download line and a download_discarded line, without
    end, for a page downloading an empty blob every 20 ms; its state change is still written."""
    async with own_sandbox(own_browser=True, max_downloads=2, max_page_event_lines=5) as own:
        run = hostile_run(own, hostile_root, "/download-flood", mode="observe")
        await start_hostile(run, "/download-flood#empty")
        for _ in range(750):  # up to 15 s: until the page began three times the lines it may write
            if sum(e.kind == "state_change" for e in parse_trace(run.trace.text()).events) > 15:
                break
            await asyncio.sleep(0.02)
        await run.close()
    trace = parse_trace(run.trace.text())
    kinds = Counter(e.kind for e in trace.events)
    suppressed: Counter[str] = Counter()
    for event in trace.events:
        if event.kind == "events_suppressed":
            suppressed[event.data["kind"]] += event.data["count"]
    # two windows at most (the start call's line ends the first), 5 lines of each kind in each
    assert kinds["state_change"] > 15 and kinds["download"] <= 10 and kinds["download_discarded"] <= 10, kinds
    assert kinds["download"] + suppressed["download"] == kinds["state_change"], (suppressed, kinds)
    assert suppressed["download"] > 0 and suppressed["download_discarded"] > 0, suppressed
    # those begun as the session closed are past the count too: said so, and bounded (they were
    # session_closed, each written)
    # (the two the cap let begin may still be in flight at the close on a busy machine: those two are
    # session_closed, each written; CI's run once saw one)
    reasons = Counter(e.data["reason"] for e in trace.events if e.kind == "download_discarded")
    assert set(reasons) <= {"max_downloads", "session_closed"} and reasons["session_closed"] <= 2, reasons
    assert reasons["max_downloads"] > 0, reasons


FLOOD = 6  # 200 MB blobs the page downloads in the crash tests: about 3 s of writing here, all in flight at once


def crashing_run(own: Sandbox, root: Path, after: int = 2):
    """A run on the download flood whose Chromium crashes (the ``browser-crash`` fault) after call ``after``."""
    policy = Policy(mode="observe", allowed_urls=(f"{HOSTILE}/download-flood",))
    return own.create_run(policy=policy, mirror_roots=(root,), faults=parse_faults(f"browser-crash:after={after}"))


async def writing_downloads(own: Sandbox, run, count: int) -> None:
    """Until ``count`` downloads have begun and have files on disk (up to 15 s)."""
    for _ in range(750):
        if len(began(run)) >= count and len(download_files(own)) >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{len(began(run))} downloads began, {len(download_files(own))} files: fewer than {count}")


def temporary_folder(browser: int) -> Path:
    """The TMPDIR of the browser process ``browser``."""
    env = dict(v.split("=", 1) for v in Path(f"/proc/{browser}/environ").read_text().split("\0") if "=" in v)
    return Path(env["TMPDIR"])


async def test_downloads_cut_off_by_a_browser_crash_are_said_once_and_removed(own_sandbox, hostile_root):
    """A download Chromium was writing when it crashed had a download line and none after: the
    trace showed a download that never ended, and its partial file stayed on disk. Chromium's own
    temporary files (each blob it downloads, written whole) stayed in the system's temporary
    folder, 200 MB each: 30 after one run of this module."""
    async with own_sandbox(own_browser=True, max_download_bytes=4 << 30) as own:  # room for all: none cut for bytes
        run = crashing_run(own, hostile_root)
        await start_hostile(run, f"/download-flood#{FLOOD}")  # call 1
        await writing_downloads(own, run, 2)
        writing = download_files(own)
        (browser,) = own.host.browser_pids()
        temporary = temporary_folder(browser)
        assert own.host.temp_dir is not None and temporary.parent == own.host.temp_dir, temporary
        assert (await run.call("browser_snapshot", {}))["ok"]  # call 2: Chromium crashes after it
        for _ in range(250):  # up to 5 s: the crash is reported by the browser's disconnection
            if own.host.crashes:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # Playwright fails the downloads a moment after
        left, count, kept = writing & download_files(own), len(began(run)), run.download_bytes
        await run.close()
        again = hostile_run(own, hostile_root, "/calm")
        await start_hostile(again, "/calm")  # on the browser relaunched: the dead one's folder is removed
        await again.close()
        assert not temporary.exists(), sorted(temporary.iterdir())
    dropped = discarded(run)
    assert own.host.crashes == 1 and kept == 0, (own.host.crashes, kept)  # none finished before the crash
    assert [d["reason"] for d in dropped] == ["browser_crashed"] * count, (count, dropped)
    assert all(d["in_flight"] for d in dropped) and not left, (dropped, left)
    lines = [json.loads(line) for line in run.trace.text().splitlines()]
    assert lines[-1].get("type") == "run_end", lines[-1]


@pytest.mark.parametrize("first", ["crash", "close"])
async def test_a_crash_racing_the_sessions_close_says_each_download_once(own_sandbox, hostile_root, first):
    """A crash just before the session's close, or during it: each download cut off is said once,
    for whichever came first (the close, or the crash), and none is left on disk."""
    async with own_sandbox(own_browser=True, max_download_bytes=4 << 30) as own:
        run = crashing_run(own, hostile_root, after=1_000)  # the fault never fires: crashed by hand
        await start_hostile(run, f"/download-flood#{FLOOD}")
        await writing_downloads(own, run, 2)
        session, browser = run.current_session(), own.host.browser
        assert browser is not None
        cdp = await browser.new_browser_cdp_session()
        closing = asyncio.ensure_future(run.close()) if first == "close" else None
        while closing is not None and not session.closed:  # the close has begun: its first await
            await asyncio.sleep(0)
        crash = asyncio.ensure_future(cdp.send("Browser.crash"))
        for _ in range(250 if closing is None else 0):  # crash first: the close begins once it is known
            if own.host.crashes:
                break
            await asyncio.sleep(0.02)
        await (closing or run.close())
        await asyncio.gather(crash, return_exceptions=True)
        await asyncio.sleep(0.5)
        left = download_files(own)
    dropped, count = discarded(run), len(began(run))
    assert len(dropped) == count and {d["reason"] for d in dropped} <= {"browser_crashed", "session_closed"}, (
        count,
        dropped,
    )
    assert not left, left
    lines = [json.loads(line) for line in run.trace.text().splitlines()]
    assert lines[-1].get("type") == "run_end", lines[-1]


async def test_each_download_cut_off_at_the_close_is_said_whatever_the_windows_budget(own_sandbox, hostile_root):
    """Downloads begun over several windows and cut off together by the session's close spent one
    window's page-event budget: past max_page_event_lines, they were only counted, and so read as
    kept. Each download's state change is written, and now each one's end too."""
    async with own_sandbox(own_browser=True, max_download_bytes=4 << 30, max_page_event_lines=2) as own:
        run = hostile_run(own, hostile_root, "/download-flood", mode="observe")
        await start_hostile(run, f"/download-flood#{FLOOD}")
        for _ in range(750):  # up to 15 s: more downloads than a window's budget are being written
            if len(changed(run)) > 2 and len(download_files(own)) > 2:
                break
            await asyncio.sleep(0.02)
        assert (await run.call("browser_snapshot", {}))["ok"]  # a new window
        await run.close()
    count, dropped, kept = len(changed(run)), discarded(run), run.download_bytes // BLOB  # kept: finished first
    assert count - kept > 2 and len(dropped) == count - kept, (count, kept, dropped)
    assert {d["reason"] for d in dropped} == {"session_closed"}, dropped


def changed(run) -> list[dict]:
    """The downloads' state changes: each is written, whatever the budget."""
    events = parse_trace(run.trace.text()).events
    return [e.data for e in events if e.kind == "state_change" and e.data.get("action") == "download"]
