"""Which folders of a batch folder are its attempts: those named as the runner names them (a copy
beside them, ``bid-intake-1.bak``, is left out and said), and none that is a symbolic link (the
runner writes none: a link is left out and said); and which batch a folder given to the readers
names."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sandbox.runner.batch import SUMMARY_FILE
from sandbox.runner.folders._attempt import AttemptFolder, closed_folder, is_attempt_folder

# The names the runner gives attempt folders in a batch (``run_batch``, ``rerun_name``): ``<pack>-<n>``,
# ``<agent>--<pack>-<n>`` with several agents, ``<folder>-r<k>`` for a re-run. Another folder with
# attempt files is no attempt of the batch: a copy (``bid-intake-1.bak``) counted twice.
RUNNER_ATTEMPT_NAME = re.compile(r".+-[1-9][0-9]*(?:-r[1-9][0-9]*)?")
RUNNER_NAMES_SAID = "<pack>-<n>, <agent>--<pack>-<n>, a re-run <folder>-r<k>"


class ClosedFolder(Exception):
    """A folder given to the readers that they cannot list or enter (its mode, its owner): nothing
    in it can be read."""


def refuse_closed(folder: Path) -> None:
    """Raise ``ClosedFolder`` when ``folder`` is a folder this user cannot list or enter."""
    if folder.is_dir() and (why := closed_folder(folder)) is not None:
        raise ClosedFolder(f"cannot list or enter {folder} ({why}): nothing in it can be read")


def runner_named(path: Path) -> bool:
    """Whether ``path``'s name is one the runner gives an attempt folder of a batch."""
    return RUNNER_ATTEMPT_NAME.fullmatch(path.name) is not None


def batch_attempts(path: Path) -> list[AttemptFolder]:
    """The attempt folders of a batch folder, in name order (not those ``left_out_folders`` names)."""
    return [AttemptFolder.load(p) for p in attempt_paths(path)]


def attempt_paths(path: Path) -> list[Path]:
    """The paths of ``batch_attempts``, none of them read."""
    return _attempt_paths(path)[0]


def left_out_folders(path: Path) -> list[str]:
    """The names of the folders with attempt files that a batch folder holds and its readers leave
    out: a symbolic link to a folder (read, and its page written, where the link leads: another
    batch's folder, a home folder, the same attempt twice), and, in a batch the runner wrote, a folder
    under a name it gives no attempt (a copy, ``bid-intake-1.bak``), which would count twice."""
    return [p.name for p in _attempt_paths(path)[1]]


def _attempt_paths(path: Path) -> tuple[list[Path], list[Path]]:
    """(the attempt folders taken, those left out): a symbolic link is left out; with any other
    attempt folder named as the runner names them, the batch is one it wrote, and a folder named
    otherwise is none of its attempts; with none so named (attempt folders gathered by hand), every
    one is taken."""
    found = [p for p in sorted(Path(path).iterdir()) if is_attempt_folder(p)]
    links = [p for p in found if p.is_symlink()]
    found = [p for p in found if not p.is_symlink()]
    named = [p for p in found if runner_named(p)]
    if not named:
        return found, links
    return named, sorted(links + [p for p in found if not runner_named(p)])


def left_out_note(names: list[str], batch: Path | None = None) -> str:
    """What the readers say of the folders ``left_out_folders`` names (those in ``batch`` that are
    symbolic links said as such)."""
    linked = [n for n in names if batch is not None and (Path(batch) / n).is_symlink()]
    copies = [n for n in names if n not in linked]
    said = []
    if copies:
        said.append(
            f"left out {', '.join(f'{n}/' for n in copies)}: attempt files under a name the runner gives no "
            f"attempt folder ({RUNNER_NAMES_SAID}), so no attempt of this batch (a copy?); give such a folder "
            "alone to see it"
        )
    if linked and batch is not None:
        links = ", ".join(f"{n}/ (a link to {link_target(Path(batch) / n)})" for n in linked)
        said.append(
            f"left out {links}: "
            "a symbolic link, which the runner never writes, would be read and have its page written where it "
            "leads; give the folder it leads to alone to see it"
        )
    return "; ".join(said)


def link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def resolve_batch(folder: Path) -> tuple[Path, str | None]:
    """The batch folder ``folder`` names: itself, or, for the folder given to ``sandbox run
    --out`` (which holds batch folders), its newest batch, with a note saying so. Raises
    ``ClosedFolder`` when ``folder`` cannot be listed or entered; a folder inside it that cannot be
    is taken as a batch (``read_summary`` then says it cannot be read)."""
    folder = Path(folder)
    refuse_closed(folder)
    if (folder / SUMMARY_FILE).is_file() or is_attempt_folder(folder) or not folder.is_dir():
        return folder, None
    if batch_attempts(folder):
        return folder, None
    batches = sorted(
        p
        for p in folder.iterdir()
        if p.is_dir() and (closed_folder(p) is not None or (p / SUMMARY_FILE).is_file() or batch_attempts(p))
    )
    if not batches:
        return folder, None
    note = f"{folder} holds {len(batches)} batch folder(s); showing the newest, {batches[-1].name}"
    return batches[-1], note
