"""Reading and writing a folder as a user the kernel checks: as root (whom file modes do not stop),
the effective user drops to nobody inside ``as_nobody()`` and comes back after; as another user,
that user. Import and render what the test needs before entering: nobody may not read the Python
install under /root."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

NOBODY = 65534


@contextlib.contextmanager
def as_nobody() -> Iterator[None]:
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@contextlib.contextmanager
def open_folder() -> Iterator[Path]:
    """A temporary folder anyone may enter and write (pytest's tmp_path is root's alone); what the
    test made unreadable in it is made readable again before it is removed."""
    with tempfile.TemporaryDirectory() as made:
        folder = Path(made)
        folder.chmod(0o777)
        try:
            yield folder
        finally:
            for path in folder.rglob("*"):
                path.chmod(0o777)


def open_to_all(folder: Path) -> None:
    """Everything under ``folder`` readable and writable by anyone."""
    for path in (folder, *folder.rglob("*")):
        path.chmod(0o777 if path.is_dir() else 0o666)
