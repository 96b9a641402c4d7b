"""Benchmarks (not timed tests): the sandbox side by side with raw Playwright and Playwright MCP,
server overhead, scoring speed, runner throughput, the scale curve and Ray. Prints every
measurement and ratio with its goal, then PASS or FAIL for each goal (``bench_goals``), stored
with the run (``"goals"``, ``"passed"``); exits 1 when a goal was missed.

    .venv/bin/python scripts/bench.py [--quick] [--skip-runner] [--skip-mcp]
        [--only ops|mcp|workflow|cpu|throughput|report|scale|ray] [--json FILE] [--publish]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_goals import OPS_GOALS, WORKFLOW_GOALS, WORKFLOW_PLAYWRIGHT_MCP_GOAL, goals_of, verdict_lines  # noqa: E402
from bench_ray import print_ray, ray_side  # noqa: E402
from bench_scale import LEVELS, print_scale, scale_side  # noqa: E402

from sandbox import MIRRORS_DIR  # noqa: E402
from toolserver.contract.mirrors import MirrorStore, reconstructed, write_entry  # noqa: E402

EXHIBIT = "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/d769262dex101.htm"
FORM = "https://sarah27h.github.io/simple-multi-step-form/"
BENCH_PAGE = "https://bench.sandbox.example/button"
TINY = "https://bench.sandbox.example/tiny"
TINY_NEXT = "https://bench.sandbox.example/tiny-next"
TINY_HTML = (
    b"<!doctype html><title>Tiny</title><h1>Tiny</h1><label>Name <input name=n></label>"
    b'<button onclick="this.dataset.n=(+this.dataset.n||0)+1">Press</button><a href=/tiny-next>next</a>'
)


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def bench_mirror() -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    write_entry(
        root / "bench.sandbox.example",
        BENCH_PAGE,
        b'<!doctype html><title>Bench</title><button onclick="this.dataset.n=(+this.dataset.n||0)+1">Press</button>',
        "text/html; charset=utf-8",
        reconstructed("benchmark page"),
        body_path="button.html",
    )
    for url, name in ((TINY, "tiny.html"), (TINY_NEXT, "tiny-next.html")):
        write_entry(
            root / "bench.sandbox.example",
            url,
            TINY_HTML,
            "text/html; charset=utf-8",
            reconstructed("benchmark page"),
            body_path=name,
        )
    return root


# A plain Playwright script's Chromium: Playwright's own flags, and only the dead proxy beside them,
# so that nothing a bench does can reach the network.
OFFLINE_ONLY_ARGS = ["--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]


class RawPlaywright:
    """The same work done with Playwright directly: context + page + mirror route + goto. Its
    Chromium runs the sandbox's flags (like for like: what the sandbox's own code costs), or with
    ``plain`` Playwright's own (what a Playwright script costs, the features the sandbox turns off on)."""

    def __init__(self, store: MirrorStore, plain: bool = False, chromium: str | None = None) -> None:
        self.store, self.plain, self.chromium = store, plain, chromium

    async def start(self) -> None:
        from playwright.async_api import async_playwright

        from toolserver.browser.chromium import chromium_launch_args, resolve_chromium

        self._pw = await async_playwright().start()
        self.browser = await self._pw.chromium.launch(
            executable_path=resolve_chromium(self.chromium, None),
            headless=True,
            args=OFFLINE_ONLY_ARGS if self.plain else chromium_launch_args(),
        )

    async def route(self, route, request) -> None:
        found = self.store.lookup(request.url)
        if found is None:
            await route.abort()
        else:
            await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    async def start_to_first_page(self, url: str = FORM) -> float:
        t = time.perf_counter()
        context = await self.browser.new_context(service_workers="block")
        await context.route("**/*", self.route)
        page = await context.new_page()
        await page.goto(url, wait_until="load")
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
    from toolserver.config import ServerConfig
    from toolserver.transports.http import create_app
    from toolserver.transports.serving import AppRunner

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
            reply = await run.call(
                "browser_start_session",
                {"provider": "kernel", "site_key": f"bench-{i}", "clear_cookies": False, "url": FORM},
            )
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
        runner = AppRunner(create_app(sandbox=sandbox), access_log=None)  # as sandbox serve runs it
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
    return {
        "raw_start_p50_ms": p50(raw_starts),
        "sandbox_start_p50_ms": p50(starts),
        "raw_snapshot_p50_ms": p50(raw_snaps),
        "sandbox_snapshot_p50_ms": p50(snaps),
        "snapshot_chars": size,
        "snapshot_page_bytes": page_bytes,
        "click_inproc_p50_ms": p50(inproc),
        "click_http_p50_ms": p50(over_http),
        "server_overhead_p50_ms": p50(over_http) - p50(inproc),
    }


