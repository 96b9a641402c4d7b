"""The in-process API: a ``Sandbox`` owns the warm browser, the tool registry and the runs;
every transport (in-process, HTTP, MCP) goes through it and its runs' one dispatcher.

    async with Sandbox(ServerConfig(mirror_roots=(MIRRORS,)), policies=pack_policy) as sandbox:
        run = sandbox.create_run(pack="bid-intake")
        reply = await run.call("browser_start_session", {"provider": "kernel", ...})
        await sandbox.end_run(run.id)

The tool server never loads packs: a run gets a ``Policy`` directly, or by pack id through
the ``policies`` resolver the caller injects (the application wires its pack loader in:
``sandbox.runner.wiring``). Likewise a run's task (prompt, site key, allowed URLs, time limit)
and the scoring of its answer come from an injected ``TaskProvider``; the mirror roots from the configuration.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from toolserver.browser import BrowserHost, closes_ended
from toolserver.capacity import check_run_capacity
from toolserver.config import ServerConfig
from toolserver.contract.mirrors import MirrorStore
from toolserver.contract.policy import Policy, PolicyMode, PolicyNotFound
from toolserver.contract.site_keys import new_site_key
from toolserver.dispatch import Dispatcher
from toolserver.errors import NoTask, RunNameTaken, TooManyRuns, UnknownPack, UnknownRun
from toolserver.faults import FaultPlan, RunFaults
from toolserver.registry import ToolRegistry
from toolserver.run import Run, new_run_id
from toolserver.run_names import check_run_name, joined_differently
from toolserver.run_traces import run_header, run_trace_text, stored_trace_text
from toolserver.tools import default_registry

PolicyResolver = Callable[[str], Policy]  # pack id -> the pack's policy; PolicyNotFound if unknown


class TaskProvider(Protocol):
    def task(self, pack: str, site_key: str) -> dict:
        """{"prompt", "allowed_urls", "time_limit_seconds"} of the pack, the prompt written for ``site_key``."""

    def score(self, pack: str, output: str, trace_text: str, elapsed_seconds: float, site_key: str | None) -> dict:
        """The score report (with the gates) of ``output`` against the run's trace."""


