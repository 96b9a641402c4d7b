"""Attempt folders as an Inspect eval log (``sandbox export --format inspect``): one sample per
attempt, built from inspect_ai's own log models and written by its own writer, so
``inspect view`` opens the file and ``inspect_ai.log.read_eval_log`` reads it.

A sample holds:
- ``input``: the prompt the agent was given (``prompt.txt``);
- ``messages``: that prompt, the tool calls as assistant messages and their results as tool
  messages (a model agent's turns as its ``transcript.jsonl`` grouped them), the final answer;
- ``events``: the sample's start, one ``ModelEvent`` per turn of a model agent, one ``ToolEvent``
  per trace call (arguments, result or error, times; its ``metadata`` keeps the call's ``seq``,
  the sandbox's error type and the browser events it caused), and the score;
- ``output``: the agent's answer (``output.txt``);
- ``metadata``: the attempt's record, and its run selection as `sandbox results` reads it from the
  folder names (``reselected``): an attempt a re-run replaced is a sample, not in the log's results;
- ``scores``: ``sandbox_scorer`` as the live Inspect task names it (qualified pass, field
  accuracy, critical failures, gates ok), with the status, gate failures, critical fields and the
  whole score report in its metadata; an attempt with no score.json has one all the same, as
  ``sandbox results`` counts it (no pass, field accuracy 0, gates not ok).

The result a tool event carries is the text an MCP client reads (a snapshot's text first, then
the page facts as JSON; compact JSON otherwise), so ``sandbox replay`` can compare it again.
Needs the ``[inspect]`` extra; only the export command imports this module.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeGuard

import inspect_ai
from inspect_ai.dataset import Sample
from inspect_ai.event import Event, ModelEvent, SampleInitEvent, ScoreEvent, ToolEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall, ToolCallError

from sandbox import __version__
from sandbox.evaluation.packs import PackError, load_pack
from sandbox.runner.agents import AGENT_KINDS, AgentSpecError
from sandbox.runner.attempt import RECORDING_ERROR, STOPPED, AttemptOutcome, AttemptRecord
from sandbox.runner.files import folder_file
from sandbox.runner.folders import (
    AttemptFolder,
    batch_attempts,
    is_attempt_folder,
    named_agent,
    outcome,
    refuse_closed,
    reselected,
)
from sandbox.runner.transcript import TRANSCRIPT_FILE
from toolserver.contract.trace import CallRecord

SCORER = "sandbox_scorer"  # the live task's scorer (sandbox.integrations.inspect): both logs read alike
EXPORT_FILE = "inspect.eval"
FORMATS: dict[str, Literal["eval", "json"]] = {".eval": "eval", ".json": "json"}
ANSWER_LIMIT = 2000  # characters of the answer in a score, as the live scorer keeps


def export_inspect_log(folder: Path, target: Path | None = None) -> tuple[Path, EvalLog]:
    """Write the attempts of ``folder`` (one attempt folder, or a batch folder's) as one Inspect
    log at ``target`` (default ``folder/inspect.eval``; ``.eval`` or ``.json``, Inspect's two
    formats). Raises ``FileNotFoundError`` when the folder holds no attempt, ``ClosedFolder`` when it
    cannot be listed or entered, ``ValueError`` for a target of another kind."""
    folder = Path(folder)
    refuse_closed(folder)
    target = Path(target) if target is not None else folder / EXPORT_FILE
    log_format = FORMATS.get(target.suffix)
    if log_format is None:
        raise ValueError(f"{target}: an Inspect log is a .eval or a .json file; name the output -o FILE.eval")
    attempts = [AttemptFolder.load(folder)] if is_attempt_folder(folder) else []
    if not attempts and folder.is_dir():
        attempts = batch_attempts(folder)
    if not attempts:
        raise FileNotFoundError(
            f"{folder} holds no attempt: give an attempt folder (with trace.jsonl) or a batch folder "
            f"(runs/<time>-<agent>, written by `sandbox run`)"
        )
    log = eval_log(folder, attempts)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_eval_log(log, target, format=log_format)
    except OSError as exc:  # said of the file asked for, not of Inspect's temporary one beside it
        raise LogNotWritten(f"cannot write the log {target}: {exc.strerror or exc}") from None
    return target, log


class LogNotWritten(Exception):
    """The log could not be written (a full disk, a read-only or missing folder)."""


def eval_log(folder: Path, attempts: list[AttemptFolder]) -> EvalLog:
    named = {agent for attempt in attempts if (agent := named_agent(attempt))}  # a damaged one's, as results count it
    counted = reselected([outcome(attempt, named) for attempt in attempts])  # run selection, as results read it
    samples = [attempt_sample(attempt, selected) for attempt, selected in zip(attempts, counted, strict=True)]
    packs = sorted({str(sample.metadata["pack"]) for sample in samples})
    agents = sorted({str(sample.metadata["agent"]) for sample in samples if sample.metadata["agent"]})
    times = [t for sample in samples for t in (sample.started_at, sample.completed_at) if t]
    started, completed = (min(times), max(times)) if times else ("", "")  # no attempt's time is known
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for model, used in sample.model_usage.items():
            usage[model] = usage[model] + used if model in usage else used
    return EvalLog(
        status="success",
        eval=EvalSpec(
            created=started or now(),  # else when this log was made
            task=packs[0].replace("-", "_") if len(packs) == 1 else "sandbox_batch",
            task_display_name=folder.name,
            task_attribs={"packs": packs},
            dataset=EvalDataset(
                name=folder.name, location=str(folder), samples=len(samples), sample_ids=[s.id for s in samples]
            ),
            model=model_name(agents[0] if agents else "unknown") if len(agents) <= 1 else "sandbox/several-agents",
            config=EvalConfig(epochs=1),
            packages={"sandbox": __version__, "inspect_ai": inspect_ai.__version__},
            metadata={"exported_from": str(folder), "exported_by": f"sandbox {__version__}", "agents": agents},
        ),
        results=results(samples),
        stats=EvalStats(started_at=started, completed_at=completed, model_usage=usage),
        samples=samples,
    )


def results(samples: list[EvalSample]) -> EvalResults:
    """The means of each score value, as Inspect's ``mean()`` metric gives, over the attempts
    `sandbox results` counts (every sample has a score): one a re-run replaced is a sample, not in
    the means."""
    counted = [sample for sample in samples if (sample.metadata or {}).get("selection") != "replaced"]
    values = [found for found in map(score_values, counted) if found is not None]
    names = dict.fromkeys(name for value in values for name in value)  # an unscored attempt may lack one
    scores = [
        EvalScore(
            name=name,
            scorer=SCORER,
            scored_samples=len(given := [value[name] for value in values if name in value]),
            unscored_samples=len(counted) - len(given),
            metrics={"mean": EvalMetric(name="mean", value=statistics.fmean(given))},
        )
        for name in names
    ]
    replaced = {"replaced_samples": len(samples) - len(counted)}  # total = scored + unscored + replaced
    return EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores, metadata=replaced)


def score_values(sample: EvalSample) -> dict[str, float] | None:
    score = (sample.scores or {}).get(SCORER)
    if score is None or not isinstance(score.value, Mapping):
        return None
    return {name: float(value) for name, value in score.value.items() if isinstance(value, (int, float))}


def model_name(agent: str) -> str:
    """Inspect names a model ``provider/model``: ``openai:gpt-x`` -> ``openai/gpt-x``, and so for a
    wrapper of one (``think:30:openai:gpt-x``); any other agent (reference, cmd:...) is the
    sandbox's: ``sandbox/reference``."""
    try:
        inner = AGENT_KINDS.unwrap(agent)
    except AgentSpecError:  # an agent this version does not know (an old batch's): named as it is
        inner = agent
    kind, _, model = inner.partition(":")
    if kind in ("openai", "anthropic") and model:
        return f"{kind}/{model}"
    return f"sandbox/{agent}"


# --- one attempt -------------------------------------------------------------------------------


def attempt_sample(attempt: AttemptFolder, counted: AttemptOutcome) -> EvalSample:
    """``counted``: the attempt as `sandbox results` counts it (``outcome``: a damaged record's
    values are not taken; ``reselected``: whether a re-run replaced it)."""
    record = attempt.attempt if attempt.counted else None
    name = unicode_name(attempt.name)  # the sample's id: a name in the log's zip, which must be UTF-8
    pack = unicode_name(counted.pack)  # from the folder's name when no file names the pack
    agent = counted.agent  # None: a damaged folder naming none, whose batch does not say it either
    header = (attempt.trace.header if attempt.trace else None) or {}
    site_key = (record.site_key if record else None) or header.get("site_key")
    problems = list(attempt.problems)
    prompt = read_text(attempt.path, "prompt.txt", problems)
    output = attempt.output or ""
    calls = attempt.trace.calls if attempt.trace else []
    known = (record.started_at if record else None) or first_wall(calls)
    started = known or changed_at(attempt.path)  # its events need a time: else when its folder last changed
    elapsed = record.elapsed_seconds if record else None
    completed = ended_at(known, elapsed)
    if completed is None and known and elapsed is not None:  # a time no date can hold: left out, and said
        problems.append(f"attempt.json field 'elapsed_seconds' ({elapsed:g} s) ends past any date: no completed_at")
    model = model_name(agent or "unknown")
    metadata = {
        "pack": pack,
        "site_key": site_key,
        "agent": agent,
        "attempt": name,
        "folder": unicode_name(str(attempt.path)),
        "status": counted.status,
        "error": record.error if record else None,
        "run_id": record.run_id if record else None,
        "elapsed_seconds": elapsed,
        "mirror_checksum": record.mirror_checksum if record else None,
        "pack_checksum": record.pack_checksum if record else None,
        **({"pack_path": unicode_name(record.pack_path)} if record and record.pack_path else {}),
        "problems": problems,
        "selection": counted.selection,
        **({"replaces": unicode_name(counted.replaces)} if counted.replaces else {}),
        **({"interruption": counted.interruption} if counted.interruption else {}),
    }
    conversation = Conversation(prompt, calls, read_transcript(attempt.path, problems), model, started, problems)
    events: list[Event] = [
        SampleInitEvent(
            timestamp=parse_time(started),
            sample=Sample(input=prompt, target=pack, id=name, metadata=metadata),
            state={"messages": [ChatMessageUser(content=prompt).model_dump(mode="json")]},
        ),
        *conversation.events,
    ]
    damage = [problem for problem in (attempt.record_problem, attempt.trace_problem) if problem]
    if attempt.trace_damage is not None and attempt.trace_problem is None and attempt.counted:  # no pass to take back
        damage.append(f"{attempt.trace_damage}: the gates cannot be checked against it")
    score = sample_score(attempt, output, counted, damage)  # one with no score.json too: results count it
    events.append(ScoreEvent(timestamp=parse_time(completed or started), score=score, target=pack, scorer=SCORER))
    messages = [*conversation.messages, ChatMessageAssistant(content=output, model=model)]
    usage = token_usage(record.token_usage if record else None)
    status = record.status if record else None
    return utf8_sample(
        EvalSample(
            id=name,
            epoch=1,
            input=prompt,
            target=pack,
            messages=messages,
            output=ModelOutput.from_content(model=model, content=output),
            scores={SCORER: score},
            metadata=metadata,
            events=events,
            model_usage={model: usage} if usage else {},
            started_at=known,  # None: not known
            completed_at=completed,
            total_time=elapsed,
            working_time=elapsed,
            error=EvalError(message=record.error or status or "", traceback="", traceback_ansi="")
            if record and status in ("error", "crashed", RECORDING_ERROR)
            else None,
            limit=sample_limit(record),
        )
    )


def sample_limit(record: AttemptRecord | None) -> EvalSampleLimit | None:
    """The limit an attempt ended at: the time limit, or the operator's when its batch was stopped
    (Inspect's own sentinel, 1, as its limit)."""
    if record is None:
        return None
    if record.status == "timeout":
        return EvalSampleLimit(type="time", limit=float(record.time_limit_seconds or 0))
    if record.status == STOPPED:
        return EvalSampleLimit(type="operator", limit=1, reason=record.error or "the batch was stopped while it ran")
    return None


def utf8_sample(sample: EvalSample) -> EvalSample:
    """``sample``, or when a text in it holds a lone surrogate (half of a model's emoji, which JSON
    keeps as ``\\ud83d`` and Python reads back as it was), a copy with each such text escaped: the
    log is UTF-8, and one such character failed the whole batch's export."""
    dumped = sample.model_dump()
    fixed = escaped(dumped)
    return sample if fixed is dumped else EvalSample.model_validate(fixed)


def escaped(value: Any) -> Any:
    """``value`` with its texts' lone surrogates written as escapes (``\\ud83d``); the same object
    when none has any."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", errors="backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        pairs = [(escaped(key), escaped(item)) for key, item in value.items()]
        same = all(k is key and i is item for (k, i), (key, item) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    if isinstance(value, (list, tuple)):
        items = [escaped(item) for item in value]
        return value if all(i is item for i, item in zip(items, value, strict=True)) else type(value)(items)
    return value


def sample_score(attempt: AttemptFolder, output: str, counted: AttemptOutcome, damage: list[str]) -> Score:
    """score.json as the live task's score: the same values (plus ``gates_ok``), the verdict's
    parts in its metadata. The values are the attempt's as ``sandbox results`` counts them
    (``counted``): a damaged folder's (``damage`` says why) are not score.json's, which its
    metadata keeps. With its record not counted (missing, unreadable, a lost reply) none of its
    score counts: every critical field is a failure, as its field accuracy is 0; with its trace
    damaged, the critical failures rest on the answer and are kept; either way its gates are not ok
    (they cannot be checked). An attempt with no score.json (unfinished, stopped, a damaged one
    set aside) is scored as `sandbox results` counts it: no pass, its field accuracy (0), gates not
    ok, its reasons the results' (``counted.reason``), every critical field of its pack a failure
    (left out when the pack cannot be loaded: not counted as none)."""
    if attempt.score is None:
        every = critical_fields(attempt, counted)
        value = {"qualified_pass": 0.0, "field_accuracy": counted.field_accuracy, "gates_ok": 0.0}
        if every is not None:
            value["critical_failures"] = float(len(every))
        return Score(
            value=value,
            answer=output[:ANSWER_LIMIT],
            explanation=counted.reason or "no score.json: the attempt was not scored",
            metadata={
                "status": counted.status,  # the results' (unfinished, stopped, crashed, ...): no verdict was made
                "scored": False,
                "qualified_pass": False,
                "error_free": False,
                "field_accuracy": counted.field_accuracy,
                "gates_ok": None,  # never checked
                "gate_failures": [],
                "critical_fields": [],
                "critical_failures": every,
                "score_report": None,
            },
        )
    report = attempt.score
    gates = report.get("gates") or {}
    fields = [field for field in report.get("fields") or [] if isinstance(field, dict)]
    critical = [field for field in fields if field.get("critical")]
    scored = attempt.counted and not attempt.lost_reply  # as ``outcome`` takes its field accuracy
    checked = scored and attempt.trace_damage is None
    failures = len(report.get("critical_failures") or []) if scored else len(critical)
    reasons = damage + (report.get("reasons") or [])
    return Score(
        value={
            "qualified_pass": float(counted.qualified_pass),
            "field_accuracy": counted.field_accuracy,
            "critical_failures": float(failures),
            "gates_ok": float(checked and gates.get("ok") is True),
        },
        answer=output[:ANSWER_LIMIT],
        explanation="; ".join(reasons) or "qualified pass",
        metadata={
            "status": report.get("status"),
            "qualified_pass": report.get("qualified_pass"),
            "error_free": report.get("error_free"),
            "field_accuracy": report.get("field_accuracy"),
            "gates_ok": gates.get("ok"),
            "gate_failures": gates.get("failures") or [],
            "critical_fields": critical,
            "critical_failures": report.get("critical_failures") or [],
            "score_report": report,
        },
    )


def critical_fields(attempt: AttemptFolder, counted: AttemptOutcome) -> list[str] | None:
    """The critical fields of the pack the attempt ran (from its own folder when the record names
    one), or None when that pack cannot be loaded."""
    record = attempt.attempt if attempt.counted else None
    try:
        pack = load_pack((record.pack_path if record else None) or counted.pack)
    except (PackError, OSError, ValueError):
        return None
    return [rule.name for rule in pack.rules.field_rules if rule.critical]


@dataclass
class Turn:
    """What one model turn said and which tool calls it made (a model agent's transcript)."""

    text: str
    call_ids: list[str]
    stop_reason: str | None
    usage: ModelUsage | None


class Conversation:
    """The messages and events of an attempt: a model agent's turns (from its transcript, when
    its tool calls are the trace's, in order), else one assistant message per trace call."""

    def __init__(
        self,
        prompt: str,
        calls: list[CallRecord],
        transcript: list[dict],
        model: str,
        started: str,
        problems: list[str],
    ):
        """``problems``: the sample's, to which a call's time that is no time is added."""
        self.model = model
        self.messages: list[ChatMessage] = [ChatMessageUser(content=prompt)]
        self.events: list[Event] = []
        turns = model_turns(transcript, calls)
        pending = iter(calls)
        for turn in turns or [Turn("", [f"call-{call.seq}"], None, None) for call in calls]:
            made = [next(pending) for _ in turn.call_ids]
            when = call_time(made[0], "wall_start", parse_time(started), problems) if made else parse_time(started)
            assistant = ChatMessageAssistant(
                content=turn.text,
                model=model,
                tool_calls=[tool_call(call_id, call) for call_id, call in zip(turn.call_ids, made, strict=True)],
            )
            if turns:
                self.events.append(self.model_event(assistant, turn, when))
            self.messages.append(assistant)
            for call_id, call in zip(turn.call_ids, made, strict=True):
                self.events.append(tool_event(call_id, call, started, problems))
                parts = result_parts(call)
                self.messages.append(
                    ChatMessageTool(
                        content=parts[0] if len(parts) == 1 else [ContentText(text=part) for part in parts],
                        tool_call_id=call_id,
                        function=call.tool,
                        error=call_error(call),
                    )
                )
        final = final_turn(transcript) if turns else None
        if final is not None:  # the turn that answered: its tokens are the attempt's too
            when = call_time(calls[-1], "wall_end", parse_time(started), problems) if calls else parse_time(started)
            self.events.append(self.model_event(ChatMessageAssistant(content=final.text, model=model), final, when))

    def model_event(self, assistant: ChatMessageAssistant, turn: Turn, when: datetime) -> ModelEvent:
        stop = turn.stop_reason if turn.stop_reason in ("stop", "max_tokens", "tool_calls") else "unknown"
        return ModelEvent(
            timestamp=when,
            model=self.model,
            input=list(self.messages),
            tools=[],
            tool_choice="auto",
            config=GenerateConfig(),
            output=ModelOutput(
                model=self.model,
                choices=[ChatCompletionChoice(message=assistant, stop_reason=stop)],  # type: ignore[arg-type]
                usage=turn.usage,
            ),
        )


def model_turns(transcript: list[dict], calls: list[CallRecord]) -> list[Turn]:
    """The transcript's assistant turns with tool calls, when together they name the trace's
    calls in order (else none: the messages are built from the trace alone, as they are for a
    damaged transcript, whose tool calls are no list of objects or whose text is no string)."""
    said = [entry for entry in transcript if entry.get("role") == "assistant"]
    if not all(well_formed(entry) for entry in said):
        return []
    turns = [
        Turn(
            text=entry.get("content") or "",
            call_ids=[str(call.get("id") or "") for call in entry.get("tool_calls") or []],
            stop_reason=entry.get("finish_reason"),
            usage=token_usage(entry.get("usage")),
        )
        for entry in transcript
        if entry.get("role") == "assistant" and entry.get("tool_calls")
    ]
    named = [
        str(call.get("name"))
        for entry in transcript
        if entry.get("role") == "assistant"
        for call in entry.get("tool_calls") or []
    ]
    return turns if named == [call.tool for call in calls] else []


def final_turn(transcript: list[dict]) -> Turn | None:
    """The transcript's last assistant turn when it made no tool call: the one that answered (a
    model agent cut short by its time limit has none)."""
    said = [entry for entry in transcript if entry.get("role") == "assistant"]
    if not said or said[-1].get("tool_calls"):
        return None
    last = said[-1]
    return Turn(last.get("content") or "", [], last.get("finish_reason"), token_usage(last.get("usage")))


def well_formed(entry: dict) -> bool:
    """Whether an assistant entry of a transcript has the shape its turn is read with."""
    tool_calls = entry.get("tool_calls") or []
    return (
        isinstance(entry.get("content") or "", str)
        and isinstance(tool_calls, list)
        and all(isinstance(call, dict) for call in tool_calls)
        and isinstance(entry.get("finish_reason"), (str, type(None)))
        and isinstance(entry.get("usage"), (dict, type(None)))
    )


def tool_call(call_id: str, call: CallRecord) -> ToolCall:
    arguments = call.args if isinstance(call.args, dict) else {"raw": call.args}
    return ToolCall(id=call_id, function=call.tool, arguments=arguments)


def tool_event(call_id: str, call: CallRecord, started: str, problems: list[str]) -> ToolEvent:
    begun = call_time(call, "wall_start", parse_time(started), problems)
    parts = result_parts(call)
    ended = call_time(call, "wall_end", begun, problems)
    return ToolEvent(
        timestamp=begun,
        completed=ended,
        working_start=call.t_start,
        working_time=max(call.t_end - call.t_start, 0.0),
        id=call_id,
        function=call.tool,
        arguments=call.args if isinstance(call.args, dict) else {"raw": call.args},
        result=parts[0] if len(parts) == 1 else [ContentText(text=part) for part in parts],
        error=call_error(call),
        metadata={
            "seq": call.seq,
            **({} if isinstance(call.args, dict) else {"args": call.args}),  # as received, not a JSON object
            "ok": call.ok,
            "error": call.error.model_dump(mode="json") if call.error else None,
            "tab": call.tab,
            "url_before": call.url_before,
            "url_after": call.url_after,
            "screenshot": call.screenshot,
            "events": call.events,
        },
    )


def result_parts(call: CallRecord) -> list[str]:
    """The result as an MCP client reads it: a snapshot's text first, then the page facts;
    compact JSON otherwise (an error's ``{type, message}``)."""
    if not call.ok:
        return [compact(call.error.model_dump(mode="json", exclude_none=True) if call.error else {})]
    result = call.result or {}
    if isinstance(result.get("snapshot"), str):
        facts = {key: value for key, value in result.items() if key != "snapshot"}
        return [result["snapshot"], compact(facts)]
    return [compact(result)]


def call_error(call: CallRecord) -> ToolCallError | None:
    """Inspect's error kinds are its own: the sandbox's type leads the message (and is in the
    event's metadata)."""
    if call.ok:
        return None
    error = call.error
    return ToolCallError("unknown", f"{error.type}: {error.message}" if error else "error")


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def token_usage(usage: dict[str, Any] | None) -> ModelUsage | None:
    """OpenAI's (prompt/completion) or Anthropic's and cmd: agents' (input/output) token counts as
    Inspect's, whose ``input_tokens`` leaves out the cached input (``input_tokens_cache_read``) and
    the input written to a cache (``input_tokens_cache_write``), as ``sandbox.runner.prices`` reads
    them: OpenAI's ``cached_tokens`` are part of its prompt tokens, the others' beside them."""
    if not usage:
        return None

    def count(*keys: str) -> int:  # a damaged transcript's "abc" counts none
        found = next((usage[key] for key in keys if usage.get(key)), 0)
        return found if is_count(found) else 0

    made = count("output_tokens", "completion_tokens")
    if "prompt_tokens" in usage:
        details = usage.get("prompt_tokens_details")  # a turn's usage as the SDK dumps it (the total's is flat)
        nested = details.get("cached_tokens") if isinstance(details, dict) else None
        read, written = count("cached_tokens") or (nested if is_count(nested) else 0), 0
        given = max(count("prompt_tokens") - read, 0)
    else:
        read, written = count("cache_read_input_tokens", "cached_input_tokens"), count("cache_creation_input_tokens")
        given = count("input_tokens")
    return ModelUsage(
        input_tokens=given,
        output_tokens=made,
        total_tokens=count("total_tokens") or given + read + written + made,
        input_tokens_cache_read=read or None,
        input_tokens_cache_write=written or None,
    )


# --- reading the folder --------------------------------------------------------------------------


def unicode_name(name: str) -> str:
    """A file name whose bytes are not UTF-8 (``os.fsdecode``'s lone surrogates) with those bytes
    written as escapes (``ab\\xff-1``): the eval log's JSON and zip entry names must be UTF-8."""
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")


def read_text(folder: Path, name: str, problems: list[str]) -> str:
    """The text of the folder's file ``name``; empty when it is not a file inside the folder
    (``folder_file``), or cannot be read (added to ``problems``)."""
    file, _ = folder_file(folder, name)
    if file is None:
        return ""
    try:
        return file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"{name} is unreadable ({exc.strerror or exc}): left out")
        return ""


def read_transcript(folder: Path, problems: list[str]) -> list[dict]:
    """A model agent's ``transcript.jsonl``; lines that do not parse are left out."""
    return list(transcript_entries(read_text(folder, TRANSCRIPT_FILE, problems)))


def transcript_entries(text: str) -> Iterator[dict]:
    """Each line's message; split at newlines only (an older writer left U+2028 raw in a string)."""
    for line in text.split("\n"):
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, a number past 4,300 digits, or nested deeper than Python reads
            continue
        if isinstance(entry, dict):
            yield entry


def first_wall(calls: list[CallRecord]) -> str | None:
    """The first call's start that is a time (a trace of another writer's may hold any text)."""
    return next((call.wall_start for call in calls if call.wall_start and is_time(call.wall_start)), None)


def is_time(text: str) -> bool:
    try:
        parse_time(text)
    except ValueError:
        return False
    return True


def call_time(
    call: CallRecord, field: Literal["wall_start", "wall_end"], instead: datetime, problems: list[str]
) -> datetime:
    """The call's ``field`` as a time; ``instead`` when it has none, or one that is no ISO time
    (a trace of another writer's), which is added to the sample's ``problems``, once."""
    text = getattr(call, field)
    if not text:
        return instead
    try:
        return parse_time(text)
    except ValueError:
        said = (
            f"trace.jsonl call seq {call.seq}: {field} {text!r} is not an ISO time; its event is dated {iso(instead)}"
        )
        if said not in problems:
            problems.append(said)
        return instead


def changed_at(folder: Path) -> str:
    """When the folder last changed (now, if it cannot be looked at)."""
    try:
        return iso(datetime.fromtimestamp(folder.stat().st_mtime, UTC))
    except OSError:
        return now()


def now() -> str:
    return iso(datetime.now(UTC))


def ended_at(started: str | None, elapsed: float | None) -> str | None:
    """When an attempt that started at ``started`` and took ``elapsed`` seconds ended; None when
    either is unknown, or the end is a time no date can hold (an edited ``1e300``)."""
    if started is None or elapsed is None:
        return None
    try:
        return iso(parse_time(started) + timedelta(seconds=elapsed))
    except OverflowError:
        return None


def parse_time(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def iso(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds")
