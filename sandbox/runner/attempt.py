"""One attempt: a fresh run with the pack's gates, a never-issued site key, the clock, the
agent, then scoring; everything lands in the attempt's folder.

    <attempt>/trace.jsonl   every tool call and browser event (written as they happen)
    <attempt>/prompt.txt    exactly what the agent was given
    <attempt>/output.txt    the agent's final answer
    <attempt>/score.json    the reviewed scoring pack's verdict plus the gates (status error, with
                            the traceback, when an evaluator raised: the batch goes on)
    <attempt>/score.txt     the same verdict for people, with why it did not qualify
    <attempt>/attempt.json  pack, agent, site key, times, exit status, counts, usage, versions
                            (``AttemptRecord``)
    <attempt>/shots/<seq>.png  the active tab after each call (``screenshots``: all, failures, none)
    <attempt>/playwright-trace.zip  each session's Playwright trace (``playwright_trace``)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import shutil
import statistics
import time
from collections import Counter
from collections.abc import Container
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, ValidationError, field_validator

from sandbox import __version__
from sandbox.evaluation.packs import Pack
from sandbox.evaluation.scoring import ScoreStatus, describe_score, score_attempt
from sandbox.evaluation.shown import shown
from sandbox.paths import PACKS_DIR
from sandbox.runner.files import read_tail, write_file
from sandbox.runner.prices import Prices, finite_number, usage_problem
from sandbox.runner.reasons import failure_reasons
from sandbox.runner.task import Agent, AgentResult, AgentTask, InProcessClient, agent_turn
from toolserver.contract import site_keys
from toolserver.contract.policy import PolicyMode
from toolserver.contract.trace import read_trace
from toolserver.faults import FaultPlan

SITE_KEY_PREFIX = "bench"
SCREENSHOT_MODES = ("all", "failures", "none")
SHOTS_FOLDER = "shots"
STOPPED = "stopped"  # an attempt's status when its batch was stopped (a signal, Ctrl-C) while it ran
UNFINISHED = "unfinished"  # the status of an attempt folder with no attempt.json (its time is unknown)
UNREADABLE = "unreadable"  # the status of an attempt folder whose attempt.json cannot be read (its time is unknown)
UNRUN = "the sandbox could not run the attempt"  # how attempt.json's error starts when it could not (an interruption)
EVALUATION_ERROR = "evaluation_error"  # an attempt's status when an evaluator raised (score.json status error)


def new_site_key(taken: Container[str] = ()) -> str:
    """A runner's site key (``bench-...``): the tool server's one generator with the runner's prefix."""
    return site_keys.new_site_key(taken, SITE_KEY_PREFIX)


