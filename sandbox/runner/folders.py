"""Reading attempt and batch folders back, including folders written by older versions or
by a killed run: every file is optional; what is missing or unreadable is named in
``problems``, never raised.

    AttemptFolder.load(path)  one attempt (attempt.json as an ``AttemptRecord``, score.json,
                              output.txt, trace.jsonl, agent.stderr.txt, transcript.jsonl, shots/)
    read_attempt_record(data) attempt.json's data as an AttemptRecord, unreadable fields left out
    batch_attempts(path)      the attempt folders of a batch folder, in name order
    left_out_folders(path)    a batch folder's folders with attempt files under a name the runner never gives
    outcome(folder)           the folder as an AttemptOutcome (for the summary table)
    reselected(outcomes)      run selection (replaced, approved replacement) read back from folder names
    read_summary(batch_dir)   summary.json, or the same data rebuilt for an older batch
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sandbox.runner.attempt import UNFINISHED, UNREADABLE, AttemptOutcome, AttemptRecord, attempt_status
from sandbox.runner.batch import SUMMARY_FILE, summarise
from sandbox.runner.compare import comparison
from sandbox.runner.files import rerun_name, rerun_of
from sandbox.runner.prices import DEFAULT_CREDITS_PER_DOLLAR, finite_number
from sandbox.runner.reasons import failure_reasons
from sandbox.runner.selection import interruption
from toolserver.contract.trace import Trace, parse_trace

ATTEMPT_MARKERS = ("attempt.json", "trace.jsonl", "score.json", "output.txt")


# The names the runner gives attempt folders in a batch (``run_batch``, ``rerun_name``): ``<pack>-<n>``,
# ``<agent>--<pack>-<n>`` with several agents, ``<folder>-r<k>`` for a re-run. Another folder with
# attempt files is no attempt of the batch: a copy (``bid-intake-1.bak``) counted twice.
RUNNER_ATTEMPT_NAME = re.compile(r".+-[1-9][0-9]*(?:-r[1-9][0-9]*)?")
RUNNER_NAMES_SAID = "<pack>-<n>, <agent>--<pack>-<n>, a re-run <folder>-r<k>"


def is_attempt_folder(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in ATTEMPT_MARKERS)


def runner_named(path: Path) -> bool:
    """Whether ``path``'s name is one the runner gives an attempt folder of a batch."""
    return RUNNER_ATTEMPT_NAME.fullmatch(path.name) is not None


def read_attempt_record(data: dict[str, Any]) -> tuple[AttemptRecord | None, list[str]]:
    """``attempt.json``'s data as an ``AttemptRecord`` and what could not be read: a field this
    version does not know, or of the wrong type, is left out and named (None: no pack named)."""
    data = dict(data)
    problems: list[str] = []
    while True:
        try:
            return AttemptRecord.model_validate(data), problems
        except ValidationError as exc:
            unreadable = {str(error["loc"][0]): error["msg"] for error in exc.errors() if error["loc"]}
            if not unreadable or not unreadable.keys() <= data.keys() or "pack" in unreadable:
                why = "; ".join(f"{name}: {message}" for name, message in unreadable.items()) or str(exc)
                return None, [*problems, f"attempt.json is unreadable ({why})"]
            for name, message in sorted(unreadable.items()):
                problems.append(f"attempt.json field {name!r} left out: {message}")
                del data[name]


