"""A batch's ``summary.json`` read back, checked, with each attempt's folder where the batch is
now; or the same data rebuilt from the attempt folders (an older batch, a killed one, or an
edited file), with a note saying what could not be counted."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from sandbox.runner.attempt import AttemptOutcome
from sandbox.runner.batch import SUMMARY_FILE, summarise
from sandbox.runner.compare import comparison, credits_of
from sandbox.runner.folders._attempt import AttemptFolder, is_attempt_folder
from sandbox.runner.folders._batch import (
    attempt_paths,
    batch_attempts,
    left_out_folders,
    left_out_note,
    refuse_closed,
)
from sandbox.runner.folders._kinds import KIND_SAID, NUMBER, NUMBER_OR_NULL, WHOLE_OR_NULL, of_kind
from sandbox.runner.folders._outcome import named_agent, outcome, reselected
from sandbox.runner.prices import DEFAULT_CREDITS_PER_DOLLAR

# What the readers take from every entry of a summary.json (``summarise``'s rows; of
# ``AttemptOutcome.to_json``'s attempts, those older batches have too), with its JSON type: an entry
# without one, or with another type, is a damaged file.
SUMMARY_ROW_KEYS: dict[str, Any] = {
    "pack": str, "agent": str, "attempts": int, "qualified_passes": int, "error_free_passes": int,
    "mean_field_accuracy": NUMBER, "median_seconds": NUMBER_OR_NULL, "mean_tool_calls": NUMBER_OR_NULL,
    "statuses": dict,
}  # fmt: skip
ATTEMPT_KEYS: dict[str, Any] = {
    "pack": str, "agent": str, "directory": str, "status": str, "elapsed_seconds": NUMBER_OR_NULL,
    "qualified_pass": bool, "error_free": bool, "field_accuracy": NUMBER, "tool_calls": WHOLE_OR_NULL,
}  # fmt: skip
OPTIONAL_ATTEMPT_KEYS: dict[str, Any] = {
    "cost_usd": NUMBER, "selection": str, "interruption": str, "reason": str, "replaces": str, "pack_checksum": str,
    "mirror_checksum": str, "faults": str,
}  # fmt: skip


FRACTIONS = ("field_accuracy", "mean_field_accuracy")  # between 0 and 1


def number_problem(key: str, value: Any) -> str | None:
    """What makes a number of a summary one no writer gives (NaN, an infinity, a negative count,
    time or cost, an accuracy above 1: Python's json reads them all), or None."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if not math.isfinite(value) or value < 0:
        return f"{key} {value!r}, not a finite number of 0 or more"
    if key in FRACTIONS and value > 1:
        return f"{key} {value!r}, not a number from 0 to 1"
    return None


def summary_problem(data: Any, batch_dir: Path) -> str | None:
    """What makes ``data`` no usable summary of ``batch_dir`` (an edited or damaged file), or None."""
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("summary"), list)
        or not isinstance(data.get("attempts"), list)
    ):
        return "not a summary: no summary and attempts lists"
    if not (data["attempts"] and data["summary"]):  # attempt folders to rebuild from? (read only then)
        here = is_attempt_folder(batch_dir) or bool(batch_attempts(batch_dir))
        if not data["attempts"] and here:
            return "it lists no attempt"  # a batch stopped before any attempt ended has none, and none here
        if data["attempts"] and here:
            return "it has no table rows for its attempts"
    for what, entries, keys in (
        ("row", data["summary"], SUMMARY_ROW_KEYS),
        ("attempt", data["attempts"], ATTEMPT_KEYS),
    ):
        for number, entry in enumerate(entries, start=1):
            if not isinstance(entry, dict):
                return f"its {what} {number} is not an object"
            for key, kind in keys.items():
                value = entry.get(key)
                if key not in entry:
                    return f"its {what} {number} has no {key}"
                if not of_kind(value, kind):
                    return f"its {what} {number} has {key} {value!r}, not {KIND_SAID[kind]}"
                if (wrong := number_problem(key, value)) is not None:
                    return f"its {what} {number} has {wrong}"
    for number, entry in enumerate(data["attempts"], start=1):
        for key, kind in OPTIONAL_ATTEMPT_KEYS.items():
            value = entry.get(key)
            if value is not None and not of_kind(value, kind):
                return f"its attempt {number} has {key} {value!r}, not {KIND_SAID[kind]} or null"
            if (wrong := number_problem(key, value)) is not None:
                return f"its attempt {number} has {wrong}"
    return None


