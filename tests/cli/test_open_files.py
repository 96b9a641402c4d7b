"""`sandbox serve` started from a shell whose soft limit on open files is low (256: macOS's, and
some containers') refused every run: it keeps 256 descriptors free below that limit."""

from __future__ import annotations

import resource
import subprocess
import sys

import aiohttp

from tests.support.serve import free_port, wait_healthy


def low_soft_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


async def test_a_server_started_under_a_low_soft_limit_on_open_files_takes_runs():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert hard == resource.RLIM_INFINITY or hard > 1024, "this test needs a hard limit above the soft one"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=low_soft_limit,
    )
    try:
        await wait_healthy(base, server)
        async with aiohttp.ClientSession() as http, http.post(f"{base}/runs", json={}) as response:
            created = await response.json()
            assert response.status == 201, created
        with open(f"/proc/{server.pid}/limits") as limits:
            soft = next(line.split()[3] for line in limits if line.startswith("Max open files"))
        assert int(soft) > 1024, soft  # raised to the hard limit (Chromium inherits it)
    finally:
        server.terminate()
        server.wait(timeout=30)
