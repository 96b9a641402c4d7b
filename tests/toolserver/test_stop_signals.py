"""StopSignals: one stop however many times its signal is said before the loop runs."""

from __future__ import annotations

import asyncio
import signal

from toolserver.stopping import StopSignals


async def test_a_sigterm_said_twice_before_the_loop_runs_cancels_the_task_once():
    # As in ray_pool.connect: a SIGTERM held by a handler of its own while ray.init ran still
    # reached asyncio's wakeup fd, and raise_signal gives it again: two stops in one loop pass.
    async def stopped_task() -> str:
        stopping = StopSignals()
        try:
            ours = signal.getsignal(signal.SIGTERM)
            held: list[int] = []
            signal.signal(signal.SIGTERM, lambda number, frame: held.append(number))
            signal.raise_signal(signal.SIGTERM)
            signal.signal(signal.SIGTERM, ours)
            signal.raise_signal(signal.SIGTERM)
            assert held == [signal.SIGTERM]
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            assert stopping.taken()
        finally:
            stopping.restore()
        try:  # the closing may await, and a timeout in it is a timeout, not a second cancel
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
        except TimeoutError:
            return f"stopped by {stopping.by}, cancelling {asyncio.current_task().cancelling()}"  # type: ignore[union-attr]
        return "not stopped"

    assert await asyncio.create_task(stopped_task()) == "stopped by SIGTERM, cancelling 0"