def package_versions() -> dict[str, str]:
    out = {"sandbox": __version__}
    for name in ("playwright", "aiohttp", "pydantic", "jsonschema", "openai", "anthropic", "mcp", "vcrpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


class AttemptRecord(BaseModel):
    """``attempt.json``: which pack and agent, how the attempt ended, what it cost and with which
    versions. Written by ``run_attempt``; read back by ``sandbox.runner.folders``, where a field an
    older version (or another writer) left out is None. A number is finite (JSON has no NaN; a
    damaged file's ``NaN`` is unreadable, as are a negative time or cost and a start that is no
    ISO-8601 time), so no reader counts one. A number, a count or a yes/no is of its JSON type, never
    coerced: ``"12.5"`` or ``true`` for a time is left out and named (a whole number is a number)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    pack: str = Field(description="The executed pack's id.")
    scoring_pack: str | None = Field(default=None, description="The workflow's reviewed pack, which scored it.")
    agent: str | None = Field(default=None, description="The agent's name (its spec: reference, cmd:..., ...).")
    attempt: StrictInt | None = Field(
        default=None, description="The attempt's number in its batch (the repeat, from 1)."
    )
    origin: Literal["recorded", "hand-made"] | None = Field(
        default=None, description="recorded: run through the tool server; hand-made: written call by call."
    )
    recorded_run: StrictBool | None = Field(default=None, description="True when the tool server recorded the trace.")
    site_key: str | None = Field(default=None, description="The never-issued profile key the prompt gave the agent.")
    run_id: str | None = Field(default=None, description="The tool server's run id (the trace header's run_id).")
    started_at: str | None = Field(default=None, description="When the agent was started (ISO-8601 UTC, milliseconds).")
    elapsed_seconds: StrictFloat | None = Field(
        default=None, ge=0, description="The agent's measured time: from its start to its answer or its stop."
    )
    dispatch_wait_seconds: StrictFloat | None = Field(
        default=None, ge=0, description="How long the attempt waited for its turn under --concurrency (not in elapsed)."
    )
    time_limit_seconds: StrictInt | StrictFloat | None = Field(
        default=None, description="The time limit the agent was given."
    )
    status: str | None = Field(
        default=None,
        description="How the agent ended: completed, error (it reported one), timeout, crashed, or stopped (its "
        "batch was stopped while it ran); recording_error: it ended (agent_details.agent_status says how), but the "
        "attempt's files could not all be written.",
    )
    error: str | None = Field(default=None, description="The agent's error message (None when it completed).")
    tool_calls: dict[str, StrictInt] | None = Field(default=None, description="Calls per tool, from the trace.")
    tool_calls_total: StrictInt | None = Field(default=None, ge=0, description="Every call line of the trace.")
    token_usage: dict[str, StrictInt] | None = Field(
        default=None, description="A model agent's tokens (None: no model)."
    )
    cost_usd: StrictFloat | None = Field(
        default=None, ge=0, description="The tokens' cost at the batch's --prices (None: unknown, or no prices)."
    )
    credits_per_dollar: StrictFloat | None = Field(
        default=None, gt=0, description="The batch's --prices credit rate (None: no prices given)."
    )
    agent_details: dict[str, Any] | None = Field(
        default=None, description="What the agent reported about itself (exit code, turns, ...)."
    )
    qualified_pass: StrictBool | None = Field(default=None, description="score.json's qualified_pass.")
    error_free: StrictBool | None = Field(default=None, description="score.json's error_free.")
    score_status: ScoreStatus | None = Field(
        default=None, description="score.json's status: pass, fail or error (an evaluator raised)."
    )
    versions: dict[str, str] | None = Field(default=None, description="Versions of the sandbox and its packages.")
    chromium: str | None = Field(default=None, description="The Chromium executable the tool server drove.")
    mirror_checksum: str | None = Field(default=None, description="Checksum of the mirrors the run read.")
    pack_checksum: str | None = Field(default=None, description="Checksum of the executed pack's scoring files.")
    faults: str | None = Field(
        default=None, description="The faults injected into the batch (--faults) and their seed; null: none."
    )
    pack_path: str | None = Field(
        default=None, description="A pack of your own: its folder (score and replay load it from there); null: bundled."
    )
    tries: StrictInt | None = Field(
        default=None, description="Ray: the workers it was tried on, when an earlier one died under it or it crashed."
    )
    executor: str | None = Field(default=None, description="The executor that recorded a crash (ray).")
    ray_node: str | None = Field(
        default=None, description="Ray: the node it ran on (crashed: the node of the last worker it lost)."
    )
    how: str | None = Field(default=None, description="A hand-made attempt: how it was written.")
    demonstrates: list[str] | None = Field(default=None, description="A hand-made attempt: what it shows.")

    @field_validator("started_at")
    @classmethod
    def _an_iso_time(cls, value: str | None) -> str | None:
        if value is not None:
            datetime.fromisoformat(value)  # a ValueError: not an ISO-8601 time
        return value

    def to_json(self) -> str:
        """The file's text: the fields the writer gave (None included), in the order above."""
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), indent=2, ensure_ascii=False) + "\n"


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


def attempt_status(agent_status: str, score_status: str | None) -> str:
    """The attempt's status in the summary: how the agent ended, unless an evaluator raised."""
    return EVALUATION_ERROR if score_status == "error" else agent_status


