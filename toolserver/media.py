"""What the tool server keeps for people to look at, beside the trace: a viewport PNG of the
active tab after each tool call (``shots/<seq>.png``, named in the call's trace line), and a
Playwright trace of each session (``playwright-trace.zip``: screenshots and DOM snapshots,
opened with ``playwright show-trace``).

Each run has its own ``RunMedia`` (``run.media``), which holds all of this state. Screenshots
are called from the dispatcher only: ``after_call`` when a call ends, ``before_call`` before the
run's next call, which awaits the last picture unless the tool declares it does not change the
page (its ``page_effect``: ``browser_close`` awaits it itself, while it saves the profile), and
at the run's end. A picture of a page that cannot look different since the tab's last one is a
hard link to it (no capture). Playwright traces: ``start_trace`` when a session opens and
``stop_trace`` before it closes (from the browser); ``begin_group`` / ``end_group`` around each
call (the dispatcher). Neither is ever a call's failure: what cannot be kept is an event
(``screenshot_failed``, ``playwright_trace_failed``). Imports only Playwright.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import weakref
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from toolserver.cdp import cdp_session, evaluate

log = logging.getLogger("toolserver.media")
PAINT_JS = "typeof window.__sandboxPaint === 'function' ? window.__sandboxPaint() : null"  # an expression: see STATE_JS
PLAYWRIGHT_TRACE = "playwright-trace"


def screenshot_name(file: Path, trace_path: Path | None) -> str:
    """How the trace line names the file: relative to the trace's folder when inside it
    (``shots/12.png`` in an attempt folder), else the absolute path."""
    if trace_path is not None:
        relative = os.path.relpath(file, Path(trace_path).parent)
        if not relative.startswith(".."):
            return Path(relative).as_posix()
    return str(Path(file).resolve())


class RunMedia:
    """A run's pictures and Playwright traces, and what they need to remember: the capture in
    flight, each page's last picture, the Playwright trace group that is open.
    Owned by the run (``run.media``); the dispatcher calls ``before_call``/``after_call`` and
    ``begin_group``/``end_group`` around each call, the browser ``start_trace``/``stop_trace``."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self._pending: asyncio.Future | None = None  # the latest capture
        self._last_shot: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # page -> (its paint key, file)
        self._open_group: Any = None  # the context whose trace has a call's group open

    # --- screenshots ------------------------------------------------------------------------
    def after_call(self, ctx: Any, tool: Any, tab: Any) -> str | None:
        """Begin the viewport capture after call ``ctx.seq`` and return the name its trace line
        carries (None: not asked for, no open tab, or a tool that leaves no page to show). The
        capture overlaps whatever the agent does next; ``before_call`` awaits it before a call
        that can change the page."""
        folder = self.run.screenshot_dir
        if folder is None or tab is None or tab.closed or tool is None or tool.page_effect in ("none", "ends_session"):
            return None
        file = Path(folder) / f"{ctx.seq}.png"
        self._pending = asyncio.ensure_future(self._capture(ctx, tab, file, self._pending))
        return screenshot_name(file, self.run.trace.path)

    async def before_call(self, tool: Any) -> None:
        """Wait for the captures begun after the previous calls: before the run's next call, unless
        that call does not change the page (its picture is then taken while it runs) or waits
        itself (``tool``: None at close, when every capture is awaited)."""
        if tool is not None and tool.page_effect in ("none", "reads", "ends_session"):
            return
        await self.finish_pictures()

    async def finish_pictures(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            await pending

    async def _capture(self, ctx: Any, tab: Any, file: Path, previous: asyncio.Future | None) -> None:
        config = self.run.config
        try:
            if previous is not None:
                await asyncio.wait([previous])  # one picture at a time, in call order
            file.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.wait_for(self._keep_viewport(tab, file, ctx.paint), config.screenshot_timeout_ms / 1000)
        except TimeoutError:
            self._failed(ctx, tab, file, f"no screenshot within {config.screenshot_timeout_ms} ms")
        except (PlaywrightError, OSError) as exc:
            self._failed(ctx, tab, file, str(exc).splitlines()[0][:300])
        except Exception as exc:  # awaited before the next call has its line: never that call's failure
            log.exception("run %s: the screenshot after call %s failed", self.run.id, ctx.seq)
            self._failed(ctx, tab, file, repr(exc)[:300])

    async def _keep_viewport(self, tab: Any, file: Path, key: dict | None = None) -> None:
        """Write the tab's viewport now to ``file``. When the page says nothing it shows can have
        changed since the tab's last picture (same document, no DOM change, scroll, focus, input or
        load, and nothing that moves by itself: animations, media, canvases, frames), the file is a
        hard link to that picture. Else Chromium takes one with its fast PNG encoder (about a third
        cheaper than ``page.screenshot``, which also waits for fonts and hides the caret).

        The page's paint key: ``key`` when the call read it (a snapshot reads it with the page's
        title, typing has it from the page's typing report); else, when the tab's last state report
        comes from another document than its last picture, that report's key (a new picture is
        taken anyway, and a key read before it is safe to keep: a change after it makes the next
        key differ); else the page is asked."""
        page = tab.page
        last = self._last_shot.get(page)
        if key is None:
            reported = (tab.state or {}).get("paint")
            if reported is not None and (last is None or last[0]["doc"] != reported["doc"]):
                key, last = reported, None
            else:
                key = await evaluate(tab, PAINT_JS)
        still = key is not None and key["still"]
        file.unlink(missing_ok=True)
        if still and last is not None and last[0] == key:
            try:
                os.link(last[1], file)
                return
            except OSError:
                pass  # the last picture is gone: take a new one
        session = await cdp_session(tab)
        shot = {"format": "png", "optimizeForSpeed": True}
        try:
            reply = await session.send("Page.captureScreenshot", shot)
        except PlaywrightError as exc:  # no frame to capture yet (a busy machine, a new page): once more
            if "Unable to capture screenshot" not in str(exc):
                raise
            await asyncio.sleep(0.1)
            reply = await session.send("Page.captureScreenshot", shot)
        try:
            file.write_bytes(base64.b64decode(reply["data"]))
        except OSError:  # a full disk: no half picture is left under the name the call line gives
            file.unlink(missing_ok=True)
            raise
        if still:
            self._last_shot[page] = (key, file)
        else:
            self._last_shot.pop(page, None)

    def _failed(self, ctx: Any, tab: Any, file: Path, error: str) -> None:
        """A ``screenshot_failed`` event of the call (its trace line, already written, names the
        file that was not written)."""
        try:
            self.run.record_event("screenshot_failed", {"file": str(file), "error": error}, tab=tab, call=ctx)
        except OSError as exc:  # the trace's disk is full too: never the next call's failure
            log.warning("screenshot %s failed (%s), and its event could not be written: %s", file, error, exc)

    # --- Playwright traces --------------------------------------------------------------------
    async def start_trace(self, context: Any) -> None:
        """Record the session's actions, screenshots and DOM snapshots (when the run asks for it)."""
        run = self.run
        if run.playwright_trace_dir is None:
            return
        try:
            await context.tracing.start(screenshots=True, snapshots=True, title=run.id)
        except PlaywrightError as exc:
            run.record_event("playwright_trace_failed", {"step": "start", "error": str(exc).splitlines()[0][:300]})
            return
        if run.current is not None:  # the call opening the session (browser_start_session)
            await self.begin_group(run.current, context)

    async def begin_group(self, ctx: Any, context: Any = None) -> None:
        """Group call ``ctx``'s Playwright actions under ``seq N · tool`` in the session's trace, so
        the trace viewer lists the tool calls with their actions inside."""
        if self.run.playwright_trace_dir is None:
            return
        if context is None:
            context = ctx.session.context if ctx.session is not None and not ctx.session.closed else None
        if context is None:
            return
        try:
            await context.tracing.group(f"seq {ctx.seq} · {ctx.tool}")
        except PlaywrightError:
            return  # not tracing this context (its trace failed to start: already an event)
        self._open_group = context

    async def end_group(self) -> None:
        """End the open call's group, within ``close_timeout_s``; a context whose browser crashed
        under the call (its trace is then lost: ``stop_trace`` says so) is let be."""
        context, self._open_group = self._open_group, None
        if context is not None:
            try:
                await asyncio.wait_for(context.tracing.group_end(), self.run.config.close_timeout_s)
            except (PlaywrightError, TimeoutError) as exc:
                log.info("run %s: the Playwright trace group was not ended: %s", self.run.id, exc)

    async def stop_trace(self, context: Any) -> None:
        """Save the session's trace as ``playwright-trace.zip`` (``-2``, ``-3``... for a run's later sessions)."""
        run = self.run
        if run.playwright_trace_dir is None:
            return
        folder = Path(run.playwright_trace_dir)
        path, number = folder / f"{PLAYWRIGHT_TRACE}.zip", 1
        while path.exists():
            number += 1
            path = folder / f"{PLAYWRIGHT_TRACE}-{number}.zip"
        try:
            if self._open_group is context:  # browser_close: its group ends with the trace
                await self.end_group()
            folder.mkdir(parents=True, exist_ok=True)
            await context.tracing.stop(path=str(path))
        except (PlaywrightError, OSError) as exc:
            path.unlink(missing_ok=True)  # a zip cut short (a full disk) is no trace to open
            run.record_event(
                "playwright_trace_failed",
                {"step": "stop", "file": str(path), "error": str(exc).splitlines()[0][:300]},
            )