@dataclass
class AttemptFolder:
    path: Path
    attempt: AttemptRecord | None = None
    score: dict[str, Any] | None = None
    output: str | None = None
    trace: Trace | None = None
    stderr: str | None = None
    problems: list[str] = field(default_factory=list)
    score_damage: str | None = None  # why score.json was not taken (an edited file), if so
    record_damage: str | None = None  # why attempt.json, which is there, was not taken, if so

    @classmethod
    def load(cls, path: Path) -> AttemptFolder:
        folder = cls(Path(path))
        attempt, folder.record_damage = folder._json("attempt.json")
        if attempt is not None:
            folder.attempt, problems = read_attempt_record(attempt)
            folder.problems += problems
            if folder.attempt is None:
                folder.record_damage = problems[-1]
        folder.score, damage = folder._json("score.json")
        if folder.score is not None and (problem := score_problem(folder.score)):
            damage = f"score.json is damaged ({problem})"
            folder.problems.append(f"{damage}: the attempt is taken as not scored")
            folder.score = None
        if damage is not None:
            folder.score_damage = f"{damage}: the attempt is taken as not scored"
        folder.output = folder._text("output.txt")
        folder.stderr = folder._text("agent.stderr.txt", required=False)
        trace_text = folder._text("trace.jsonl")
        if trace_text is not None:
            folder.trace = parse_trace(trace_text)
            folder.problems += [f"trace.jsonl {p}" for p in folder.trace.problems]
            if folder.trace.end is None and folder.trace.header is not None:
                folder.problems.append("trace.jsonl has no run_end line: the run was cut short (killed?)")
        return folder

    def _text(self, name: str, required: bool = True) -> str | None:
        file = self.path / name
        if not file.is_file():
            if required:
                self.problems.append(f"{name} is missing")
            return None
        try:
            return file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.problems.append(f"{name} is unreadable: {exc}")
            return None

    def _json(self, name: str) -> tuple[dict[str, Any] | None, str | None]:
        """The file's object, or None and what is wrong with it (None when it is missing: named
        in ``problems`` as missing)."""
        file = self.path / name
        if not file.is_file():
            self.problems.append(f"{name} is missing")
            return None, None
        try:
            data = json.loads(file.read_bytes().decode("utf-8"))  # the runner writes UTF-8: other bytes are damage
            problem = None if isinstance(data, dict) else f"{name} is not a JSON object"
        except OSError as exc:
            problem = f"{name} is unreadable: {exc.strerror or exc}"
        except UnicodeDecodeError as exc:
            problem = f"{name} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        except json.JSONDecodeError as exc:
            problem = f"{name} is not valid JSON ({exc})"
        if problem is not None:
            self.problems.append(problem)
            return None, problem
        return data, None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def pack(self) -> str | None:
        if self.attempt is not None:
            return self.attempt.pack
        for source in (self.score, self.trace.header if self.trace else None):
            if source and source.get("pack"):
                return source["pack"]
        return None

    @property
    def qualified(self) -> bool | None:
        """The score's verdict (None: not scored), counted only with the attempt's record: with
        attempt.json missing (the runner writes it last) or unreadable, how the agent ended is
        unknown, and the attempt is no qualified pass whatever score.json says."""
        if self.score is None:
            return None
        return self.attempt is not None and self.score.get("qualified_pass") is True

    @property
    def record_problem(self) -> str | None:
        """Why the attempt has no record (attempt.json), in words for its reason line; None when it has one."""
        if self.attempt is not None:
            return None
        if self.record_damage is not None:
            return f"{self.record_damage}: how the agent ended is unknown, and its score is not counted"
        return (
            "attempt.json is missing: the attempt did not finish (its batch still running, killed, or a "
            "full disk), and its score is not counted"
        )

    def reasons(self) -> list[str]:
        reasons = failure_reasons(self.attempt, self.score, self.stderr)
        if self.score_damage is not None:
            reasons = [self.score_damage if r.startswith("no score.json") else r for r in reasons]
        return reasons if self.record_problem is None else [self.record_problem, *reasons]


def batch_attempts(path: Path) -> list[AttemptFolder]:
    """The attempt folders of a batch folder, in name order (not those ``left_out_folders`` names)."""
    return [AttemptFolder.load(p) for p in _attempt_paths(path)[0]]


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


def outcome(folder: AttemptFolder) -> AttemptOutcome:
    attempt, score = folder.attempt or AttemptRecord(pack=folder.pack or folder.name), folder.score or {}
    calls = attempt.tool_calls_total
    if calls is None:
        calls = len(folder.trace.calls) if folder.trace else 0
    header = folder.trace.header if folder.trace is not None and folder.trace.header else {}
    # No attempt.json: the attempt is still running, or its batch was killed before writing it
    # (unfinished); one there that cannot be read (unreadable): how it ended is unknown all the same.
    status = attempt.status or (
        "unknown" if folder.attempt else UNREADABLE if folder.record_damage is not None else UNFINISHED
    )
    return AttemptOutcome(
        pack=folder.pack or folder.name,
        agent=attempt.agent or str(header.get("agent") or "unknown"),
        directory=folder.path,
        status=attempt_status(status, score.get("status")),
        elapsed_seconds=float(attempt.elapsed_seconds or 0.0),
        qualified_pass=folder.qualified is True,  # a damaged score.json's "yes" is no pass, nor one without a record
        error_free=folder.qualified is True and score.get("error_free") is True,
        field_accuracy=number_or_zero(score.get("field_accuracy")),
        tool_calls=int(calls),
        token_usage=attempt.token_usage,
        reason="; ".join(folder.reasons()),
        cost_usd=attempt.cost_usd,
        model=(attempt.agent_details or {}).get("model"),
        pack_checksum=attempt.pack_checksum,
    )


def number_or_zero(value: Any) -> float:
    """A score's number as a float; 0 for what is none (a damaged file's ``"abc"``, ``NaN``)."""
    if finite_number(value):
        return float(value)
    return 0.0


def reselected(outcomes: list[AttemptOutcome]) -> list[AttemptOutcome]:
    """Run selection as the batch made it, read back from the folder names: ``<folder>-r<k>`` is
    the approved replacement of ``<folder>`` (k = 1) or of ``<folder>-r<k-1>``, which it replaced."""
    by_name = {o.directory.name: o for o in outcomes}
    replaces: dict[str, str] = {}
    for name in by_name:
        if (rerun := rerun_of(name)) is not None:
            first, k = rerun
            earlier = first if k == 1 else rerun_name(first, k - 1)
            if earlier in by_name:
                replaces[name] = earlier
    replaced = set(replaces.values())
    result = []
    for o in outcomes:
        name = o.directory.name
        if name in replaced:
            o = dataclasses.replace(o, interruption=interruption(o), selection="replaced")
        elif name in replaces:
            o = dataclasses.replace(
                o, interruption=interruption(o), selection="approved replacement", replaces=replaces[name]
            )
        else:  # interrupted and not replaced, or not interrupted: as the batch said it
            o = dataclasses.replace(o, interruption=interruption(o))
        result.append(o)
    return result


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


