"""sandbox serve: the HTTP tool server."""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import os
import signal
import socket
import sys
from pathlib import Path

from sandbox.cli.arguments import check_folder_writable, whole_number
from sandbox.cli.exits import declare_exits
from sandbox.cli.wiring import UnusablePack, pack_option


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="run the HTTP tool server (127.0.0.1 by default)")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (not loopback: needs --token)")
    p.add_argument("--port", type=int, default=8765, help="the port to listen on")
    p.add_argument(
        "--trace-dir", type=Path, default=Path("runs/traces"), help="one JSONL trace per run (default runs/traces)"
    )
    p.add_argument(
        "--mirrors", type=Path, action="append", help="mirror root (repeatable; default: the bundled mirrors/)"
    )
    p.add_argument(
        "--pack",
        action="append",
        help="a pack folder of your own (its path; repeatable): runs name it by its id beside the bundled packs",
    )
    p.add_argument(
        "--fallback-provider", help="emulate the service falling back to this provider when provider!='kernel'"
    )
    p.add_argument("--approvals", action="store_true", help="grant approvals (allows browser_close close_all=true)")
    p.add_argument(
        "--policy",
        choices=["enforce", "observe"],
        default="enforce",
        help="for runs with a pack: refuse (enforce) or only record (observe) URL violations",
    )
    p.add_argument(
        "--block-state-changes",
        action="store_true",
        help="prevent state-changing actions instead of only recording them",
    )
    p.add_argument("--dialogs", choices=["dismiss", "accept"], default="dismiss", help="how page dialogs are answered")
    p.add_argument("--max-runs", type=int, default=64, help="live runs at once; POST /runs beyond it answers 429")
    p.add_argument(
        "--max-open-sessions",
        type=int,
        default=512,
        help="browser sessions open at once, all runs together; a start beyond it is refused (server_at_capacity)",
    )
    p.add_argument(
        "--max-sessions-per-core",
        type=int,
        default=24,
        metavar="N",
        help="browser sessions open at once per CPU core (the cap is the lower of this times the cores and "
        "--max-open-sessions); 0: not checked",
    )
    p.add_argument(
        "--min-free-memory-mb",
        type=int,
        default=512,
        metavar="MB",
        help="memory kept free: below it new runs (429) and sessions are refused (server_at_capacity); 0: not checked",
    )
    p.add_argument(
        "--min-free-tasks",
        type=int,
        default=128,
        metavar="N",
        help="processes and threads that may still start (pids cgroup, kernel limits, ulimit -u): below it new "
        "runs (429) and sessions are refused (server_at_capacity); 0: not checked",
    )
    p.add_argument(
        "--allowed-hosts",
        default="",
        metavar="NAMES",
        help="comma-separated Host names accepted beside loopback names ('*' accepts any)",
    )
    p.add_argument(
        "--token",
        default=os.environ.get("SANDBOX_TOKEN"),
        help="require 'Authorization: Bearer TOKEN' (default: SANDBOX_TOKEN; needed off loopback)",
    )
    p.add_argument(
        "--require-pack", action="store_true", help="refuse runs without a pack (they would have no allow-list)"
    )
    p.add_argument(
        "--screenshots",
        type=Path,
        metavar="DIR",
        help="keep a viewport PNG after each tool call in DIR/<run id>/<seq>.png (named in the trace)",
    )
    p.add_argument(
        "--playwright-traces",
        type=Path,
        metavar="DIR",
        help="save each session's Playwright trace in DIR/<run id>/playwright-trace.zip",
    )
    add_faults(p)
    add_timeouts(p)
    p.set_defaults(func=serve)
    declare_exits(
        p,
        {
            0: "stopped (Ctrl-C, SIGTERM or SIGHUP)",
            2: "cannot listen on the host or port, a mirror folder that does not exist, or bad usage",
        },
    )


def add_timeouts(p: argparse.ArgumentParser) -> None:
    """Playwright MCP's two timeout options, with the same names (milliseconds)."""
    p.add_argument(
        "--timeout-action",
        type=whole_number(1, "milliseconds", "ms"),
        default=5000,
        metavar="MS",
        help="bound on one action: click, type, reading the page (default 5000); a page that does "
        "not answer within it gives page_unresponsive",
    )
    p.add_argument(
        "--timeout-navigation",
        type=whole_number(1, "milliseconds", "ms"),
        default=15000,
        metavar="MS",
        help="bound on one navigation (default 15000)",
    )