async def ops_side(rounds: int) -> dict:
    """Issue 14, goal 1: each tool on a tiny page against the same Playwright call, alternating
    (p50 of ``rounds``): click, type, navigate, snapshot, and session start to first page."""
    from toolserver.api import Sandbox
    from toolserver.config import ServerConfig

    root = bench_mirror()
    raw = RawPlaywright(MirrorStore.load(root))
    await raw.start()
    times: dict[str, list[float]] = {}

    def timed(name: str, began: float) -> None:
        times.setdefault(name, []).append(time.perf_counter() - began)

    async with Sandbox(ServerConfig(mirror_roots=(root,))) as sandbox:
        context = await raw.browser.new_context(service_workers="block")
        await context.route("**/*", raw.route)
        page = await context.new_page()
        await page.goto(TINY, wait_until="load")
        run = sandbox.create_run()
        await run.call("browser_start_session", {"provider": "kernel", "url": TINY})

        async def refs() -> dict[str, str]:
            text = (await run.call("browser_snapshot", {}))["result"]["snapshot"]
            return {"button": ref_in(text, "button", "Press"), "input": ref_in(text, "textbox", "Name")}

        found = await refs()

        async def pair(name: str, raw_op, sandbox_op, first_raw: bool) -> None:
            """One raw and one sandbox operation; which goes first alternates by round, so neither
            always follows the other's leftover work (both pages share a renderer: one site)."""
            for is_raw in (True, False) if first_raw else (False, True):
                t = time.perf_counter()
                reply = await (raw_op() if is_raw else sandbox_op())
                timed(f"raw {name}" if is_raw else name, t)
                if not is_raw:
                    assert reply["ok"], reply

        for i in range(rounds):
            first_raw = i % 2 == 0
            await pair(
                "click",
                lambda: page.locator("button").click(),
                lambda: run.call("browser_click", {"ref": found["button"]}),
                first_raw,
            )
            await pair(
                "type",
                lambda: page.locator("input").fill(f"name {i}"),
                lambda: run.call("browser_type", {"ref": found["input"], "text": f"name {i}"}),
                first_raw,
            )
            await pair(
                "snapshot", lambda: page.aria_snapshot(mode="ai"), lambda: run.call("browser_snapshot", {}), first_raw
            )
            target = TINY_NEXT if i % 2 == 0 else TINY
            await pair(
                "navigate",
                lambda: page.goto(target, wait_until="load"),
                lambda: run.call("browser_navigate", {"url": target}),
                first_raw,
            )
            found = await refs()
            starting = sandbox.create_run()

            async def raw_start():
                times.setdefault("raw start", []).append(await raw.start_to_first_page(TINY))

            async def sandbox_start():
                t = time.perf_counter()
                reply = await starting.call("browser_start_session", {"provider": "kernel", "url": TINY})
                timed("start", t)
                assert reply["ok"], reply

            for op in (raw_start, sandbox_start) if first_raw else (sandbox_start, raw_start):
                await op()
            await starting.close()
        await run.close()
        await context.close()
    await raw.stop()
    out: dict = {"ops_rounds": rounds}
    for op, goal in OPS_GOALS.items():
        mine, theirs = p50(times[op]), p50(times[f"raw {op}"])
        out[f"ops_{op}"] = {"sandbox_p50_ms": mine, "raw_p50_ms": theirs, "ratio": mine / theirs, "goal": goal}
    return out


def print_ops(results: dict) -> None:
    for op in ("click", "type", "navigate", "snapshot", "start"):
        row = results[f"ops_{op}"]
        print(
            f"{op} on a tiny page (p50 of {results['ops_rounds']}): "
            f"sandbox {row['sandbox_p50_ms']:.1f} ms, raw Playwright "
            f"{row['raw_p50_ms']:.1f} ms, ratio {row['ratio']:.2f} (goal <= {row['goal']})"
        )


async def runner_side(repeats: int) -> dict:
    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.batch import run_batch
    from sandbox.runner.wiring import app_sandbox

    reviewed = [p for p in list_packs() if p.card.reviewed]
    out = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    async with app_sandbox() as sandbox:
        t = time.perf_counter()
        six = await run_batch(reviewed, "reference", out=out, progress=False, sandbox=sandbox)
        six_s = time.perf_counter() - t
        t = time.perf_counter()
        serial = await run_batch(
            reviewed, "reference", repeats=repeats, concurrency=1, out=out, progress=False, sandbox=sandbox
        )
        serial_s = time.perf_counter() - t
        t = time.perf_counter()
        parallel = await run_batch(
            reviewed, "reference", repeats=repeats, concurrency=5, out=out, progress=False, sandbox=sandbox
        )
        parallel_s = time.perf_counter() - t
    return {
        "reviewed_packs": len(reviewed),
        "six_reference_s": six_s,
        "six_all_passed": all(o.qualified_pass for o in six),
        "batch_attempts": len(serial),
        "concurrency1_s": serial_s,
        "concurrency5_s": parallel_s,
        "concurrency_ratio": parallel_s / serial_s,
        "batch_all_passed": all(o.qualified_pass for o in serial + parallel),
    }


async def throughput_side(repeats: int, think: float, concurrency: int) -> dict:
    """Agents that think (``think:SECONDS:reference``: a model's latency before each call):
    the same attempts serial, at ``concurrency`` locally, and at ``concurrency`` on a local Ray.
    The Ray batch starts its worker and that worker's browser inside its time; so does a second
    local batch at ``concurrency`` (its own browser, as ``sandbox run`` starts one), the fair
    comparison for it."""
    import ray

    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.batch import run_batch, summarise
    from sandbox.runner.wiring import app_sandbox

    reviewed = [p for p in list_packs() if p.card.reviewed]
    out = Path(tempfile.mkdtemp(prefix="bench-think-"))
    agent = f"think:{think:g}:reference"
    timings, tables = {}, {}
    async with app_sandbox() as sandbox:
        for label, kwargs in (("serial", {"concurrency": 1}), ("local", {"concurrency": concurrency})):
            t = time.perf_counter()
            outcomes = await run_batch(
                reviewed, agent, repeats=repeats, out=out, progress=False, sandbox=sandbox, **kwargs
            )
            timings[label], tables[label] = time.perf_counter() - t, outcomes
    t = time.perf_counter()
    tables["local_cold"] = await run_batch(
        reviewed, agent, repeats=repeats, concurrency=concurrency, out=out, progress=False
    )
    timings["local_cold"] = time.perf_counter() - t
    from toolserver.capacity import cores

    ray.init(address="local", num_cpus=cores(), include_dashboard=False, log_to_driver=False)
    try:
        t = time.perf_counter()
        tables["ray"] = await run_batch(
            reviewed, agent, repeats=repeats, concurrency=concurrency, out=out, progress=False, executor="ray"
        )
        timings["ray"] = time.perf_counter() - t
    finally:
        ray.shutdown()

    def verdicts(outcomes):
        return [
            {k: v for k, v in row.items() if k in ("pack", "qualified_passes", "error_free_passes", "statuses")}
            for row in summarise(outcomes)
        ]

    return {
        "think_attempts": len(tables["serial"]),
        "think_s": think,
        "think_concurrency": concurrency,
        "think_serial_s": timings["serial"],
        "think_local_s": timings["local"],
        "think_ray_s": timings["ray"],
        "think_local_ratio": timings["local"] / timings["serial"],
        "think_ray_overhead": timings["ray"] / timings["local"] - 1,
        "think_local_cold_s": timings["local_cold"],
        "think_ray_overhead_cold": timings["ray"] / timings["local_cold"] - 1,
        "think_same_verdicts": verdicts(tables["serial"])
        == verdicts(tables["local"])
        == verdicts(tables["ray"])
        == verdicts(tables["local_cold"]),
    }


