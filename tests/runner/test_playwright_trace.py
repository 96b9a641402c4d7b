"""Each session's Playwright trace lands in the attempt folder as playwright-trace.zip, and is a
valid trace: the trace viewer that ships inside the Playwright package (its static files,
served on loopback as `playwright show-trace` does) opens it in headless Chromium and lists
the attempt's actions."""

from __future__ import annotations

import zipfile
from pathlib import Path

import playwright
from aiohttp import web

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.reference_agent import ReferenceAgent
from sandbox.runner.attempt import run_attempt
from tests.support.serve import served
from toolserver.contract.trace import read_trace

VIEWER = Path(playwright.__file__).parent / "driver" / "package" / "lib" / "vite" / "traceViewer"


async def serve_viewer(trace_zip: Path) -> tuple[web.AppRunner, str]:
    app = web.Application()

    async def trace(request: web.Request) -> web.FileResponse:
        return web.FileResponse(trace_zip)

    app.router.add_get("/trace.zip", trace)
    app.router.add_static("/", VIEWER)
    return await served(app)


async def test_attempt_trace_opens_in_playwrights_trace_viewer(sandbox, browser, tmp_path):
    assert (VIEWER / "index.html").is_file(), f"no trace viewer in the Playwright package at {VIEWER}"
    outcome = await run_attempt(
        sandbox,
        load_pack("controlled-form"),
        ReferenceAgent(),
        tmp_path / "attempt",
        screenshots="none",
        playwright_trace=True,
    )
    trace_zip = outcome.directory / "playwright-trace.zip"
    with zipfile.ZipFile(trace_zip) as archive:
        assert {"trace.trace", "trace.network"} <= set(archive.namelist())

    calls = read_trace(outcome.directory / "trace.jsonl").calls
    runner, base = await serve_viewer(trace_zip)
    try:
        page = await browser.new_page()  # a plain browser: the sandbox's refuses loopback by design
        try:
            await page.goto(f"{base}/index.html?trace={base}/trace.zip")
            tree = page.get_by_role("tree")
            await tree.get_by_role("treeitem").first.wait_for(timeout=20_000)
            listed = await tree.locator(":scope > [role=treeitem]").all_inner_texts()
            await tree.get_by_role("treeitem", name="seq 1 · browser_start_session").click()
            await page.keyboard.press("ArrowRight")  # expand the call: its Playwright actions
            await tree.get_by_role("treeitem", name="Navigate").first.wait_for(timeout=5_000)
            first_call = await tree.aria_snapshot()
        finally:
            await page.context.close()
    finally:
        await runner.cleanup()
    # every tool call is a group named after it (browser_close ends the trace, so it lists no actions)
    expected = [f"seq {c.seq} · {c.tool}" for c in calls if c.tool != "browser_close"]
    assert [" ".join(name.split()[:4]) for name in listed] == expected, listed
    assert "sarah27h.github.io/simple-multi-step-form" in first_call.split("seq 2 ·")[0], first_call
