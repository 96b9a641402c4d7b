"""What the HTML report shows, as plain data built from an attempt folder: the verdict and
why, the field table, gate violations and the timeline of tool calls with the events each
caused and its screenshot. Everything is optional: a folder from an older version or a
killed run shows what there is and names what is missing."""

from __future__ import annotations

import itertools
import json
import math
import os
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from sandbox.evaluation.packs import PackError, load_pack
from sandbox.runner.files import folder_file
from sandbox.runner.folders import AttemptFolder
from toolserver.contract.trace import CallRecord

HIGHLIGHTED_EVENTS = {"blocked_request", "policy_violation", "state_change", "server_fault", "settle_timeout"}
SUMMARY_CHARS = 160  # one value in the result summary
DETAIL_CHARS = 20_000  # the full JSON behind a <details>
FIELD_CHARS = 2_000  # a field's expected or got value in the table
# The timeline shows the first and last calls whole, and between them only those a gate failure or
# the replay's divergence points to: a call's view is up to ~25 KB, so a 10,000-call trace made a
# page of ~300 MB; at most 2 x 100 calls keep it under ~5 MB, and trace.jsonl has every call.
TIMELINE_ENDS = 100
# The rest of a page's bounds: a gate failing every call of a loop pointed to each one (3,000
# calls made a 5.8 MB page), a call's events and result keys were all listed (20,000 state changes
# made 8.7 MB), and a transcript of 3,000 turns made 17.9 MB.
POINTED_CALLS = 100  # of the calls between the ends, those a gate failure points to, shown whole
CALL_EVENTS = 50  # a call's events listed
SUMMARY_KEYS = 40  # a result's top-level keys in its summary
TRANSCRIPT_ENTRIES = 400  # a transcript's lines shown (its first)


