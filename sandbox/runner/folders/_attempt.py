"""One attempt folder read back, written by this version, an older one or a killed run: every
file is optional; what is missing or unreadable is named in ``problems``, never raised.

What a damaged folder counts as (``qualified``, ``counted``; ``sandbox.runner.folders._outcome``):
the benchmark keeps every selected attempt, so a damaged one stays in the count, as an attempt
that proves nothing. With ``attempt.json`` missing (``unfinished``), or unreadable, whole or in a
field the counts rest on, or of another attempt than the folder's trace or score (``unreadable``),
how the agent ended is unknown: no qualified pass, field accuracy 0, time and cost unknown. With
``trace.jsonl`` damaged (a line cut short or not a trace line, no ``run_end`` line), there but not
read (unreadable, a folder, a link out of the folder) or missing, the gates cannot be checked
against it, and a qualified pass is not counted; the field accuracy, which rests on the answer,
still is. A folder that cannot be entered is ``unreadable`` as a whole, and no page is
written into it (``opened``).
Each says why in its reason."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.runner.attempt import AttemptRecord, read_attempt_record
from sandbox.runner.files import folder_file, read_tail
from sandbox.runner.folders._records import counted_field_damage, score_problem
from sandbox.runner.reasons import failure_reasons
from toolserver.contract.trace import TRACE_FORMAT, Trace, parse_trace

ATTEMPT_MARKERS = ("attempt.json", "trace.jsonl", "score.json", "output.txt")


def is_attempt_folder(path: Path) -> bool:
    try:
        return path.is_dir() and any((path / name).is_file() for name in ATTEMPT_MARKERS)
    except PermissionError:  # a folder this user may not enter: taken, and said unreadable (AttemptFolder.load)
        return True


def unopened(path: Path) -> str | None:
    """Why the attempt folder cannot be listed or entered, in words for its reason line, or None."""
    closed = closed_folder(path)
    return None if closed is None else f"the attempt folder is unreadable ({closed})"


def closed_folder(path: Path) -> str | None:
    """Why the folder cannot be listed or entered (a folder this user may not read, or may read
    but not search: its files then look absent), as the system says it, or None."""
    try:
        os.listdir(path)
        os.stat(os.path.join(path, "."))  # needs search (x) permission, as opening its files does
    except OSError as exc:
        return str(exc.strerror or exc)
    return None


def trace_damage(trace: Trace) -> str | None:
    """What is wrong with the trace's lines (cut short, not a trace line, its last ones missing), or
    None. A trace of a newer format than this version reads is not damaged: what it could not read is
    in ``problems``."""
    written = (trace.header or {}).get("format")
    if isinstance(written, int) and written > TRACE_FORMAT:
        return None
    lines = [problem for problem in trace.problems if problem.startswith("line ")]
    if lines:
        return f"trace.jsonl is damaged ({lines[0]}" + (f"; +{len(lines) - 1} more)" if len(lines) > 1 else ")")
    if trace.header is not None and trace.end is None:  # the runner scores a trace it closed: lines lost since
        return "trace.jsonl has no run_end line (cut short at a line's end: its last lines are missing)"
    return None


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
    record_damage: str | None = None  # why attempt.json, which is there, cannot be counted, if so
    trace_damage: str | None = None  # what is wrong with trace.jsonl (its lines, or it was not read), if anything
    opened: bool = True  # whether the folder could be listed (False: nothing in it was read, nor is written)

    @classmethod
    def load(cls, path: Path) -> AttemptFolder:
        folder = cls(Path(path))
        if (closed := unopened(folder.path)) is not None:  # its attempt is unreadable, never skipped
            folder.record_damage = closed
            folder.problems.append(folder.record_damage)
            folder.opened = False
            return folder
        folder._read_record()
        folder.score, damage = folder._json("score.json")
        if folder.score is not None and (problem := score_problem(folder.score)):
            damage = f"score.json is damaged ({problem})"
            folder.problems.append(f"{damage}: the attempt is taken as not scored")
            folder.score = None
        if damage is not None:
            folder.score_damage = f"{damage}: the attempt is taken as not scored"
        folder.output = folder._text("output.txt")
        folder.stderr = folder._text("agent.stderr.txt", required=False, tail=True)
        trace_text, unread = folder._read("trace.jsonl")
        # There but not read, or not there (the runner writes one for every attempt): the gates
        # cannot be checked against it.
        folder.trace_damage = "trace.jsonl is missing" if trace_text is None and unread is None else unread
        if trace_text is not None:
            folder.trace = parse_trace(trace_text)
            folder.problems += [f"trace.jsonl {p}" for p in folder.trace.problems]
            folder.trace_damage = trace_damage(folder.trace)
            if folder.trace.end is None and folder.trace.header is not None:
                folder.problems.append("trace.jsonl has no run_end line: its last lines are missing (a killed run?)")
        if folder.record_damage is None and (mixed := folder._mixed()) is not None:
            folder.problems.append(mixed)
            folder.record_damage = f"{mixed}: which attempt its files are of is unknown"
        return folder

    def _mixed(self) -> str | None:
        """What shows the record is of another attempt than the folder's trace or score (two
        batches copied into one folder, an edited file), or None. The runner writes all three for
        one run, the record last, with the score's verdict."""
        if self.attempt is None:
            return None
        header = (self.trace.header if self.trace else None) or {}
        ran, traced = self.attempt.run_id, header.get("run_id")
        if isinstance(ran, str) and isinstance(traced, str) and ran != traced:
            return f"attempt.json is of run {ran} and trace.jsonl of run {traced} (two attempts' files in one folder)"
        verdict, scored = self.attempt.qualified_pass, (self.score or {}).get("qualified_pass")
        if verdict is not None and self.score is not None and verdict != scored and not self.lost_reply:
            return (
                f"attempt.json says qualified_pass {json.dumps(verdict)} and score.json {json.dumps(scored)} (two "
                "attempts' files in one folder, or an edited file)"
            )
        return None

    def _read_record(self) -> None:
        """attempt.json as ``attempt`` (the fields it can read) and, when it cannot be counted,
        ``record_damage``: what is wrong and what is unknown for it."""
        data, damage = self._json("attempt.json")
        unknown = "how the agent ended"
        if data is not None:
            self.attempt, problems = read_attempt_record(data)
            self.problems += problems
            if self.attempt is None:
                damage = problems[-1]
            elif (found := counted_field_damage(data, self.attempt)) is not None:
                damage, unknown, name = found
                if not any(p.startswith(f"attempt.json field {name!r}") for p in problems):  # a null: unnamed yet
                    self.problems.append(damage)
        if damage is not None:
            self.record_damage = f"{damage}: {unknown} is unknown"

    def _text(self, name: str, required: bool = True, tail: bool = False) -> str | None:
        """The file's text (``tail``: its last ``STDERR_TAIL_BYTES`` only); None when it is not there,
        and said when ``required`` or when something else is there (a folder, a link out of the folder)."""
        return self._read(name, required, tail)[0]

    def _read(self, name: str, required: bool = True, tail: bool = False) -> tuple[str | None, str | None]:
        """``_text``, and why a file that is there was not read (None when read, or missing)."""
        file, odd = folder_file(self.path, name)  # a folder, a link loop, a link out of the folder: said
        if file is None:
            if odd is not None or required:
                self.problems.append(odd or f"{name} is missing")
            return None, odd
        try:
            return (read_tail(file) if tail else file.read_text(encoding="utf-8", errors="replace")), None
        except OSError as exc:
            self.problems.append(problem := f"{name} is unreadable ({exc.strerror or exc})")
            return None, problem

    def _json(self, name: str) -> tuple[dict[str, Any] | None, str | None]:
        """The file's object, or None and what is wrong with it (None when it is missing: named
        in ``problems`` as missing)."""
        file, odd = folder_file(self.path, name)
        if file is None:
            self.problems.append(odd or f"{name} is missing")
            return None, odd
        try:
            data = json.loads(file.read_bytes().decode("utf-8"))  # the runner writes UTF-8: other bytes are damage
            problem = None if isinstance(data, dict) else f"{name} is not a JSON object"
        except OSError as exc:
            problem = f"{name} is unreadable ({exc.strerror or exc})"
        except UnicodeDecodeError as exc:
            problem = f"{name} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        except json.JSONDecodeError as exc:
            problem = f"{name} is not valid JSON ({exc})"
        except RecursionError:  # nested deeper than Python's json reads: no file the runner writes
            problem = f"{name} is not valid JSON (nested too deep)"
        except ValueError as exc:  # a number past Python's 4,300 digits: no file the runner writes either
            problem = f"{name} is not valid JSON ({str(exc)[:120]})"
        if problem is not None:
            self.problems.append(problem)
            return None, problem
        return data, None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def pack(self) -> str | None:
        """The pack the attempt ran: its record's, else the one score.json or the trace header names
        (a name only: a damaged file's ``5`` is none)."""
        if self.attempt is not None:
            return self.attempt.pack
        return self.named("pack")

    def named(self, key: str) -> str | None:
        """The name score.json or else the trace header gives under ``key`` (pack, agent), if a string."""
        for source in (self.score, self.trace.header if self.trace else None):
            if source and isinstance(source.get(key), str) and source[key]:
                return source[key]
        return None

    @property
    def counted(self) -> bool:
        """Whether the attempt's score may count: its record (attempt.json, which the runner writes
        last) is there and readable in the fields the counts rest on."""
        return self.attempt is not None and self.record_damage is None

    @property
    def lost_reply(self) -> bool:
        """Whether the record is the executor's, not the attempt's (Ray: every worker it ran on died,
        or the batch was stopped, before the attempt's reply came back): the score.json beside it, if
        any, was brought back from the dead worker's node and is not counted, as the summary had it."""
        return self.attempt is not None and self.attempt.executor is not None

    @property
    def qualified(self) -> bool | None:
        """The score's verdict (None: not scored), counted only with the attempt's record and a trace
        that backs it: with attempt.json missing or unreadable, how the agent ended is unknown; with
        trace.jsonl damaged, the gates cannot be checked. Either way the attempt is no qualified
        pass, whatever score.json says."""
        if self.score is None:
            return None
        if self.lost_reply:
            return False
        return self.counted and self.trace_damage is None and self.score.get("qualified_pass") is True

    @property
    def record_problem(self) -> str | None:
        """Why the attempt's record cannot be counted, in words for its reason line; None when it can."""
        if self.record_damage is not None:
            return f"{self.record_damage}, and its score is not counted"
        if self.attempt is None:
            return (
                "attempt.json is missing: the attempt did not finish (its batch still running, killed, or a "
                "full disk), and its score is not counted"
            )
        return None

    @property
    def trace_problem(self) -> str | None:
        """Why a counted record's qualified pass is not counted (its trace is damaged), in words for
        its reason line; None when it is, or there is no pass to take back."""
        if self.trace_damage is None or not self.counted or not (self.score or {}).get("qualified_pass"):
            return None
        return f"{self.trace_damage}: the gates cannot be checked against it, and its qualified pass is not counted"

    def reasons(self) -> list[str]:
        reasons = failure_reasons(self.attempt if self.counted else None, self.score, self.stderr)
        if self.score_damage is not None:
            reasons = [self.score_damage if r.startswith("no score.json") else r for r in reasons]
        return [problem for problem in (self.record_problem, self.trace_problem) if problem] + reasons
