"""Recorded attempts for ``sandbox replay``, whatever recorded them, told apart by their content
(never by the file name alone):

- an attempt folder, or a trace file: this sandbox's traces, or the minimal JSONL format of
  other harnesses (``{"seq", "tool", "args", "ok"?, "result"?, "error"?}`` per line);
- an Inspect eval log (``.eval`` or ``.json``): one sample's tool events in order (or, for a
  log without events, its assistant tool calls and tool messages);
- OpenAI chat-completions messages: a JSON list of messages (or an object with ``messages``)
  whose assistant messages carry ``tool_calls: [{"id", "function": {"name", "arguments"}}]``,
  answered by ``{"role": "tool", "tool_call_id", "content"}``;
- Anthropic messages: assistant ``content`` blocks ``{"type": "tool_use", "id", "name",
  "input"}``, answered by user blocks ``{"type": "tool_result", "tool_use_id", "content",
  "is_error"}``.

Each becomes a ``Recording``: the calls in order, each with what the recording says it
answered (``RecordedCall``), the pack and site key the source names, and the final answer to
re-score. A tool result is read from the text the agent got: this sandbox's reply
(``{"ok", "result" | "error"}``, as the sandbox's own model agents send it), the MCP
transport's text (a snapshot's text and its page facts as JSON, compact JSON otherwise, an
error's ``{"type", "message"}``), or an Inspect error (``"type: message"``). Text that is none
of these is compared by its outcome alone (ok or error), or not at all when even that is unknown.

Inspect logs need the ``[inspect]`` extra, imported only when one is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sandbox.runner.attempt import read_attempt_record
from sandbox.runner.files import folder_file
from toolserver.contract.trace import TYPED_MESSAGE, UNKNOWN_ERROR, CallRecord, normalise_call, parse_trace

ZIP_MAGIC = b"PK\x03\x04"  # an Inspect .eval log is a zip file
# What the sandbox's Inspect task keeps in a sample's metadata (sandbox.integrations.inspect), as a
# log re-scored later reads it: the agent's time, a duration; why the model gave no answer (a limit)
INSPECT_ELAPSED = "sandbox_elapsed_seconds"
INSPECT_CUT_OFF = "sandbox_cut_off"
TRACE_LINE_TYPES = {"run", "call", "event", "run_end"}
KINDS_READ = (
    "an attempt folder, a trace (JSONL), an Inspect eval log (.eval or .json), or a JSON list of "
    "OpenAI or Anthropic chat messages with tool calls"
)


@dataclass(frozen=True)
class RecordedCall:
    """One recorded tool call and what the recording says it answered."""

    seq: int
    tool: str
    args: Any
    ok: bool | None = None  # None: the recording holds no answer to read (re-issued, not compared)
    result: dict[str, Any] | None = None  # None: the result's content is unknown (ok compared alone)
    error_type: str | None = None  # None with ok False: the error's type is unknown
    whole: bool = True  # False: ``result`` holds some of the result's fields; only those are compared
    sent: bool = True  # False: the recording's harness refused it itself (never sent): not replayed

    @classmethod
    def from_trace(cls, call: CallRecord) -> RecordedCall:
        answered = call.result is not None or call.error is not None  # the minimal format may give neither
        return cls(
            seq=call.seq,
            tool=call.tool,
            args=parse_arguments(call.args),  # a minimal trace's may be JSON text, as OpenAI's are
            ok=call.ok if answered else None,
            result=call.result,
            # a minimal trace's error text that names no type (``UNKNOWN_ERROR``): its type is not compared
            error_type=call.error.type if call.error and call.error.type != UNKNOWN_ERROR else None,
        )


@dataclass
class Recording:
    kind: str  # "attempt folder", "trace", "Inspect log", "OpenAI messages", "Anthropic messages"
    path: Path
    calls: list[RecordedCall]
    pack: str | None = None
    site_key: str | None = None
    output: str | None = None  # the answer recorded; None: none was (a bare trace)
    elapsed_seconds: float | None = None
    policy: str | None = None  # the recorded run's (its trace header's): enforce, observe or none
    block_state_changes: bool | None = None
    faults: list[str] = field(default_factory=list)  # the faults injected into it, in order
    pack_checksum: str | None = None  # the pack's checksum when it ran (attempt.json)
    mirror_checksum: str | None = None  # the mirrors' checksum when it ran (the trace header)
    sample: str | None = None  # the Inspect sample replayed
    folder: Path | None = None  # the attempt folder, when there is one (for --report)
    problems: list[str] = field(default_factory=list)
    # recorded calls a replay cannot make (a trace's call line it cannot read, a seq missing), each a
    # divergence at its seq: {"seq", "tool", "difference"}; the calls after it ran against another state
    not_read: list[dict[str, Any]] = field(default_factory=list)


def load_recording(path: Path, sample: str | None = None) -> Recording:
    """The recording at ``path``. Raises ``FileNotFoundError`` when there is none and
    ``ValueError`` (saying what was found and what is read, or which file cannot be read and why)
    when it cannot be replayed."""
    path = Path(path)
    try:
        is_folder = path.is_dir()
        found = is_folder or path.is_file()
    except OSError as exc:  # a name too long, a folder not ours to enter
        raise ValueError(f"{path} cannot be looked up: {exc.strerror or exc}") from None
    if not found:
        raise FileNotFoundError(f"no trace at {path}: give {KINDS_READ}")
    try:
        recording = attempt_folder(path) if is_folder else recording_file(path, sample)
    except RecursionError:  # json's decoder and the readers recurse per level: a hand-made or hostile file
        raise ValueError(
            f"{path} holds JSON nested too deeply to read (deeper than Python's recursion limit); "
            f"replay reads {KINDS_READ}"
        ) from None
    if sample is not None and recording.sample is None:
        raise ValueError(f"--sample picks a sample of an Inspect log; {path} is {article(recording.kind)}")
    if not recording.calls:
        why = f" ({recording.problems[0]})" if recording.problems else ""
        raise ValueError(f"{path} ({recording.kind}) records no tool call: there is nothing to replay{why}")
    return recording


def article(kind: str) -> str:
    """``kind`` with its article: "an attempt folder", "a trace", "a list of OpenAI messages"."""
    if kind.endswith("messages"):
        return f"a list of {kind}"
    return ("an " if kind[0].lower() in "aeiou" else "a ") + kind


def attempt_folder(folder: Path) -> Recording:
    trace_file = inside_file(folder, "trace.jsonl")
    if trace_file is None:
        missing = folder / "trace.jsonl"
        inside = sorted(p.parent for p in folder.glob("*/trace.jsonl")) or sorted(
            p.parent for p in folder.glob("*/*/trace.jsonl")
        )
        if inside:  # a batch folder, or the folder of batches: one attempt of it is replayed
            raise FileNotFoundError(
                f"no trace at {missing}: {folder} holds {len(inside)} attempt folder(s); replay one of "
                f"them, e.g. {inside[0]}"
            )
        raise FileNotFoundError(f"no trace at {missing}")
    recording = trace_recording(text_of(trace_file), folder, "attempt folder")
    return with_attempt_files(recording, folder)


def text_of(file: Path) -> str:
    """The file's text; a ``ValueError`` naming it when it is not UTF-8 or cannot be read."""
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{file} is not UTF-8 text ({exc})") from exc
    except OSError as exc:  # no permission, a folder in its place, a failing disk
        raise unreadable(file, exc) from exc


