"""`sandbox serve` as a real process: with a page spinning in JavaScript, DELETE returns and
SIGINT stops the server within 10 s answering the call in flight, and the trace file is complete (issue 12, item 3);
SIGHUP stops it as well; a request that is not readable HTTP is answered in JSON by the server it runs."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import aiohttp

from tests.support.hostile import HOSTILE, build_hostile_mirror
from tests.support.serve import free_port, wait_healthy
from tests.support.traces import strict_lines


async def test_delete_and_sigint_complete_with_a_spinning_page(tmp_path):
    root = build_hostile_mirror(tmp_path / "mirror")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox",
            "serve",
            "--port",
            str(port),
            "--mirrors",
            str(root),
            "--trace-dir",
            str(tmp_path / "traces"),
            "--policy",
            "observe",
            "--timeout-action",
            "1500",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await wait_healthy(base, server)
        async with aiohttp.ClientSession() as http:

            async def call(run_id: str, tool: str, args: dict) -> dict:
                async with http.post(f"{base}/runs/{run_id}/tools/{tool}", json=args) as response:
                    return await response.json()

            async def spinning_run() -> str:
                async with http.post(f"{base}/runs", json={}) as response:
                    run_id = (await response.json())["run_id"]
                await call(run_id, "browser_start_session", {"provider": "kernel", "url": f"{HOSTILE}/spin"})
                return run_id

            deleted = await spinning_run()
            stuck = asyncio.ensure_future(call(deleted, "browser_snapshot", {}))
            await asyncio.sleep(0.5)
            began = time.monotonic()
            async with http.delete(f"{base}/runs/{deleted}") as response:
                assert response.status == 200
            assert time.monotonic() - began < 10
            await asyncio.wait_for(stuck, 10)

            held = await spinning_run()
            in_flight = asyncio.ensure_future(call(held, "browser_snapshot", {}))
            await asyncio.sleep(0.5)
            began = time.monotonic()
            server.send_signal(signal.SIGINT)
            answer = await asyncio.wait_for(in_flight, 10)
            returncode = await asyncio.to_thread(server.wait, 15)
            assert time.monotonic() - began < 10, "shutdown took too long"
            assert returncode == 0
            # The call in flight was answered, not cut off by the shutdown: its run ended under it (or,
            # if the page had not begun to spin yet, it finished first).
            assert answer["ok"] or "ended while this call was running" in answer["error"]["message"], answer
        for path in (tmp_path / "traces").glob("*.jsonl"):
            lines = strict_lines(path.read_text(encoding="utf-8"))
            assert lines[0]["type"] == "run" and lines[-1]["type"] == "run_end", path
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


async def test_a_hang_up_stops_the_server_and_ends_its_runs(tmp_path):
    """SIGHUP (the terminal that started the server closed) stops it as SIGTERM does."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "serve", "--port", str(port), "--trace-dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await wait_healthy(base, server)
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/runs", json={}) as response:
                run_id = (await response.json())["run_id"]
            start = {"provider": "kernel"}
            async with http.post(f"{base}/runs/{run_id}/tools/browser_start_session", json=start) as response:
                assert (await response.json())["ok"]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /runs HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n")
        unreadable = await asyncio.wait_for(reader.read(), 10)  # the server closes the connection
        writer.close()
        assert b'"type": "malformed_http"' in unreadable, unreadable  # not aiohttp's plain text
        server.send_signal(signal.SIGHUP)
        assert await asyncio.to_thread(server.wait, 30) == 0
        lines = strict_lines((tmp_path / f"{run_id}.jsonl").read_text(encoding="utf-8"))
        assert [line["type"] for line in lines] == ["run", "call", "run_end"]
        assert lines[-1]["reason"] == "server_stopped"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
