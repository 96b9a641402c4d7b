"""Soak and load figures for a long-lived `sandbox serve` (issue 12), measured, not asserted.

    .venv/bin/python scripts/soak.py [--only soak|load] [--runs 300] [--concurrent 20] [--pack bid-intake] [--json FILE]

Starts `sandbox serve` on a free loopback port (bundled mirrors, traces in a temporary
folder) and drives it over HTTP with a real workflow: the calls of the pack's recorded
reference attempt (fixtures/attempts/reference/<pack>/trace.jsonl), each run with its own
site key, ending with DELETE /runs/{id}.

- soak: N sequential runs; RSS of the server + Playwright driver + Chromium (the whole process
  tree, from /proc) after run 50 and after run N; the growth between them (goal ≤ 20 MB).
- load: K concurrent runs; 5xx answers (goal 0), calls sent vs call lines in each trace (goal:
  equal, every line strict JSON), renderer processes left after the runs end vs before (goal 0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolserver.capacity import process_tree  # noqa: E402
from toolserver.contract.trace import read_trace  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


HELPERS = (
    ("gpu", b"--type=gpu-process"),
    ("network", b"network.mojom.NetworkService"),
    ("storage", b"storage.mojom.StorageService"),
    ("zygote", b"--type=zygote"),
)


def tree_rss_mb(root: int) -> dict[str, float]:
    """RSS of the process tree in MB: the total, and by part (server, driver, browser, renderers,
    and Chromium's helpers: GPU process, network service, storage service, zygotes, other)."""
    parts: dict[str, float] = {
        "total": 0.0,
        "server": 0.0,
        "driver": 0.0,
        "browser": 0.0,
        "renderers": 0.0,
        "gpu": 0.0,
        "network": 0.0,
        "storage": 0.0,
        "zygote": 0.0,
        "other": 0.0,
    }
    for pid in process_tree(root):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0) / 1024
        if pid == root:
            part = "server"
        elif b"node" in cmdline.split(b"\0", 1)[0]:
            part = "driver"
        elif b"--type=renderer" in cmdline:
            part = "renderers"
        elif b"--type=" not in cmdline and b"chrom" in cmdline:
            part = "browser"
        else:  # Chromium's helpers (their command line is rewritten into one space-separated string)
            part = next((name for name, flag in HELPERS if flag in cmdline), "other")
        parts[part] += rss
        parts["total"] += rss
    return {name: round(value, 1) for name, value in parts.items()}


def renderers(root: int) -> int:
    count = 0
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            count += b"--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes()
    return count


def recorded_calls(pack: str) -> list[tuple[str, dict]]:
    trace = read_trace(ROOT / "fixtures" / "attempts" / "reference" / pack / "trace.jsonl")
    return [(call.tool, call.args if isinstance(call.args, dict) else {}) for call in trace.calls]


class Driver:
    def __init__(self, base: str, http: aiohttp.ClientSession, calls: list[tuple[str, dict]]) -> None:
        self.base, self.http, self.calls = base, http, calls
        self.statuses: list[int] = []
        self.mismatches: list[str] = []
        self.calls_ok = 0

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, str]:
        async with self.http.request(method, f"{self.base}{path}", json=body) as response:
            self.statuses.append(response.status)
            return response.status, await response.text()

    async def one_run(self, number: int, pack: str) -> None:
        _, text = await self.request("POST", "/runs", {"pack": pack})
        run_id = json.loads(text)["run_id"]
        for tool, args in self.calls:
            if tool == "browser_start_session":
                args = {**args, "site_key": f"soak-{os.getpid()}-{number}"}
            _, text = await self.request("POST", f"/runs/{run_id}/tools/{tool}", args)
            self.calls_ok += json.loads(text).get("ok") is True
        await self.request("DELETE", f"/runs/{run_id}")
        _, text = await self.request("GET", f"/runs/{run_id}/trace")
        lines = [
            json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            for line in text.split("\n")
            if line.strip()
        ]
        traced = sum(line["type"] == "call" for line in lines)
        if traced != len(self.calls) or lines[-1]["type"] != "run_end":
            self.mismatches.append(f"{run_id}: {len(self.calls)} calls sent, {traced} traced")

    @property
    def server_errors(self) -> int:
        return sum(status >= 500 for status in self.statuses)