def unreadable(file: Path, exc: OSError) -> ValueError:
    return ValueError(f"{file} cannot be read: {exc.strerror or exc}")


HEADER_TYPES: dict[str, tuple[type, str]] = {  # what replay reads of a trace header, and its type
    "pack": (str, "a pack id"),
    "site_key": (str, "a text"),
    "policy": (str, "a policy mode"),
    "block_state_changes": (bool, "true or false"),
    "mirror_checksum": (str, "a checksum"),
    "pack_path": (str, "a folder's path"),  # an exported Inspect sample's: a pack of the user's own
}


def trace_recording(text: str, path: Path, kind: str = "trace") -> Recording:
    trace = parse_trace(text)
    header, problems = header_read(trace.header or {}, tuple(HEADER_TYPES), "the trace header's")
    # A trace the sandbox wrote holds each result whole; another harness's (the minimal format, no
    # sandbox_version) may hold a few fields of it: only those are compared.
    whole = bool(trace.header and trace.header.get("sandbox_version"))
    return Recording(
        kind=kind,
        path=path,
        calls=[replace(RecordedCall.from_trace(call), whole=whole) for call in trace.calls],
        pack=header.get("pack"),
        site_key=header.get("site_key"),
        policy=header.get("policy"),
        block_state_changes=header.get("block_state_changes"),
        mirror_checksum=header.get("mirror_checksum"),
        faults=list(dict.fromkeys(str(e.data.get("fault")) for e in trace.events if e.kind == "fault_injected")),
        problems=trace.problems + problems,
        not_read=calls_not_read(text, trace.calls),
    )