def with_local_folders(data: dict[str, Any], batch_dir: Path) -> dict[str, Any]:
    """``data`` with each attempt's folder the one in ``batch_dir`` (where the batch is now: it
    may have been copied or moved since ``summary.json`` was written), where there is one."""
    for attempt in data["attempts"]:
        recorded = Path(str(attempt["directory"]))
        local = batch_dir if is_attempt_folder(batch_dir) else batch_dir / recorded.name
        if local.is_dir():
            attempt["directory"] = str(local)
    return data


def unlisted_folders(data: dict[str, Any], batch_dir: Path) -> list[str]:
    """The names of the batch folder's attempt folders its summary lists no attempt of: the runner
    lists every attempt it ran, so these are another batch's (two batches merged into one folder),
    which the summary would leave out in silence."""
    if is_attempt_folder(batch_dir) or not batch_dir.is_dir():
        return []
    listed = {Path(str(attempt["directory"])).name for attempt in data["attempts"]}
    return [path.name for path in attempt_paths(batch_dir) if path.name not in listed]


def linked_folders(data: dict[str, Any], batch_dir: Path) -> list[str]:
    """The names of the listed attempts whose folder in ``batch_dir`` is now a symbolic link, which
    the readers leave out (``left_out_folders``): the runner writes none."""
    if is_attempt_folder(batch_dir) or not batch_dir.is_dir():
        return []
    listed = (Path(str(attempt["directory"])).name for attempt in data["attempts"])
    return [name for name in listed if name and (batch_dir / name).is_symlink()]


def unbacked_attempts(data: dict[str, Any]) -> list[str]:
    """The names of the listed attempts whose folder no longer backs what the summary counts for
    them (a qualified pass, a field accuracy): damaged since, they would count in the table and not
    on their own pages. An attempt that counts nothing, or whose folder is gone, is as listed."""
    found = []
    for attempt in data["attempts"]:
        path = Path(str(attempt["directory"]))
        if not (attempt["qualified_pass"] or attempt["field_accuracy"]) or not is_attempt_folder(path):
            continue
        now = outcome(AttemptFolder.load(path))
        if (attempt["qualified_pass"] and not now.qualified_pass) or attempt["field_accuracy"] > now.field_accuracy:
            found.append(path.name)
    return found


