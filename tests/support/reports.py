"""Opening an HTML report as a person would: from file://, in the warm browser."""

from __future__ import annotations

from pathlib import Path


async def open_report(sandbox, path: Path):
    """Open ``path`` in a fresh context of the warm browser; returns (page, context, non-file requests)."""
    context = await sandbox.host.browser.new_context(viewport={"width": 1200, "height": 900})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = await context.new_page()
    await page.goto(path.as_uri())
    await page.wait_for_load_state("load")
    return page, context, requests
