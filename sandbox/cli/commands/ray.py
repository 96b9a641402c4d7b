"""``sandbox ray start|status|stop``: a warm pool of Ray workers (each with its own browser) that
outlives batches, so ``sandbox run --executor ray:ADDRESS`` pays no worker start
(``sandbox.runner.executors.ray_warm``). Ray is imported when a subcommand runs."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable

from sandbox.cli.arguments import group_usage, whole_number
from sandbox.cli.exits import declare_exits

NO_RAY = "no Ray at the address, or no pool of that name"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ray",
        help="start, show and stop a warm pool of Ray workers for `sandbox run --executor ray:ADDRESS`",
        description="A warm pool: detached Ray workers, each with its own browser, that a later "
        "`sandbox run --executor ray:ADDRESS` uses (the pool 'default'; ray:ADDRESS,pool=NAME for "
        "another), so its batch pays no worker start. Needs the [ray] extra and a running Ray "
        "(`ray start --head`).",
    )
    parser.set_defaults(func=lambda args: group_usage(parser))
    commands = parser.add_subparsers(dest="ray_command", metavar="SUBCOMMAND")

    def common(sub: argparse.ArgumentParser, every: bool = False) -> None:
        sub.add_argument(
            "--address",
            default="auto",
            help="the Ray cluster: HOST:6379 or auto (default: RAY_ADDRESS, or the Ray `ray start` runs on this "
            "machine) on a node of it, ray://HOST:10001 from outside it (Ray Client)",
        )
        sub.add_argument(
            "--name",
            type=pool_name,
            default=None if every else "default",
            metavar="POOL",
            help="the pool's name (default: every pool)" if every else "the pool's name (default: default)",
        )

    start = commands.add_parser(
        "start",
        help="start a warm pool",
        description="Start the pool's workers, each on its node with its own browser, and print them.",
    )
    common(start)
    start.add_argument(
        "--workers",
        type=whole_number(1),
        metavar="N",
        help="how many workers, kept (default: one per 4 CPUs of each node, at least one per node, following the "
        "nodes: a batch adds workers for nodes that joined, at its start and as it runs, and its start drops "
        "those of nodes gone)",
    )
    start.add_argument(
        "--attempts-per-worker",
        type=whole_number(1),
        default=8,
        metavar="K",
        help="attempts a worker runs at once (default 8); a batch's further attempts wait for a free one",
    )
    start.add_argument("--json", action="store_true", help="print the workers as JSON")
    start.set_defaults(func=run_start)
    declare_exits(
        start,
        {
            0: "started",
            2: "no Ray at the address, a pool of that name already runs, or a worker did not start",
            130: "stopped by Ctrl-C (143: by SIGTERM); the workers it started are ended and no pool is left",
        },
    )

    status = commands.add_parser(
        "status",
        help="show warm pools: workers, nodes, alive, attempts run",
        description="Print each worker of the pool (of every pool, without --name): its node, whether "
        "it is alive, the attempts it has run, is running and holds waiting for a free slot.",
    )
    common(status, every=True)
    status.add_argument("--json", action="store_true", help="print the workers as JSON")
    status.set_defaults(func=run_status)
    declare_exits(status, {0: "every worker alive", 1: "some worker is dead (the next batch replaces it)", 2: NO_RAY})

    stop = commands.add_parser("stop", help="stop a warm pool", description="End the pool's workers and its record.")
    common(stop)
    stop.set_defaults(func=run_stop)
    declare_exits(stop, {0: "stopped", 2: NO_RAY})


def pool_name(text: str) -> str:
    if not text or "/" in text:
        raise argparse.ArgumentTypeError(f"{text!r}: a pool's name is not empty and has no '/'")
    return text


def connected(command: str, args: argparse.Namespace, action: Callable[[], int]) -> int:
    """Run ``action`` joined to the Ray at ``--address``; a user's situation (no ray extra, no Ray
    there, no such pool) is one line on stderr and exit 2."""
    try:
        from sandbox.runner.executors.ray_pool import RayUnavailable, connect
    except ImportError:
        print(f"sandbox ray {command}: needs the [ray] extra: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    try:
        connect(args.address)
        return action()
    except RayUnavailable as exc:
        print(f"sandbox ray {command}: {exc}", file=sys.stderr)
        return 2


class Terminated(BaseException):
    """A SIGTERM to ``sandbox ray start``, raised where it runs so that the pool half started is
    stopped (``start_pool``), as for Ctrl-C."""


def terminated(number: int, frame: object) -> None:
    raise Terminated


def run_start(args: argparse.Namespace) -> int:
    def action() -> int:
        from sandbox.runner.executors.ray_warm import start_pool

        signal.signal(signal.SIGTERM, terminated)  # after connect(), which puts back the handler it found
        try:
            rows = asyncio.run(start_pool(args.name, args.workers, args.attempts_per_worker))
        except Terminated:
            print(f"sandbox ray start: stopped (SIGTERM); pool {args.name!r} is not started", file=sys.stderr)
            return 143
        except KeyboardInterrupt:
            print(f"sandbox ray start: stopped (Ctrl-C); pool {args.name!r} is not started", file=sys.stderr)
            return 130
        show(rows, args.json)
        return 0

    return connected("start", args, action)


def run_status(args: argparse.Namespace) -> int:
    async def gather() -> list[dict]:
        from sandbox.runner.executors.ray_warm import pool_names, pool_status

        rows = []
        for name in [args.name] if args.name else pool_names():
            rows += await pool_status(name)
        return rows

    def action() -> int:
        rows = asyncio.run(gather())
        show(rows, args.json)
        return 0 if all(row["alive"] for row in rows) else 1

    return connected("status", args, action)


def run_stop(args: argparse.Namespace) -> int:
    def action() -> int:
        from sandbox.runner.executors.ray_warm import stop_pool

        print(f"pool {args.name!r}: {stop_pool(args.name)} workers ended")
        return 0

    return connected("stop", args, action)


def at_once(row: dict) -> str:
    """The attempts a worker runs at once: those its pool asks, or fewer where its server holds fewer."""
    slots = row.get("slots")
    if isinstance(slots, int) and slots < row["capacity"]:
        return f"{slots} (of {row['capacity']} asked: {row.get('held_by') or 'its server holds no more'})"
    return str(row["capacity"])


def show(rows: list[dict], as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        print("no warm pool runs: start one with `sandbox ray start`")
        return
    from sandbox.runner.compare import table

    header = ["worker", "node", "alive", "attempts", "running", "waiting", "at once"]
    lines = [
        [
            row["worker"] + (" (its pool's record is lost)" if row.get("orphan") else ""),
            row.get("node", "-")[:12],
            "yes" if row["alive"] else "no",
            str(row.get("attempts", "-")),
            str(row.get("running", "-")),
            str(row.get("waiting", "-")),
            "-" if row.get("orphan") else at_once(row),
        ]
        for row in rows
    ]
    print(table(header, lines))
