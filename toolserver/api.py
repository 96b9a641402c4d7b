"""The in-process API: a ``Sandbox`` owns the warm browser, the tool registry and the runs;
every transport (in-process, HTTP, MCP) goes through it and its runs' one dispatcher.

    from sandbox.evaluation.packs import pack_policy
    async with Sandbox(ServerConfig(), policies=pack_policy) as sandbox:
        run = sandbox.create_run(pack="bid-intake")
        reply = await run.call("browser_start_session", {"provider": "kernel", ...})
        await sandbox.end_run(run.id)

The tool server never loads packs: a run gets a ``Policy`` directly, or by pack id through
the ``policies`` resolver the caller injects (the CLI wires the pack loader in).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from sandbox.core.mirrors import MirrorStore
from sandbox.core.policy import Policy, PolicyNotFound
from toolserver.browser import BrowserHost
from toolserver.config import ServerConfig
from toolserver.dispatch import Run
from toolserver.errors import UnknownPack, UnknownRun
from toolserver.registry import ToolRegistry
from toolserver.tools import default_registry

PolicyResolver = Callable[[str], Policy]   # pack id -> the pack's policy; PolicyNotFound if unknown


class Sandbox:
    def __init__(self, config: ServerConfig | None = None, *, policies: PolicyResolver | None = None,
                 registry: ToolRegistry | None = None) -> None:
        self.config = config or ServerConfig()
        self.policies = policies
        self.registry = registry or default_registry()
        self.host = BrowserHost(self.config)
        self.runs: dict[str, Run] = {}

    async def start(self) -> "Sandbox":
        await self.host.start()
        return self

    async def stop(self) -> None:
        for run in list(self.runs.values()):
            await run.close("server_stopped")
        await self.host.stop()

    async def __aenter__(self) -> "Sandbox":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def resolve_policy(self, pack: str | None, mode: str | None, block_state_changes: bool) -> Policy:
        """A pack's policy (enforced unless ``mode`` says otherwise), or no allow-list without a pack."""
        if pack is None:
            return Policy(mode=mode or "observe", block_state_changes=block_state_changes)
        if self.policies is None:
            raise UnknownPack(f"pack {pack!r}: this server has no packs configured (start it through the "
                              "`sandbox` CLI, or pass policies=pack_policy to Sandbox)")
        try:
            policy = self.policies(pack)
        except PolicyNotFound as exc:
            raise UnknownPack(str(exc)) from exc
        return dataclasses.replace(policy, mode=mode or "enforce", block_state_changes=block_state_changes)

    def create_run(self, pack: str | None = None, *, policy: Policy | None = None, mode: str | None = None,
                   block_state_changes: bool | None = None, trace_path: Path | None = None,
                   header: dict | None = None, mirror_roots: tuple[Path, ...] | None = None,
                   screenshot_dir: Path | None = None, playwright_trace_dir: Path | None = None) -> Run:
        """A new run: its policy given directly, or resolved from ``pack`` (``mode`` overrides
        the server's enforce/observe setting, ``block_state_changes`` the server's default).
        ``mirror_roots`` gives the run its own mirror instead of the server's, on the same
        warm browser. ``screenshot_dir`` keeps a viewport PNG after each call there (default: the
        server's ``screenshot_dir``/<run id>, or none); ``playwright_trace_dir`` saves each session's
        Playwright trace there as ``playwright-trace.zip``."""
        block = self.config.block_state_changes if block_state_changes is None else block_state_changes
        if policy is None:
            policy = self.resolve_policy(pack, mode or (self.config.policy if pack else None), block)
        store = MirrorStore.load(*mirror_roots) if mirror_roots else None
        run = Run(self.host, self.config, policy, self.registry, trace_path, header, store, screenshot_dir,
                  playwright_trace_dir)
        self.runs[run.id] = run
        return run

    def get_run(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            raise UnknownRun(f"no run {run_id!r}; create one with POST /runs")
        if run.closed:
            raise UnknownRun(f"run {run_id!r} has ended; its trace stays readable at GET /runs/{run_id}/trace")
        return run

    async def end_run(self, run_id: str, reason: str = "deleted") -> Run:
        run = self.get_run(run_id)
        await run.close(reason)
        return run
