"""A session start that fails leaves no context behind, and never waits on Chromium unbounded:
its context is closed within close_timeout_s (else disposed of), and what could not be done is
logged. Before, a context Chromium had not made yet was waited for without a bound, and a close
that timed out was dropped without a word."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time

import pytest

from tests.support.polling import until
from tests.support.site import SITE
from toolserver.browser import lifecycle

BOUNDS = dict(call_timeout_s=0.5, close_timeout_s=1.0)


def freeze(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


@pytest.mark.parametrize("frozen", ["before-the-context-is-made", "once-it-is-made"])
async def test_a_failed_start_on_a_frozen_browser_is_bounded_logged_and_closed_once_it_answers(
    own_sandbox, caplog, frozen
):
    caplog.set_level(logging.WARNING, logger="toolserver.browser")
    async with own_sandbox(own_browser=True, **BOUNDS) as own:
        browser = await own.host.ready_browser()
        pids = own.host.browser_pids()
        assert pids
        make = browser.new_context
        made, closed_contexts = [], []

        async def recorded(**options):  # the real new_context; each context it makes, and its close, noted
            context = await make(**options)
            made.append(context)
            context.on("close", lambda closed: closed_contexts.append(closed))
            if frozen == "once-it-is-made":
                freeze(pids, signal.SIGSTOP)  # Chromium stops answering, its context made
                await asyncio.sleep(2 * BOUNDS["call_timeout_s"])  # the answer comes after the start was cut short
            return context

        browser.new_context = recorded  # type: ignore[method-assign]
        if frozen == "before-the-context-is-made":
            freeze(pids, signal.SIGSTOP)
        try:
            run = own.create_run()
            began = time.monotonic()
            reply = await run.call("browser_start_session", {"provider": "kernel", "url": f"{SITE}/"})
            assert time.monotonic() - began < BOUNDS["call_timeout_s"] + 1, reply
            assert reply["error"]["type"] == "page_unresponsive", reply
            # Every wait on the frozen browser ends within its bound, and says so.
            said = "was not made within" if frozen.startswith("before") else "did not close within"
            logged = await until(lambda: said in caplog.text, 3 * BOUNDS["close_timeout_s"] + 1)
            ended = await until(lambda: not lifecycle.DISCARDING, 3 * BOUNDS["close_timeout_s"] + 1)
            assert logged and ended, (caplog.text, lifecycle.DISCARDING)
        finally:
            freeze(pids, signal.SIGCONT)
        # Once Chromium answers again, it makes the context, and the context is closed: not left open on it.
        closed = await until(lambda: len(made) == len(closed_contexts) == 1 and not browser.contexts, 10)
        ended = await until(lambda: not (lifecycle.DISCARDING or lifecycle.LATE_CLOSES), 5)
        await run.close()
    assert closed and ended, (len(made), len(closed_contexts), len(browser.contexts), caplog.text)