def add_faults(p: argparse.ArgumentParser) -> None:
    """``--faults`` and ``--faults-seed`` (``toolserver.faults``): every run the server makes gets them."""
    p.add_argument(
        "--faults",
        metavar="SPEC",
        help="inject faults into every run, recorded in the trace: comma-separated KIND[:KEY=VALUE...], KIND one "
        "of session-refused[:p=P], session-dies[:after=N][:p=P], mirror-delay[:ms=M][:p=P], mirror-5xx[:p=P], "
        "browser-crash[:after=N][:p=P], model-429[:p=P], model-5xx[:p=P]",
    )
    p.add_argument("--faults-seed", type=int, default=0, help="the faults' seed: the same seed, the same faults")


def serve(args: argparse.Namespace) -> int:
    from sandbox.paths import MIRRORS_DIR
    from toolserver.config import ServerConfig
    from toolserver.faults import parse_faults

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    kwargs = dict(
        host=args.host,
        port=args.port,
        trace_dir=args.trace_dir,
        fallback_provider=args.fallback_provider,
        approvals=args.approvals,
        policy=args.policy,
        block_state_changes=args.block_state_changes,
        dialogs=args.dialogs,
        token=args.token,
        max_runs=args.max_runs,
        max_open_sessions=args.max_open_sessions,
        max_sessions_per_core=args.max_sessions_per_core,
        min_free_memory_mb=args.min_free_memory_mb,
        min_free_tasks=args.min_free_tasks,
        allowed_hosts=tuple(name.strip() for name in args.allowed_hosts.split(",") if name.strip()),
        require_pack=args.require_pack,
        screenshot_dir=args.screenshots,
        playwright_trace_dir=args.playwright_traces,
        action_timeout_ms=args.timeout_action,
        navigation_timeout_ms=args.timeout_navigation,
    )
    kwargs["mirror_roots"] = tuple(args.mirrors or (MIRRORS_DIR,))
    try:
        kwargs["faults"] = parse_faults(args.faults, args.faults_seed)
        config = ServerConfig(**kwargs)
        check_folder_writable(args.trace_dir, "--trace-dir")
        check_folder_writable(args.screenshots, "--screenshots")
        check_folder_writable(args.playwright_traces, "--playwright-traces")
    except ValueError as exc:
        print(f"sandbox serve: {exc}", file=sys.stderr)
        return 2
    problem = listen_problem(args.host, args.port)
    if problem:
        print(f"sandbox serve: {problem}", file=sys.stderr)
        return 2
    from sandbox.runner.wiring import PackTasks  # the server's modules load once the arguments are known to be good
    from toolserver.transports.http import create_app
    from toolserver.transports.serving import CannotListen, run_app

    try:
        tasks = PackTasks(*(pack_option("serve", pack) for pack in args.pack or ()))
    except UnusablePack:
        return 2
    try:
        app = create_app(config, policies=tasks.policy, tasks=tasks)  # reads the mirrors' manifests
    except ValueError as exc:  # a manifest that is not one
        print(f"sandbox serve: {exc}", file=sys.stderr)
        return 2
    app.on_startup.append(stop_on_sighup)

    def announce() -> None:  # once the browser is up and the port bound (a Chromium that cannot start: no line)
        print(f"sandbox tool server on http://{args.host}:{args.port} (traces in {args.trace_dir})", flush=True)

    try:
        run_app(app, host=args.host, port=args.port, ready=announce)  # stops on SIGINT and SIGTERM
    except CannotListen as exc:  # free when checked above, taken while the browser started
        print(f"sandbox serve: {bind_problem(args.host, args.port, exc.errno, exc.strerror)}", file=sys.stderr)
        return 2
    return 0


async def stop_on_sighup(app) -> None:
    """A hang-up (the terminal that started the server closed) stops it as SIGTERM does: every
    run ends and its trace gets its last line."""
    from aiohttp import web

    def stop() -> None:
        raise web.GracefulExit

    asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, stop)


def listen_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port (checked before Chromium starts), or None."""
    if not 0 < port < 65536:
        return f"--port {port} is not a TCP port: give a number from 1 to 65535"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"--host {host!r} is not an address of this machine ({exc.strerror}): use e.g. 127.0.0.1"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
        try:
            probe.bind(address)
        except OSError as exc:
            return bind_problem(host, port, exc.errno, exc.strerror)
    return None


def bind_problem(host: str, port: int, number: int | None, strerror: str | None) -> str:
    hint = (
        "choose another --port or stop the process using it"
        if number == errno.EADDRINUSE
        else "use an address of this machine (e.g. 127.0.0.1) and a port you may open"
    )
    return f"cannot listen on {host}:{port}: {strerror}; {hint}"
