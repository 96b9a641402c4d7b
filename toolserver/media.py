"""What the tool server keeps for people to look at, beside the trace: a viewport PNG of the
active tab after each tool call (``shots/<seq>.png``, named in the call's trace line), and a
Playwright trace of each session (``playwright-trace.zip``: screenshots and DOM snapshots,
opened with ``playwright show-trace``).

Screenshots are called from the dispatcher only: ``start_screenshot`` when a call ends,
``finish_screenshot`` before the run's next call that can change the page (``browser_close``
awaits it itself, while it saves the profile) and when the run closes. A picture of a page
that cannot look different since the tab's last one is a hard link to it (no capture).
Playwright traces: ``start_playwright_trace`` when a session opens and ``stop_playwright_trace``
before it closes (from the browser); ``begin_call_group`` / ``end_call_group`` around each call
(the dispatcher). Neither is ever a call's failure: what cannot be kept is an event
(``screenshot_failed``, ``playwright_trace_failed``). Imports only Playwright (the bottom layer).
"""

from __future__ import annotations

import asyncio
import base64
import os
import weakref
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

NO_SCREENSHOT_TOOLS = frozenset({"list_tools", "browser_close"})
_cdp_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # page -> its CDP session
_pending: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # run -> its latest capture
_last_shot: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # page -> (its paint key, file)
# Calls that only read the page: the previous call's picture is taken while they run.
READING_TOOLS = frozenset({"browser_snapshot", "list_tools"})
# Calls that await the previous call's picture themselves, after work that cannot change the page.
SELF_WAITING_TOOLS = frozenset({"browser_close"})
PAINT_JS = "typeof window.__sandboxPaint === 'function' ? window.__sandboxPaint() : null"  # an expression: see STATE_JS


def screenshot_name(file: Path, trace_path: Path | None) -> str:
    """How the trace line names the file: relative to the trace's folder when inside it
    (``shots/12.png`` in an attempt folder), else the absolute path."""
    if trace_path is not None:
        relative = os.path.relpath(file, Path(trace_path).parent)
        if not relative.startswith(".."):
            return Path(relative).as_posix()
    return str(Path(file).resolve())


def start_screenshot(run: Any, ctx: Any, tool: str, tab: Any) -> str | None:
    """Begin the viewport capture after call ``ctx.seq`` and return the name its trace line
    carries (None: not asked for, or no open tab). The capture overlaps whatever the agent does
    next; ``finish_screenshot`` awaits it before a call that can change the page."""
    folder = run.screenshot_dir
    if folder is None or tab is None or tab.closed or tool in NO_SCREENSHOT_TOOLS:
        return None
    file = Path(folder) / f"{ctx.seq}.png"
    _pending[run] = asyncio.ensure_future(_capture(run, ctx, tab, file, _pending.get(run)))
    return screenshot_name(file, run.trace.path)


async def finish_screenshot(run: Any, tool: str | None = None) -> None:
    """Wait for the captures begun after the previous calls: before the run's next call, unless
    that call only reads the page (its picture is then taken while it reads) or waits itself, and
    at close."""
    if tool in READING_TOOLS or tool in SELF_WAITING_TOOLS:
        return
    pending = _pending.pop(run, None)
    if pending is not None:
        await pending


async def _capture(run: Any, ctx: Any, tab: Any, file: Path, previous: asyncio.Future | None) -> None:
    try:
        if previous is not None:
            await asyncio.wait([previous])  # one picture at a time, in call order
        file.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.wait_for(_keep_viewport(tab, file, ctx.paint), run.config.screenshot_timeout_ms / 1000)
    except TimeoutError:
        _failed(run, ctx, tab, file, f"no screenshot within {run.config.screenshot_timeout_ms} ms")
    except (PlaywrightError, OSError) as exc:
        _failed(run, ctx, tab, file, str(exc).splitlines()[0][:300])


async def _keep_viewport(tab: Any, file: Path, key: dict | None = None) -> None:
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
    last = _last_shot.get(page)
    if key is None:
        reported = (tab.state or {}).get("paint")
        if reported is not None and (last is None or last[0]["doc"] != reported["doc"]):
            key, last = reported, None
        else:
            key = await page.evaluate(PAINT_JS)
    still = key is not None and key["still"]
    file.unlink(missing_ok=True)
    if still and last is not None and last[0] == key:
        try:
            os.link(last[1], file)
            return
        except OSError:
            pass  # the last picture is gone: take a new one
    session = _cdp_sessions.get(page)
    if session is None:
        session = _cdp_sessions[page] = await page.context.new_cdp_session(page)
    reply = await session.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
    file.write_bytes(base64.b64decode(reply["data"]))
    if still:
        _last_shot[page] = (key, file)
    else:
        _last_shot.pop(page, None)


def _failed(run: Any, ctx: Any, tab: Any, file: Path, error: str) -> None:
    """A ``screenshot_failed`` event of the call (its trace line, already written, names the
    file that was not written)."""
    run.record_event("screenshot_failed", {"file": str(file), "error": error}, tab=tab, call=ctx)


PLAYWRIGHT_TRACE = "playwright-trace"


_open_groups: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # run -> context with an open group


async def start_playwright_trace(run: Any, context: Any) -> None:
    """Record the session's actions, screenshots and DOM snapshots (when the run asks for it)."""
    if getattr(run, "playwright_trace_dir", None) is None:
        return
    try:
        await context.tracing.start(screenshots=True, snapshots=True, title=getattr(run, "id", None))
    except PlaywrightError as exc:
        run.record_event("playwright_trace_failed", {"step": "start", "error": str(exc).splitlines()[0][:300]})
        return
    if run.current is not None:  # the call opening the session (browser_start_session)
        await begin_call_group(run, run.current, context)


async def begin_call_group(run: Any, ctx: Any, context: Any = None) -> None:
    """Group call ``ctx``'s Playwright actions under ``seq N · tool`` in the session's trace, so
    the trace viewer lists the tool calls with their actions inside."""
    if getattr(run, "playwright_trace_dir", None) is None:
        return
    if context is None:
        context = ctx.session.context if ctx.session is not None and not ctx.session.closed else None
    if context is None:
        return
    try:
        await context.tracing.group(f"seq {ctx.seq} · {ctx.tool}")
    except PlaywrightError:
        return  # not tracing this context (its trace failed to start: already an event)
    _open_groups[run] = context


async def end_call_group(run: Any) -> None:
    context = _open_groups.pop(run, None)
    if context is not None:
        await context.tracing.group_end()


async def stop_playwright_trace(run: Any, context: Any) -> None:
    """Save the session's trace as ``playwright-trace.zip`` (``-2``, ``-3``... for a run's later sessions)."""
    folder = getattr(run, "playwright_trace_dir", None)
    if folder is None:
        return
    folder = Path(folder)
    path, number = folder / f"{PLAYWRIGHT_TRACE}.zip", 1
    while path.exists():
        number += 1
        path = folder / f"{PLAYWRIGHT_TRACE}-{number}.zip"
    try:
        if _open_groups.get(run) is context:  # browser_close: its group ends with the trace
            await end_call_group(run)
        folder.mkdir(parents=True, exist_ok=True)
        await context.tracing.stop(path=str(path))
    except (PlaywrightError, OSError) as exc:
        run.record_event(
            "playwright_trace_failed", {"step": "stop", "file": str(path), "error": str(exc).splitlines()[0][:300]}
        )