class Sandbox:
    def __init__(
        self,
        config: ServerConfig | None = None,
        *,
        policies: PolicyResolver | None = None,
        registry: ToolRegistry | None = None,
        tasks: TaskProvider | None = None,
        host: BrowserHost | None = None,
    ) -> None:
        """``host``: share another sandbox's warm browser (its own runs, limits and registry, the
        same Chromium; the browser stays that sandbox's to start and stop)."""
        self.config = config or ServerConfig()
        self.policies = policies
        self.tasks = tasks
        self.registry = registry or default_registry()
        self.owns_host = host is None
        self.host = host or BrowserHost(self.config)
        self.dispatcher = Dispatcher()
        self.runs: dict[str, Run] = {}
        self.named: dict[str, Run] = {}  # a run's name -> the run (see open_run)
        self.runs_made = 0
        self.idle_bounds: dict[Run, float] = {}  # runs no connection ends -> seconds without a call they may idle
        self.sweeper: asyncio.Task | None = None

    async def start(self) -> Sandbox:
        if self.owns_host:
            await self.host.start()
        self.sweeper = asyncio.create_task(self.end_idle_runs())
        return self

    async def stop(self) -> None:
        if self.sweeper is not None:
            self.sweeper.cancel()
            await asyncio.wait([self.sweeper])
        await self.end_runs("server_stopped")
        if self.owns_host:
            browser = self.host.browser
            await self.host.stop()
            await closes_ended(browser, self.config.shutdown_timeout_s)  # its browser is closed: they end

    async def end_runs(self, reason: str) -> None:
        """End every run (a call in flight then answers at once that its run ended). At the server's
        stop, a frozen browser is left first, not waited on by every close (``abandon_if_frozen``)."""
        if reason == "server_stopped" and self.owns_host:
            await self.host.abandon_if_frozen()
        await asyncio.gather(*(run.close(reason) for run in list(self.runs.values())))

    async def __aenter__(self) -> Sandbox:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def resolve_policy(self, pack: str | None, mode: PolicyMode | None, block_state_changes: bool) -> Policy:
        """A pack's policy (enforced unless ``mode`` says otherwise), or no allow-list without a pack."""
        if pack is None:
            return Policy(mode=mode or "observe", block_state_changes=block_state_changes)
        if self.policies is None:
            said = "start it through the `sandbox` CLI, or pass policies=pack_policy to Sandbox"
            raise UnknownPack(f"pack {pack!r}: this server has no packs configured ({said})")
        try:
            policy = self.policies(pack)
        except PolicyNotFound as exc:
            raise UnknownPack(str(exc)) from exc
        return dataclasses.replace(policy, mode=mode or "enforce", block_state_changes=block_state_changes)

    def create_run(
        self,
        pack: str | None = None,
        *,
        policy: Policy | None = None,
        mode: PolicyMode | None = None,
        block_state_changes: bool | None = None,
        trace_path: Path | None = None,
        header: dict | None = None,
        mirror_roots: tuple[Path, ...] | None = None,
        screenshot_dir: Path | None = None,
        playwright_trace_dir: Path | None = None,
        faults: FaultPlan | None = None,
        fault_key: str | None = None,
    ) -> Run:
        """A new run: its policy given directly, or resolved from ``pack`` (``mode`` overrides
        the server's enforce/observe setting, ``block_state_changes`` the server's default).
        ``mirror_roots`` gives the run its own mirror instead of the server's, on the same
        warm browser. ``screenshot_dir`` keeps a viewport PNG after each call there (default: the
        server's ``screenshot_dir``/<run id>, or none); ``playwright_trace_dir`` saves each session's
        Playwright trace there as ``playwright-trace.zip``."""
        if policy is None:
            policy = self.policy_for(pack, mode, block_state_changes)
        self.check_room()
        if missing := [str(root) for root in mirror_roots or () if not Path(root).is_dir()]:  # as ServerConfig does
            raise ValueError(f"no such mirror folder: {', '.join(missing)}")
        store = MirrorStore.load(*mirror_roots) if mirror_roots else None
        # Where the run's files go: as given, else in the server's folders under the run's id.
        run_id, config = new_run_id(), self.config
        if trace_path is None and config.trace_dir is not None:
            trace_path = Path(config.trace_dir) / f"{run_id}.jsonl"
        if screenshot_dir is None and config.screenshot_dir is not None:
            screenshot_dir = Path(config.screenshot_dir) / run_id
        if playwright_trace_dir is None and config.playwright_trace_dir is not None:
            playwright_trace_dir = Path(config.playwright_trace_dir) / run_id
        run = Run(
            self.host,
            self.config,
            policy,
            self.registry,
            self.dispatcher,
            trace_path=trace_path,
            extra_header=header,
            store=store,
            screenshot_dir=screenshot_dir,
            playwright_trace_dir=playwright_trace_dir,
            run_id=run_id,
            faults=self.run_faults(faults, fault_key),
        )
        self.runs[run.id] = run
        return run

    def policy_for(self, pack: str | None, mode: PolicyMode | None, block_state_changes: bool | None) -> Policy:
        """The policy of a new run: the pack's, in ``mode`` (default: the server's), blocking
        state changes as asked (default: the server's setting)."""
        block = self.config.block_state_changes if block_state_changes is None else block_state_changes
        return self.resolve_policy(pack, mode or (self.config.policy if pack else None), block)

    def check_room(self) -> None:
        """``TooManyRuns`` when ``max_runs`` runs are live; ``RunRefusedAtCapacity`` when the
        machine is at a real limit (memory, file descriptors: ``toolserver.capacity``)."""
        self.evict_ended_runs()
        live = sum(not run.closed for run in self.runs.values())
        if live >= self.config.max_runs:
            raise TooManyRuns(
                f"this server already holds {live} live runs (max_runs {self.config.max_runs}); "
                "end one with DELETE /runs/{id}, or retry later"
            )
        check_run_capacity(self.config)

    def run_faults(self, faults: FaultPlan | None, key: str | None) -> RunFaults | None:
        """A new run's faults: given, or the server's; drawn with ``key``, or the run's number on
        this server (so the same seed and the same runs give the same faults)."""
        self.runs_made += 1
        plan = faults or self.config.faults
        return plan.for_run(key or f"run-{self.runs_made}") if plan else None

    def open_run(
        self,
        pack: str | None,
        *,
        transport: str,
        site_key: str | None = None,
        mode: PolicyMode | None = None,
        block_state_changes: bool | None = None,
        name: str | None = None,
        idle_s: float | None = None,
    ) -> Run:
        """A run a client asked for over a transport: the pack's policy, or none (refused with
        ``require_pack``); a pack's run gets a never-issued site key unless the client chose one.

        ``name``: the live run of that name if there is one (of the same pack, and of the same
        site key, policy mode and state-change blocking where a joiner names them), else a new
        run by that name. A named run belongs to no
        connection: clients that open a connection per tool call share it. It ends when ended
        (``DELETE /runs/{id}``, ``/answer``) or after ``named_run_idle_s`` without a call.

        ``idle_s``: a run no connection ends (one made over the HTTP API) ends after that long
        without a call; other runs end with their connection, or when their maker ends them.
        Refusals (``UnknownPack``, ``TooManyRuns``, ...) come before anything is made."""
        if name is not None:
            check_run_name(name)
            named = self.named_run(name)
            if named is not None:
                differs = joined_differently(named, pack, site_key, mode, block_state_changes)
                if differs:
                    raise RunNameTaken(
                        f"the run named {name!r} ({named.id}) is a run of {differs}: "
                        "ask for the same, or leave it out to join, or use another name"
                    )
                named.last_active = time.monotonic()  # joined: its idle bound counts from now
                return named
        if pack is None and self.config.require_pack:
            raise UnknownPack(
                "this server requires a pack for every run (--require-pack): name one, "
                'e.g. {"pack": "bid-intake"} or /mcp?pack=bid-intake'
            )
        policy = self.policy_for(pack, mode, block_state_changes)
        self.check_room()
        if pack is not None and site_key is None:
            site_key = self.issue_site_key()
        header = {"transport": transport, **({"site_key": site_key} if site_key is not None else {})}
        if name is not None:
            header["name"] = name
        run = self.create_run(policy=policy, header=header)
        if name is not None:
            self.named[name] = run
            idle_s = self.config.named_run_idle_s
        if idle_s is not None:
            self.idle_bounds[run] = idle_s
        return run

    def named_run(self, name: str) -> Run | None:
        """The live run of that name, if any."""
        run = self.named.get(name)
        return run if run is not None and not run.closed else None

    async def end_idle_runs(self) -> None:
        """End the runs no connection ends (named runs, runs made over the HTTP API) once they
        have had no call for their idle bound, none in flight (end reason ``idle_timeout``)."""
        shortest = min(self.config.named_run_idle_s, self.config.http_run_idle_s)
        while True:
            await asyncio.sleep(min(max(shortest / 4, 0.05), 30.0))
            now = time.monotonic()
            for run, idle_s in list(self.idle_bounds.items()):
                if run.closed:
                    del self.idle_bounds[run]
                elif run.current is None and now - run.last_active >= idle_s:
                    del self.idle_bounds[run]
                    await run.close("idle_timeout")
            self.named = {name: run for name, run in self.named.items() if not run.closed}

    def issue_site_key(self, prefix: str = "sandbox") -> str:
        """A site key never issued in this process and never seen by this server's browser."""
        return new_site_key(self.host.profiles, prefix)

    def task(self, run: Run) -> dict:
        """The run's task: the pack's prompt for the run's site key, its allowed URLs and time limit."""
        header = run_header(run)
        pack, site_key = header.get("pack"), header.get("site_key")
        if pack is None:
            raise NoTask(
                f"run {run.id} has no pack, so no task: create the run with a pack "
                '(POST /runs {"pack": "bid-intake"} or /mcp?pack=bid-intake)'
            )
        if self.tasks is None:
            raise NoTask("this server has no packs configured (start it through the `sandbox` CLI)")
        return {"run_id": run.id, "pack": pack, "site_key": site_key, **self.tasks.task(pack, site_key or "")}

    async def answer(self, run: Run, output: str) -> dict:
        """End the run (its trace is final) and score ``output`` with the gates on its trace."""
        self.task(run)  # the same refusals as /task
        async with run.answering:  # two answers at once: the second waits, then is the first's or refused
            if (earlier := run.earlier_answer(output)) is not None:  # a client that retries gets it again
                return earlier
            # The agent's time: to its answer, on the run's monotonic clock (no wall-clock step,
            # and not the closing that follows).
            elapsed = run.trace.now()
            await run.close("answered")  # an end already under way (a DELETE) is waited for
            header = run_header(run)
            tasks = self.tasks
            assert tasks is not None  # task() refused a server without one
            # Read and scored in a thread: a long trace must not hold up every other run. The trace
            # is final (run_end is written), and a second answer waits for this one (``answering``).
            pack, site_key = header["pack"], header.get("site_key")
            report = await asyncio.to_thread(lambda: tasks.score(pack, output, run_trace_text(run), elapsed, site_key))
            return run.keep_answer(output, report)

    def get_run(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            raise UnknownRun(f"no run {run_id!r}; create one with POST /runs")
        if run.closed:
            raise UnknownRun.ended(run_id)
        return run

    async def end_run(self, run_id: str, reason: str = "deleted") -> Run:
        run = self.get_run(run_id)
        await run.close(reason)
        self.evict_ended_runs()
        return run

    def evict_ended_runs(self) -> None:
        """Forget ended runs beyond ``max_ended_runs`` (those that ended first) or older than
        ``ended_run_ttl_s`` (their trace files stay; ``trace_text`` reads them back). A run still
        ending is kept: its end writes its last lines."""
        ended = sorted(
            (run for run in self.runs.values() if run.ending is not None and run.ending.done()),
            key=lambda run: run.ended_at or 0.0,
        )
        expired = time.monotonic() - self.config.ended_run_ttl_s
        surplus = len(ended) - self.config.max_ended_runs
        for index, run in enumerate(ended):
            if index < surplus or (run.ended_at or 0) < expired:
                del self.runs[run.id]

    def trace_text(self, run_id: str) -> str:
        """A run's JSONL trace: live, ended, or forgotten (read from ``trace_dir``)."""
        run = self.runs.get(run_id)
        return run_trace_text(run) if run is not None else stored_trace_text(self.config.trace_dir, run_id)