@dataclass
class AttemptOutcome:
    pack: str
    agent: str | None  # None: a damaged attempt folder that names none, nor does its batch (in no agent's row)
    directory: Path
    status: str  # how the agent ended, or evaluation_error (see ``attempt_status``)
    elapsed_seconds: float | None  # None: unknown (an attempt the sandbox could not run)
    qualified_pass: bool
    error_free: bool
    field_accuracy: float
    tool_calls: int | None  # None: unknown (a damaged folder: no record to count them, no trace read)
    token_usage: dict[str, int] | None
    reason: str = ""  # why it did not qualify ("" for a qualified pass)
    cost_usd: float | None = None  # the attempt's model cost (None: unknown, never 0 by default)
    interruption: str = ""  # why the infrastructure interrupted it ("" : it did not; sandbox.runner.selection)
    selection: str = "selected"  # selected | replaced (by a re-run) | approved replacement
    replaces: str = ""  # an approved replacement: the folder of the attempt it replaces
    model: str | None = None  # the model the agent used, as it declared or reported it
    pack_checksum: str | None = None  # the executed pack's scoring files (two versions are not one workflow)
    mirror_checksum: str | None = None  # the mirrors it read (two sets of pages are not one workflow either)
    faults: str | None = None  # the batch's injected faults and seed (``FaultPlan.label``), "" none; None: unknown

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "directory": str(self.directory)}


def time_known(status: str, seconds: object) -> bool:
    """Whether an attempt's time is known: one was recorded (an attempt the sandbox could not run,
    or whose worker never answered, has none), and its folder is neither unfinished nor unreadable
    (their 0 is none)."""
    return status not in (UNFINISHED, UNREADABLE) and finite_number(seconds)


def in_median(status: str, seconds: object) -> bool:
    """Whether an attempt's time counts in its agent's median: it is known, and whole (a
    ``stopped`` attempt's is only the part it ran before its batch was stopped)."""
    return status != STOPPED and time_known(status, seconds)


def median_seconds(elapsed: list[tuple[str, float | None]]) -> float | None:
    """The median time of (status, elapsed seconds) pairs, over the attempts whose time counts
    (``in_median``); None when none does."""
    known = [float(seconds) for status, seconds in elapsed if in_median(status, seconds) and seconds is not None]
    return round(statistics.median(known), 3) if known else None


async def run_agent(agent: Agent, task: AgentTask, limit: float, started: float) -> AgentResult:
    """The agent's run within ``limit`` seconds; its failure, its time out or the batch's stop
    (the attempt is then recorded before the stop goes on) as the result."""
    try:
        return await asyncio.wait_for(agent.run(task), timeout=limit)
    except TimeoutError:
        return ended_early(task, "timeout", f"stopped at the attempt's time limit ({limit:g} s)")
    except Exception as exc:  # a crashed agent never stops the batch
        return ended_early(task, "crashed", f"{type(exc).__name__}: {exc}")
    except asyncio.CancelledError:  # the batch is being stopped: this attempt is recorded first
        uncancel()
        return ended_early(task, STOPPED, f"the batch was stopped after {time.monotonic() - started:.1f} s")


def ended_early(task: AgentTask, status: str, error: str) -> AgentResult:
    """The result of an agent that did not end on its own: what it had spent, and said of itself
    (a ``cmd:`` agent's ``usage_problem``), up to then."""
    spent = task.spent
    return AgentResult(
        output="", status=status, error=error, token_usage=spent.token_usage, details=dict(spent.details)
    )


def uncancel() -> None:
    """Take back the stop of the task running this, while its attempt is recorded (``run_attempt``
    raises it again at the end)."""
    this = asyncio.current_task()
    if this is not None:
        this.uncancel()