NOT_REPLAYED = "recorded, not replayed"


def calls_not_read(text: str, calls: list[CallRecord]) -> list[dict[str, Any]]:
    """The trace's calls a replay cannot make, as divergences: a call line that cannot be read (at
    its own seq, else at the next read call's), and a seq missing between two calls read (a line
    deleted). A line that is not JSON is not known to be a call: a seq it leaves missing is said."""
    found: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # unread lines without a seq: placed at the next call read
    for number, raw in enumerate(text.split("\n"), start=1):
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("type", "call")
        if kind in ("run", "event", "run_end") or (kind != "call" and not {"seq", "tool"} & data.keys()):
            continue  # another kind of line, or one of no kind a trace has that is no call's either
        try:
            if kind != "call":
                raise ValueError(f"its type is {described(kind)}, not 'call'")
            call = CallRecord.model_validate(normalise_call(data))
        except Exception as exc:  # what parse_trace left out: its problem line says it too
            seq, tool = data.get("seq"), data.get("tool")
            entry = {
                "seq": seq if type(seq) is int else None,
                "tool": tool if isinstance(tool, str) else "?",
                "difference": f"{NOT_REPLAYED}: trace line {number} cannot be read ({why_unread(exc)})",
            }
            found.append(entry)
            if entry["seq"] is None:
                waiting.append(entry)
            continue
        for entry in waiting:
            entry["seq"] = call.seq
        waiting.clear()
    last = max((call.seq for call in calls), default=0)
    for entry in waiting:  # after the last call read
        entry["seq"] = last + 1
    seqs, unread = sorted({call.seq for call in calls}), {entry["seq"] for entry in found}
    if seqs and seqs[0] > 1:  # a trace's seqs start at 1: its first call lines are gone
        seqs.insert(0, 0)
    for before, after in zip(seqs, seqs[1:], strict=False):
        between = range(before + 1, after)  # looked through only as far as the unread lines go
        first = next((seq for seq in between if seq not in unread), None)
        if first is None:
            continue
        last = next(seq for seq in reversed(between) if seq not in unread)
        span = f"seq {first}" if first == last else f"seqs {first}-{last}"
        where = f"before seq {after}" if before == 0 else f"between seq {before} and {after}"
        found.append(
            {"seq": first, "tool": "?", "difference": f"{NOT_REPLAYED}: the trace holds no call of {span} "
             f"({where}: a line deleted?)"}
        )  # fmt: skip
    return sorted(found, key=lambda entry: entry["seq"])


