"""Batches: many attempts on an executor (``sandbox.runner.executors``: one warm browser, or Ray
workers), bounded parallelism, a progress bar, a summary.

Each attempt is its own run (own browser contexts, own fresh site key), so attempts never
share a profile. A crashed or hung agent ends as that attempt's status; the batch goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import json
import logging
import re
import statistics
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.evaluation.packs import Pack, list_packs, load_pack
from sandbox.evaluation.shown import shown
from sandbox.runner.agents import AgentOptions, make_agent
from sandbox.runner.attempt import (
    STOPPED,
    UNRUN,
    AttemptFolderTaken,
    AttemptOutcome,
    AttemptRecord,
    AttemptStopped,
    median_seconds,
)
from sandbox.runner.compare import agent_labels, comparison, mean_calls, table
from sandbox.runner.executors import AttemptSettings, BatchAgent, BatchPlan, parse_executor
from sandbox.runner.files import rerun_name, rerun_of, write_file
from sandbox.runner.prices import DEFAULT_CREDITS_PER_DOLLAR, Prices
from sandbox.runner.selection import interruption
from toolserver.contract.policy import PolicyMode
from toolserver.faults import FaultPlan

if TYPE_CHECKING:
    from toolserver.api import Sandbox

log = logging.getLogger("sandbox.runner.batch")

SUMMARY_FILE = "summary.json"


class AgentUnavailable(Exception):
    """The agent cannot work at all (e.g. its model endpoint does not answer): no attempt is run."""


def resolve_packs(names: list[str]) -> list[Pack]:
    """The packs ``names`` give (``all`` or none: every bundled pack); a ``ValueError`` when two
    are one pack id (``check_pack_ids``)."""
    if not names or names == ["all"]:
        return list_packs()
    packs = [load_pack(name) for name in names]
    check_pack_ids(packs, names)
    return packs


def check_pack_ids(packs: list[Pack], names: list[str] | None = None) -> None:
    """A ``ValueError`` when two packs of a batch have one id (a pack's id is its folder's name, so
    ``bid-intake`` and ``./copy/bid-intake`` are one): their attempts would share folders, and the
    tool server would know only one of them by that id."""
    given = names or [str(pack.dir) for pack in packs]
    seen: dict[str, list[str]] = defaultdict(list)
    for pack, name in zip(packs, given, strict=True):
        seen[pack.id].append(name)
    twice = {pack_id: named for pack_id, named in seen.items() if len(named) > 1}
    if twice:
        said = "; ".join(f"{pack_id} as {', '.join(named)}" for pack_id, named in twice.items())
        raise ValueError(
            f"a pack is named more than once ({said}): a pack's id is its folder's name, and a batch runs each id "
            "once; name it once and use --repeats N to run it N times, or rename the folder of a copy"
        )


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "agent"


def decided(agent: BatchAgent) -> BatchAgent:
    """The agent as every attempt of it runs, decided here, on the driver, once: its relative paths
    mean this working directory (a Ray worker's is another), and its name, when no label gives one,
    is the made agent's (``think:0.50:reference`` is ``think:0.5:reference``, ``replay:./runs/x/``
    is ``replay:runs/x``), so that an attempt that ran, one that could not and one whose worker
    died are one agent's. ``AgentSpecError``: a bad spec."""
    options = agent.options.anchored(Path.cwd())
    return dataclasses.replace(agent, options=options, label=agent.label or make_agent(agent.spec, options).name)


def check_names(agents: list[BatchAgent]) -> None:
    """A ``ValueError`` when two agents of a batch have one name (as ``decided``: ``think:0.5:reference``
    and ``think:0.50:reference`` are one), or names that are one folder name."""
    names = [decided(agent).name for agent in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"two agents of the batch have the same name ({', '.join(names)}): --with label=NAME")
    folders = [slug(name) for name in names]
    if len(agents) > 1 and len(set(folders)) != len(folders):  # their attempts would share folders
        raise ValueError(
            f"two agents of the batch have names that are one folder name ({', '.join(map(repr, names))} as "
            f"{', '.join(folders)}): give each a label of its own (--with label=NAME)"
        )


