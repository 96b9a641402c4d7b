"""Reproduce a recorded attempt: re-issue its calls on a fresh run of the same pack, compare
every new result with the recorded one (ids and times ignored), report the first divergence,
and re-score the recorded output against the new trace.

Accepts this sandbox's traces and the minimal JSONL format (one call per line:
``{"seq": 1, "tool": "browser_navigate", "args": {...}, "ok": true, "result": {...}}``;
``ok``/``result``/``error`` optional — without ``result`` a call is re-issued but not compared).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring import score_attempt
from toolserver.contract.trace import parse_trace, read_trace

VOLATILE_KEYS = {
    "session_id",
    "snapshot_id",
    "t",
    "wall",
    "t_start",
    "t_end",
    "wall_start",
    "wall_end",
    "run_id",
    "open_sessions",
    "closed",
}
_IDS = [
    (re.compile(r"ses_[0-9a-f]{12}"), "ses_*"),
    (re.compile(r"run_[0-9a-f]{12}"), "run_*"),
    (re.compile(r"\bs\d+\b(?=\))"), "s*"),
]


def normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, str):
        for pattern, replacement in _IDS:
            value = pattern.sub(replacement, value)
    return value


def comparable(ok: bool | None, result: Any, error: Any) -> dict:
    if ok is False or error:
        err = error if isinstance(error, dict) else {"type": str(error)}
        return {"ok": False, "error_type": err.get("type")}
    return {"ok": True, "result": normalise(result)}


def first_difference(recorded: Any, replayed: Any, path: str = "") -> str | None:
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed)):
            if key not in recorded or key not in replayed:
                return f"{path}.{key}: {'missing in replay' if key in recorded else 'new in replay'}"
            found = first_difference(recorded[key], replayed[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) != len(replayed):
            return f"{path}: {len(recorded)} items recorded, {len(replayed)} replayed"
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    if recorded != replayed:
        where = path or "(value)"
        if isinstance(recorded, str) and isinstance(replayed, str):
            return f"{where}: {text_difference(recorded, replayed)}"
        return f"{where}: recorded {short_repr(recorded)}, replayed {short_repr(replayed)}"
    return None


DIFF_CONTEXT = 40  # characters shown on each side of the first difference


def short_repr(value: Any, limit: int = 2 * DIFF_CONTEXT) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def text_difference(recorded: str, replayed: str) -> str:
    """Where two texts first differ, with the text around it from both (not their beginnings)."""
    index = next(
        (i for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)) if a != b),
        min(len(recorded), len(replayed)),
    )
    start = max(0, index - DIFF_CONTEXT)

    def around(text: str) -> str:
        cut = text[start : index + DIFF_CONTEXT]
        return ("…" if start else "") + repr(cut) + ("…" if index + DIFF_CONTEXT < len(text) else "")

    line = recorded.count("\n", 0, index) + 1
    return (
        f"first difference at character {index} (line {line}) of {len(recorded)} recorded / {len(replayed)} "
        f"replayed:\n  recorded {around(recorded)}\n  replayed {around(replayed)}"
    )


@dataclass
class ReplayReport:
    pack: str
    calls_recorded: int
    calls_replayed: int = 0
    compared: int = 0
    first_divergence: dict | None = None
    rescore: dict | None = None
    run_id: str | None = None
    trace_problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(self.__dict__)


def load_attempt(directory: Path) -> tuple[dict, Any, str]:
    directory = Path(directory)
    trace_file = directory / "trace.jsonl" if directory.is_dir() else directory
    if not trace_file.is_file():
        raise FileNotFoundError(f"no trace at {trace_file}")
    attempt_file = trace_file.parent / "attempt.json"
    attempt = json.loads(attempt_file.read_text(encoding="utf-8")) if attempt_file.is_file() else {}
    output_file = trace_file.parent / "output.txt"
    output = output_file.read_text(encoding="utf-8") if output_file.is_file() else ""
    return attempt, read_trace(trace_file), output


async def replay(
    directory: Path, *, sandbox, pack_id: str | None = None, until: int | None = None, keep_open: bool = False
) -> tuple[ReplayReport, Any]:
    """Returns the report and the new run (still open when ``keep_open``)."""
    attempt, recorded, output = load_attempt(directory)
    header = recorded.header or {}
    pack_id = pack_id or attempt.get("pack") or header.get("pack")
    if not pack_id:
        raise ValueError("the trace names no pack: pass --pack")
    pack = load_pack(pack_id)
    site_key = attempt.get("site_key") or header.get("site_key")
    report = ReplayReport(pack=pack.id, calls_recorded=len(recorded.calls), trace_problems=recorded.problems)
    if site_key:
        sandbox.host.profiles.pop(site_key, None)  # a fresh run starts from an empty profile
    run = sandbox.create_run(
        policy=pack.policy(sandbox.config.policy, sandbox.config.block_state_changes),
        header={"site_key": site_key, "agent": f"replay:{directory}"},
    )
    report.run_id = run.id
    started = time.monotonic()
    for call in recorded.calls:
        reply = await run.call(call.tool, call.args)
        report.calls_replayed += 1
        if call.result is not None or call.error is not None:
            report.compared += 1
            old = comparable(call.ok, call.result, call.error.model_dump() if call.error else None)
            new = comparable(reply["ok"], reply.get("result"), reply.get("error"))
            difference = first_difference(old, new)
            if difference and report.first_divergence is None:
                report.first_divergence = {"seq": call.seq, "tool": call.tool, "difference": difference}
        if until is not None and call.seq >= until:
            break
    if keep_open:
        return report, run
    elapsed = attempt.get("elapsed_seconds") or (time.monotonic() - started)
    await run.close()
    new_trace = parse_trace(run.trace.text())
    report.rescore = score_attempt(pack, output, new_trace, elapsed, site_key=site_key).model_dump(mode="json")
    return report, run
