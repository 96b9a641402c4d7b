"""The scale curve (issue 32): agents that think 1 s before each tool call, at rising concurrency
on ONE in-process server, measured, not asserted.

    .venv/bin/python scripts/bench.py --only scale [--quick: levels 1, 8, 32] [--json FILE] [--publish]

Each level is one batch of ``controlled-form`` by ``think:1:reference`` with ``repeats`` equal
to the concurrency, so the whole level is one wave: every attempt starts at once. Each level
gets a server of its own (the bundled mirrors, ``max_runs`` raised to concurrency + 8 as the
local executor raises its own), started and quiet before the batch, stopped after it; levels
run in increasing order with a quiet pause between them. Per level:

- wall time, attempts per minute;
- errors: attempts that did not qualify, whose trace records a server fault or a capacity
  refusal, or that left no record of their calls (goal 0);
- CPU per attempt: the process tree's CPU seconds over the batch (this process, which also runs
  the agents and the scoring, the Node driver, every Chromium), less the sampler's own, / attempts;
- call times (answered less arrived, from the traces): p50, p99 and the longest of every call
  but the session start, and the longest session start, with the longest call's tool; a call
  near ``action_timeout_ms`` (5 s) is one that load nearly turned into an error;
- the bound: the larger of the think-time bound (the longest attempt's tool calls × think: the
  wave's duration if tools cost nothing, times the waves: a batch runs no more attempts at once
  than its server holds sessions, ``max_sessions_per_core`` × cores) and the CPU bound
  (attempts × CPU per attempt / cores); the cores are those this process may use (its CPU
  affinity and cgroup limit, ``toolserver.capacity.cores``, as the server's cap counts them);
  the throughput ratio wall / bound (goal ≤ 1.3). Beside
  it, this process's own CPU per attempt and the bound it sets alone (its CPU seconds over the
  batch: one event loop uses one core);
- memory per concurrent session, as the goal defines it: the whole process tree's PSS (``Pss:``
  of /proc/PID/smaps_rollup: this process, the Node driver, every Chromium) when the most
  sessions were open / those sessions (goal ≤ 30 MB). Beside it two growth figures: the growth,
  that reading less the tree's PSS with the server started and no session open / those sessions;
  and the marginal, that growth less the smallest level's / the sessions added (the earlier "28
  MB a session" was measured so, from 1 to 64 sessions); both leave out what the idle tree
  holds, the bench process's own growth from level to level with it. Open sessions are counted
  from the server's own state every ``SAMPLE_EVERY_S``; the PSS is read while the count is at its
  peak so far (``ReadSchedule``): when it is reached, again ``SETTLE_S`` after (the sessions at
  rest), and on a schedule while it stays there; the largest reading with the most sessions open
  is kept. PSS shares a library's pages among every process mapping it, other Chromiums on the
  machine too: on a shared machine it moves with their number.

Before the levels, Chromium's own floor: a plain Playwright script (its own browser, the sandbox's
Chromium flags, the mirrored form from a route) holds as many contexts open as the largest level
holds sessions (the server's session cap, or the largest concurrency if fewer), each after the
form's first step; the tree's PSS growth / contexts, read once the tree is quiet, is what a
session costs without any code of the sandbox's. PSS per context falls as contexts are added
(the shared pages spread over more processes), so the floor is read at the levels' own count.

Imports its helpers from ``bench.py`` and ``soak.py`` (beside it) inside the functions, so
``bench.py`` can import this module at its top.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_goals import SCALE_MEMORY_GOAL_MB as MEMORY_GOAL_MB
from bench_goals import SCALE_THROUGHPUT_GOAL as THROUGHPUT_GOAL

from toolserver.api import Sandbox
from toolserver.capacity import count_open_sessions, open_file_descriptors, process_tree, session_cap
from toolserver.contract.mirrors import MirrorStore
from toolserver.contract.trace import read_trace

LEVELS = (1, 8, 32, 64, 128, 256)
SCALE_PACK = "controlled-form"
QUIET_PAUSE_S = 5.0  # between levels: the last level's processes have ended and the machine is calm
SAMPLE_EVERY_S = 0.25  # how often the open sessions are counted
READ_EVERY_S = 2.0  # while the count is at its peak, the tree's PSS is read this often ...
READ_BUDGET = 0.05  # ... or less, so it costs at most this share of a core (one read of 300 processes: ~0.3 s)
SETTLE_S = 3.0  # and once this long after the peak was reached: the sessions at rest, not mid-start
REFUSED = ("server_fault", "server_at_capacity")  # error types that are the server's, not the agent's


def tree_pss_mb(root: int) -> tuple[float, int]:
    """The PSS of ``root`` and all its descendants in MB, and how many of them could not be read."""
    kib, unread = 0, 0
    for pid in process_tree(root):
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:  # ended meanwhile, or not ours to read
            unread += 1
            continue
        kib += next((int(line.split()[1]) for line in lines if line.startswith("Pss:")), 0)
    return kib / 1024, unread


def own_cpu_seconds() -> float:
    """This process's CPU seconds (every thread; not its children): the server, the agents, the scoring."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def open_sessions(sandbox: Sandbox) -> int:
    """Sessions open on the server's browser, counted as its capacity check counts them."""
    return count_open_sessions(sandbox.host.sessions)


