"""A server in a test: as a real process (`sandbox serve`, `inspect view`), a free loopback port
for it and waiting until it answers; in the test's own loop, an aiohttp app served on loopback."""

from __future__ import annotations

import asyncio
import socket
import subprocess

import aiohttp
from aiohttp import web


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_healthy(base: str, server: subprocess.Popen) -> None:
    await wait_answering(f"{base}/health", server, "sandbox serve")


async def wait_answering(url: str, server: subprocess.Popen, what: str, seconds: float = 60) -> None:
    """Until ``url`` answers 200; an ``AssertionError`` (with the process's output, if it keeps
    one) when the process exits first or ``seconds`` pass."""
    async with aiohttp.ClientSession() as http:
        for _ in range(int(seconds * 10)):
            if server.poll() is not None:
                output = server.stdout.read().decode(errors="replace") if server.stdout else ""
                raise AssertionError(f"{what} exited during start-up (exit code {server.returncode}) {output}")
            try:
                async with http.get(url) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"{what} never answered {url} within {seconds:g} s")


async def served(app: web.Application) -> tuple[web.AppRunner, str]:
    """``app`` served on a free loopback port: its runner (``await runner.cleanup()`` to stop it)
    and its root URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
