"""What the tool server keeps for people to look at, beside the trace: a viewport PNG of the
active tab after each tool call (``shots/<seq>.png``, named in the call's trace line).

Called from one place, the dispatcher, once a call has ended. A screenshot that cannot be
taken is never the call's failure: it is recorded as a ``screenshot_failed`` event of that
call and the line names no file. Imports only Playwright's error type and the config.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

NO_SCREENSHOT_TOOLS = frozenset({"list_tools", "browser_close"})


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
        await tab.page.screenshot(path=str(file), timeout=run.config.screenshot_timeout_ms)
    except (PlaywrightError, OSError) as exc:
        run.current = ctx          # the event belongs to the call that just ended
        try:
            run.record_event("screenshot_failed", {"file": str(file), "error": str(exc).splitlines()[0][:300]}, tab=tab)
        finally:
            run.current = None
        return None
    return screenshot_name(file, run.trace.path)
