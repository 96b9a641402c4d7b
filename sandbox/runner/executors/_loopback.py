"""The HTTP tool server (and MCP at /mcp) on a free loopback port, for ``cmd:`` agents: every
executor serves one beside each warm browser it runs attempts on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

    from toolserver.api import Sandbox


async def serve_loopback(sandbox: Sandbox) -> tuple[web.AppRunner, str]:
    """The server for ``sandbox``: the aiohttp runner (``await runner.cleanup()``) and the base URL."""
    from aiohttp import web

    from toolserver.transports.http import create_app
    from toolserver.transports.serving import AppRunner

    # One agent's client must not find, use or crowd out another attempt's run: it uses its own.
    runner = AppRunner(create_app(sandbox=sandbox, runs_given=True), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"  # the one site: its bound (host, port)