def href(path: str) -> str:
    """A file's relative path as a link: every character a URL gives a meaning to quoted, so a
    folder named ``javascript:...`` (a summary.json's ``directory``) or ``a#b`` is a file still,
    and a name that is not UTF-8 links to its own bytes. A lone surrogate no file name can hold (a
    summary.json's ``"x\\ud800"``) is linked as its escape, a file that is not there: it never raises."""
    try:
        return urllib.parse.quote(path, errors="surrogateescape")
    except UnicodeEncodeError:
        return urllib.parse.quote(path, errors="backslashreplace")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def clipped_pair(expected: Any, got: Any, limit: int = FIELD_CHARS) -> tuple[str, str]:
    """Two values as JSON, a long one cut to ``limit`` characters around where the two first differ
    (two long values that differ past a plain cut would read the same), with its whole length."""
    texts = json.dumps(expected, ensure_ascii=False), json.dumps(got, ensure_ascii=False)
    if max(map(len, texts)) <= limit:
        return texts
    index = next((i for i, (a, b) in enumerate(zip(*texts, strict=False)) if a != b), min(map(len, texts)))
    start = max(0, index - limit // 2) if index >= limit else 0

    def cut(text: str) -> str:
        if len(text) <= limit:
            return text
        end = start + limit
        return f"{'…' if start else ''}{text[start:end]}{'…' if end < len(text) else ''} ({len(text)} characters)"

    return cut(texts[0]), cut(texts[1])


def as_json(value: Any, limit: int = DETAIL_CHARS) -> str:
    return clip(json.dumps(value, ensure_ascii=False, indent=1), limit)


def result_summary(result: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Each top-level key of a result, its value cut short (a snapshot's text is cut, not shown whole)."""
    if not result:
        return []
    rows = [
        (str(key), clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), SUMMARY_CHARS))
        for key, value in itertools.islice(result.items(), SUMMARY_KEYS)
    ]
    if len(result) > SUMMARY_KEYS:
        rows.append(("…", f"{len(result) - SUMMARY_KEYS} more keys not shown (the full JSON has them)"))
    return rows


@dataclass
class EventView:
    kind: str
    data: str
    highlighted: bool


@dataclass
class CallView:
    seq: int
    tool: str
    ok: bool
    args: str
    summary: list[tuple[str, str]]
    result: str
    error: str | None
    seconds: float | None  # None: the trace's times are no duration (NaN, infinite, backwards)
    url_before: str | None
    url_after: str | None
    events: list[EventView]
    screenshot: str | None
    screenshot_problem: str | None  # why the call's screenshot is not shown, when it is there
    gate_failures: list[str] = field(default_factory=list)
    divergence: str | None = None


@dataclass
class FieldView:
    name: str
    kind: str
    critical: bool
    correct: bool
    expected: str
    got: str
    detail: str | None
    evidence: str | None  # None: the rule asks for no evidence


def _events(call: CallRecord) -> list[EventView]:
    """The call's events; a kind that is no name (a damaged or edited trace's ``["x"]``) shown as its
    JSON text, never highlighted."""
    views = []
    for event in call.events[:CALL_EVENTS]:
        kind = event.get("kind", "?")
        views.append(
            EventView(
                kind if isinstance(kind, str) else clip(json.dumps(kind, ensure_ascii=False), 200),
                clip(json.dumps(event.get("data", {}), ensure_ascii=False), 400),
                isinstance(kind, str) and kind in HIGHLIGHTED_EVENTS,
            )
        )
    if len(call.events) > CALL_EVENTS:
        views.append(
            EventView("…", f"{len(call.events) - CALL_EVENTS} more events not shown (trace.jsonl has them)", False)
        )
    return views


def _screenshot(folder: AttemptFolder, call: CallRecord) -> tuple[str | None, str | None]:
    """The call's screenshot, when it is a file of the attempt folder (as every other file the page
    links, ``folder_file``): a damaged or edited trace's ``../x.png`` or ``/etc/...``, or a symbolic
    link out of the folder, would have the page show a file from elsewhere. Else None, and why it is
    not shown (None too when it is missing: ``--screenshots failures`` deletes them)."""
    if not call.screenshot:
        return None, None
    if os.path.isabs(call.screenshot) or os.path.normpath(call.screenshot).split(os.sep)[0] == os.pardir:
        return None, f"the trace names {call.screenshot}, outside the attempt folder: not shown"
    file, odd = folder_file(folder.path, call.screenshot)
    return (href(call.screenshot) if file is not None else None), (f"{odd}: not shown" if odd else None)


@dataclass
class LeftOut:
    """Calls of the timeline not shown (``TIMELINE_ENDS``): how many, from which seq to which."""

    left_out: int
    first_seq: int
    last_seq: int
    shown_at_each_end: int = TIMELINE_ENDS


def timeline(folder: AttemptFolder, divergence: dict | None = None) -> list[CallView | LeftOut]:
    """The calls' views: the first and last ``TIMELINE_ENDS`` and any a gate failure or the divergence
    points to (their links lead somewhere); each run of calls left out between them as a ``LeftOut``."""
    if folder.trace is None:
        return []
    gates: dict[int, list[str]] = {}
    for failure in ((folder.score or {}).get("gates") or {}).get("failures", []):
        if isinstance(failure.get("seq"), int):  # a call's; None: no single call is at fault
            gates.setdefault(failure["seq"], []).append(f"{failure['gate']}: {failure['message']}")
    calls = folder.trace.calls
    between = {call.seq for call in calls[TIMELINE_ENDS : len(calls) - TIMELINE_ENDS]}
    pointed: set[Any] = set(sorted(seq for seq in gates if seq in between)[:POINTED_CALLS])
    if divergence:
        pointed.add(divergence.get("seq"))
    views: list[CallView | LeftOut] = []
    for index, call in enumerate(calls):
        if TIMELINE_ENDS <= index < len(calls) - TIMELINE_ENDS and call.seq not in pointed:
            if views and isinstance(views[-1], LeftOut):
                views[-1].left_out += 1
                views[-1].last_seq = call.seq
            else:
                views.append(LeftOut(1, call.seq, call.seq))
            continue
        screenshot, unshown = _screenshot(folder, call)
        views.append(
            CallView(
                seq=call.seq,
                tool=call.tool,
                ok=call.ok,
                args=clip(json.dumps(call.args, ensure_ascii=False), 2000),
                summary=result_summary(call.result),
                result=as_json(call.result),
                error=clip(f"{call.error.type}: {call.error.message}", 2000) if call.error else None,
                seconds=duration(call.t_start, call.t_end),
                url_before=clip(call.url_before, 2000) if call.url_before else call.url_before,
                url_after=clip(call.url_after, 2000) if call.url_after else call.url_after,
                events=_events(call),
                screenshot=screenshot,
                screenshot_problem=unshown,
                gate_failures=gates.get(call.seq, []),
                divergence=divergence["difference"] if divergence and divergence.get("seq") == call.seq else None,
            )
        )
    return views


def duration(start: float, end: float) -> float | None:
    """A call's seconds, or None when its times make none (a damaged trace's NaN showed ``nan s``)."""
    seconds = end - start
    return round(seconds, 3) if math.isfinite(seconds) and seconds >= 0 else None


def _evidence(pack, name: str, failures: dict[str, str]) -> str | None:
    """Evidence found or not, and the accepted sources (None: the rule asks for none)."""
    if pack is None:
        return "not found: " + failures[name] if name in failures else None
    try:
        sources = pack.rules.rule(name).accepted_sources
    except KeyError:
        return None
    if not sources:
        return None
    where = ", ".join(f"{s} ({pack.rules.evidence_sources[s].url})" for s in sources)
    return f"not found: {failures[name]} — accepted: {where}" if name in failures else f"quote found in {where}"


def _scoring_pack(folder: AttemptFolder):
    """The pack the score was made with, for rule kinds and evidence sources (None: unknown here)."""
    name = (folder.score or {}).get("scoring_pack") or folder.pack
    try:
        return load_pack(name) if isinstance(name, str) and name else None
    except (PackError, OSError, ValueError):  # a name no file can have (a NUL, too long) is none either
        return None


def _rule_kind(pack, name: str) -> str:
    try:
        return pack.rules.rule(name).kind if pack else "?"
    except KeyError:
        return "?"


def fields(folder: AttemptFolder) -> list[FieldView]:
    score = folder.score or {}
    pack = _scoring_pack(folder)
    failures = {f["field"]: f["message"] for f in (score.get("evidence") or {}).get("failures", [])}
    views = []
    for f in score.get("fields", []):
        kind = _rule_kind(pack, f["name"])
        views.append(
            FieldView(
                f["name"],
                kind,
                f["critical"],
                f["correct"],
                *clipped_pair(f["expected"], f["got"]),
                f.get("detail"),
                _evidence(pack, f["name"], failures),
            )
        )
    return views


@dataclass
class TranscriptEntry:
    heading: str
    text: str


def transcript(folder: AttemptFolder, problems: list[str]) -> list[TranscriptEntry]:
    """``transcript.jsonl`` (model agents): one entry per line; a line that does not parse is shown as is.
    A file that cannot be read is added to ``problems`` (the page lists it), not raised."""
    file, odd = folder_file(folder.path, "transcript.jsonl")  # a link out of the folder is not read
    if file is None:
        if odd is not None:  # a folder, a link out of the attempt folder: said, as the page promises
            problems.append(f"{odd}: no transcript shown")
        return []
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"transcript.jsonl is unreadable ({exc.strerror or exc}): no transcript shown")
        return []
    entries = []
    # split at newlines only: an older writer left U+2028 and the like raw inside a line's strings
    lines = [(number, line) for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if len(lines) > TRANSCRIPT_ENTRIES:
        problems.append(
            f"transcript.jsonl has {len(lines)} lines: its first {TRANSCRIPT_ENTRIES} are shown (the file has them all)"
        )
    for number, line in lines[:TRANSCRIPT_ENTRIES]:
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, a number past 4,300 digits, nested deeper than Python reads
            entries.append(TranscriptEntry(f"line {number} (unreadable)", clip(line, 2000)))
            continue
        if not isinstance(data, dict):
            entries.append(TranscriptEntry(f"line {number}", clip(line, 2000)))
            continue
        heading = (
            " · ".join(str(data[k]) for k in ("turn", "role", "kind") if data.get(k) is not None) or f"line {number}"
        )
        body = {k: v for k, v in data.items() if k not in ("turn", "role", "kind")}
        entries.append(TranscriptEntry(heading, as_json(body, 6000)))
    return entries