async def run_attempt(
    sandbox,
    pack: Pack,
    agent: Agent,
    directory: Path,
    *,
    sandbox_url: str | None = None,
    attempt_number: int = 1,
    time_limit: float | None = None,
    policy: PolicyMode | None = None,
    block_state_changes: bool | None = None,
    mirror_roots: tuple[Path, ...] | None = None,
    screenshots: str = "all",
    playwright_trace: bool = False,
    label: str | None = None,
    dispatch_wait: float = 0.0,
    prices: Prices | None = None,
    faults: FaultPlan | None = None,
) -> AttemptOutcome:
    """``label``: the agent's name in the batch (else its own); ``dispatch_wait``: how long the
    attempt waited for its turn (recorded; the timing boundary excludes it). ``screenshots``:
    ``all`` keeps a viewport PNG after every call, ``failures`` only for an attempt that does not
    qualify, ``none`` takes none. ``playwright_trace`` saves each session's Playwright trace
    (``playwright show-trace``; off by default: it costs more than the screenshots)."""
    if screenshots not in SCREENSHOT_MODES:
        raise ValueError(f"screenshots must be one of {', '.join(SCREENSHOT_MODES)}, not {screenshots!r}")
    try:
        directory.mkdir(parents=True, exist_ok=False)  # an attempt's folder is its own: never appended to
    except FileExistsError as exc:  # the folder (or a link to nothing) named, as FileExistsError names it
        raise AttemptFolderTaken(exc.errno, "exists already: an attempt's folder is its own", exc.filename) from None
    site_key = sandbox.issue_site_key(SITE_KEY_PREFIX)  # never issued: the server has never seen it either
    name = label or agent.name
    block = sandbox.config.block_state_changes if block_state_changes is None else block_state_changes
    run = sandbox.create_run(
        policy=pack.policy(policy or sandbox.config.policy, block),
        trace_path=directory / "trace.jsonl",
        header={"site_key": site_key, "agent": name, "attempt": attempt_number},
        mirror_roots=mirror_roots,
        screenshot_dir=None if screenshots == "none" else directory / SHOTS_FOLDER,
        playwright_trace_dir=directory if playwright_trace else None,
        faults=faults,
        fault_key=f"{pack.id}:{name}:{attempt_number}:{directory.name}",  # a replacement draws anew
    )
    limit = time_limit if time_limit is not None else pack.card.time_limit_seconds
    try:  # from here the run is open: whatever is raised before the agent's end closes it first
        prompt = pack.render_prompt(site_key)
        write_file(directory / "prompt.txt", prompt)
        task = AgentTask(
            pack_id=pack.id,
            workflow=pack.card.workflow,
            prompt=prompt,
            site_key=site_key,
            time_limit_seconds=limit,
            input_text=pack.input_text,
            output_schema=pack.schema,
            sandbox_url=sandbox_url,
            run_id=run.id,
            client=InProcessClient(run),
            workdir=directory,
        )
        waiting = started = time.monotonic()
        started_wall = datetime.now(UTC).isoformat(timespec="milliseconds")
        try:
            async with agent_turn(agent):  # a model agent's turn at the cassettes: a wait to be dispatched
                dispatch_wait += time.monotonic() - waiting
                started_wall = datetime.now(UTC).isoformat(timespec="milliseconds")
                started = time.monotonic()  # the clock starts immediately before the agent
                result = await run_agent(agent, task, limit, started)
        except asyncio.CancelledError:  # stopped while it waited for its turn: recorded all the same
            uncancel()
            dispatch_wait += time.monotonic() - waiting  # all of it a wait: no time of its own
            started = time.monotonic()
            result = AgentResult(
                output="", status=STOPPED, error="the batch was stopped before the attempt's turn came"
            )
    except BaseException:  # no agent result: the run is closed, and the attempt could not be run
        await asyncio.shield(asyncio.ensure_future(run.close(reason="crashed")))
        raise
    elapsed = counted_seconds(time.monotonic() - started)  # once: the outcome, attempt.json and the score say the same
    # A stop now (its run closing, its files being written) is taken back, as during the agent's
    # run: the attempt is recorded, and the stop goes on as AttemptStopped.
    closed, stopped = await awaited(run.close(reason=result.status))
    closed.result()  # a run that failed to close is the batch's to see, as before
    stopped = stopped or result.status == STOPPED
    model = getattr(agent, "model", None) or (result.details or {}).get("model") or task.spent.model
    cost = prices.cost(model, result.token_usage) if prices is not None else None
    if prices is not None and (problem := usage_problem(result.token_usage)) is not None:
        result.details = {**(result.details or {}), "usage_problem": problem}  # said, as an unreadable usage.json is
    ran = AgentRun(name, site_key, run.id, started_wall, elapsed, round(dispatch_wait, 3), limit, result, model, cost)
    # Read and scored in a thread: a long trace must not hold up the other attempts' calls.
    recording = asyncio.to_thread(
        record_attempt, sandbox, run, pack, directory, ran, attempt_number, screenshots, prices
    )
    recorded, stopped_recording = await awaited(recording)
    try:
        outcome = recorded.result()
    except Exception as exc:  # the agent ran; its files could not all be written (a full disk, a deleted folder)
        outcome = unrecorded_attempt(pack, directory, ran, attempt_number, exc)
    if stopped or stopped_recording:
        raise AttemptStopped(outcome)
    return outcome


