"""`sandbox serve` as a real process in a test: a free loopback port for it, and waiting until
it answers /health."""

from __future__ import annotations

import asyncio
import socket
import subprocess

import aiohttp


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_healthy(base: str, server: subprocess.Popen) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            if server.poll() is not None:
                raise AssertionError(f"sandbox serve exited during start-up (exit code {server.returncode})")
            try:
                async with http.get(f"{base}/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"sandbox serve never answered {base}/health within 60 s")