# What the readers take from every entry of a summary.json (``summarise``'s rows; of
# ``AttemptOutcome.to_json``'s attempts, those older batches have too), with its JSON type: an entry
# without one, or with another type, is a damaged file.
NUMBER = (int, float)
SUMMARY_ROW_KEYS: dict[str, Any] = {
    "pack": str, "agent": str, "attempts": int, "qualified_passes": int, "error_free_passes": int,
    "mean_field_accuracy": NUMBER, "median_seconds": NUMBER, "mean_tool_calls": NUMBER, "statuses": dict,
}  # fmt: skip
ATTEMPT_KEYS: dict[str, Any] = {
    "pack": str, "agent": str, "directory": str, "status": str, "elapsed_seconds": NUMBER, "qualified_pass": bool,
    "error_free": bool, "field_accuracy": NUMBER, "tool_calls": int,
}  # fmt: skip


SCORE_KEYS: dict[str, Any] = {  # as 0.1.0 wrote them too (its reports had no status)
    "qualified_pass": bool, "error_free": bool, "field_accuracy": NUMBER, "fields": list,
    "evidence": dict, "output_contract": dict, "gates": dict,
}  # fmt: skip
OPTIONAL_ATTEMPT_KEYS: dict[str, Any] = {"cost_usd": NUMBER, "selection": str, "interruption": str}
KIND_SAID = {
    str: "a string", int: "a whole number", NUMBER: "a number", bool: "true or false", dict: "an object",
    list: "a list",
}  # fmt: skip


def score_problem(data: dict[str, Any]) -> str | None:
    """What makes ``data`` no score report the readers can show (an edited or damaged file), or None."""
    for key, kind in SCORE_KEYS.items():
        value = data.get(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            return f"{key} is {value!r}, not {KIND_SAID[kind]}"
    if "status" in data and not isinstance(data["status"], str):
        return f"status is {data['status']!r}, not {KIND_SAID[str]}"
    evidence = data["evidence"]
    for key, kind in (("score", NUMBER), ("valid", int), ("required", int)):
        if not isinstance(evidence.get(key), kind) or isinstance(evidence.get(key), bool):
            return f"evidence.{key} is {evidence.get(key)!r}, not {KIND_SAID[kind]}"
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
                if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                    return f"its {what} {number} has {key} {value!r}, not {KIND_SAID[kind]}"
    for number, entry in enumerate(data["attempts"], start=1):
        for key, kind in OPTIONAL_ATTEMPT_KEYS.items():
            value = entry.get(key)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                return f"its attempt {number} has {key} {value!r}, not {KIND_SAID[kind]} or null"
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


def read_summary(batch_dir: Path) -> dict[str, Any]:
    """The batch's ``summary.json``, or the same data rebuilt from its attempt folders (older
    batches have none; one whose file is unreadable gets a ``note`` saying so). Raises
    ``FileNotFoundError`` when the folder holds no attempt."""
    batch_dir = Path(batch_dir)
    file = batch_dir / SUMMARY_FILE
    note = None
    if file.is_file():
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            problem = summary_problem(data, batch_dir)
            if problem is None:
                return with_local_folders(data, batch_dir)
            raise ValueError(problem)
        except (OSError, ValueError) as exc:  # cut short, edited, not UTF-8: the attempt folders still say it all
            note = f"{file} is unreadable ({str(exc).splitlines()[0][:200]}); rebuilt from the attempt folders"
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
            + (f"; {left_out_note(left_out)}" if left_out else "")
        )
    outcomes = reselected([outcome(f) for f in folders])
    said = [left_out_note(left_out)] if left_out else []
    unfinished = [o.directory.name for o in outcomes if o.status == UNFINISHED]
    if unfinished:
        said.append(
            f"{len(unfinished)} attempt(s) have no attempt.json: the batch is still running, was killed, "
            f"or could not write them (a full disk); not counted as qualified passes ({', '.join(unfinished)})"
        )
    unreadable = [f for f in folders if f.attempt is None and f.record_damage is not None]
    if unreadable:
        said.append(
            f"{len(unreadable)} attempt(s) have an attempt.json that cannot be read "
            f"({'; '.join(f'{f.name}: {f.record_damage}' for f in unreadable)}): how they ended is unknown; "
            "not counted as qualified passes"
        )
    if said:
        note = "; ".join([note, *said] if note else said)
    rates = {f.attempt.credits_per_dollar for f in folders if f.attempt and f.attempt.credits_per_dollar}
    attempts = [o.to_json() for o in outcomes]
    rate = rates.pop() if len(rates) == 1 else DEFAULT_CREDITS_PER_DOLLAR
    rebuilt = {"summary": summarise(outcomes), "attempts": attempts, "comparison": comparison(attempts, rate)}
    return {**rebuilt, "note": note} if note else rebuilt