@dataclass
class ReadSchedule:
    """When the tree's PSS is read, from the open sessions counted at ``now``: when the count
    reaches a new peak (if the budget allows), ``SETTLE_S`` after it did (whatever the budget),
    and every ``READ_EVERY_S`` (or less often, within ``READ_BUDGET``) while it stays there."""

    peak: int = 0
    peak_since: float = 0.0
    settled: bool = True  # the read SETTLE_S after the peak was reached is done
    next_read: float = 0.0

    def due(self, count: int, now: float) -> bool:
        if count > self.peak:
            self.peak, self.peak_since, self.settled = count, now, False
        if not count or count < self.peak:
            return False
        return now >= self.next_read or (not self.settled and now >= self.peak_since + SETTLE_S)

    def done(self, now: float, cost: float) -> None:
        """A read began at ``now`` and took ``cost`` CPU seconds."""
        self.settled = self.settled or now >= self.peak_since + SETTLE_S
        self.next_read = now + max(READ_EVERY_S, cost / READ_BUDGET)


@dataclass
class PeakSampler:
    """Counts open sessions while a batch runs, and reads the tree's PSS (with the open
    descriptors and the renderers) when the count is at its peak so far, as ``ReadSchedule``
    says: in a worker thread, so the server's event loop goes on. Keeps its own CPU time, to
    take off the batch's."""

    sandbox: Sandbox
    peak_sessions: int = 0  # the most sessions counted open
    read_sessions: int = 0  # the most sessions open at a reading of the PSS ...
    read_pss_mb: float = 0.0  # ... and the largest reading at that count
    read_fds: int = 0
    read_renderers: int = 0
    unread: int = 0
    reads: int = 0
    cpu_s: float = 0.0
    schedule: ReadSchedule = field(default_factory=ReadSchedule)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            began = time.thread_time()
            count = open_sessions(self.sandbox)
            self.cpu_s += time.thread_time() - began
            self.peak_sessions = max(self.peak_sessions, count)
            if self.schedule.due(count, time.monotonic()):
                await asyncio.to_thread(self.read, count)
            with contextlib.suppress(TimeoutError):  # the next count is due
                await asyncio.wait_for(stop.wait(), SAMPLE_EVERY_S)

    def read(self, count: int) -> None:
        from soak import renderers

        began, now = time.thread_time(), time.monotonic()
        pss, unread = tree_pss_mb(os.getpid())
        fds, renderer_processes = open_file_descriptors() or 0, renderers(os.getpid())
        cost = time.thread_time() - began
        self.cpu_s, self.reads = self.cpu_s + cost, self.reads + 1
        self.schedule.done(now, cost)
        if count > self.read_sessions or (count == self.read_sessions and pss > self.read_pss_mb):
            self.read_sessions, self.read_pss_mb, self.unread = count, pss, unread
            self.read_fds, self.read_renderers = fds, renderer_processes


