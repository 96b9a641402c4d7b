"""Stop signals for a command that runs one asyncio task: SIGTERM, SIGINT and SIGHUP cancel it
once, so its ``finally`` blocks end what it runs (runs, attempts, the browser) and every file
gets its last line; ``by`` names the signal. A second signal has its default effect (so a stop
that hangs can still be cut short). Without signals (outside the main thread, not POSIX) it does
nothing, with a warning."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

log = logging.getLogger("toolserver.stopping")
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
EXIT_STATUS = {"SIGTERM": 143, "SIGINT": 130, "SIGHUP": 129}  # 128 + the signal's number, as a shell reports it


class StopSignals:
    """Made in the task to stop; ``restore()`` when it ends."""

    def __init__(self) -> None:
        self.by: str | None = None
        task = asyncio.current_task()
        assert task is not None  # made in a coroutine
        self.task = task
        self.loop = asyncio.get_running_loop()
        try:
            for number in SIGNALS:
                self.loop.add_signal_handler(number, self.stop, number)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or not POSIX
            log.warning("not in the main thread: a signal ends this process without the usual stop")

    def stop(self, number: signal.Signals) -> None:
        if self.by is not None:  # a signal said twice (a held SIGTERM given back, ray_pool.connect): cancelled once
            return
        self.by = number.name
        log.info("%s: stopping", self.by)
        self.restore()
        self.task.cancel()

    def taken(self) -> bool:
        """After the stop's cancel was caught: True (and the cancel taken back, so the closing may
        await) when a signal stopped the task; False for any other cancel, to be raised again."""
        if self.by is None:
            return False
        self.task.uncancel()
        return True

    def restore(self) -> None:
        for number in SIGNALS:
            with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
                self.loop.remove_signal_handler(number)