async def awaited(awaitable) -> tuple[asyncio.Future, bool]:
    """``awaitable`` awaited to its end, a stop (or two) of this task meanwhile taken back: its
    future (done) and whether there was a stop."""
    future = asyncio.ensure_future(awaitable)
    stopped = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            uncancel()
            stopped = True
        except Exception:  # the future holds it: its caller's to take
            pass
    return future, stopped


def counted_seconds(seconds: float) -> float:
    """An attempt's time, rounded up to the millisecond: a time over a limit stays over it (600.0004
    rounded to the nearest was 600.0, which a 600 s time gate passed)."""
    return math.ceil(seconds * 1000) / 1000


@dataclass(frozen=True)
class AgentRun:
    """What the agent's run was, before its files are written: what an attempt that could not be
    recorded in full still says."""

    name: str
    site_key: str
    run_id: str
    started_wall: str
    elapsed: float
    dispatch_wait: float
    limit: float
    result: AgentResult
    model: str | None
    cost: float | None


RECORDING_ERROR = "recording_error"  # an attempt's status when the agent ran but its files could not be written


def record_attempt(
    sandbox, run, pack: Pack, directory: Path, ran: AgentRun, attempt_number: int, screenshots: str,
    prices: Prices | None,
) -> AttemptOutcome:  # fmt: skip
    """The attempt's files, its trace read and its answer scored (in a thread: nothing here awaits)."""
    result = ran.result
    write_file(directory / "output.txt", result.output)
    trace = read_trace(directory / "trace.jsonl")
    report = score_attempt(pack, result.output, trace, ran.elapsed, site_key=ran.site_key)
    score = report.model_dump(mode="json")
    write_file(directory / "score.json", json.dumps(score, indent=2, ensure_ascii=False) + "\n")
    if screenshots == "failures" and report.qualified_pass:
        shutil.rmtree(directory / SHOTS_FOLDER, ignore_errors=True)
    counts = Counter(call.tool for call in trace.calls)
    attempt = AttemptRecord(
        **recorded_run_fields(sandbox, run, pack, ran, attempt_number, prices),
        tool_calls=dict(sorted(counts.items())),
        tool_calls_total=sum(counts.values()),
        qualified_pass=report.qualified_pass,
        error_free=report.error_free,
        score_status=report.status,
    )
    write_file(directory / "attempt.json", attempt.to_json())
    stderr_file = directory / "agent.stderr.txt"
    stderr = read_tail(stderr_file) if stderr_file.is_file() else None
    reasons = failure_reasons(attempt, score, stderr)
    write_file(directory / "score.txt", describe_attempt(attempt, describe_score(report), reasons))
    return AttemptOutcome(
        pack.id,
        ran.name,
        directory,
        attempt_status(result.status, report.status),
        ran.elapsed,
        report.qualified_pass,
        report.error_free,
        float(report.field_accuracy),
        sum(counts.values()),
        result.token_usage,
        "; ".join(reasons),
        ran.cost,
        model=ran.model,
        pack_checksum=attempt.pack_checksum,
        mirror_checksum=attempt.mirror_checksum,
        faults=attempt.faults or "",
    )


