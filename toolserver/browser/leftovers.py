"""Temporary folders that name their owner: each holds a lock file its process keeps locked
(``flock``) for the folder's life. The kernel drops the lock when that process dies, even by
SIGKILL, so the first folder a process makes sweeps away this user's folders whose owner is gone,
across PID namespaces (containers sharing /tmp), where a pid says nothing. The locked fd is not
inherited: the driver and the browser a process starts do not keep its folders alive.

Folders without the lock file (made by older versions, or being made this instant) are removed
only once nothing in them has changed for ``LOCKLESS_AFTER_S``. Not on Windows: there the folders
are made and removed at exit, never swept.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

if sys.platform != "win32":
    import fcntl

PREFIXES = ("sandbox-browser-", "sandbox-driver-")
LOCK_NAME = ".sandbox-owner.lock"
LOCKLESS_AFTER_S = 24 * 3600

_HELD: dict[Path, int | None] = {}  # this process's folders not removed yet, with their locked fd
_SWEEP = threading.Lock()
_swept = False


def make_owned_dir(prefix: str) -> Path:
    """A new folder in the system's temporary folder, locked as this process's until
    ``release()`` (or removed at exit); the first one sweeps the dead owners' folders first."""
    sweep_once()
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    _HELD[folder] = None
    if sys.platform != "win32":
        # locked under another name, then renamed: a sweeper never finds the lock file unlocked
        fd = os.open(folder / f"{LOCK_NAME}.new", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(folder / f"{LOCK_NAME}.new", folder / LOCK_NAME)
        _HELD[folder] = fd
    return folder


def sweep_once() -> None:
    """The process's one sweep of the dead owners' folders (later calls return at once): a caller
    on an event loop runs it in a thread first, since it may take seconds."""
    global _swept
    with _SWEEP:
        if not _swept:
            _swept = True
            sweep(Path(tempfile.gettempdir()))  # decided here, before any driver's TMPDIR is near


def release(folder: Path) -> None:
    """``folder`` is removed (or about to be): its lock is dropped, and it is not left for the exit hook."""
    if (fd := _HELD.pop(folder, None)) is not None:
        os.close(fd)


@atexit.register
def _remove_held() -> None:
    for folder in list(_HELD):
        shutil.rmtree(folder, True)
        release(folder)


def sweep(temp: Path) -> None:
    """Remove this user's folders in ``temp`` (by ``PREFIXES``) whose owner is gone."""
    if sys.platform == "win32":
        return
    for prefix in PREFIXES:
        for folder in temp.glob(f"{prefix}*"):
            with contextlib.suppress(OSError):
                _sweep_one(folder)


def _sweep_one(folder: Path) -> None:
    if folder.is_symlink() or not folder.is_dir() or folder.lstat().st_uid != os.getuid():
        return
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:  # an older version's, or one being made: only if long untouched
        if time.time() - _newest_change(folder) > LOCKLESS_AFTER_S:
            shutil.rmtree(folder, True)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: its owner lives
        if os.path.samestat(os.fstat(fd), os.stat(folder / LOCK_NAME)):  # not a new folder of that name
            shutil.rmtree(folder, True)
    finally:
        os.close(fd)


def _newest_change(folder: Path) -> float:
    """When anything in ``folder`` (itself included, symbolic links not followed) last changed."""
    newest = folder.lstat().st_mtime
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
    return newest
