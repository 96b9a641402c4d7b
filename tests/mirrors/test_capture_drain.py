"""`sandbox mirror capture` reads the bodies of the responses a page received, for at most its
timeout: a body that never ends (a stream, a stalled server) is left out and said, instead of
holding the capture until the server gives up."""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from sandbox.mirrors.capture import capture_pages

PAGE = b"""<!doctype html><title>Drain</title><p>a page whose script reads a body that never ends</p>
<script>fetch('/slow').then(r => r.text())</script>"""


async def test_a_body_that_never_ends_is_left_out_within_the_timeout():
    release = asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=PAGE, content_type="text/html")

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/plain"})
        await response.prepare(request)  # the headers arrive: Chromium reports the response
        await response.write(b"the first part, and then nothing for a long time")
        await asyncio.wait_for(release.wait(), 30)
        return response

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/slow", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        started = time.monotonic()
        responses, report = await capture_pages([f"{url}/page"], wait_ms=0, timeout_ms=2000)
        took = time.monotonic() - started
    finally:
        release.set()
        await runner.cleanup()
    assert [response.url for response in responses] == [f"{url}/page"]
    assert f"{url}/slow: response body not complete after 2000 ms; not recorded" in report.warnings
    assert took < 15, f"the capture waited {took:.1f} s for a body that never ended"
