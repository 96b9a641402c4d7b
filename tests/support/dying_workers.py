"""An attempt whose Ray worker dies under it: the agent hangs on its first try (a retry returns at
once), and the worker is killed while it hangs."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.runner.agents import AgentOptions
from sandbox.runner.executors import AttemptSettings, BatchAgent
from sandbox.runner.executors.ray_pool import SCRATCH_PREFIX


def scratch_folders() -> set[Path]:
    """The Ray attempts' scratch folders on this machine."""
    return set(Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"))


async def kill_during_the_first_try(pool: Any, folder: Path, retries: int, kill: Callable[[], None]) -> Any:
    """Run one attempt on ``pool`` (in ``folder``/attempt), call ``kill`` once its first try hangs,
    and return its outcome."""
    marker = folder / "first-try-started"
    agent = f"cmd:test -e {marker} || (touch {marker}; sleep 30)"  # the first try hangs, a retry returns at once
    running = asyncio.ensure_future(
        pool.run(
            folder / "attempt",
            "controlled-form",
            BatchAgent(agent, AgentOptions()),
            AttemptSettings(time_limit=60),
            attempt_number=1,
            retries=retries,
        )
    )
    for _ in range(600):
        if marker.exists():
            break
        await asyncio.sleep(0.05)
    kill()
    return await running


async def hanging_attempt(pool: Any, folder: Path) -> asyncio.Future:
    """One attempt on ``pool`` (in ``folder``/attempt, one retry allowed) whose agent hangs for 30 s,
    returned as a future once the agent has begun."""
    marker = folder / "started"
    running = asyncio.ensure_future(
        pool.run(
            folder / "attempt",
            "controlled-form",
            BatchAgent(f"cmd:touch {marker}; sleep 30", AgentOptions()),
            AttemptSettings(time_limit=60),
            attempt_number=1,
            retries=1,
        )
    )
    while not marker.exists():
        if running.done():  # it ended before its agent began: say why
            running.result()
            raise AssertionError("the attempt ended before its agent began")
        await asyncio.sleep(0.05)
    return running
