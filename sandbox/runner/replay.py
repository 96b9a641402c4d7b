"""Reproduce a recorded attempt: re-issue its calls on a fresh run of the same pack, compare
every new result with the recorded one (ids and times ignored), report the first divergence,
and re-score the recorded output against the new trace.

Accepts what ``sandbox.runner.recordings`` reads: attempt folders and traces (this sandbox's,
and the minimal JSONL format ``{"seq": 1, "tool": "browser_navigate", "args": {...}, "ok": true,
"result": {...}}``: without ``result`` or ``error`` a call is re-issued but not compared), Inspect
eval logs, and OpenAI or Anthropic chat messages. What a recording holds of a result is
compared: the outcome (ok, or the error's type), and the result's fields it has.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring import score_attempt
from sandbox.runner.recordings import RecordedCall, Recording, article, load_recording
from toolserver.contract.policy import PolicyMode
from toolserver.contract.trace import parse_trace

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


def recorded_outcome(call: RecordedCall) -> dict:
    """What the recording says of a call, in the form it is compared."""
    if call.ok is False:
        return {"ok": False, **({"error_type": call.error_type} if call.error_type is not None else {})}
    return {"ok": True, **({"result": normalise(call.result)} if call.result is not None else {})}


def replayed_outcome(call: RecordedCall, reply: dict) -> dict:
    """The new reply, cut to what the recording holds of the call."""
    if not reply["ok"]:
        error = reply_error(reply)
        known = call.ok is not False or call.error_type is not None
        return {"ok": False, **({"error_type": error.get("type")} if known else {})}
    if call.ok is not True or call.result is None:
        return {"ok": True}
    result = normalise(reply.get("result"))
    if not call.whole and isinstance(result, dict):
        result = {key: value for key, value in result.items() if key in call.result}
    return {"ok": True, "result": result}


def reply_error(reply: dict) -> dict:
    error = reply.get("error")
    return error if isinstance(error, dict) else {"type": str(error)}


def call_difference(call: RecordedCall, reply: dict) -> str | None:
    """Where the new reply differs from the recorded one (None: it does not): the outcome first,
    then the error's type or the result."""
    recorded, replayed = recorded_outcome(call), replayed_outcome(call, reply)
    if recorded["ok"] != replayed["ok"]:
        if replayed["ok"]:
            return f".ok: recorded error {recorded.get('error_type') or '(type unknown)'}, replayed ok"
        error = reply_error(reply)
        return f".ok: recorded ok, replayed error {error.get('type')}: {short_repr(error.get('message'), 200)}"
    if recorded.get("error_type") != replayed.get("error_type"):  # names, not texts to show around
        return f".error_type: recorded {recorded.get('error_type')!r}, replayed {replayed.get('error_type')!r}"
    return first_difference(recorded, replayed)


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
        shorter = min(len(recorded), len(replayed))
        counts = ""
        if len(recorded) != len(replayed):
            counts = f" ({len(recorded)} items recorded, {len(replayed)} replayed)"
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found + counts
        if counts:  # the shorter list is the longer one's beginning: its first item beyond
            extra, said = (recorded, "missing in replay") if len(recorded) > shorter else (replayed, "new in replay")
            return f"{path}[{shorter}]: {said}: {short_repr(extra[shorter])}{counts}"
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
    not_sent: int = 0  # calls the recording's harness refused itself: the sandbox never saw them
    compared: int = 0
    first_divergence: dict | None = None
    rescore: dict | None = None
    run_id: str | None = None
    trace_problems: list[str] = field(default_factory=list)
    source: str = "attempt folder"  # the kind of recording replayed (see sandbox.runner.recordings)
    sample: str | None = None  # the Inspect sample replayed
    policy: str = ""  # the replay's: the recorded run's where its trace says it, else the server's
    block_state_changes: bool = False
    recorded_faults: list[str] = field(default_factory=list)  # injected into the recording, not into the replay
    answer_recorded: bool = True  # False: a bare trace, no answer to re-score
    not_read: int = 0  # recorded calls the replay could not make (``Recording.not_read``), up to --until
    other_pack: str | None = None  # the pack loaded is not the one the attempt ran with: its checksum then
    other_mirrors: str | None = None  # the mirrors served are not the ones the recording read: their checksum then

    def to_json(self) -> dict:
        return dict(self.__dict__)