def why_unread(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic's: the first field and what is wrong with it
        first = errors()[0]
        return f"{'.'.join(map(str, first.get('loc', ()))) or 'the line'}: {first.get('msg')}"
    return f"{type(exc).__name__}: {str(exc)[:120]}"


def header_read(header: dict[str, Any], keys: tuple[str, ...], where: str) -> tuple[dict[str, Any], list[str]]:
    """The fields ``keys`` of a trace header (or an Inspect sample's metadata, ``where``), each of
    its type (``HEADER_TYPES``); one of another type is left out and said (a pack that is no id is
    never loaded, a policy that is no mode never used)."""
    read, problems = {}, []
    for key in keys:
        kind, wanted = HEADER_TYPES[key]
        value = header.get(key)
        if value is None:
            continue
        if isinstance(value, kind):
            read[key] = value
        else:
            problems.append(f"{where} {key} is {described(value)}, not {wanted}: left out")
    return read, problems


def with_attempt_files(recording: Recording, folder: Path) -> Recording:
    """The recording with what the attempt folder beside its trace says (any file may be
    missing): the pack, site key and time of ``attempt.json``, the answer of ``output.txt``."""
    attempt_file, output_file = inside_file(folder, "attempt.json"), inside_file(folder, "output.txt")
    try:
        attempt = json.loads(text_of(attempt_file)) if attempt_file is not None else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"{attempt_file} is not JSON ({exc})") from exc
    if not isinstance(attempt, dict):
        raise ValueError(f"{attempt_file} is not a JSON object")
    recording.folder = folder
    # read as every reader of attempt folders reads it: a field of the wrong type (a pack that is no
    # name, a time that is no number) is left out and said, never replayed or scored with
    record, problems = read_attempt_record(attempt) if attempt else (None, [])
    recording.problems += problems
    if record is not None:
        own = record.pack_path  # a pack of the user's own, loaded from its folder
        recording.pack = (own if own and Path(own).is_dir() else None) or record.pack
        recording.pack_checksum = record.pack_checksum
        recording.site_key = record.site_key or recording.site_key
        recording.elapsed_seconds = record.elapsed_seconds
    recording.output = text_of(output_file) if output_file is not None else None
    return recording


def inside_file(folder: Path, name: str) -> Path | None:
    """The attempt folder's file ``name`` (None: missing); a ``ValueError`` for one that is no file
    inside the folder (a symbolic link out of it is never read: ``folder_file``)."""
    file, odd = folder_file(folder, name)
    if odd is not None:
        raise ValueError(f"{folder}: {odd}")
    return file


def recording_file(path: Path, sample: str | None) -> Recording:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from exc
    if raw.startswith(ZIP_MAGIC):
        return inspect_recording(path, sample)
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark some editors write is not the first line's
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is neither text nor an Inspect .eval log ({exc}); replay reads {KINDS_READ}") from exc
    if not text.strip():
        raise ValueError(f"{path} is empty; replay reads {KINDS_READ}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if is_trace_line(first_line(text)):  # JSONL (a killed run's last line may be cut short)
            return trace_file(text, path)
        raise ValueError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}) nor a JSONL trace; "
            f"replay reads {KINDS_READ}"
        ) from exc
    if is_trace_line(data):  # a trace of one line
        return trace_file(text, path)
    if isinstance(data, dict) and {"eval", "status"} <= data.keys():
        return inspect_recording(path, sample)
    messages = data.get("messages") if isinstance(data, dict) else data
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
        return chat_recording(messages, path)
    found = f"a JSON object with keys {sorted(data)[:8]}" if isinstance(data, dict) else f"JSON {type(data).__name__}"
    raise ValueError(f"{path} holds {found}, which is no recording replay knows; replay reads {KINDS_READ}")


def trace_file(text: str, path: Path) -> Recording:
    """A trace given as a file: its attempt folder's files are read with it only when it is that
    folder's ``trace.jsonl``; another trace beside them is not their attempt's (its own pack and
    site key, no answer to re-score, no page to mark)."""
    recording = trace_recording(text, path)
    return with_attempt_files(recording, path.parent) if path.name == "trace.jsonl" else recording


def first_line(text: str) -> Any:
    """The first line of ``text`` that is JSON (a trace's garbled first line leaves the rest a trace)."""
    for line in text.split("\n"):
        if line.strip():
            try:
                return json.loads(line)
            except ValueError:  # a number past 4,300 digits too
                continue
    return None


