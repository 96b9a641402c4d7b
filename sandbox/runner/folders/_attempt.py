"""One attempt folder read back, written by this version, an older one or a killed run: every
file is optional; what is missing or unreadable is named in ``problems``, never raised."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.runner.attempt import AttemptRecord
from sandbox.runner.folders._records import read_attempt_record, score_problem
from sandbox.runner.reasons import failure_reasons
from toolserver.contract.trace import Trace, parse_trace

ATTEMPT_MARKERS = ("attempt.json", "trace.jsonl", "score.json", "output.txt")


def is_attempt_folder(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in ATTEMPT_MARKERS)


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
