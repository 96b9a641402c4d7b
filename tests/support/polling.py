"""Waiting for what a page or a server does in its own time: polled, with a bound in seconds
(a busy machine is slower, never stuck), so the test's own assertions say what did not come."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(ready: Callable[[], object], seconds: float = 15.0, step: float = 0.05) -> bool:
    """Until ``ready()`` is true or ``seconds`` have passed, checking every ``step`` seconds; whether it came."""
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(step)
    return True