async def replay(
    source: Path | Recording,
    *,
    sandbox,
    pack_id: str | None = None,
    until: int | None = None,
    keep_open: bool = False,
    sample: str | None = None,
    mirror_roots: tuple[Path, ...] | None = None,
) -> tuple[ReplayReport, Any]:
    """Replay ``source`` (a path: an attempt folder, a trace, an Inspect log or chat messages;
    or a recording already loaded). Returns the report and the new run (still open when
    ``keep_open``); ``mirror_roots``: the run's own mirror roots (None: the sandbox's)."""
    recording = source if isinstance(source, Recording) else load_recording(Path(source), sample)
    pack_id = pack_id or recording.pack
    if not pack_id:
        raise ValueError(f"{recording.path} ({article(recording.kind)}) names no pack: pass --pack")
    pack = load_pack(pack_id)
    site_key = recording.site_key
    report = ReplayReport(
        pack=pack.id,
        calls_recorded=len(recording.calls),
        trace_problems=recording.problems,
        source=recording.kind,
        sample=recording.sample,
    )
    if site_key:
        sandbox.host.profiles.pop(site_key, None)  # a fresh run starts from an empty profile
    # The recorded run's conditions, where its trace says them: a call refused there is refused here.
    # A run without an allow-list (policy none) refused no URL: its replay observes the pack's.
    modes: dict[str, PolicyMode] = {"enforce": "enforce", "observe": "observe", "none": "observe"}
    mode = modes.get(recording.policy or "", sandbox.config.policy)
    block = recording.block_state_changes
    policy = pack.policy(mode, sandbox.config.block_state_changes if block is None else block)
    report.policy, report.block_state_changes = mode, policy.block_state_changes
    report.recorded_faults, report.answer_recorded = recording.faults, recording.output is not None
    if recording.pack_checksum and recording.pack_checksum != pack.checksum():
        report.other_pack = recording.pack_checksum
    header = {"site_key": site_key, "agent": f"replay:{recording.path}"}
    run = sandbox.create_run(policy=policy, header=header, mirror_roots=mirror_roots)
    report.run_id = run.id
    if recording.mirror_checksum and recording.mirror_checksum != run.store.checksum():
        report.other_mirrors = recording.mirror_checksum
    started = time.monotonic()
    for call in recording.calls:
        if not call.sent:  # as in the recorded run, the sandbox does not see it: the counts gates stay alike
            report.not_sent += 1
            if until is not None and call.seq >= until:
                break
            continue
        reply = await run.call(call.tool, call.args)
        report.calls_replayed += 1
        if call.ok is not None:
            report.compared += 1
            difference = call_difference(call, reply)
            if difference and report.first_divergence is None:
                report.first_divergence = {"seq": call.seq, "tool": call.tool, "difference": difference}
        if until is not None and call.seq >= until:
            break
    # a recorded call the replay could not make diverges at its place: the calls after it ran on another state
    lost = [entry for entry in recording.not_read if until is None or entry["seq"] <= until]
    report.not_read = len(lost)
    if lost and (report.first_divergence is None or lost[0]["seq"] <= report.first_divergence["seq"]):
        report.first_divergence = dict(lost[0])
    if keep_open:
        return report, run
    elapsed = recording.elapsed_seconds or (time.monotonic() - started)
    await run.close()
    if recording.output is not None:  # a bare trace has no answer to score
        new_trace = parse_trace(run.trace.text())
        scored = score_attempt(pack, recording.output, new_trace, elapsed, site_key=site_key)
        report.rescore = scored.model_dump(mode="json")
    return report, run