async def soak(base: str, pid: int, calls, pack: str, runs: int) -> dict:
    async with aiohttp.ClientSession() as http:
        driver = Driver(base, http, calls)
        marks: dict[int, dict[str, float]] = {}
        started = time.monotonic()
        for number in range(1, runs + 1):
            await driver.one_run(number, pack)
            if number in (10, 50, 100, 200, runs):
                await asyncio.sleep(1.0)  # let closed contexts' renderers exit before measuring
                marks[number] = tree_rss_mb(pid)
                print(f"  soak: run {number}: process tree RSS (MB) {marks[number]}", flush=True)
        growth = {part: round(marks[runs][part] - marks[50][part], 1) for part in marks[runs]}
        return {
            "runs": runs,
            "calls_ok": driver.calls_ok,
            "rss_mb": marks,
            "growth_50_to_end_mb": growth,
            "seconds": round(time.monotonic() - started, 1),
            "requests": len(driver.statuses),
            "server_errors": driver.server_errors,
            "trace_mismatches": driver.mismatches,
        }


async def load(base: str, pid: int, calls, pack: str, concurrent: int) -> dict:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        driver = Driver(base, http, calls)
        await driver.one_run(0, pack)  # warm-up, so the baseline has the browser settled
        await asyncio.sleep(1.0)
        before = renderers(pid)
        peak = 0

        async def sample() -> None:  # shows the renderer count is real: it rises during the load
            nonlocal peak
            while True:
                peak = max(peak, renderers(pid))
                await asyncio.sleep(0.5)

        sampler = asyncio.ensure_future(sample())
        started = time.monotonic()
        await asyncio.gather(*(driver.one_run(number, pack) for number in range(1, concurrent + 1)))
        seconds = time.monotonic() - started
        sampler.cancel()
        await asyncio.sleep(2.0)
        return {
            "concurrent_runs": concurrent,
            "seconds": round(seconds, 1),
            "requests": len(driver.statuses),
            "calls_sent": concurrent * len(calls) + len(calls),
            "calls_ok": driver.calls_ok,
            "renderers_peak": peak,
            "server_errors": driver.server_errors,
            "trace_mismatches": driver.mismatches,
            "renderers_before": before,
            "renderers_after": renderers(pid),
        }


async def wait_healthy(base: str, server: subprocess.Popen) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            if server.poll() is not None:
                raise SystemExit("sandbox serve exited during start-up")
            try:
                async with http.get(f"{base}/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("sandbox serve never became healthy")


async def main_async(args) -> dict:
    calls = recorded_calls(args.pack)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    traces = tempfile.mkdtemp(prefix="soak-traces-")
    server = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "serve", "--port", str(port), "--trace-dir", traces],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results: dict = {"pack": args.pack, "calls_per_run": len(calls)}
    try:
        await wait_healthy(base, server)
        if args.only in (None, "load"):
            print(f"load: {args.concurrent} concurrent runs of {args.pack} ({len(calls)} calls each)", flush=True)
            results["load"] = await load(base, server.pid, calls, args.pack, args.concurrent)
            print(f"  {results['load']}", flush=True)
        if args.only in (None, "soak"):
            print(f"soak: {args.runs} sequential runs of {args.pack} ({len(calls)} calls each)", flush=True)
            results["soak"] = await soak(base, server.pid, calls, args.pack, args.runs)
            print(f"  {results['soak']}", flush=True)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["soak", "load"], help="run one part only")
    parser.add_argument("--runs", type=int, default=300, help="sequential runs of the soak (default 300; ≥ 51)")
    parser.add_argument("--concurrent", type=int, default=20, help="concurrent runs of the load (default 20)")
    parser.add_argument("--pack", default="bid-intake", help="whose recorded reference calls make one run")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.runs < 51:
        parser.error("--runs must be at least 51 (the growth is measured from run 50)")
    results = asyncio.run(main_async(args))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