def call_times(directories: list[Path]) -> dict:
    """Each call's time in ms (answered less arrived) over the attempts' traces: p50, p99 and
    the longest of every call but the session start, which is counted apart."""
    starts: list[float] = []
    calls: list[tuple[float, str]] = []
    for directory in directories:
        trace_file = directory / "trace.jsonl"
        if trace_file.is_file():
            for call in read_trace(trace_file).calls:
                ms = (call.t_end - call.t_start) * 1000
                if call.tool == "browser_start_session":
                    starts.append(ms)
                else:
                    calls.append((ms, call.tool))
    times = sorted(ms for ms, _ in calls)
    longest = max(calls, default=(0.0, "-"))
    return {
        "calls": len(times),
        "call_p50_ms": round(times[len(times) // 2], 1) if times else 0.0,
        "call_p99_ms": round(times[min(len(times) - 1, int(len(times) * 0.99))], 1) if times else 0.0,
        "call_max_ms": round(longest[0], 1),
        "call_max_tool": longest[1],
        "start_max_ms": round(max(starts, default=0.0), 1),
    }


def failed_attempts(outcomes: list) -> list:
    """The level's errors: attempts that did not qualify, whose trace records a server fault or a
    capacity refusal, or that left no record of their calls (``tool_calls`` unknown)."""
    return [o for o in outcomes if not o.qualified_pass or o.tool_calls is None or server_errors(o.directory)]


def think_bound_seconds(outcomes: list, admitted: int, think: float) -> float:
    """The wave's duration if tools cost nothing (the longest attempt's calls × think), times the
    waves; an attempt that left no record of its calls is an error, not in the bound."""
    longest = max((o.tool_calls for o in outcomes if o.tool_calls is not None), default=0)
    return math.ceil(len(outcomes) / admitted) * longest * think


def server_errors(directory: Path) -> int:
    """Server faults and capacity refusals in an attempt's trace (0 without a trace)."""
    trace_file = directory / "trace.jsonl"
    if not trace_file.is_file():
        return 0
    trace = read_trace(trace_file)
    calls = sum(call.error is not None and call.error.type in REFUSED for call in trace.calls)
    return calls + sum(event.kind == "server_fault" for event in trace.events)


async def scale_level(concurrency: int, think: float, cores: int, out: Path) -> dict:
    """One wave of ``concurrency`` attempts on a server of its own: the level's figures."""
    from bench import quiet_tree_cpu_seconds, tree_cpu_seconds  # scripts/bench.py, beside this script

    from sandbox.evaluation.packs import load_pack
    from sandbox.runner.batch import run_batch
    from sandbox.runner.wiring import app_config, app_sandbox
    from toolserver.config import ServerConfig

    pack = load_pack(SCALE_PACK)
    config = app_config(max_runs=max(ServerConfig.max_runs, concurrency + 8))  # as the local executor sizes its own
    async with app_sandbox(config) as sandbox:
        await quiet_tree_cpu_seconds()
        idle_pss_mb, _ = tree_pss_mb(os.getpid())
        sampler, stop = PeakSampler(sandbox), asyncio.Event()
        sampling = asyncio.create_task(sampler.run(stop))
        load = os.getloadavg()[0]
        cpu_before, own_before, started = tree_cpu_seconds(), own_cpu_seconds(), time.perf_counter()
        outcomes = await run_batch(
            [pack],
            f"think:{think:g}:reference",
            repeats=concurrency,
            concurrency=concurrency,
            out=out,
            progress=False,
            sandbox=sandbox,
        )
        wall_s = time.perf_counter() - started
        stop.set()
        await sampling
        cpu_s = await quiet_tree_cpu_seconds() - cpu_before - sampler.cpu_s
        own_cpu_s = own_cpu_seconds() - own_before - sampler.cpu_s
    attempts = len(outcomes)
    faults = sum(server_errors(outcome.directory) for outcome in outcomes)
    failed = failed_attempts(outcomes)
    cpu_per_attempt = cpu_s / attempts if attempts else 0.0
    # The batch runs at most as many attempts at once as the server holds sessions: the rest
    # come in further waves, each as long as an attempt with free tools.
    admitted = min(concurrency, session_cap(config)[0])
    think_bound_s = think_bound_seconds(outcomes, admitted, think)
    cpu_bound_s = attempts * cpu_per_attempt / cores
    own_bound_s = own_cpu_s  # this process runs on one core at a time (one event loop)
    bound_s = max(think_bound_s, cpu_bound_s)
    sessions = sampler.read_sessions
    grown = sampler.read_pss_mb - idle_pss_mb
    prefix = f"scale_{concurrency}_"
    figures = {
        "concurrency": concurrency,
        "admitted": admitted,
        "attempts": attempts,
        "wall_s": round(wall_s, 2),
        "attempts_per_min": round(attempts / wall_s * 60, 1),
        "unrecorded": sum(o.tool_calls is None for o in outcomes),
        "errors": len(failed),
        "not_qualified": sum(not o.qualified_pass for o in outcomes),
        "server_errors": faults,
        "cpu_s": round(cpu_s, 2),
        "cpu_per_attempt_s": round(cpu_per_attempt, 3),
        "python_cpu_per_attempt_s": round(own_cpu_s / attempts, 3),
        "python_bound_s": round(own_bound_s, 2),
        "load_before": round(load, 2),
        "sampler_cpu_s": round(sampler.cpu_s, 3),
        "think_bound_s": round(think_bound_s, 2),
        "cpu_bound_s": round(cpu_bound_s, 2),
        "bound_s": round(bound_s, 2),
        "throughput_ratio": round(wall_s / bound_s, 3) if bound_s else None,
        "idle_pss_mb": round(idle_pss_mb, 1),
        "peak_pss_mb": round(sampler.read_pss_mb, 1),
        "peak_sessions": sampler.peak_sessions,
        "pss_sessions": sampler.read_sessions,
        "pss_tree_per_session_mb": round(sampler.read_pss_mb / sessions, 1) if sessions else None,
        "pss_growth_per_session_mb": round(grown / sessions, 1) if sessions else None,
        "peak_fds": sampler.read_fds,
        "peak_renderers": sampler.read_renderers,
        "pss_unread_processes": sampler.unread,
        "pss_reads": sampler.reads,
        **call_times([o.directory for o in outcomes]),
    }
    return {prefix + name: value for name, value in figures.items()}


async def chromium_floor(contexts: int, chromium: str | None = None, prefix: str = "scale_floor_") -> dict:
    """The PSS a context costs a plain Playwright script (the sandbox's Chromium flags; the Chromium
    the sandbox resolves, or ``chromium``), each context holding the form after its first step:
    this process tree's growth / contexts."""
    from bench import FORM, MIRRORS_DIR, RawPlaywright, quiet_tree_cpu_seconds, raw_context_caller, timed_form_round

    raw = RawPlaywright(MirrorStore.load(MIRRORS_DIR), chromium=chromium)
    await raw.start()
    try:
        await quiet_tree_cpu_seconds()
        idle_mb, _ = tree_pss_mb(os.getpid())
        for _ in range(contexts):
            await timed_form_round(await raw_context_caller(raw), FORM)
        await quiet_tree_cpu_seconds()
        held_mb, unread = tree_pss_mb(os.getpid())
    finally:
        await raw.stop()
    return {
        prefix + "contexts": contexts,
        prefix + "pss_per_context_mb": round((held_mb - idle_mb) / contexts, 1),
        prefix + "pss_unread_processes": unread,
    }


async def headless_shell_floor(contexts: int) -> dict:
    """The same floor on Debian's headless shell (``chromium-headless-shell``), when it is installed
    and is not already the Chromium the sandbox runs: the lighter browser a user may choose
    (docs/design/scale-limits.md)."""
    from toolserver.browser.chromium import DEBIAN_HEADLESS_SHELL, resolve_chromium

    if not Path(DEBIAN_HEADLESS_SHELL).is_file() or resolve_chromium(None, None) == DEBIAN_HEADLESS_SHELL:
        return {}
    return await chromium_floor(contexts, DEBIAN_HEADLESS_SHELL, "scale_floor_headless_shell_")


async def scale_side(levels: tuple[int, ...] = LEVELS, think: float = 1.0) -> dict:
    """The curve: one level per concurrency, in increasing order, a quiet pause between levels.
    Flat keys, ``scale_<concurrency>_<figure>``, plus the levels, think time, cores and goals.
    A level's attempt folders are deleted unless it had errors (then its folder is kept and named)."""
    from bench import machine, quiet_tree_cpu_seconds  # scripts/bench.py, beside this script

    from sandbox.runner.wiring import app_config

    cores = machine()["usable_cores"]
    held = min(max(levels), session_cap(app_config())[0])  # the most sessions a level holds at once
    results: dict = {
        "scale_levels": sorted(levels),
        "scale_think_s": think,
        "scale_cores": cores,
        "scale_throughput_goal": THROUGHPUT_GOAL,
        "scale_memory_goal_mb": MEMORY_GOAL_MB,
        **await chromium_floor(held),
        **await headless_shell_floor(held),
    }
    for concurrency in sorted(levels):
        await asyncio.sleep(QUIET_PAUSE_S)  # the last level's (or the floor's) processes have ended
        await quiet_tree_cpu_seconds()
        out = Path(tempfile.mkdtemp(prefix=f"bench-scale-{concurrency}-"))
        try:
            level = await scale_level(concurrency, think, cores, out)
        except Exception as exc:  # noqa: BLE001 - the levels measured so far are still saved
            print(f"scale {concurrency}: failed ({exc!r}); its attempts are in {out}", file=sys.stderr)
            results[f"scale_{concurrency}_failure"] = repr(exc)
            continue
        results.update(level)
        smallest = min(levels)
        if concurrency > smallest and f"scale_{smallest}_idle_pss_mb" in results:
            results[f"scale_{concurrency}_pss_marginal_mb"] = marginal_mb(results, concurrency, smallest)
        if level[f"scale_{concurrency}_errors"]:
            print(f"scale {concurrency}: attempts with errors kept in {out}", file=sys.stderr)
        else:
            shutil.rmtree(out, ignore_errors=True)
        print(f"scale {concurrency}: {level[f'scale_{concurrency}_wall_s']:.1f} s", file=sys.stderr, flush=True)
    return results


def marginal_mb(results: dict, level: int, smallest: int) -> float:
    """What each session beyond the smallest level's added: the growth over each level's own idle
    tree (so the bench process's own growth from level to level is not counted), less the
    smallest level's, / the sessions added."""

    def grown(at: int) -> float:
        return results[f"scale_{at}_peak_pss_mb"] - results[f"scale_{at}_idle_pss_mb"]

    added = results[f"scale_{level}_pss_sessions"] - results[f"scale_{smallest}_pss_sessions"]
    return round((grown(level) - grown(smallest)) / added, 1) if added > 0 else 0.0


def print_scale(results: dict) -> None:
    """One row per level, with the goals."""
    goal, memory_goal = results["scale_throughput_goal"], results["scale_memory_goal_mb"]
    print(
        f"scale: controlled-form by an agent thinking {results['scale_think_s']:g} s per call, one wave per level "
        f"(repeats = concurrency) on one server, {results['scale_cores']} cores; PSS/session is the whole "
        "process tree's / open sessions (the goal's figure), growth and marginal leave out the idle tree"
    )
    header = (
        "concurrency",
        "wall s",
        "attempts/min",
        "errors",
        "CPU/attempt s",
        "of it Python",
        "bound s",
        "Python bound s",
        f"wall/bound (≤ {goal:g})",
        "peak sessions",
        f"PSS/session MB (≤ {memory_goal:g})",
        "growth MB",
        "marginal MB",
        "fds",
        "call p50/p99/max ms",
        "start max ms",
    )
    rows = []
    for concurrency in results["scale_levels"]:
        level = {
            key.split("_", 2)[2]: value for key, value in results.items() if key.startswith(f"scale_{concurrency}_")
        }
        if "failure" in level:
            rows.append((str(concurrency), f"FAIL: {level['failure']}", *[""] * (len(header) - 2)))
            continue
        ratio, memory, growth = (
            level["throughput_ratio"],
            level["pss_tree_per_session_mb"],
            level["pss_growth_per_session_mb"],
        )

        def number(value: float | None, limit: float | None = None) -> str:
            if value is None:
                return "-" + ("" if limit is None else " FAIL")
            return f"{value:.2f}" + ("" if limit is None or value <= limit else " FAIL")

        rows.append(
            (
                str(concurrency),
                f"{level['wall_s']:.1f}",
                f"{level['attempts_per_min']:.1f}",
                f"{level['errors']}/{level['attempts']}" + (" FAIL" if level["errors"] else ""),
                f"{level['cpu_per_attempt_s']:.2f}",
                f"{level['python_cpu_per_attempt_s']:.2f}",
                f"{level['bound_s']:.1f} ({'CPU' if level['cpu_bound_s'] > level['think_bound_s'] else 'think'})",
                f"{level['python_bound_s']:.1f}",
                number(ratio, goal),
                str(level["peak_sessions"])
                + ("" if level["pss_sessions"] == level["peak_sessions"] else f" (PSS at {level['pss_sessions']})"),
                number(memory, memory_goal),
                number(growth),
                f"{level['pss_marginal_mb']:.1f}" if "pss_marginal_mb" in level else "-",
                str(level["peak_fds"]),
                f"{level['call_p50_ms']:.0f}/{level['call_p99_ms']:.0f}/{level['call_max_ms']:.0f} "
                f"({level['call_max_tool'].removeprefix('browser_')})",
                f"{level['start_max_ms']:.0f}",
            )
        )
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  " + "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
    if "scale_floor_pss_per_context_mb" in results:
        print(
            f"  Chromium's own floor: {results['scale_floor_pss_per_context_mb']:.1f} MB PSS a context "
            f"(plain Playwright, the same flags, {results['scale_floor_contexts']} contexts holding the form)"
        )
    if "scale_floor_headless_shell_pss_per_context_mb" in results:
        print(
            f"  The same on Debian's headless shell: {results['scale_floor_headless_shell_pss_per_context_mb']:.1f} "
            "MB PSS a context (SANDBOX_CHROMIUM=/usr/lib/chromium/chromium-headless-shell)"
        )
