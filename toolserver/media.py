"""What the tool server keeps for people to look at, beside the trace: a viewport PNG of the
active tab after each tool call (``shots/<seq>.png``, named in the call's trace line).

Called from one place, the dispatcher, once a call has ended. A screenshot that cannot be
taken is never the call's failure: it is recorded as a ``screenshot_failed`` event of that
call and the line names no file. Imports only Playwright's error type and the config.
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
_cdp_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # page -> its CDP session


def screenshot_name(file: Path, trace_path: Path | None) -> str:
    """How the trace line names the file: relative to the trace's folder when inside it
    (``shots/12.png`` in an attempt folder), else the absolute path."""
    if trace_path is not None:
        relative = os.path.relpath(file, Path(trace_path).parent)
        if not relative.startswith(".."):
            return Path(relative).as_posix()
    return str(Path(file).resolve())


async def capture_screenshot(run: Any, ctx: Any, tool: str, tab: Any) -> str | None:
    """The active tab's viewport after call ``ctx.seq`` of ``run``, or None (not asked for, no tab, or failed)."""
    folder = run.screenshot_dir
    if folder is None or tab is None or tab.closed or tool in NO_SCREENSHOT_TOOLS:
        return None
    file = Path(folder) / f"{ctx.seq}.png"
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        png = await asyncio.wait_for(_viewport_png(tab.page), run.config.screenshot_timeout_ms / 1000)
        file.write_bytes(png)
    except asyncio.TimeoutError:
        return _failed(run, ctx, tab, file, f"no screenshot within {run.config.screenshot_timeout_ms} ms")
    except (PlaywrightError, OSError) as exc:
        return _failed(run, ctx, tab, file, str(exc).splitlines()[0][:300])
    return screenshot_name(file, run.trace.path)


async def _viewport_png(page: Any) -> bytes:
    """Chromium's own capture with its fast PNG encoder: about a third cheaper than
    ``page.screenshot`` (which also waits for fonts and hides the caret) on this machine."""
    session = _cdp_sessions.get(page)
    if session is None:
        session = _cdp_sessions[page] = await page.context.new_cdp_session(page)
    reply = await session.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
    return base64.b64decode(reply["data"])


def _failed(run: Any, ctx: Any, tab: Any, file: Path, error: str) -> None:
    run.current = ctx          # the event belongs to the call that just ended
    try:
        run.record_event("screenshot_failed", {"file": str(file), "error": error}, tab=tab)
    finally:
        run.current = None