def exclusive_dir(parent: Path, name: str) -> Path:
    """A new folder no other batch shares: two batches started in the same second get
    ``name`` and ``name-2`` (created atomically, never reused)."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for number in range(1, 1000):
            candidate = parent / (name if number == 1 else f"{name}-{number}")
            try:
                candidate.mkdir()
                return candidate
            except FileExistsError:
                continue
    except OSError as exc:  # not a folder, not writable, on a read-only file system ...
        raise BatchFolderUnavailable(f"cannot make a batch folder in {parent}: {exc.strerror or exc}") from None
    raise BatchFolderUnavailable(f"{parent}: 999 batch folders named {name}*; choose another --out")


class BatchFolderUnavailable(RuntimeError):
    """``--out`` cannot hold a new batch folder."""


async def run_batch(
    packs: list[Pack],
    agents: str | list[BatchAgent],
    *,
    repeats: int = 1,
    concurrency: int = 1,
    out: Path = Path("runs"),
    options: AgentOptions | None = None,
    progress: bool = True,
    sandbox: Sandbox | None = None,
    time_limit: float | None = None,
    policy: PolicyMode | None = None,
    block_state_changes: bool | None = None,
    executor: str = "local",
    retries: int | None = None,
    screenshots: str = "all",
    playwright_trace: bool = False,
    prices: Prices | None = None,
    faults: FaultPlan | None = None,
    replace_interrupted: int = 0,
    mirror_roots: tuple[Path, ...] | None = None,
) -> list[AttemptOutcome]:
    """Run every pack ``repeats`` times, at most ``concurrency`` attempts at once, on the executor
    ``executor`` names (``sandbox.runner.executors``): this process's warm browser (``"local"``;
    ``sandbox``: a started one to use) or a Ray cluster (``"ray[:ADDRESS]"``, where a worker that
    dies fails only its attempts, re-run up to ``retries`` times). ``sandbox`` and ``retries`` are
    the executor's options: one it does not take is an ``ExecutorSpecError``.

    ``agents``: one spec (with ``options``), or several ``BatchAgent``s, each with its own
    options. The attempts of several agents are interleaved (every agent's attempt of a pack and
    repeat before the next, starting with a different agent each time), so machine noise favours
    none; their folders are ``<agent>--<pack>-<n>``. Two packs with one id are a ``ValueError``."""
    check_pack_ids(packs)
    given = {name: value for name, value in (("sandbox", sandbox), ("retries", retries)) if value is not None}
    chosen = parse_executor(executor, given)
    if isinstance(agents, str):
        agents = [BatchAgent(agents, options or AgentOptions())]
    check_names(agents)
    agents = [decided(agent) for agent in agents]
    for agent in agents:
        check = getattr(make_agent(agent.spec, agent.options), "preflight", None)  # fail early on a bad spec
        problem = await check() if check else None  # once, so N attempts do not fail the same way
        if problem:
            raise AgentUnavailable(f"{agent.name}: {problem}" if len(agents) > 1 else problem)
    several = len(agents) > 1
    named = f"{len(agents)}-agents" if several else slug(agents[0].name)
    batch_dir = exclusive_dir(Path(out), f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{named}")
    jobs = interleaved(packs, repeats, agents)
    settings = AttemptSettings(
        time_limit=time_limit,
        policy=policy,
        block_state_changes=block_state_changes,
        screenshots=screenshots,
        playwright_trace=playwright_trace,
        prices=prices,
        faults=faults,
        mirror_roots=mirror_roots,
    )
    try:
        running = await chosen.start(BatchPlan(tuple(agents), concurrency, settings))
    except BaseException:  # no browser, no executor: no attempt ran, no empty folder is left
        with contextlib.suppress(OSError):
            batch_dir.rmdir()
        raise
    if running.capacity is not None and running.capacity[0] < concurrency:
        held, why = running.capacity
        log.warning(
            "running at most %d attempts at once, not %d: the server holds %d sessions (%s); the others wait "
            "their turn (dispatch_wait_seconds)",
            held,
            concurrency,
            held,
            why,
        )
        concurrency = held
    limit = asyncio.Semaphore(max(1, concurrency))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), desc="attempts", unit="attempt", leave=True)

    queued = time.monotonic()
    ended: dict[int, AttemptOutcome] = {}  # by job: what a stop of the batch keeps
    reruns: dict[int, list[AttemptOutcome]] = {}  # by job, once the attempts ended: run selection's, as it goes

    async def one(index: int, pack: Pack, rep: int, agent: BatchAgent) -> AttemptOutcome:
        folder = f"{slug(agent.name)}--{pack.id}-{rep}" if several else f"{pack.id}-{rep}"
        async with limit:
            waited = time.monotonic() - queued  # the dispatch wait: not the agent's time
            try:
                outcome = await run_or_record(running, pack, rep, batch_dir / folder, agent, waited)
            except AttemptStopped as stopped:
                ended[index] = stopped.outcome
                raise
        ended[index] = outcome
        if bar is not None:
            bar.set_postfix_str(f"{pack.id}: {'PASS' if outcome.qualified_pass else 'FAIL'}")
            bar.update(1)
        return outcome

    rate = prices.credits_per_dollar if prices else DEFAULT_CREDITS_PER_DOLLAR
    attempts = [asyncio.ensure_future(one(index, *job)) for index, job in enumerate(jobs)]
    selecting: list[asyncio.Future] = []  # each job's run selection
    finished: list[AttemptOutcome] | None = None  # every attempt ended and recorded
    try:
        firsts = await asyncio.gather(*attempts)
        # Run selection once every attempt ended (a full server has room then), re-runs as many at once as attempts.
        reruns.update((index, []) for index in range(len(jobs)))
        selecting += [
            asyncio.ensure_future(rerun_interrupted(first, job, replace_interrupted, running, limit, reruns[index]))
            for index, (first, job) in enumerate(zip(firsts, jobs, strict=True))
        ]
        await asyncio.gather(*selecting)
        outcomes = [outcome for chain in reruns.values() for outcome in chain]
        write_summary_or_say(batch_dir, outcomes, rate)
        finished = list(outcomes)
    except asyncio.CancelledError:  # the batch was stopped: what ended is kept, and said
        this = asyncio.current_task()
        if this is not None:
            this.uncancel()  # the stop becomes BatchStopped; what follows may await
        # gather cancelled every attempt once, and gave up at the first to end: the others are still
        # recording theirs (a second cancel would cut that short). Those waiting for a turn have ended.
        await asyncio.wait([*attempts, *selecting])
        kept = [
            outcome
            for index, first in sorted(ended.items())
            for outcome in reruns.get(index) or [dataclasses.replace(first, interruption=interruption(first))]
        ]
        write_summary_or_say(batch_dir, kept, rate)
        raise BatchStopped(batch_dir, kept, len(jobs)) from None
    finally:
        if bar is not None:
            bar.close()
        stopping = asyncio.ensure_future(running.stop())
        try:
            await asyncio.shield(stopping)
        except asyncio.CancelledError:  # a stop while the executor stops: it goes on stopping
            this = asyncio.current_task()
            if this is not None and finished is not None:  # every attempt ended: the batch is kept whole
                this.uncancel()
                await stopping
                raise BatchStopped(batch_dir, finished, len(jobs)) from None
            raise
    return list(outcomes)


def interleaved(packs: list, repeats: int, agents: list) -> list[tuple[Any, int, Any]]:
    """The batch's (pack, repeat, agent) jobs in order: every agent's attempt of a pack and repeat
    before the next, each group starting with the next agent (a single pack's repeats too)."""
    groups = [(pack, rep) for rep in range(1, repeats + 1) for pack in packs]
    return [
        (pack, rep, agents[(group + index) % len(agents)])
        for group, (pack, rep) in enumerate(groups)
        for index in range(len(agents))
    ]


class BatchStopped(Exception):
    """The batch was stopped (a signal, Ctrl-C) before it finished. ``outcomes``: its attempts that
    ended, those it stopped included (status ``stopped``), in ``summary.json`` too; ``jobs``: how
    many attempts it had."""

    def __init__(self, batch_dir: Path, outcomes: list[AttemptOutcome], jobs: int) -> None:
        firsts = [outcome for outcome in outcomes if rerun_of(outcome.directory.name) is None]  # a re-run is no job
        stopped = sum(outcome.status == STOPPED for outcome in firsts)
        reruns = len(outcomes) - len(firsts)
        rerun_stopped = sum(outcome.status == STOPPED for outcome in outcomes) - stopped
        said = f"; {reruns} re-run(s) of interrupted attempts, {rerun_stopped} of them stopped" if reruns else ""
        super().__init__(
            f"the batch was stopped: {len(firsts) - stopped} of {jobs} attempts finished, {stopped} stopped while "
            f"they ran, {jobs - len(firsts)} not started{said}; what ended is in {batch_dir}"
        )
        self.batch_dir, self.outcomes, self.jobs = batch_dir, outcomes, jobs


async def rerun_interrupted(
    first: AttemptOutcome,
    job: tuple[Pack, int, BatchAgent],
    most: int,
    running,
    limit: asyncio.Semaphore,
    chain: list[AttemptOutcome],
) -> list[AttemptOutcome]:
    """Run selection for one job whose attempt ``first`` ended: an attempt the infrastructure
    interrupted is run again, at most ``most`` times, each re-run waiting for its turn under the
    batch's ``limit`` as any attempt does; it stays in the batch (its folder too) as
    ``replaced``, and its re-run is an ``approved replacement`` in its own folder
    (``<folder>-r<k>``). Genuine failures stay. ``chain`` is filled as it goes: when the batch is
    stopped, it holds the job's attempts, a re-run stopped while it ran included (a re-run that had
    not begun leaves the attempt before it selected), and the stop goes on."""
    pack, rep, agent = job
    current = dataclasses.replace(first, interruption=interruption(first))
    begun = False
    try:
        for k in range(1, most + 1):
            if not current.interruption:
                break
            folder, queued = first.directory.parent / rerun_name(first.directory.name, k), time.monotonic()
            async with limit:
                chain.append(dataclasses.replace(current, selection="replaced"))
                begun = True
                again = await run_or_record(running, pack, rep, folder, agent, time.monotonic() - queued)
                begun = False
            current = replacement(again, current)
    except asyncio.CancelledError as stop:
        if isinstance(stop, AttemptStopped):
            chain.append(replacement(stop.outcome, current))
        elif begun:  # stopped before the re-run's attempt started: nothing replaces the attempt
            chain[-1] = current
        else:  # stopped while the re-run waited for its turn
            chain.append(current)
        raise
    chain.append(current)
    return chain


def replacement(again: AttemptOutcome, replaced: AttemptOutcome) -> AttemptOutcome:
    return dataclasses.replace(
        again, interruption=interruption(again), selection="approved replacement", replaces=replaced.directory.name
    )


async def run_or_record(running, pack: Pack, rep: int, directory: Path, agent: BatchAgent, waited: float):
    """One attempt on the executor; one the sandbox could not even run is recorded as its own
    error (``unrun_attempt``), never the batch's."""
    try:
        return await running.run(pack, rep, directory, agent, waited)
    except Exception as exc:
        return unrun_attempt(directory, pack, agent.name, rep, exc)


def unrun_attempt(directory: Path, pack: Pack, agent: str, number: int, exc: Exception) -> AttemptOutcome:
    """An attempt the sandbox could not run (its run refused, an executor failing): its folder
    says why, in ``attempt.json`` and ``score.txt``, and the batch goes on. A folder that is
    another attempt's (``AttemptFolderTaken``), or holds an ``attempt.json`` already, is left as it is."""
    error = f"{UNRUN}: {type(exc).__name__}: {exc}"
    if isinstance(exc, AttemptFolderTaken):  # another attempt's folder: never written into
        log.error("attempt folder %s is another attempt's: nothing written there", directory)
        return AttemptOutcome(pack.id, agent, directory, "crashed", None, False, False, 0.0, 0, None, error)
    record = AttemptRecord(pack=pack.id, scoring_pack=pack.card.scoring_pack, agent=agent, attempt=number,
                           status="crashed", error=error, qualified_pass=False, error_free=False)  # fmt: skip
    try:
        directory.mkdir(parents=True, exist_ok=True)  # made by the attempt itself, or here
        if (directory / "attempt.json").exists():  # recorded already: what it says is kept
            raise FileExistsError(errno.EEXIST, "it holds an attempt.json already", str(directory))
        write_file(directory / "attempt.json", record.to_json())
        write_file(directory / "score.txt", f"attempt {pack.id} #{number} by {agent}: not run\n{error}\n")
    except OSError as unwritten:  # a full disk, ...: the outcome still says why, in the summary and the table
        log.error("attempt folder %s could not be written: %s", directory, unwritten)
        error += f"; its folder could not be written either ({unwritten.strerror or unwritten})"
    return AttemptOutcome(pack.id, agent, directory, "crashed", None, False, False, 0.0, 0, None, error)


def selected(outcomes: list[AttemptOutcome]) -> list[AttemptOutcome]:
    """The attempts the counts are over: replacements in, the attempts they replaced out."""
    return [o for o in outcomes if o.selection != "replaced"]


def selected_attempts(attempts: list[dict]) -> list[dict]:
    """``selected`` of ``summary.json``'s attempts (``AttemptOutcome.to_json()`` dicts)."""
    return [a for a in attempts if a.get("selection") != "replaced"]


def summarise(outcomes: list[AttemptOutcome]) -> list[dict]:
    """The table's rows, one per pack and agent, over the selected attempts; a damaged attempt that
    names no agent (nor does its batch) is in none."""
    outcomes = selected(outcomes)
    groups: dict[tuple[str, str], list[AttemptOutcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.agent is not None:
            groups[(outcome.pack, outcome.agent)].append(outcome)
    rows = []
    for (pack, agent), items in sorted(groups.items()):
        rows.append(
            {
                "pack": pack,
                "agent": agent,
                "attempts": len(items),
                "qualified_passes": sum(o.qualified_pass for o in items),
                "error_free_passes": sum(o.error_free for o in items),
                "mean_field_accuracy": round(statistics.fmean(o.field_accuracy for o in items), 4),
                "median_seconds": median_seconds([(o.status, o.elapsed_seconds) for o in items]),
                "mean_tool_calls": mean_calls([o.tool_calls for o in items]),
                "statuses": dict(
                    sorted({s: sum(o.status == s for o in items) for s in {o.status for o in items}}.items())
                ),
            }
        )
    return rows


def write_summary(
    batch_dir: Path, outcomes: list[AttemptOutcome], credits_per_dollar: float = DEFAULT_CREDITS_PER_DOLLAR
) -> Path:
    """``summary.json``: the table's rows, the comparison of the agents, and one entry per
    attempt (with why it did not qualify)."""
    path = Path(batch_dir) / SUMMARY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    attempts = [o.to_json() for o in outcomes]
    data = {
        "summary": summarise(outcomes),
        "comparison": comparison(attempts, credits_per_dollar),
        "attempts": attempts,
    }
    write_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def write_summary_or_say(batch_dir: Path, outcomes: list[AttemptOutcome], credits_per_dollar: float) -> None:
    """``write_summary``; one that cannot be written (a full disk) is logged, and the batch's
    outcomes are still returned: the readers rebuild the summary from the attempt folders."""
    try:
        write_summary(batch_dir, outcomes, credits_per_dollar)
    except OSError as exc:
        log.error("%s could not be written (%s): `sandbox results` rebuilds it from the attempt folders",
                  Path(batch_dir) / SUMMARY_FILE, exc.strerror or exc)  # fmt: skip


def format_reasons(attempts: list[dict]) -> str:
    """One line per attempt that did not qualify (``attempts``: ``AttemptOutcome.to_json()`` dicts)."""
    failed = [a for a in attempts if not a["qualified_pass"]]
    if not failed:
        return ""
    return "\n".join(
        [
            "not qualified:",
            *(
                f"  {shown(Path(a['directory']).name, inline=True)}: {shown(selection_note(a))}"
                f"{shown(a.get('reason') or 'no reason recorded')}"
                for a in failed
            ),
        ]
    )


def selection_note(attempt: dict) -> str:
    """What run selection made of the attempt, and what interrupted it (the most telling cause;
    named once: not again when the reason itself begins with it)."""
    interrupted = attempt.get("interruption") or ""
    why = "" if str(attempt.get("reason") or "").startswith(interrupted) else f": {interrupted}"
    if attempt.get("selection") == "replaced":
        return f"replaced (interrupted{why}); "
    if attempt.get("selection") == "approved replacement":
        itself = f", itself interrupted{why}" if interrupted else ""
        return f"approved replacement of {attempt.get('replaces')}{itself}; "
    return f"interrupted{why}; " if interrupted and why else ""


def format_table(rows: list[dict]) -> str:
    header = ["pack", "agent", "qualified", "error-free", "field acc.", "median s", "tool calls", "status"]
    names = agent_labels([r["agent"] for r in rows], width=30)
    lines = [
        [
            r["pack"],
            names[r["agent"]],
            f"{r['qualified_passes']}/{r['attempts']}",
            f"{r['error_free_passes']}/{r['attempts']}",
            f"{r['mean_field_accuracy']:.3f}",
            "unknown" if r["median_seconds"] is None else f"{r['median_seconds']:.2f}",
            "unknown" if r["mean_tool_calls"] is None else f"{r['mean_tool_calls']:.1f}",
            ", ".join(f"{k} {v}" for k, v in r["statuses"].items()),
        ]
        for r in rows
    ]
    return table(header, lines)
