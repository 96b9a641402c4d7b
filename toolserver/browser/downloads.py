"""A session's downloads on disk: what they write stays within ``max_download_bytes`` (with what
the run keeps already) while they are written, not only once they have finished; a run's pages
begin at most ``max_downloads`` (each later one is cancelled at once); and what is still being
written when the session closes is cancelled and removed.

Playwright writes a download into its artifacts folder (in the driver's temporary folder,
``toolserver.browser.driver``), as ``<file>.crdownload`` until it has finished, and names no
size until then: while any download is written, its bytes are measured every
``download_check_s``, and those beyond the room left are cancelled (``download_discarded``,
``in_flight``). A finished download the run has no room for is deleted (``download_discarded``).
Each discarded download is recorded once, with its ``reason`` (the cap it passed,
``session_closed``, ``browser_crashed``: its Chromium or Playwright's driver ended while it was
written, or ``failed``: Chromium ended it itself; what it wrote is removed), when it is dropped,
before any wait: so also when the session's close cuts its cancellation short, and always before
the run's end line. The session records every download itself (a ``download`` event and a state
change).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from playwright.async_api import Download
from playwright.async_api import Error as PlaywrightError

from toolserver.cdp import cdp_session

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.tab import Tab
    from toolserver.config import ServerConfig

log = logging.getLogger("toolserver.browser")

# why a download was discarded
Reason = Literal["max_download_bytes", "max_downloads", "session_closed", "browser_crashed", "failed"]


class Keeper(Protocol):
    """The run that keeps a session's downloads: its config, the bytes it keeps so far, how many
    downloads its pages began, and those its sessions are writing (in the order they began, each
    with its session's)."""

    config: ServerConfig
    download_bytes: int
    downloads_begun: int
    downloads_writing: dict[Download, Downloads]


class Downloads:
    """The downloads of one session that are still being written, and the watch on their bytes
    (with those of the run's other sessions: the cap is the run's)."""

    def __init__(self, owner: Owner, keeper: Keeper) -> None:
        self.owner, self.keeper = owner, keeper
        self.writing: dict[Download, tuple[Tab, Path | None]] = {}  # in the order they began
        self._watch: asyncio.Future | None = None
        self._tasks: set[asyncio.Future] = set()  # kept until done; cancelled at stop()
        self.cancelling: set[Download] = set()  # discarded, not yet ended (removed again at stop())
        self.seen = 0  # downloads its pages began

    def started(self, tab: Tab, download: Download) -> None:
        """A download the context accepted began: watched until it ends, then kept or deleted;
        cancelled at once when its session is closing or the run has reached a cap."""
        self.seen += 1
        keeper = self.keeper
        keeper.downloads_begun += 1
        self.writing[download] = (tab, file_of(download))
        keeper.downloads_writing[download] = self
        reason: Reason | None = None
        if keeper.downloads_begun > keeper.config.max_downloads:  # first: a flood during a close stays bounded
            reason = "max_downloads"
        elif self.owner.closed:
            reason = "session_closed"
        elif self.room() <= 0:  # the run keeps all it may: none is written
            reason = "max_download_bytes"
        if reason is not None:
            self.cancel_writing(download, reason=reason)
            return
        self._task(self._finished(tab, download))
        if self._watch is None or self._watch.done():
            self._watch = self._task(self._watch_bytes())

    def _task(self, work: Coroutine[object, object, None]) -> asyncio.Future:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _drop(self, download: Download) -> tuple[Tab | None, Path | None]:
        self.keeper.downloads_writing.pop(download, None)
        return self.writing.pop(download, (None, None))

    def room(self) -> int:
        return self.keeper.config.max_download_bytes - self.keeper.download_bytes

    async def _finished(self, tab: Tab, download: Download) -> None:
        file = self.writing.get(download, (tab, None))[1]
        try:
            path = await download.path()
            size = path.stat().st_size if path else 0
        except (PlaywrightError, OSError):  # cancelled, or the context (or its browser) ended first
            if self.owner.crashed:  # ended with its browser: said now if the disconnection has not said it
                self.cut_off()
            ours, partial = self._drop(download)
            if ours is not None:  # still ours: Chromium ended it itself (a full disk), said and removed;
                # in a closing session, before its close said it (the driver ending under the close)
                why: Reason = "session_closed" if self.owner.closed else "failed"
                self._discarded(ours, download, bytes_written(partial), in_flight=True, reason=why)
                remove(partial)
            return
        if self._drop(download)[0] is None:  # the watch cancelled it as it finished, and said so
            return
        keeper, cap = self.keeper, self.keeper.config.max_download_bytes
        if keeper.download_bytes + size <= cap:
            keeper.download_bytes += size
            return
        # Said before the wait: a session closing during it cancels this task, and the download is
        # no longer among those its close says (``stop``).
        self._discarded(tab, download, size, in_flight=False, reason="max_download_bytes")
        try:
            with contextlib.suppress(PlaywrightError):  # its context closed meanwhile
                await download.delete()
        finally:  # also when the session's close cancels this
            remove(path or file)

    async def _watch_bytes(self) -> None:
        """While downloads are written: cancel the latest ones whose bytes, with the earlier ones'
        (of every session of the run) and what the run keeps, pass the cap."""
        keeper = self.keeper
        while self.writing and not self.owner.closed:
            await asyncio.sleep(keeper.config.download_check_s)
            used = keeper.download_bytes
            for download, downloads in list(keeper.downloads_writing.items()):
                if download not in downloads.writing:
                    continue
                written = bytes_written(downloads.writing[download][1])
                used += written
                if used > keeper.config.max_download_bytes:
                    used -= written
                    downloads.cancel_writing(download, written)  # dropped now, so no longer counted

    def cancel_writing(self, download: Download, written: int = 0, reason: Reason = "max_download_bytes") -> None:
        """Cancel a download being written and remove what it wrote: ``download_discarded`` is
        said now (the session's close may cut the cancelling short, or come after the run's end
        line); the cancelling goes on in a task."""
        tab, file = self._drop(download)
        if tab is None:  # it ended already: kept, or discarded and said (a download is discarded once)
            return
        closed = self.owner.closed and reason != "max_downloads"  # past the count: said so, and budgeted
        self._discarded(tab, download, written, in_flight=True, reason="session_closed" if closed else reason)
        self.cancelling.add(download)
        self._task(self._cancel_and_remove(download, file))

    def cut_off(self) -> None:
        """The session's browser crashed (or Playwright's driver ended): the downloads it was
        writing ended with it, unsaid by Playwright (their ``path()`` fails as a cancelled one's
        does). Each is said now, once, and its partial file removed: nothing writes it any more."""
        for download in list(self.writing):
            tab, file = self._drop(download)
            if tab is not None:
                self._discarded(tab, download, bytes_written(file), in_flight=True, reason="browser_crashed")
                remove(file)

    async def _cancel_and_remove(self, download: Download, file: Path | None) -> None:
        """Cancel the download and, once Chromium says it has ended, remove its file: removed at
        once, an empty download cancelled as it finished was sometimes written after (once in 8
        runs here)."""
        try:
            with contextlib.suppress(PlaywrightError, TimeoutError):  # finished meanwhile, or its context is gone
                await download.cancel()
                await asyncio.wait_for(download.failure(), self.keeper.config.close_timeout_s)
        finally:  # also when the session's close cancels this
            remove(file)
            self.cancelling.discard(download)

    def _discarded(self, tab: Tab, download: Download, size: int, *, in_flight: bool, reason: Reason) -> None:
        keeper, config = self.keeper, self.keeper.config
        data = {"url": download.url, "bytes": size, "kept_bytes": keeper.download_bytes}
        data |= {"max_download_bytes": config.max_download_bytes, "in_flight": in_flight, "reason": reason}
        data |= {"max_downloads": config.max_downloads}
        self.owner.record_event("download_discarded", data, tab=tab)

    async def stop(self, tab: Tab | None, end: Callable[[str], Awaitable[None]], bound: float) -> None:
        """At the session's close, before its context closes, when its pages started downloads:
        ``end`` has Chromium deny the context any more and cancel every download it writes for it,
        reported yet or not (closing the context does neither: they went on, and new ones began,
        out of Playwright's sight, after their run had ended)."""
        writing, cancelling = list(self.writing), list(self.cancelling)
        for download in writing:  # cut off by the close: said now, before the run's end line
            its_tab, file = self._drop(download)
            if its_tab is not None:
                self._discarded(its_tab, download, bytes_written(file), in_flight=True, reason="session_closed")
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        asked = any((t.state or {}).get("downloads") for t in self.owner.tabs.values())  # counted in the page
        if tab is not None and (self.seen or asked):
            with contextlib.suppress(PlaywrightError, TimeoutError, KeyError):
                async with asyncio.timeout(bound):
                    info = await (await cdp_session(tab)).send("Target.getTargetInfo")
                    await end(info["targetInfo"]["browserContextId"])
        # Those reported, also before Chromium has begun to write them (their files made then), and
        # the cancelling of any reported during the close (cancelled as they began): ended with it.
        late = list(self._tasks)
        await asyncio.gather(*(cancelled(d, bound) for d in writing + cancelling), *late, return_exceptions=True)


async def cancelled(download: Download, bound: float) -> None:
    with contextlib.suppress(PlaywrightError, TimeoutError):
        await asyncio.wait_for(download.cancel(), bound)
    remove(file_of(download))


def file_of(download: Download) -> Path | None:
    """Where Playwright has Chromium write the download (its artifact's path); None if unknown."""
    artifact = getattr(getattr(download, "_impl_obj", None), "_artifact", None)  # no public name for it
    path = getattr(artifact, "_initializer", {}).get("absolutePath")
    return Path(path) if isinstance(path, str) else None


def bytes_written(file: Path | None) -> int:
    """Bytes of the download at ``file`` on disk: ``<file>.crdownload`` while it is written."""
    if file is None:
        return 0
    for candidate in (file, file.with_name(file.name + ".crdownload")):
        with contextlib.suppress(OSError):
            return candidate.stat().st_size
    return 0


def remove(file: Path | None) -> None:
    if file is not None:
        for candidate in (file, file.with_name(file.name + ".crdownload")):
            candidate.unlink(missing_ok=True)
