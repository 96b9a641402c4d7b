"""What several commands' command lines share: bounded numbers, files they will write, and a
command group's usage."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def whole_number(least: int, unit: str = "", short: str = "") -> Callable[[str], int]:
    """An argparse ``type``: a whole number of at least ``least`` (``unit`` and its ``short``
    form, as "milliseconds" and "ms", named in the errors)."""
    of = f" of {unit}" if unit else ""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number{of}") from None
        if value < least:
            wanted = f"a positive number{of}" if least == 1 else f"{least} or more{' ' + unit if unit else ''}"
            raise argparse.ArgumentTypeError(f"{value}{' ' + short if short else ''}: give {wanted}")
        return value

    return whole


def positive_seconds(text: str) -> float:
    """An argparse ``type``: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} s: give a number of seconds above 0")
    return value


def group_usage(parser: argparse.ArgumentParser) -> int:
    """A command group run without a subcommand: its help on stderr, exit 2."""
    parser.print_help(sys.stderr)
    return 2


def check_writable(file: Path, option: str) -> None:
    """A ``ValueError`` unless a file could be made beside ``file`` (checked before the batch, not
    after it; a folder on the way that is missing is checked in the nearest one that exists)."""
    try:
        if file.is_dir():
            raise IsADirectoryError(21, "it is a folder")
        _make_a_file_in(file.parent)
    except OSError as exc:
        raise ValueError(f"{option} {file}: cannot write a file there ({exc.strerror or exc})") from None


def check_folder_writable(folder: Path | None, option: str) -> None:
    """A ``ValueError`` unless files can be made in ``folder`` (or, when it is still to be made,
    in the nearest folder above it that exists): a server checks its trace folder at start, not
    at its first run."""
    if folder is None:
        return
    try:
        _make_a_file_in(Path(folder))
    except OSError as exc:
        raise ValueError(f"{option} {folder}: cannot write files there ({exc.strerror or exc})") from None


def _make_a_file_in(folder: Path) -> None:
    """Make and drop a file in ``folder``, or in the nearest folder above it that exists (the
    missing ones are made later); an ``OSError`` says why none can be made."""
    nearest = folder
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise NotADirectoryError(20, f"{nearest} is not a folder")
    with tempfile.TemporaryFile(dir=nearest):
        pass


def mirror_roots_option(roots: list[Path] | None) -> tuple[Path, ...] | None:
    """``--mirrors DIR`` (repeatable), each a folder whose manifests read: a ``ValueError`` saying
    which is not; None when none is given."""
    from toolserver.contract.mirrors import MirrorStore

    if not roots:
        return None
    missing = [str(root) for root in roots if not root.is_dir()]
    if missing:
        raise ValueError(f"no such mirror folder: {', '.join(missing)}")
    MirrorStore.load(*roots)  # a manifest that is not one: said now, not at each attempt
    return tuple(root.resolve() for root in roots)