def is_trace_line(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    kind = data.get("type")
    return (isinstance(kind, str) and kind in TRACE_LINE_TYPES) or {"seq", "tool"} <= data.keys()


# --- what a tool result says ----------------------------------------------------------------


def answered(call: RecordedCall, parts: list[str], is_error: bool | None) -> RecordedCall:
    """``call`` with what the text parts of its result say (``is_error``: the recording's own
    flag, None when it has none, as OpenAI's tool messages)."""
    objects = [parse_object(part) for part in parts]
    texts = [part for part, parsed in zip(parts, objects, strict=True) if parsed is None and part.strip()]
    found = [parsed for parsed in objects if parsed is not None]
    single = found[0] if len(found) == 1 and not texts else None
    if single is not None and isinstance(single.get("ok"), bool) and ({"result", "error"} & single.keys()):
        if single["ok"]:  # this sandbox's reply, as its own model agents send it
            given = single.get("result")
            return replace(call, ok=True, result=given if isinstance(given, dict) else None)
        error = single.get("error")
        return replace(call, ok=False, error_type=error.get("type") if isinstance(error, dict) else None)
    if is_error or (is_error is None and single is not None and is_error_shaped(single)):
        if single is not None and is_error_shaped(single):
            return replace(call, ok=False, error_type=single["type"])
        typed = TYPED_MESSAGE.match(" ".join(parts))
        return replace(call, ok=False, error_type=typed.group(1) if typed else None)
    if not found and not texts:  # no text at all (empty content, blocks of no text): the outcome alone, if flagged
        return replace(call, ok=None if is_error is None else True)
    result: dict[str, Any] = {}
    for parsed in found:
        result.update(parsed)
    if call.tool == "browser_snapshot" and len(texts) == 1:
        # the snapshot's text (before or after its page facts, or alone): compared as well
        return replace(call, ok=True, result={**result, "snapshot": texts[0]}, whole=bool(found))
    if texts:  # text replay cannot read: only a recording that flags errors tells the outcome
        return replace(call, ok=None if is_error is None else True)
    return replace(call, ok=True, result=result)


def parse_object(text: str) -> dict[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:  # a number past 4,300 digits too
        return None
    return data if isinstance(data, dict) else None


def is_error_shaped(data: dict[str, Any]) -> bool:
    """The sandbox's error as the MCP transport writes it: ``{"type", "message", "details"?}``."""
    return (
        isinstance(data.get("type"), str)
        and isinstance(data.get("message"), str)
        and (data.keys() <= {"type", "message", "details"})
    )


def text_parts(content: Any) -> list[str]:
    """The text of a message or a tool result: a string, or a list of content blocks (OpenAI's
    and Anthropic's ``{"type": "text", "text"}``, Inspect's ``ContentText``)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, (int, float, bool)):
        return [json.dumps(content)]
    if isinstance(content, dict):
        content = [content]
    parts = []
    for block in content if isinstance(content, list) else [content]:
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return parts


def parse_arguments(arguments: Any) -> Any:
    """OpenAI sends arguments as JSON text: parsed, or kept as the raw text the tool server
    then refuses as the original would have been."""
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:  # a number past 4,300 digits too
        return arguments


# --- chat transcripts -----------------------------------------------------------------------


def chat_recording(messages: list[dict[str, Any]], path: Path) -> Recording:
    blocks = [block for m in messages if isinstance(m.get("content"), list) for block in m["content"]]
    if any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in blocks):
        kind = "Anthropic messages"
    elif any(m.get("tool_calls") or m.get("role") == "tool" for m in messages):
        kind = "OpenAI messages"
    else:
        count = f"{len(messages)} chat message" + ("s" if len(messages) != 1 else "")
        raise ValueError(
            f"{path} holds {count} but no tool call (no OpenAI `tool_calls`, no Anthropic `tool_use` block): "
            f"there is nothing to replay"
        )
    problems: list[str] = []
    calls, output = (anthropic_calls if kind == "Anthropic messages" else openai_calls)(messages, problems)
    return Recording(kind=kind, path=path, calls=calls, site_key=site_key_of(calls), output=output, problems=problems)


def skipped(problems: list[str], what: str, value: Any, wanted: str) -> None:
    """A part of a chat transcript that is not what its format says: not replayed, and said."""
    problems.append(f"{what} is {described(value)}, not {wanted}: not replayed")


def described(value: Any) -> str:
    """A value of a recording that is not what it should be, for its problem line: its type, and its
    start as JSON."""
    return f"{type(value).__name__} {json.dumps(value, default=str)[:60]}"


def openai_calls(messages: list[dict[str, Any]], problems: list[str]) -> tuple[list[RecordedCall], str]:
    calls: list[RecordedCall] = []
    waiting: dict[Any, int] = {}  # tool_call_id (``waiting_key``) -> index in calls
    output = ""
    for number, message in enumerate(messages, 1):
        role = message.get("role")
        if role == "assistant":
            output = "".join(text_parts(message.get("content"))) or output
            tool_calls = message.get("tool_calls") or []
            if not isinstance(tool_calls, list):
                skipped(problems, f"message {number}'s tool_calls", tool_calls, "a list")
                tool_calls = []
            for place, tool_call in enumerate(tool_calls, 1):
                function = tool_call.get("function") or tool_call if isinstance(tool_call, dict) else None
                if not isinstance(function, dict):  # also {"name", "arguments"} flat
                    what = f"message {number}'s tool call {place}"
                    skipped(problems, what, tool_call, 'a mapping with a "function" mapping')
                    continue
                calls.append(
                    RecordedCall(
                        seq=len(calls) + 1,
                        tool=str(function.get("name")),
                        args=parse_arguments(function.get("arguments")),
                    )
                )
                waiting[waiting_key(tool_call.get("id"), len(calls))] = len(calls) - 1
        elif role == "tool":
            index = answer_index(waiting, message.get("tool_call_id"))
            if index is not None:
                calls[index] = answered(calls[index], text_parts(message.get("content")), message.get("is_error"))
    return calls, output


def anthropic_calls(messages: list[dict[str, Any]], problems: list[str]) -> tuple[list[RecordedCall], str]:
    calls: list[RecordedCall] = []
    waiting: dict[Any, int] = {}
    output = ""
    for number, message in enumerate(messages, 1):
        content = message.get("content")
        blocks = []
        for place, block in enumerate(content if isinstance(content, list) else [], 1):
            if isinstance(block, dict):
                blocks.append(block)
            else:
                skipped(problems, f"message {number}'s content block {place}", block, "a mapping")
        if message.get("role") == "assistant":
            output = "".join(text_parts(content)) or output
            for block in blocks:
                if block.get("type") == "tool_use":
                    calls.append(RecordedCall(seq=len(calls) + 1, tool=str(block.get("name")), args=block.get("input")))
                    waiting[waiting_key(block.get("id"), len(calls))] = len(calls) - 1
        for block in blocks:
            if block.get("type") == "tool_result":
                index = answer_index(waiting, block.get("tool_use_id"))
                if index is not None:
                    is_error = bool(block.get("is_error"))
                    calls[index] = answered(calls[index], text_parts(block.get("content")), is_error)
    return calls, output


def waiting_key(call_id: Any, seq: int) -> Any:
    """A call's key among those waiting for a result: its id as text; a call without one its own
    key (each one of them used to overwrite the last: their results went to the wrong calls)."""
    return str(call_id) if call_id is not None else ("no id", seq)


def answer_index(waiting: dict[Any, int], call_id: Any) -> int | None:
    """The call a result answers: by its id, else the oldest one still waiting."""
    if call_id is not None and str(call_id) in waiting:
        return waiting.pop(str(call_id))
    if waiting:
        oldest = min(waiting, key=waiting.__getitem__)
        return waiting.pop(oldest)
    return None


def site_key_of(calls: Iterable[RecordedCall]) -> str | None:
    for call in calls:
        if call.tool == "browser_start_session" and isinstance(call.args, dict):
            key = call.args.get("site_key")
            return key if isinstance(key, str) else None
    return None


# --- Inspect eval logs ----------------------------------------------------------------------


def inspect_recording(path: Path, sample_id: str | None) -> Recording:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        raise ValueError(
            f"{path} is an Inspect eval log; reading it needs inspect_ai: pip install -e '.[inspect]'"
        ) from exc
    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:  # inspect_ai's own errors for a broken file: said, not raised on
        raise ValueError(f"{path} is not a readable Inspect eval log ({type(exc).__name__}: {exc})") from exc
    samples = log.samples or []
    if not samples:
        raise ValueError(f"{path} holds no samples (an Inspect log written without them?): nothing to replay")
    names = [f"{s.id}" if s.epoch == 1 else f"{s.id}:{s.epoch}" for s in samples]
    if sample_id is None:
        index = 0
    elif sample_id in names:
        index = names.index(sample_id)
    elif sample_id in [str(s.id) for s in samples]:
        index = [str(s.id) for s in samples].index(sample_id)
    else:
        shown = ", ".join(names[:10]) + (f" (+{len(names) - 10} more)" if len(names) > 10 else "")
        raise ValueError(f"{path} has no sample {sample_id!r}; its samples: {shown} (give one with --sample ID)")
    sample = samples[index]
    calls = tool_event_calls(sample.events) or message_calls(sample.messages)
    metadata, problems = header_read(sample.metadata or {}, ("pack", "site_key", "pack_path"), "the Inspect sample's")
    own = metadata.get("pack_path")  # a pack of the user's own, loaded from its folder (as an attempt folder's)
    return Recording(
        kind="Inspect log",
        path=path,
        calls=calls,
        pack=(own if own and Path(own).is_dir() else None) or metadata.get("pack"),
        site_key=metadata.get("site_key") or site_key_of(calls),
        output=inspect_answer(sample),
        elapsed_seconds=inspect_elapsed(sample),
        sample=names[index],
        problems=problems,
    )


def inspect_answer(sample: Any) -> str:
    """The answer the sandbox's Inspect scorer scored: none (``""``) when the sample hit a limit or
    the model's last turn made tool calls. A log of another task whose last output has no text gives
    its last assistant text."""
    output = sample.output
    called = bool(output and output.choices and output.message.tool_calls)
    if (sample.metadata or {}).get(INSPECT_CUT_OFF) or called:
        return ""
    return (output.completion if output else "") or next(
        (m.text for m in reversed(sample.messages) if m.role == "assistant" and m.text), ""
    )


def inspect_elapsed(sample: Any) -> float | None:
    """The agent's time as the sandbox's Inspect task kept it (from the connected server to the
    answer); a log of another task, or one written by `sandbox export`, has the sample's time."""
    kept = (sample.metadata or {}).get(INSPECT_ELAPSED)
    if isinstance(kept, int | float) and not isinstance(kept, bool) and 0 <= kept < float("inf"):
        return float(kept)
    return sample.total_time


def tool_event_calls(events: list[Any]) -> list[RecordedCall]:
    calls: list[RecordedCall] = []
    for event in events:
        if event.event != "tool":
            continue
        metadata = event.metadata or {}
        seq = metadata.get("seq")
        call = RecordedCall(
            seq=seq if isinstance(seq, int) else len(calls) + 1,
            tool=event.function,
            args=metadata.get("args", event.arguments),
        )
        if event.pending:
            calls.append(call)  # never answered (an interrupted sample)
            continue
        error = metadata.get("error")
        if isinstance(error, dict) and isinstance(error.get("type"), str):  # written by sandbox export
            calls.append(replace(call, ok=False, error_type=error["type"]))
        elif event.error is not None:
            calls.append(inspect_error(call, event.error))
        else:
            calls.append(answered(call, text_parts(event.result), is_error=False))
    return calls


def inspect_error(call: RecordedCall, error: Any) -> RecordedCall:
    """Inspect's error kinds are its own; the sandbox's type is in the message (the MCP
    transport's JSON text) when the call reached the sandbox at all."""
    if error.type in NEVER_SENT:  # Inspect refused it before any call: the sandbox never saw it
        return replace(call, ok=False, sent=False)
    if error.type != "unknown":  # timeout, limit, ...: Inspect's error, of a call that was sent
        return replace(call, ok=False)
    return answered(call, [error.message], is_error=True)


# Inspect's error types for a call it refused itself, before sending it: arguments it could not
# parse (or that fail the tool's schema), and an approver's refusal.
NEVER_SENT = frozenset({"parsing", "approval"})


def message_calls(messages: list[Any]) -> list[RecordedCall]:
    """A log without tool events: the assistant tool calls and tool messages."""
    calls: list[RecordedCall] = []
    waiting: dict[str, int] = {}
    for message in messages:
        if message.role == "assistant":
            for tool_call in message.tool_calls or []:
                calls.append(RecordedCall(seq=len(calls) + 1, tool=tool_call.function, args=tool_call.arguments))
                waiting[str(tool_call.id)] = len(calls) - 1
        elif message.role == "tool":
            index = answer_index(waiting, message.tool_call_id)
            if index is None:
                continue
            if message.error is not None:
                calls[index] = inspect_error(calls[index], message.error)
            else:
                calls[index] = answered(calls[index], text_parts(message.content), is_error=False)
    return calls
