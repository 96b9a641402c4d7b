"""Benchmarks (not timed tests): the sandbox side by side with raw Playwright, server overhead,
scoring speed, and runner throughput. Prints every measurement and ratio.

    .venv/bin/python scripts/bench.py [--quick] [--skip-runner] [--only report] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import MIRRORS_DIR  # noqa: E402
from sandbox.core.mirrors import MirrorStore, reconstructed, write_entry  # noqa: E402

EXHIBIT = "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/d769262dex101.htm"
FORM = "https://sarah27h.github.io/simple-multi-step-form/"
BENCH_PAGE = "https://bench.sandbox.example/button"


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def bench_mirror() -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    write_entry(root / "bench.sandbox.example", BENCH_PAGE,
                b"<!doctype html><title>Bench</title><button onclick=\"this.dataset.n=(+this.dataset.n||0)+1\">Press</button>",
                "text/html; charset=utf-8", reconstructed("benchmark page"), body_path="button.html")
    return root


class RawPlaywright:
    """The same work done with Playwright directly: context + page + mirror route + goto."""

    def __init__(self, store: MirrorStore) -> None:
        self.store = store

    async def start(self) -> None:
        from playwright.async_api import async_playwright

        from sandbox.core.chromium import chromium_launch_args, resolve_chromium

        self._pw = await async_playwright().start()
        self.browser = await self._pw.chromium.launch(executable_path=resolve_chromium(None, None), headless=True,
                                                      args=chromium_launch_args())

    async def route(self, route, request) -> None:
        found = self.store.lookup(request.url)
        if found is None:
            await route.abort()
        else:
            await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    async def start_to_first_page(self) -> float:
        t = time.perf_counter()
        context = await self.browser.new_context(service_workers="block")
        await context.route("**/*", self.route)
        page = await context.new_page()
        await page.goto(FORM, wait_until="load")
        elapsed = time.perf_counter() - t
        await context.close()
        return elapsed

    async def open_exhibit(self):
        context = await self.browser.new_context()
        await context.route("**/*", self.route)
        page = await context.new_page()
        await page.goto(EXHIBIT, wait_until="load")
        await page.aria_snapshot(mode="ai")
        return page

    async def stop(self) -> None:
        await self.browser.close()
        await self._pw.stop()


async def side_by_side(n: int, snapshot_rounds: int, clicks: int) -> dict:
    """Raw Playwright and the sandbox measured alternately, so machine noise hits both alike."""
    import aiohttp
    from aiohttp import web

    from toolserver.api import Sandbox
    from toolserver.transports.http import create_app
    from toolserver.config import ServerConfig

    raw = RawPlaywright(MirrorStore.load(MIRRORS_DIR))
    await raw.start()
    async with Sandbox(ServerConfig(mirror_roots=(bench_mirror(), MIRRORS_DIR))) as sandbox:
        warm = sandbox.create_run()
        await warm.call("browser_start_session", {"provider": "kernel", "url": FORM})
        await warm.close()
        await raw.start_to_first_page()
        raw_starts, starts = [], []
        for i in range(n):
            raw_starts.append(await raw.start_to_first_page())
            run = sandbox.create_run()
            t = time.perf_counter()
            reply = await run.call("browser_start_session", {"provider": "kernel", "site_key": f"bench-{i}",
                                                             "clear_cookies": False, "url": FORM})
            starts.append(time.perf_counter() - t)
            assert reply["ok"], reply
            await run.close()

        raw_page = await raw.open_exhibit()
        run = sandbox.create_run()
        await run.call("browser_start_session", {"provider": "kernel", "url": EXHIBIT})
        first = await run.call("browser_snapshot", {})
        size = len(first["result"]["snapshot"])
        page_bytes = len(sandbox.host.store.lookup(EXHIBIT).body)
        raw_snaps, snaps = [], []
        for _ in range(snapshot_rounds):
            t = time.perf_counter()
            await raw_page.aria_snapshot(mode="ai")
            raw_snaps.append(time.perf_counter() - t)
            t = time.perf_counter()
            await run.call("browser_snapshot", {})
            snaps.append(time.perf_counter() - t)
        await run.close()
        await raw.stop()

        # click round-trip: in-process vs through the HTTP server on loopback
        runner = web.AppRunner(create_app(sandbox=sandbox), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        run = sandbox.create_run()
        await run.call("browser_start_session", {"provider": "kernel", "url": BENCH_PAGE})
        snap = (await run.call("browser_snapshot", {}))["result"]["snapshot"]
        ref = snap.split("[ref=")[-1].split("]")[0]
        inproc, over_http = [], []
        async with aiohttp.ClientSession() as http:
            for _ in range(clicks):
                t = time.perf_counter()
                assert (await run.call("browser_click", {"ref": ref}))["ok"]
                inproc.append(time.perf_counter() - t)
                t = time.perf_counter()
                async with http.post(f"{base}/runs/{run.id}/tools/browser_click", json={"ref": ref}) as response:
                    assert (await response.json())["ok"]
                over_http.append(time.perf_counter() - t)
        await run.close()
        await runner.cleanup()
    return {"raw_start_p50_ms": p50(raw_starts), "sandbox_start_p50_ms": p50(starts),
            "raw_snapshot_p50_ms": p50(raw_snaps), "sandbox_snapshot_p50_ms": p50(snaps),
            "snapshot_chars": size, "snapshot_page_bytes": page_bytes,
            "click_inproc_p50_ms": p50(inproc), "click_http_p50_ms": p50(over_http),
            "server_overhead_p50_ms": p50(over_http) - p50(inproc)}


async def runner_side(repeats: int) -> dict:
    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.batch import run_batch
    from toolserver.api import Sandbox

    reviewed = [p for p in list_packs() if p.card.reviewed]
    out = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    async with Sandbox() as sandbox:
        t = time.perf_counter()
        six = await run_batch(reviewed, "reference", out=out, progress=False, sandbox=sandbox)
        six_s = time.perf_counter() - t
        t = time.perf_counter()
        serial = await run_batch(reviewed, "reference", repeats=repeats, concurrency=1, out=out, progress=False,
                                 sandbox=sandbox)
        serial_s = time.perf_counter() - t
        t = time.perf_counter()
        parallel = await run_batch(reviewed, "reference", repeats=repeats, concurrency=5, out=out, progress=False,
                                   sandbox=sandbox)
        parallel_s = time.perf_counter() - t
    return {"reviewed_packs": len(reviewed), "six_reference_s": six_s,
            "six_all_passed": all(o.qualified_pass for o in six),
            "batch_attempts": len(serial), "concurrency1_s": serial_s, "concurrency5_s": parallel_s,
            "concurrency_ratio": parallel_s / serial_s,
            "batch_all_passed": all(o.qualified_pass for o in serial + parallel)}


# --- issue 11: screenshots and reports ------------------------------------------------------

async def report_side(rounds: int) -> dict:
    """Attempt wall time with nothing kept, ``--screenshots all``, the Playwright trace, and both
    (the reviewed packs' reference attempts; the order of the modes flips every round so machine
    noise hits all), and the time to write the HTML reports of one batch."""
    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.batch import run_batch
    from sandbox.runner.report import write_reports
    from toolserver.api import Sandbox

    reviewed = [p for p in list_packs() if p.card.reviewed]
    out = Path(tempfile.mkdtemp(prefix="bench-report-"))
    modes = {"none": ("none", False), "all": ("all", False), "trace": ("none", True), "all+trace": ("all", True)}
    seconds: dict[str, list[float]] = {mode: [] for mode in modes}
    async with Sandbox() as sandbox:
        await run_batch(reviewed, "reference", out=out / "warm-up", progress=False, sandbox=sandbox, screenshots="none",
                        playwright_trace=False)
        for round_number in range(rounds):
            order = list(modes) if round_number % 2 == 0 else list(reversed(modes))
            for mode in order:
                screenshots, trace = modes[mode]
                outcomes = await run_batch(reviewed, "reference", out=out / mode, progress=False, sandbox=sandbox,
                                           screenshots=screenshots, playwright_trace=trace)
                assert all(o.qualified_pass for o in outcomes), [o.reason for o in outcomes if not o.qualified_pass]
                seconds[mode].append(sum(o.elapsed_seconds for o in outcomes))
        batch = outcomes[0].directory.parent
    t = time.perf_counter()
    written = write_reports(batch)
    report_s = time.perf_counter() - t
    median = {mode: statistics.median(values) for mode, values in seconds.items()}
    return {"report_rounds": rounds, "report_attempts_per_round": len(reviewed),
            **{f"attempts_s_{mode}": value for mode, value in median.items()},
            **{f"overhead_{mode}": median[mode] / median["none"] - 1 for mode in modes if mode != "none"},
            "report_write_s": report_s, "report_files": len(written)}


def print_report_side(results: dict) -> None:
    print(f"{results['report_attempts_per_round']} reference attempts, summed wall time, median of "
          f"{results['report_rounds']} rounds: nothing kept {results['attempts_s_none']:.2f} s")
    for mode, label in (("all", "--screenshots all"), ("trace", "Playwright trace"),
                        ("all+trace", "--screenshots all + Playwright trace")):
        print(f"  {label}: {results[f'attempts_s_{mode}']:.2f} s, overhead {results[f'overhead_{mode}'] * 100:+.1f} %"
              + (" (goal <= +15 %)" if mode == "all" else ""))
    print(f"HTML reports of one batch ({results['report_files']} files): {results['report_write_s']:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--skip-runner", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--only", choices=["report"], help="run one section: report (screenshot cost, HTML reports)")
    args = parser.parse_args()
    n, rounds, clicks, repeats = (8, 5, 15, 2) if args.quick else (30, 20, 60, 5)
    if args.only == "report":
        results = asyncio.run(report_side(2 if args.quick else 6))
        print_report_side(results)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
        return 0

    from sandbox.evaluation.scoring import bench_scoring

    results: dict = {}
    results["scoring_240_s"] = min(bench_scoring(240) for _ in range(3))
    box = asyncio.run(side_by_side(n, rounds, clicks))
    results.update(box)
    results["start_ratio"] = box["sandbox_start_p50_ms"] / box["raw_start_p50_ms"]
    results["snapshot_ratio"] = box["sandbox_snapshot_p50_ms"] / box["raw_snapshot_p50_ms"]
    if not args.skip_runner:
        results.update(asyncio.run(runner_side(repeats)))
        results.update(asyncio.run(report_side(2 if args.quick else 6)))

    print(f"session start -> first page (p50, warm browser): sandbox {box['sandbox_start_p50_ms']:.1f} ms, "
          f"raw Playwright {box['raw_start_p50_ms']:.1f} ms, ratio {results['start_ratio']:.2f} (goal <= 1.15, p50 <= 150 ms)")
    print(f"snapshot of the {box['snapshot_page_bytes'] // 1024} KB exhibit (p50): sandbox {box['sandbox_snapshot_p50_ms']:.1f} ms, "
          f"raw {box['raw_snapshot_p50_ms']:.1f} ms, ratio {results['snapshot_ratio']:.2f} (goal <= 1.10)")
    print(f"click round-trip (p50): in-process {box['click_inproc_p50_ms']:.1f} ms, HTTP {box['click_http_p50_ms']:.1f} ms, "
          f"server overhead {box['server_overhead_p50_ms']:.2f} ms (goal <= 5 ms)")
    print(f"scoring 240 synthetic attempts: {results['scoring_240_s']:.3f} s (goal < 0.5 s)")
    if not args.skip_runner:
        print(f"six reference attempts ({results['reviewed_packs']} reviewed packs): {results['six_reference_s']:.1f} s "
              f"(goal < 30 s), all passed: {results['six_all_passed']}")
        print(f"{results['batch_attempts']} attempts: concurrency 1 {results['concurrency1_s']:.1f} s, concurrency 5 "
              f"{results['concurrency5_s']:.1f} s, ratio {results['concurrency_ratio']:.2f} (goal <= 0.6), "
              f"all passed: {results['batch_all_passed']}")
        print_report_side(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