def recorded_run_fields(sandbox, run, pack: Pack, ran: AgentRun, attempt_number: int, prices: Prices | None) -> dict:
    """``attempt.json``'s fields known once the agent ended (its trace not read, its answer not scored)."""
    return {
        "pack": pack.id,
        "scoring_pack": pack.card.scoring_pack,
        "agent": ran.name,
        "attempt": attempt_number,
        "origin": "recorded",
        "recorded_run": True,
        "site_key": ran.site_key,
        "run_id": ran.run_id,
        "started_at": ran.started_wall,
        "elapsed_seconds": ran.elapsed,
        "dispatch_wait_seconds": ran.dispatch_wait,
        "time_limit_seconds": ran.limit,
        "status": ran.result.status,
        "error": ran.result.error,
        "token_usage": ran.result.token_usage,
        "cost_usd": None if ran.cost is None else round(ran.cost, 6),
        "credits_per_dollar": prices.credits_per_dollar if prices is not None else None,
        "agent_details": ran.result.details,
        "versions": package_versions(),
        "chromium": sandbox.host.executable,
        "mirror_checksum": run.store.checksum(),
        "pack_checksum": pack.checksum(),
        "faults": run.faults.plan.label if run.faults is not None else None,
        "pack_path": None if pack.dir.resolve().parent == PACKS_DIR.resolve() else str(pack.dir.resolve()),
    }


def unrecorded_attempt(
    pack: Pack, directory: Path, ran: AgentRun, attempt_number: int, exc: Exception
) -> AttemptOutcome:
    """An attempt whose agent ran but whose files could not all be written or read (a full disk, an
    agent that removed its folder): status ``recording_error``, the agent's own status, time, tokens
    and cost kept; ``attempt.json`` and ``score.txt`` say so when they can still be written (never
    in a folder made anew)."""
    problem = f"{type(exc).__name__}: {exc}"
    agent_ended = ran.result.status + (f" ({ran.result.error})" if ran.result.error else "")
    reason = f"the agent ended {agent_ended}, but its attempt could not be recorded: {problem}"
    record = AttemptRecord(
        pack=pack.id, scoring_pack=pack.card.scoring_pack, agent=ran.name, attempt=attempt_number,
        origin="recorded", recorded_run=True, site_key=ran.site_key, run_id=ran.run_id, started_at=ran.started_wall,
        elapsed_seconds=ran.elapsed, dispatch_wait_seconds=ran.dispatch_wait, time_limit_seconds=ran.limit,
        status=RECORDING_ERROR, error=reason, token_usage=ran.result.token_usage,
        cost_usd=None if ran.cost is None else round(ran.cost, 6),
        agent_details={**(ran.result.details or {}), "agent_status": ran.result.status},
        qualified_pass=False, error_free=False,
    )  # fmt: skip
    said = shown(f"attempt {pack.id} #{attempt_number} by {ran.name}: {RECORDING_ERROR}\n{reason}") + "\n"
    if directory.is_dir():  # an agent that removed its folder: it is not made anew
        with contextlib.suppress(OSError):  # the outcome's reason says it all the same
            write_file(directory / "attempt.json", record.to_json())
            write_file(directory / "score.txt", said)
    return AttemptOutcome(
        pack.id, ran.name, directory, RECORDING_ERROR, ran.elapsed, False, False, 0.0, None,
        ran.result.token_usage, reason, None if ran.cost is None else round(ran.cost, 6), model=ran.model,
    )  # fmt: skip


class AttemptFolderTaken(FileExistsError):
    """The attempt's folder exists already: it is another attempt's, and nothing is written there."""


class AttemptStopped(asyncio.CancelledError):
    """The batch was stopped while this attempt ran: it is recorded (status ``stopped``), and the
    stop goes on (a ``CancelledError``) carrying its ``outcome``."""

    def __init__(self, outcome: AttemptOutcome) -> None:
        super().__init__(f"attempt {outcome.directory.name} stopped")
        self.outcome = outcome


def describe_attempt(attempt: AttemptRecord, score_text: str, reasons: list[str]) -> str:
    """``score.txt``: who ran, how it ended, the verdict, and why it did not qualify (an agent's
    text, its error and standard error, with the characters a terminal acts on escaped: people ``cat`` it)."""
    ended = f"{attempt.status}" + (f" ({attempt.error})" if attempt.error else "")
    head = (
        f"attempt {attempt.pack} #{attempt.attempt} by {attempt.agent}: {ended}, "
        f"{attempt.elapsed_seconds or 0:.2f} s of {attempt.time_limit_seconds or 0:g} s, "
        f"{attempt.tool_calls_total} tool calls"
    )
    why = ["why it did not qualify:", *(f"  - {r}" for r in reasons)] if reasons else []
    return shown("\n".join([head, score_text, *why])) + "\n"
