"""A small real file system that fills up: a tmpfs of a few pages mounted for one test (needs
root; the test is skipped where it cannot be mounted), and a filler file that takes all the
space it has left until it is removed."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(where: Path, size: int = 256 * 1024) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes mounted at ``where`` (made here), unmounted afterwards."""
    where.mkdir(parents=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(where)], check=True)  # a file still open: detach now


def fill(disk: Path) -> Path:
    """A file taking all the space ``disk`` has left (ENOSPC reached); delete it to free the space."""
    filler = disk / "filler"
    chunk = b"\0" * 4096
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        while True:
            try:
                if os.write(fd, chunk) < len(chunk):
                    continue  # the last pages: the next write fails
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                return filler
    finally:
        os.close(fd)