def stored_summary(batch_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The batch's ``summary.json`` as it is, when it can be taken; else None and why it is rebuilt
    from the attempt folders (None too when there is none)."""
    file = batch_dir / SUMMARY_FILE
    if not file.is_file():
        return None, None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        problem = summary_problem(data, batch_dir)
    except (OSError, ValueError) as exc:  # cut short, not UTF-8: the attempt folders still say it all
        problem = str(exc).splitlines()[0][:200]
    except RecursionError:  # valid JSON nested deeper than Python's json reads: no summary the runner writes
        problem = "not valid JSON (nested too deep)"
    if problem is not None:  # edited
        return None, f"{file} is unreadable ({problem}); rebuilt from the attempt folders"
    try:
        return folders_agree(data, batch_dir, file)
    except OSError as exc:  # a folder name the file system will not look up (longer than it takes)
        said = str(exc).splitlines()[0][:200]
        return None, f"{file} names an attempt folder that cannot be looked up ({said}); rebuilt from the folders"


def folders_agree(data: dict[str, Any], batch_dir: Path, file: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``stored_summary``'s answer for a summary that reads well: as it is, when the attempt
    folders beside it are the ones it lists and still back it."""
    if unlisted := unlisted_folders(data, batch_dir):
        return None, (
            f"{file} does not list the attempt folder(s) {', '.join(f'{n}/' for n in unlisted)} beside it "
            "(another batch's, copied into this folder?): rebuilt from all the attempt folders"
        )
    if linked := linked_folders(data, batch_dir):
        return None, (
            f"{file} lists the attempt folder(s) {', '.join(f'{n}/' for n in linked)}, now symbolic links (not "
            "read): rebuilt from the attempt folders"
        )
    data = with_local_folders(data, batch_dir)
    if unbacked := unbacked_attempts(data):
        return None, (
            f"{file} counts a qualified pass or field accuracy that the folder(s) "
            f"{', '.join(f'{n}/' for n in unbacked)} no longer back (damaged since it was written): rebuilt "
            "from the attempt folders"
        )
    return data, None


def read_summary(batch_dir: Path) -> dict[str, Any]:
    """The batch's ``summary.json``, or the same data rebuilt from its attempt folders (older
    batches have none; one that cannot be taken as it is gets a ``note`` saying why). Either way
    its table rows and comparison are counted from its attempts, at its credits per dollar. Raises
    ``FileNotFoundError`` when the folder holds no attempt, ``ClosedFolder`` when it cannot be
    listed or entered."""
    batch_dir = Path(batch_dir)
    refuse_closed(batch_dir)
    data, note = stored_summary(batch_dir)
    if data is not None:  # its comparison made anew from its attempts, as its table rows are (an edited one not shown)
        data = {**data, "comparison": comparison(data["attempts"], credits_of(data))}
        return with_links_said(with_counted_rows(data), batch_dir)
    if is_attempt_folder(batch_dir):
        folders = [AttemptFolder.load(batch_dir)]
    else:
        folders = batch_attempts(batch_dir) if batch_dir.is_dir() else []
    if not batch_dir.exists():
        raise FileNotFoundError(f"no such folder: {batch_dir}")
    left_out = [] if is_attempt_folder(batch_dir) or not batch_dir.is_dir() else left_out_folders(batch_dir)
    if not folders:
        raise FileNotFoundError(
            f"{batch_dir} holds no summary.json and no attempt folder "
            f"(a folder written by `sandbox run --out DIR`, e.g. runs/<time>-<agent>)"
            + (f"; {left_out_note(left_out, batch_dir)}" if left_out else "")
        )
    agents = {agent for f in folders if (agent := named_agent(f))}  # what a damaged folder's may be (batch_agent)
    outcomes = reselected([outcome(f, agents) for f in folders])
    noted = damage_notes(folders, left_out, batch_dir) + agent_notes(folders, outcomes)
    rates = {f.attempt.credits_per_dollar for f in folders if f.counted and f.attempt and f.attempt.credits_per_dollar}
    rate = next(iter(rates)) if len(rates) == 1 else DEFAULT_CREDITS_PER_DOLLAR
    if len(rates) > 1:  # as `sandbox compare` says of batches that did
        noted.append(
            f"the attempts priced credits differently ({', '.join(f'{r:g}' for r in sorted(rates))} a dollar); "
            f"credits here are {rate:g} a dollar"
        )
    note = "; ".join([note, *noted] if note else noted) or None
    attempts = [o.to_json() for o in outcomes]
    rebuilt = {"summary": summarise(outcomes), "attempts": attempts, "comparison": comparison(attempts, rate)}
    return {**rebuilt, "note": note} if note else rebuilt


def with_counted_rows(data: dict[str, Any]) -> dict[str, Any]:
    """A stored summary with its table rows counted anew from its attempts (``summarise``, as a
    rebuilt one's are), and a note when its own rows say otherwise (edited, or written by a version
    that counted otherwise): the table then agrees with the attempts listed under it and with the
    comparison, which are counted from them too."""
    rows = summarise([listed_outcome(attempt) for attempt in data["attempts"]])
    stored = data["summary"]
    if len(stored) == len(rows) and all(
        all(old.get(key) == value for key, value in new.items()) for old, new in zip(stored, rows, strict=True)
    ):
        return data
    note = (
        f"{SUMMARY_FILE}'s table rows are not those its attempts give (an edited file, or one an older version "
        "wrote): the table is counted anew from its attempts"
    )
    return {**data, "summary": rows, "note": "; ".join(n for n in (data.get("note"), note) if n)}


def listed_outcome(attempt: dict[str, Any]) -> AttemptOutcome:
    """An attempt of summary.json (checked: ``summary_problem``) as the outcome it was written from,
    in what ``summarise`` counts."""
    return AttemptOutcome(
        pack=attempt["pack"],
        agent=attempt["agent"],
        directory=Path(str(attempt["directory"])),
        status=attempt["status"],
        elapsed_seconds=attempt["elapsed_seconds"],
        qualified_pass=attempt["qualified_pass"],
        error_free=attempt["error_free"],
        field_accuracy=attempt["field_accuracy"],
        tool_calls=attempt["tool_calls"],
        token_usage=None,
        selection=attempt.get("selection") or "selected",
    )


def with_links_said(data: dict[str, Any], batch_dir: Path) -> dict[str, Any]:
    """A stored summary with a note naming the attempt folders that are symbolic links, which
    every reader leaves out (``left_out_folders``): one added since, or they would go unsaid."""
    if is_attempt_folder(batch_dir):
        return data
    links = [name for name in left_out_folders(batch_dir) if (batch_dir / name).is_symlink()]
    if not links:
        return data
    return {**data, "note": "; ".join(n for n in (data.get("note"), left_out_note(links, batch_dir)) if n)}


def damage_notes(folders: list[AttemptFolder], left_out: list[str], batch_dir: Path | None = None) -> list[str]:
    """What a rebuilt summary says of the folders it could not count as they claim: those left
    out, and the attempts with no record, a record that cannot be counted, or a damaged trace."""
    said = [left_out_note(left_out, batch_dir)] if left_out else []
    unfinished = [f.name for f in folders if f.attempt is None and f.record_damage is None]
    if unfinished:
        said.append(
            f"{len(unfinished)} attempt(s) have no attempt.json: the batch is still running, was killed, "
            f"or could not write them (a full disk); counted as attempts, not as qualified passes, with field "
            f"accuracy 0 ({', '.join(unfinished)})"
        )
    unreadable = [f for f in folders if f.record_damage is not None]
    if unreadable:
        said.append(
            f"{len(unreadable)} attempt(s) have an attempt.json that cannot be read or counted "
            f"({'; '.join(f'{f.name}: {f.record_damage}' for f in unreadable)}); counted as attempts, not as "
            "qualified passes, with field accuracy 0"
        )
    untraced = [f for f in folders if f.trace_problem is not None]
    if untraced:
        said.append(
            f"{len(untraced)} attempt(s) have a damaged trace.jsonl "
            f"({'; '.join(f'{f.name}: {f.trace_damage}' for f in untraced)}): their qualified passes are not "
            "counted (the gates cannot be checked)"
        )
    return said


def agent_notes(folders: list[AttemptFolder], outcomes: list[AttemptOutcome]) -> list[str]:
    """What a rebuilt summary says of the damaged attempts whose files name no agent: in whose row
    they are counted (the agent their batch states, ``batch_agent``), or that they are in none (a
    row of an invented agent would be ranked)."""
    unnamed = [(f.name, o.agent) for f, o in zip(folders, outcomes, strict=True) if named_agent(f) is None]
    said = [f"{name}: {agent}" for name, agent in unnamed if agent is not None]
    notes = []
    if said:
        notes.append(
            f"{len(said)} damaged attempt(s) name no agent: counted in the row of the agent their batch's folder "
            f"names give ({', '.join(said)})"
        )
    if left := [name for name, agent in unnamed if agent is None]:
        notes.append(
            f"{len(left)} damaged attempt(s) name no agent, and the batch does not say which ran them "
            f"({', '.join(left)}): in no agent's row of the table or the comparison"
        )
    return notes