def tree_cpu_seconds(pid: int | None = None) -> float:
    """utime+stime of a process and all its live descendants (reaped ones are in their parents'
    cutime/cstime), from /proc: this process, the Playwright drivers and every Chromium."""
    from toolserver.capacity import process_tree

    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for member in process_tree(pid or os.getpid()):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    return total


async def quiet_tree_cpu_seconds(limit_s: float = 3.0, step_s: float = 0.1) -> float:
    """``tree_cpu_seconds`` once the tree has gone quiet (at most one 10 ms tick in a ``step_s``,
    or ``limit_s`` at most): what a side started (a closed context's renderer ending, the
    browser's spare renderer) is counted in its own window, not in the next one's."""
    last, deadline = tree_cpu_seconds(), time.monotonic() + limit_s
    while time.monotonic() < deadline:
        await asyncio.sleep(step_s)
        now = tree_cpu_seconds()
        if now - last <= 0.011:
            return now
        last = now
    return last


async def raw_replay(raw: RawPlaywright, calls: list) -> None:
    """The recorded calls done with Playwright directly (context, route, goto, aria snapshot,
    aria-ref locators): the same pages and the same actions, without the sandbox around them."""
    from toolserver import pdf

    context = pages = page = None

    async def route(route, request):
        found = raw.store.lookup(request.url)
        if found is None:
            return await route.abort()
        kind = {k.lower(): v for k, v in found.headers.items()}.get("content-type", "")
        if request.is_navigation_request() and kind.startswith("application/pdf"):
            name = request.url.rsplit("/", 1)[-1]
            return await route.fulfill(
                content_type="text/html", body=pdf.viewer_html(name, pdf.extract_pages(found.body))
            )
        await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    for call in calls:
        args = call.args if isinstance(call.args, dict) else {}
        if call.tool == "browser_start_session":
            context = await raw.browser.new_context(service_workers="block")
            await context.route("**/*", route)
            page = await context.new_page()
            pages = [page]
            if args.get("url"):
                await page.goto(args["url"], wait_until="load")
        elif call.tool == "browser_snapshot":
            await page.aria_snapshot(mode="ai")
        elif call.tool in ("browser_navigate", "browser_open_tab"):
            if call.tool == "browser_open_tab":
                page = await context.new_page()
                pages.append(page)
            await page.goto(args["url"], wait_until="load")
        elif call.tool == "browser_click":
            await page.locator(f"aria-ref={args.get('ref') or args.get('target')}").click()
        elif call.tool == "browser_type":
            locator = page.locator(f"aria-ref={args.get('ref') or args.get('target')}")
            await locator.fill(args["text"])
            if args.get("submit"):
                await locator.press("Enter")
        elif call.tool == "browser_scroll":
            await page.evaluate("window.scrollBy(0, 600)")
        elif call.tool == "browser_close" and context is not None:
            await context.close()
            context = None
    if context is not None:
        await context.close()


async def cpu_side(rounds: int) -> dict:
    """CPU-seconds per reference attempt of each reviewed pack (the recorded calls replayed
    through the sandbox) against the same calls done with raw Playwright: a plain Playwright
    script (Playwright's own Chromium flags: the goal's baseline) and the same script on the
    sandbox's flags (like for like). Each window ends once the process tree has gone quiet, so the
    work a side leaves behind is its own; the order of the sides rotates every round. A ratio is of
    the totals over all rounds: /proc counts in 10 ms ticks per process, and a median of such
    counts jumps by whole ticks."""
    from sandbox import FIXTURES_DIR
    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.wiring import app_sandbox
    from toolserver.contract.trace import read_trace

    store = MirrorStore.load(MIRRORS_DIR)
    raws = {"raw": RawPlaywright(store, plain=True), "raw_same_flags": RawPlaywright(store)}
    for raw in raws.values():
        await raw.start()
    out: dict = {}
    async with app_sandbox() as sandbox:

        async def replay_in_sandbox(pack, calls) -> None:
            run = sandbox.create_run(policy=pack.policy())
            for call in calls:
                await run.call(call.tool, call.args)
            await run.close()

        for pack in [p for p in list_packs() if p.card.reviewed]:
            calls = read_trace(FIXTURES_DIR / "attempts" / "reference" / pack.id / "trace.jsonl").calls
            sides = ["sandbox", *raws]
            seconds: dict[str, list[float]] = {side: [] for side in sides}
            for number in range(rounds):
                for side in sides[number % len(sides) :] + sides[: number % len(sides)]:
                    before = await quiet_tree_cpu_seconds()
                    if side == "sandbox":
                        await replay_in_sandbox(pack, calls)
                    else:
                        await raw_replay(raws[side], calls)
                    seconds[side].append(await quiet_tree_cpu_seconds() - before)
            box = seconds["sandbox"]
            row: dict = {
                "calls": len(calls),
                "rounds": rounds,
                "sandbox_cpu_s": statistics.mean(box),
                "sandbox_cpu_s_rounds": box,
            }
            for side in raws:
                plain = seconds[side]
                row.update(
                    {
                        f"{side}_cpu_s": statistics.mean(plain),
                        f"{side}_cpu_s_rounds": plain,
                        f"ratio{side[3:]}": sum(box) / max(sum(plain), 1e-9),
                        f"ratio{side[3:]}_of_medians": statistics.median(box) / max(statistics.median(plain), 1e-9),
                    }
                )
            out[pack.id] = row
    for raw in raws.values():
        await raw.stop()
    return out


# --- MCP: transport overhead per call ------------------------------------------------------------
NODE_BIN = Path(__file__).resolve().parent.parent / "node" / "node_modules" / ".bin"
SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))


