"""In-process API: the same tools and the same trace as the HTTP server.

    async with Sandbox(ServerConfig()) as sandbox:
        run = sandbox.create_run(pack="bid-intake")
        reply = await run.call("browser_start_session", {"provider": "kernel", ...})
        await sandbox.end_run(run.id)
"""

from __future__ import annotations

from pathlib import Path

from sandbox.policy import Policy
from toolserver.browser import BrowserHost
from toolserver.config import ServerConfig
from toolserver.errors import UnknownRun
from toolserver.run import Run


def policy_for(pack_id: str | None, mode: str | None, block_state_changes: bool) -> Policy:
    if pack_id is None:
        return Policy(mode=mode or "observe", block_state_changes=block_state_changes)
    from sandbox.packs import load_pack  # pure; imported lazily so a broken pack cannot stop the server

    pack = load_pack(pack_id)
    return Policy(allowed_urls=tuple(pack.gates.allowed_urls), mode=mode or "enforce",
                  block_state_changes=block_state_changes,
                  allowed_state_changes=frozenset(pack.gates.allowed_state_changes), pack=pack.id)


class Sandbox:
    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
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

    def create_run(self, pack: str | None = None, *, policy: str | None = None,
                   block_state_changes: bool | None = None, trace_path: Path | None = None,
                   header: dict | None = None) -> Run:
        block = self.config.block_state_changes if block_state_changes is None else block_state_changes
        mode = policy or (self.config.policy if pack else None)
        run = Run(self.host, self.config, policy_for(pack, mode, block), trace_path, header)
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
