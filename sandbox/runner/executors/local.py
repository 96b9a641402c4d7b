"""``--executor local`` (the default): attempts on this process's warm browser, with the HTTP
tool server on loopback for ``cmd:`` agents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.runner.executors._kinds import BatchAgent, BatchPlan, executor_kind

if TYPE_CHECKING:
    from aiohttp import web

    from sandbox.evaluation.packs import Pack
    from sandbox.runner.attempt import AttemptOutcome
    from toolserver.api import Sandbox


@dataclass(frozen=True, kw_only=True)
class LocalOptions:
    sandbox: Sandbox | None = None  # a started sandbox to run on; None: one is started for the batch


class LocalExecutor:
    def __init__(self, plan: BatchPlan, sandbox: Sandbox, owned: bool, http: web.AppRunner, url: str) -> None:
        from sandbox.runner.wiring import PackTasks
        from toolserver.capacity import session_cap

        self.plan, self.sandbox, self.owned, self.http, self.url = plan, sandbox, owned, http, url
        # The batch's own server knows each pack it runs as the batch loaded it, so that an agent's
        # GET /runs/{id}/task and POST .../answer use that pack (one of the user's own, a changed copy).
        self.tasks = sandbox.tasks if owned and isinstance(sandbox.tasks, PackTasks) else None
        # At most as many attempts at once as the server holds sessions (an attempt holds one):
        # beyond it a start would be refused, so further attempts wait their turn instead.
        self.capacity: tuple[int, str] | None = session_cap(sandbox.config)

    async def run(
        self, pack: Pack, attempt_number: int, directory: Path, agent: BatchAgent, dispatch_wait: float = 0.0
    ) -> AttemptOutcome:
        from sandbox.runner.agents import make_agent
        from sandbox.runner.attempt import run_attempt

        if self.tasks is not None:
            self.tasks.add(pack)
        return await run_attempt(
            self.sandbox,
            pack,
            make_agent(agent.spec, agent.options),
            directory,
            sandbox_url=self.url,
            attempt_number=attempt_number,
            label=agent.label or None,
            dispatch_wait=dispatch_wait,
            **self.plan.attempt.arguments(),
        )

    async def stop(self) -> None:
        await self.http.cleanup()
        if self.owned:
            await self.sandbox.stop()


@executor_kind("local", usage="local", summary="this process, one warm browser (the default)", options=LocalOptions)
async def start(plan: BatchPlan, options: LocalOptions) -> LocalExecutor:
    from sandbox.runner.executors._loopback import serve_loopback
    from sandbox.runner.wiring import app_config, app_sandbox
    from toolserver.config import ServerConfig

    # The batch's own server holds every attempt it lets run at once, and a few runs besides.
    own = app_config(max_runs=max(ServerConfig.max_runs, plan.concurrency + 8))
    sandbox = options.sandbox or await app_sandbox(own).start()
    http, url = await serve_loopback(sandbox)
    return LocalExecutor(plan, sandbox, options.sandbox is None, http, url)
