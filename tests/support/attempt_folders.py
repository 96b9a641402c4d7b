"""Attempt folders as the runner writes them, made from the committed reference attempt of the
controlled form (qualified, error-free, field accuracy 1.0), for tests that damage them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sandbox import FIXTURES_DIR
from sandbox.runner.attempt import AttemptRecord

REFERENCE = FIXTURES_DIR / "attempts" / "reference" / "controlled-form"


def scored_attempt(folder: Path, record: bytes | None = None, *, agent: str = "a", traced: bool = True) -> Path:
    """An attempt folder the runner would write, qualified (the reference controlled-form's
    score.json); ``record``: its attempt.json's bytes instead of a readable record of ``agent``;
    ``traced``: with the reference's trace.jsonl (its header naming ``agent``), output and prompt."""
    folder.mkdir(parents=True)
    shutil.copy(REFERENCE / "score.json", folder / "score.json")
    if traced:
        for name in ("output.txt", "prompt.txt"):
            shutil.copy(REFERENCE / name, folder / name)
        header, *rest = (REFERENCE / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        header = json.dumps({**json.loads(header), "agent": agent}) + "\n"
        (folder / "trace.jsonl").write_text(header + "".join(rest), encoding="utf-8")
    good = AttemptRecord(pack="controlled-form", agent=agent, status="completed", elapsed_seconds=3.0).to_json()
    (folder / "attempt.json").write_bytes(good.encode() if record is None else record)
    return folder


def cut_trace_mid_line(folder: Path, line: int) -> None:
    """Cut ``folder``'s trace.jsonl in the middle of its line ``line`` (from 1), as a copy that stopped."""
    lines = (folder / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = "".join(lines[: line - 1]) + lines[line - 1][: len(lines[line - 1]) // 2]
    (folder / "trace.jsonl").write_text(kept, encoding="utf-8")