def call_text(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def ref_in(text: str, role: str, name: str) -> str:
    import re

    found = re.search(rf'{role} "{re.escape(name)}[^"]*"[^\n]*\[ref=(\w+)\]', text)
    if not found:
        raise RuntimeError(f"no {role} {name!r} in:\n{text[:2000]}")
    return found.group(1)


async def alternate(inproc_call, mcp_client, tool: str, args: dict, count: int) -> tuple[list[float], list[float]]:
    """The same call in-process and over MCP, alternately, so machine noise hits both alike."""
    inproc, over_mcp = [], []
    for _ in range(count):
        t = time.perf_counter()
        await inproc_call(tool, args)
        inproc.append(time.perf_counter() - t)
        t = time.perf_counter()
        await mcp_client.call_tool(tool, args)
        over_mcp.append(time.perf_counter() - t)
    return inproc, over_mcp


def outside_dispatcher(round_trips: list[float], trace_text: str, tool: str) -> list[float]:
    """Each call's round trip minus its time inside the dispatcher (from the run's trace): what
    the way in and out costs, call by call, whatever the browser took."""
    from toolserver.contract.trace import parse_trace

    inside = [c.t_end - c.t_start for c in parse_trace(trace_text).calls if c.tool == tool][-len(round_trips) :]
    return [rtt - own for rtt, own in zip(round_trips, inside, strict=True)]


async def mcp_overhead(clicks: int) -> dict:
    """MCP overhead per call vs in-process, over streamable HTTP and over stdio (a spawned
    ``sandbox mcp``), calls alternating with in-process ones: a click on the bench page (its cost
    outside the dispatcher, from the traces, and the plain p50 difference) and a call the
    dispatcher answers at once (a snapshot before any session)."""
    from aiohttp import web
    from mcp import Client, StdioServerParameters

    from toolserver.api import Sandbox
    from toolserver.config import ServerConfig
    from toolserver.transports.http import create_app
    from toolserver.transports.serving import AppRunner

    mirror = bench_mirror()
    start = {"provider": "kernel", "url": BENCH_PAGE}
    out: dict = {}
    async with Sandbox(ServerConfig(mirror_roots=(mirror, MIRRORS_DIR))) as sandbox:
        runner = AppRunner(create_app(sandbox=sandbox), access_log=None)  # as sandbox serve runs it
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/mcp"
        stdio_traces = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
        params = StdioServerParameters(
            command=SANDBOX_CLI,
            args=["mcp", "--mirrors", str(mirror), "--mirrors", str(MIRRORS_DIR), "--trace-dir", str(stdio_traces)],
        )
        for transport, server in (("http", url), ("stdio", params)):
            async with Client(server) as client:
                run_id = client.session.initialize_result.meta["sandbox/run_id"]
                idle = sandbox.create_run()
                inproc, mcp = await alternate(idle.call, client, "browser_snapshot", {}, clicks)  # no_session at once
                out[f"mcp_{transport}_trivial_overhead_p50_ms"] = p50(mcp) - p50(inproc)
                await client.call_tool("browser_start_session", start)
                run = sandbox.create_run()
                await run.call("browser_start_session", start)
                ref = ref_in((await run.call("browser_snapshot", {}))["result"]["snapshot"], "button", "Press")
                ref_mcp = ref_in(call_text(await client.call_tool("browser_snapshot", {})), "button", "Press")
                assert ref == ref_mcp, (ref, ref_mcp)
                inproc, mcp = await alternate(run.call, client, "browser_click", {"ref": ref}, clicks)
                await run.close()
                await idle.close()
                if transport == "http":
                    mcp_trace = sandbox.runs[run_id].trace.text()
            if transport == "stdio":
                mcp_trace = (stdio_traces / f"{run_id}.jsonl").read_text()
            out[f"mcp_{transport}_click_inproc_p50_ms"] = p50(inproc)
            out[f"mcp_{transport}_click_p50_ms"] = p50(mcp)
            out[f"mcp_{transport}_click_p50_difference_ms"] = p50(mcp) - p50(inproc)
            out[f"mcp_{transport}_click_outside_inproc_p50_ms"] = p50(
                outside_dispatcher(inproc, run.trace.text(), "browser_click")
            )
            out[f"mcp_{transport}_click_outside_mcp_p50_ms"] = p50(outside_dispatcher(mcp, mcp_trace, "browser_click"))
            out[f"mcp_{transport}_click_overhead_p50_ms"] = (
                out[f"mcp_{transport}_click_outside_mcp_p50_ms"] - out[f"mcp_{transport}_click_outside_inproc_p50_ms"]
            )
        await runner.cleanup()
    return out


async def serve_form_on_loopback():
    """The mirrored demo form (page, script, style) from a plain static server on 127.0.0.1."""
    from urllib.parse import urlsplit

    from aiohttp import web

    store = MirrorStore.load(MIRRORS_DIR)
    app = web.Application()
    for url in store.urls():
        if url.startswith(FORM):
            found = store.lookup(url)
            body, headers = found.body, dict(found.headers)

            async def serve(request, body=body, headers=headers):
                return web.Response(body=body, headers=headers)

            app.router.add_get(urlsplit(url).path, serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}{urlsplit(FORM).path}"


def print_mcp(results: dict) -> None:
    for transport, name in (("http", "streamable HTTP"), ("stdio", "stdio")):
        r = {
            key.removeprefix(f"mcp_{transport}_"): value
            for key, value in results.items()
            if key.startswith(f"mcp_{transport}_")
        }
        print(
            f"MCP over {name} vs in-process, calls alternating (p50): "
            f"browser_click overhead {r['click_overhead_p50_ms']:.2f} ms "
            f"(outside the dispatcher: MCP {r['click_outside_mcp_p50_ms']:.2f} ms, "
            f"in-process {r['click_outside_inproc_p50_ms']:.2f} ms; "
            f"round trips {r['click_p50_ms']:.1f} vs {r['click_inproc_p50_ms']:.1f} ms, difference "
            f"{r['click_p50_difference_ms']:.2f} ms); "
            f"an at-once call (no_session): overhead {r['trivial_overhead_p50_ms']:.2f} ms "
            f"(goal <= 5 ms)"
        )


# --- issue 32: the form's first step through each way in, step by step ---------------------------

FORM_STEPS = ("navigate", "snapshot", "type Name", "type Email", "snapshot", "click Next", "snapshot")
WORKFLOW_SIDES = ("raw", "inproc", "stdio", "http", "playwright_mcp")


async def timed_form_round(call, url: str) -> list[float]:
    """The form's first step (navigate, snapshot, type Name, type Email, snapshot, click Next,
    snapshot) through ``call(tool, **args) -> text``: each step's seconds. Every ref comes from
    the side's own latest snapshot."""
    times: list[float] = []

    async def step(tool: str, **args) -> str:
        t = time.perf_counter()
        text = await call(tool, **args)
        times.append(time.perf_counter() - t)
        return text

    await step("browser_navigate", url=url)
    text = await step("browser_snapshot")
    await step("browser_type", element="Name", target=ref_in(text, "textbox", "Name"), text="João Muñoz")
    await step("browser_type", element="Email", target=ref_in(text, "textbox", "Email"), text="joao.munoz@example.com")
    text = await step("browser_snapshot")
    await step("browser_click", element="Next", target=ref_in(text, "button", "Next"))
    text = await step("browser_snapshot")
    assert "Step 2 of 3" in text, text[:1000]
    return times


async def raw_form_caller():
    """The same steps as a plain Playwright script does them (its own browser with the sandbox's
    Chromium flags, the mirrored form from a route): goto, the AI-mode aria snapshot, fill and
    click by its aria refs."""
    raw = RawPlaywright(MirrorStore.load(MIRRORS_DIR))
    await raw.start()
    return raw, await raw_context_caller(raw)


async def raw_context_caller(raw: RawPlaywright):
    """A new context of ``raw``'s browser with one page, and the calls done on it as Playwright does them."""
    context = await raw.browser.new_context(service_workers="block")
    await context.route("**/*", raw.route)
    page = await context.new_page()

    async def call(tool: str, **args) -> str:
        if tool == "browser_navigate":
            await page.goto(args["url"], wait_until="load")
        elif tool == "browser_snapshot":
            return await page.aria_snapshot(mode="ai")
        elif tool == "browser_type":
            await page.locator(f"aria-ref={args['target']}").fill(args["text"])
        elif tool == "browser_click":
            await page.locator(f"aria-ref={args['target']}").click()
        return ""

    return call


async def inproc_caller(sandbox):
    """The Python API (``Sandbox.create_run``, ``Run.call``) in this process: the sandbox's own
    work per call, with no transport."""
    run = sandbox.create_run()

    async def call(tool: str, **args) -> str:
        reply = await run.call(tool, args)
        if not reply["ok"]:
            raise RuntimeError(f"{tool}: {reply['error']}")
        return reply["result"].get("snapshot", "")

    await call("browser_start_session", provider="kernel", url=FORM)
    return call


def mcp_caller(client):
    async def call(tool: str, **args) -> str:
        result = await client.call_tool(tool, args)
        if result.is_error:
            raise RuntimeError(f"{tool}: {call_text(result)[:500]}")
        return call_text(result)

    return call


async def http_caller(session, base: str):
    """The HTTP API of a spawned ``sandbox serve``: a run, its session on the form."""
    async with session.post(f"{base}/runs", json={}) as reply:
        run_id = (await reply.json())["run_id"]

    async def call(tool: str, **args) -> str:
        async with session.post(f"{base}/runs/{run_id}/tools/{tool}", json=args) as reply:
            body = await reply.json()
        if not body["ok"]:
            raise RuntimeError(f"{tool}: {body['error']}")
        return body["result"].get("snapshot", "")

    await call("browser_start_session", provider="kernel", url=FORM)
    return call


async def spawned_serve(traces: str):
    """``sandbox serve`` on a free loopback port, as a user starts it; its base URL once healthy."""
    import socket

    import aiohttp

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI,
        "serve",
        "--port",
        str(port),
        "--trace-dir",
        traces,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as probe_session:
        for _ in range(300):
            try:
                async with probe_session.get(f"{base}/health") as reply:
                    if reply.status == 200:
                        return process, base
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    process.kill()
    raise RuntimeError("sandbox serve did not answer /health within 30 s")


SCRATCH: list[str] = []  # the workflow's folders for traces and outputs: removed at its end


def scratch(prefix: str) -> str:
    SCRATCH.append(tempfile.mkdtemp(prefix=prefix))
    return SCRATCH[-1]


async def workflow_side(rounds: int) -> dict:
    """The form's first step through five ways in, rounds rotating which goes first: raw
    Playwright and the sandbox's Python API (both in this process), ``sandbox mcp`` over stdio
    and ``sandbox serve``'s HTTP API (each a spawned process, as users run them), and Playwright
    MCP over stdio (its defaults, Debian chromium, the same form from a loopback static server).
    Each step's p50 per side, and each round's p50 against raw Playwright's."""
    import aiohttp
    from mcp import Client, StdioServerParameters

    from toolserver.api import Sandbox
    from toolserver.config import ServerConfig

    playwright_mcp = NODE_BIN / "playwright-mcp"
    if not playwright_mcp.exists():
        raise SystemExit(f"{playwright_mcp} is missing: run `make node`")
    static, loopback_form = await serve_form_on_loopback()
    root_flags = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium refuses its sandbox as root
    theirs = StdioServerParameters(
        command=str(playwright_mcp),
        args=[
            "--executable-path",
            "/usr/bin/chromium",
            "--headless",
            "--isolated",
            "--output-dir",
            scratch("bench-playwright-mcp-"),
            *root_flags,
        ],
    )
    ours = StdioServerParameters(command=SANDBOX_CLI, args=["mcp", "--trace-dir", scratch("bench-mcp-")])
    serve, base = await spawned_serve(scratch("bench-serve-"))
    raw, raw_call = await raw_form_caller()
    try:
        async with (
            Client(ours) as stdio,
            Client(theirs) as playwright,
            aiohttp.ClientSession() as session,
            Sandbox(ServerConfig(mirror_roots=(MIRRORS_DIR,))) as sandbox,
        ):
            await stdio.call_tool("browser_start_session", {"provider": "kernel", "url": FORM})
            sides = {
                "raw": (raw_call, FORM),
                "inproc": (await inproc_caller(sandbox), FORM),
                "stdio": (mcp_caller(stdio), FORM),
                "http": (await http_caller(session, base), FORM),
                "playwright_mcp": (mcp_caller(playwright), loopback_form),
            }
            for call, url in sides.values():  # warm-up: first pages, first snapshots
                await timed_form_round(call, url)
            steps: dict[str, list[list[float]]] = {side: [] for side in sides}
            names = list(sides)
            for i in range(rounds):
                for side in names[i % len(names) :] + names[: i % len(names)]:
                    steps[side].append(await timed_form_round(*sides[side]))
    finally:
        serve.terminate()
        await serve.wait()
        for folder in SCRATCH:
            shutil.rmtree(folder, ignore_errors=True)
        await raw.stop()
        await static.cleanup()
    out: dict = {"workflow_rounds": rounds, "workflow_steps": list(FORM_STEPS)}
    for side, rounds_of in steps.items():
        out[f"workflow_{side}_round_p50_ms"] = p50([sum(one) for one in rounds_of])
        for index in range(len(FORM_STEPS)):
            out[f"workflow_{side}_step{index}_p50_ms"] = p50([one[index] for one in rounds_of])
    for side, goal in WORKFLOW_GOALS.items():
        out[f"workflow_{side}_ratio"] = out[f"workflow_{side}_round_p50_ms"] / out["workflow_raw_round_p50_ms"]
        out[f"workflow_{side}_goal"] = goal
    out["workflow_inproc_ratio"] = out["workflow_inproc_round_p50_ms"] / out["workflow_raw_round_p50_ms"]
    out["workflow_playwright_mcp_ratio"] = (
        out["workflow_stdio_round_p50_ms"] / out["workflow_playwright_mcp_round_p50_ms"]
    )
    out["workflow_playwright_mcp_goal"] = WORKFLOW_PLAYWRIGHT_MCP_GOAL
    return out


def print_workflow(results: dict) -> None:
    sides = WORKFLOW_SIDES
    print(f"the form's first step, p50 over {results['workflow_rounds']} rotating rounds (ms; ratio to raw Playwright)")
    print(f"{'step':<12}" + "".join(f"{side:>22}" for side in sides))
    for index, name in enumerate((*FORM_STEPS, "round")):
        key = "round" if name == "round" else f"step{index}"
        raw = results[f"workflow_raw_{key}_p50_ms"]
        cells = [f"{raw:.1f}"] + [
            f"{results[f'workflow_{side}_{key}_p50_ms']:.1f} ({results[f'workflow_{side}_{key}_p50_ms'] / raw:.2f}x)"
            for side in sides[1:]
        ]
        print(f"{name:<12}" + "".join(f"{cell:>22}" for cell in cells))
    print(f"the Python API (no transport) vs raw Playwright: {results['workflow_inproc_ratio']:.2f}x")
    for side in WORKFLOW_GOALS:
        print(
            f"{side} vs raw Playwright: {results[f'workflow_{side}_ratio']:.2f}x "
            f"(goal <= {results[f'workflow_{side}_goal']:.2f}x)"
        )
    print(
        f"stdio vs Playwright MCP: {results['workflow_playwright_mcp_ratio']:.2f}x "
        f"(goal <= {results['workflow_playwright_mcp_goal']:.2f}x)"
    )


# --- issue 11: screenshots and reports ------------------------------------------------------

REPORT_THINK_S = 0.2  # a fast model's latency per call


async def report_side(rounds: int) -> dict:
    """Attempt wall time with nothing kept against ``--screenshots all`` (the goal): ``rounds``
    pairs, back to back, the order flipping every pair, so machine noise hits both alike; then
    the Playwright trace, alone and with screenshots, against nothing kept (half as many rounds,
    the same flipping); the same with and without screenshots by an agent that thinks before
    each call; and the time to write the HTML reports of one batch."""
    from sandbox.evaluation.packs import list_packs
    from sandbox.runner.batch import run_batch
    from sandbox.runner.report import write_reports
    from sandbox.runner.wiring import app_sandbox

    reviewed = [p for p in list_packs() if p.card.reviewed]
    out = Path(tempfile.mkdtemp(prefix="bench-report-"))
    modes = {"none": ("none", False), "all": ("all", False), "trace": ("none", True), "all+trace": ("all", True)}
    seconds: dict[str, list[float]] = {}

    async def timed(key: str, agent: str, mode: str, number: int) -> list:
        screenshots, trace = modes[mode]
        outcomes = await run_batch(
            reviewed,
            agent,
            out=out / f"{key}-{number}",
            progress=False,
            sandbox=sandbox,
            screenshots=screenshots,
            playwright_trace=trace,
        )
        assert all(o.qualified_pass for o in outcomes), [o.reason for o in outcomes if not o.qualified_pass]
        seconds.setdefault(key, []).append(sum(o.elapsed_seconds or 0.0 for o in outcomes))
        return outcomes

    async with app_sandbox() as sandbox:
        await run_batch(
            reviewed,
            "reference",
            out=out / "warm-up",
            progress=False,
            sandbox=sandbox,
            screenshots="none",
            playwright_trace=False,
        )
        for number in range(rounds):
            for mode in ("none", "all") if number % 2 == 0 else ("all", "none"):
                outcomes = await timed(mode, "reference", mode, number)
        batch = outcomes[0].directory.parent
        for number in range(max(2, rounds // 2)):
            order = ("none", "trace", "all+trace") if number % 2 == 0 else ("all+trace", "trace", "none")
            for mode in order:
                await timed(f"{mode}-with-trace", "reference", mode, number)
        # The same attempts by an agent that waits before each call, as a model does: the
        # capture after a call then overlaps the wait instead of delaying the next call.
        thinking = f"think:{REPORT_THINK_S:g}:reference"
        for number in range(max(2, rounds // 4)):
            for mode in ("none", "all") if number % 2 == 0 else ("all", "none"):
                await timed(f"think_{mode}", thinking, mode, number)
    t = time.perf_counter()
    written = write_reports(batch)
    report_s = time.perf_counter() - t
    median = {key: statistics.median(values) for key, values in seconds.items()}
    paired = statistics.median(a / n for a, n in zip(seconds["all"], seconds["none"], strict=True))
    return {
        "report_rounds": rounds,
        "report_attempts_per_round": len(reviewed),
        "attempts_s_none": median["none"],
        "attempts_s_all": median["all"],
        "overhead_all": median["all"] / median["none"] - 1,
        "overhead_all_paired": paired - 1,
        "attempts_s_all_pairs": seconds["all"],
        "attempts_s_none_pairs": seconds["none"],
        **{f"attempts_s_{mode}": median[f"{mode}-with-trace"] for mode in ("trace", "all+trace")},
        "attempts_s_none_trace_block": median["none-with-trace"],
        **{
            f"overhead_{mode}": median[f"{mode}-with-trace"] / median["none-with-trace"] - 1
            for mode in ("trace", "all+trace")
        },
        "report_think_s": REPORT_THINK_S,
        "attempts_s_think_all": median["think_all"],
        "attempts_s_think_none": median["think_none"],
        "overhead_think_all": median["think_all"] / median["think_none"] - 1,
        "report_write_s": report_s,
        "report_files": len(written),
    }


def print_report_side(results: dict) -> None:
    print(
        f"{results['report_attempts_per_round']} reference attempts, summed wall time, median of "
        f"{results['report_rounds']} back-to-back pairs: nothing kept {results['attempts_s_none']:.2f} s, "
        f"--screenshots all {results['attempts_s_all']:.2f} s, overhead {results['overhead_all'] * 100:+.1f} % "
        f"(median of the pairs' own ratios {results['overhead_all_paired'] * 100:+.1f} %; goal <= +15 %)"
    )
    print(
        f"  Playwright trace: {results['attempts_s_trace']:.2f} s, with --screenshots all "
        f"{results['attempts_s_all+trace']:.2f} s, against nothing kept {results['attempts_s_none_trace_block']:.2f} s "
        f"in the same rounds: {results['overhead_trace'] * 100:+.1f} %, {results['overhead_all+trace'] * 100:+.1f} %"
    )
    print(
        f"  the same attempts by an agent that thinks {results['report_think_s']:g} s before each call: "
        f"--screenshots all {results['attempts_s_think_all']:.2f} s vs {results['attempts_s_think_none']:.2f} s, "
        f"overhead {results['overhead_think_all'] * 100:+.1f} %"
    )
    print(f"HTML reports of one batch ({results['report_files']} files): {results['report_write_s']:.2f} s")


def machine() -> dict:
    """What the figures were measured on."""
    import platform
    import subprocess

    from toolserver.browser.chromium import resolve_chromium
    from toolserver.capacity import cores

    def first_line(path: str, prefix: str) -> str:
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            return ""
        return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(prefix)), "")

    chromium = resolve_chromium(None, None)
    try:
        version = subprocess.run([chromium, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        version = ""
    return {
        "cpu": first_line("/proc/cpuinfo", "model name"),
        "cores": os.cpu_count(),  # the machine's
        "usable_cores": cores(),  # this process's: its CPU affinity and cgroup limit, as the server counts them
        "memory_gib": round(int(first_line("/proc/meminfo", "MemTotal").split()[0]) / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "chromium": version,
        "chromium_path": chromium,
    }


def commit() -> str:
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}{'+changes' if dirty else ''}" if head else "unknown"


def finish(args: argparse.Namespace, section: str, results: dict) -> int:
    """Each goal's verdict printed, the run saved with them: 1 when a goal was missed."""
    goals = goals_of(results)
    for line in verdict_lines(goals):
        print(line)
    missed = [name for name, row in goals.items() if not row["met"]]
    print(
        f"{section}: {len(goals) - len(missed)} of {len(goals)} goals met"
        + (f", FAIL: {', '.join(missed)}" if missed else "")
    )
    save(args, section, results, goals)
    return 1 if missed else 0


def save(args: argparse.Namespace, section: str, results: dict, goals: dict) -> None:
    """The results with their goals' verdicts and what they were measured on, for --json and --publish."""
    if not (args.json or args.publish):
        return
    from datetime import UTC, datetime

    record = {
        "section": section,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "command": " ".join(["scripts/bench.py", *sys.argv[1:]]),
        "quick": args.quick,
        "note": args.note,
        "machine": machine(),
        "passed": all(row["met"] for row in goals.values()),
        "goals": goals,
        "results": results,
    }
    text = json.dumps(record, indent=2) + "\n"
    if args.json:
        args.json.write_text(text)
    if args.publish:
        name = publish(record, text, Path(__file__).resolve().parent.parent / "docs" / "benchmarks")
        print(f"published: docs/benchmarks/{name}")


def publish(record: dict, text: str, folder: Path) -> str:
    """Write ``text`` as a new file in ``folder``, named by the minute, section and commit; a second
    run within the minute gets ``-2`` (and so on), never the first one's file. Its name."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = f"{record['date'][:16].replace(':', '')}-{record['section']}-{record['commit'][:7]}"
    for number in itertools.count(1):
        name = f"{stamp}.json" if number == 1 else f"{stamp}-{number}.json"
        try:
            with open(folder / name, "x", encoding="utf-8") as out:
                out.write(text)
            return name
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--skip-runner", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here, with the date, machine and commit")
    parser.add_argument("--note", default="", help="what else the machine was doing, kept with the figures")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="also write them to docs/benchmarks/<time>-<section>-<commit>.json, the data the docs' "
        "benchmarks page is generated from (then: make docs-ref)",
    )
    parser.add_argument(
        "--only",
        choices=["ops", "mcp", "cpu", "throughput", "report", "workflow", "scale", "ray"],
        help="run one section only (ops: each tool vs the same Playwright call on a tiny page; "
        "mcp: MCP transport overhead per call; workflow: the form's first step through raw Playwright, "
        "the Python API, MCP stdio, the HTTP API and Playwright MCP; cpu: CPU-seconds per reference "
        "attempt vs raw Playwright; throughput: think-time agents serial vs concurrent vs Ray; "
        "report: screenshot cost, HTML reports; scale: think-time agents at concurrency 1-256; "
        "ray: a batch locally, on a cold and on a warm Ray pool)",
    )
    parser.add_argument("--skip-mcp", action="store_true")
    args = parser.parse_args()
    if args.only == "cpu":
        results = asyncio.run(cpu_side(rounds=3 if args.quick else 7))
        for pack_id, row in results.items():
            print(
                f"CPU per reference attempt, {pack_id} ({row['calls']} calls, mean of {row['rounds']}): sandbox "
                f"{row['sandbox_cpu_s']:.2f} s, raw Playwright {row['raw_cpu_s']:.2f} s, ratio {row['ratio']:.2f} "
                f"(goal <= 1.2; ratio of the medians {row['ratio_of_medians']:.2f}); raw Playwright on the sandbox's "
                f"Chromium flags {row['raw_same_flags_cpu_s']:.2f} s, ratio {row['ratio_same_flags']:.2f} "
                f"(of the medians {row['ratio_same_flags_of_medians']:.2f})"
            )
        return finish(args, "cpu", results)
    if args.only == "throughput":
        results = asyncio.run(throughput_side(repeats=1 if args.quick else 5, think=0.5, concurrency=8))
        print(
            f"{results['think_attempts']} attempts of an agent thinking {results['think_s']:g} s before each call: "
            f"serial {results['think_serial_s']:.1f} s, concurrency {results['think_concurrency']} "
            f"{results['think_local_s']:.1f} s (ratio {results['think_local_ratio']:.2f}, goal <= 0.3), "
            f"on a local Ray {results['think_ray_s']:.1f} s (overhead {results['think_ray_overhead_cold']:+.0%} vs "
            f"local with its own browser start as `sandbox run` does, "
            f"{results['think_local_cold_s']:.1f} s, goal <= +15%; "
            f"{results['think_ray_overhead']:+.0%} vs local on the bench's warm browser), "
            f"identical verdicts: {results['think_same_verdicts']}"
        )
        return finish(args, "throughput", results)
    n, rounds, clicks, repeats = (8, 5, 15, 2) if args.quick else (30, 20, 60, 5)
    workflow_rounds = 8 if args.quick else 12  # the issue asks for at least 8

    sections = {
        "ops": (lambda: ops_side(12 if args.quick else 40), print_ops),
        "mcp": (lambda: mcp_overhead(clicks), print_mcp),
        "report": (lambda: report_side(2 if args.quick else 12), print_report_side),
        "workflow": (lambda: workflow_side(workflow_rounds), print_workflow),
        "scale": (lambda: scale_side((1, 8, 32) if args.quick else LEVELS), print_scale),
        "ray": (lambda: ray_side(repeats=6 if args.quick else 12), print_ray),
    }
    if args.only in sections:
        measure, show = sections[args.only]
        results = asyncio.run(measure())
        show(results)
        return finish(args, args.only, results)

    from sandbox.evaluation.scoring import bench_scoring

    results: dict = {}
    results["scoring_240_s"] = min(bench_scoring(240) for _ in range(3))
    box = asyncio.run(side_by_side(n, rounds, clicks))
    results.update(box)
    results.update(asyncio.run(ops_side(12 if args.quick else 40)))
    results["start_ratio"] = box["sandbox_start_p50_ms"] / box["raw_start_p50_ms"]
    results["snapshot_ratio"] = box["sandbox_snapshot_p50_ms"] / box["raw_snapshot_p50_ms"]
    if not args.skip_runner:
        results.update(asyncio.run(runner_side(repeats)))
        results.update(asyncio.run(report_side(2 if args.quick else 12)))
    if not args.skip_mcp:
        results.update(asyncio.run(mcp_overhead(clicks)))
        results.update(asyncio.run(workflow_side(workflow_rounds)))

    print(
        f"session start -> first page (p50, warm browser): sandbox {box['sandbox_start_p50_ms']:.1f} ms, "
        f"raw Playwright {box['raw_start_p50_ms']:.1f} ms, ratio {results['start_ratio']:.2f} "
        "(goal <= 1.15, p50 <= 150 ms)"
    )
    print(
        f"snapshot of the {box['snapshot_page_bytes'] // 1024} KB exhibit (p50): "
        f"sandbox {box['sandbox_snapshot_p50_ms']:.1f} ms, "
        f"raw {box['raw_snapshot_p50_ms']:.1f} ms, ratio {results['snapshot_ratio']:.2f} (goal <= 1.10)"
    )
    print(
        f"click round-trip (p50): in-process {box['click_inproc_p50_ms']:.1f} ms, "
        f"HTTP {box['click_http_p50_ms']:.1f} ms, "
        f"server overhead {box['server_overhead_p50_ms']:.2f} ms (goal <= 5 ms)"
    )
    print_ops(results)
    print(f"scoring 240 synthetic attempts: {results['scoring_240_s']:.3f} s (goal < 0.5 s)")
    if not args.skip_runner:
        print(
            f"six reference attempts ({results['reviewed_packs']} reviewed packs): {results['six_reference_s']:.1f} s "
            f"(goal < 30 s), all passed: {results['six_all_passed']}"
        )
        print(
            f"{results['batch_attempts']} attempts: concurrency 1 {results['concurrency1_s']:.1f} s, concurrency 5 "
            f"{results['concurrency5_s']:.1f} s, ratio {results['concurrency_ratio']:.2f} (goal <= 0.6), "
            f"all passed: {results['batch_all_passed']}"
        )
        print_report_side(results)
    if not args.skip_mcp:
        print_mcp(results)
        print_workflow(results)
    return finish(args, "all", results)


if __name__ == "__main__":
    sys.exit(main())
