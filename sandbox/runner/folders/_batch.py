"""Which folders of a batch folder are its attempts: those named as the runner names them (a copy
beside them, ``bid-intake-1.bak``, is left out and said); and which batch a folder given to the
readers names."""

from __future__ import annotations

import re
from pathlib import Path

from sandbox.runner.batch import SUMMARY_FILE
from sandbox.runner.folders._attempt import AttemptFolder, is_attempt_folder

# The names the runner gives attempt folders in a batch (``run_batch``, ``rerun_name``): ``<pack>-<n>``,
# ``<agent>--<pack>-<n>`` with several agents, ``<folder>-r<k>`` for a re-run. Another folder with
# attempt files is no attempt of the batch: a copy (``bid-intake-1.bak``) counted twice.
RUNNER_ATTEMPT_NAME = re.compile(r".+-[1-9][0-9]*(?:-r[1-9][0-9]*)?")
RUNNER_NAMES_SAID = "<pack>-<n>, <agent>--<pack>-<n>, a re-run <folder>-r<k>"


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
    """The names of the folders with attempt files that a batch folder the runner wrote holds under a
    name it gives no attempt (a copy, ``bid-intake-1.bak``): left out, or that attempt counts twice."""
    return [p.name for p in _attempt_paths(path)[1]]


def _attempt_paths(path: Path) -> tuple[list[Path], list[Path]]:
    """(the attempt folders taken, those left out): with any attempt folder named as the runner names
    them, the batch is one it wrote, and a folder named otherwise is none of its attempts; with none
    so named (attempt folders gathered by hand), every one is taken."""
    found = [p for p in sorted(Path(path).iterdir()) if is_attempt_folder(p)]
    named = [p for p in found if runner_named(p)]
    if not named:
        return found, []
    return named, [p for p in found if not runner_named(p)]


def left_out_note(names: list[str]) -> str:
    return (
        f"left out {', '.join(f'{n}/' for n in names)}: attempt files under a name the runner gives no attempt "
        f"folder ({RUNNER_NAMES_SAID}), so no attempt of this batch (a copy?); give such a folder alone to see it"
    )


def resolve_batch(folder: Path) -> tuple[Path, str | None]:
    """The batch folder ``folder`` names: itself, or, for the folder given to ``sandbox run
    --out`` (which holds batch folders), its newest batch, with a note saying so."""
    folder = Path(folder)
    if (folder / SUMMARY_FILE).is_file() or is_attempt_folder(folder) or not folder.is_dir():
        return folder, None
    if batch_attempts(folder):
        return folder, None
    batches = sorted(p for p in folder.iterdir() if p.is_dir() and ((p / SUMMARY_FILE).is_file() or batch_attempts(p)))
    if not batches:
        return folder, None
    note = f"{folder} holds {len(batches)} batch folder(s); showing the newest, {batches[-1].name}"
    return batches[-1], note
