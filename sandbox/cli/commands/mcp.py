"""sandbox mcp: the tool contract over MCP on stdin/stdout (one connection = one run).

Nothing but MCP messages goes to stdout; logs go to stderr. When the client disconnects
(stdin closes) the run ends: sessions closed, trace finalised, exit status 0.

With ``--attach URL --name NAME`` no browser starts here: the connection drives the run called
NAME of the sandbox server at URL (started by the first connection that names it, joined by
the others, ended by that server), for clients that start a server process per tool call.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from sandbox.cli.arguments import check_folder_writable
from sandbox.cli.commands.serve import add_faults, add_timeouts
from sandbox.cli.exits import declare_exits


def register(subparsers) -> None:
    p = subparsers.add_parser("mcp", help="serve the tools over MCP on stdio (for Claude Code, Claude Desktop, ...)")
    p.add_argument(
        "--pack",
        help="the pack whose allowed URLs the run enforces: an id, or a pack folder's path (not with "
        "--attach, whose server knows its own packs); default: no allow-list",
    )
    p.add_argument(
        "--policy",
        choices=["enforce", "observe"],
        default=None,
        help="with --pack: refuse (enforce, default) or only record (observe) URL violations",
    )
    p.add_argument(
        "--block-state-changes",
        action="store_true",
        help="prevent state-changing actions instead of only recording them",
    )
    p.add_argument(
        "--trace-dir",
        type=Path,
        default=Path("runs/traces"),
        help="the run's JSONL trace goes here (default runs/traces)",
    )
    p.add_argument(
        "--mirrors", type=Path, action="append", help="mirror root (repeatable; default: the bundled mirrors/)"
    )
    p.add_argument(
        "--fallback-provider", help="emulate the service falling back to this provider when provider!='kernel'"
    )
    p.add_argument("--approvals", action="store_true", help="grant approvals (allows browser_close close_all=true)")
    add_timeouts(p)
    add_faults(p)
    attach = p.add_argument_group("attached to a running server (one run across many connections)")
    attach.add_argument(
        "--attach",
        metavar="URL",
        help="drive a named run of the sandbox server at URL (e.g. http://127.0.0.1:8765) instead of a "
        "browser of this process's own; needs --name",
    )
    attach.add_argument(
        "--name", help="with --attach: the run's name; every connection with the same name shares one run"
    )
    attach.add_argument("--token", help="with --attach: the server's bearer token (default: $SANDBOX_TOKEN)")
    p.set_defaults(func=command, server_defaults={option: p.get_default(option) for option in SERVER_OPTIONS})
    declare_exits(
        p,
        {
            0: "the client closed stdin, or SIGTERM, SIGINT or SIGHUP stopped the server (the run ended; attached: "
            "stdin closed, the connection ended, the run goes on)",
            2: "bad usage: an unknown or unusable pack, a mirror folder that does not exist, --policy without "
            "--pack, --attach without --name, a server option with --attach",
            3: "attached: the server could not be reached, refused the run, or went away",
        },
    )


# What the server at --attach URL was started with, not this connection: each refused with --attach.
SERVER_OPTIONS = (
    "policy",
    "block_state_changes",
    "trace_dir",
    "mirrors",
    "fallback_provider",
    "approvals",
    "timeout_action",
    "timeout_navigation",
    "faults",
    "faults_seed",
)


def attach(args: argparse.Namespace) -> int:
    """``--attach``: the server holds the browser, the mirrors and the policy."""
    from toolserver.transports.mcp_attach import AttachError, serve_attached

    if not args.name:
        print("sandbox mcp: --attach needs --name RUN_NAME (the run every connection shares)", file=sys.stderr)
        return 2
    given = [  # an option at its default is not given (--trace-dir runs/traces is the same either way)
        f"--{option.replace('_', '-')}"
        for option in SERVER_OPTIONS
        if getattr(args, option) != args.server_defaults[option]
    ]
    if given:
        print(
            f"sandbox mcp: {', '.join(given)} {'belong' if len(given) > 1 else 'belongs'} to the server at "
            f"{args.attach}, not to --attach",
            file=sys.stderr,
        )
        return 2
    token = args.token or os.environ.get("SANDBOX_TOKEN")
    for chatty in ("httpx2", "httpx", "mcp"):  # a line per HTTP request to the server: not news
        logging.getLogger(chatty).setLevel(logging.WARNING)
    try:
        asyncio.run(serve_attached(args.attach, name=args.name, pack=args.pack, token=token))
    except AttachError as exc:
        print(f"sandbox mcp: {exc}", file=sys.stderr)
        return 3
    return 0


def command(args: argparse.Namespace) -> int:
    from sandbox.cli.wiring import UnusablePack, pack_option
    from sandbox.runner.wiring import app_config, app_sandbox
    from toolserver.faults import parse_faults
    from toolserver.transports.mcp import serve_stdio

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.attach:
        return attach(args)
    if args.name or args.token:
        print("sandbox mcp: --name and --token go with --attach URL", file=sys.stderr)
        return 2
    if args.policy and not args.pack:
        print(
            f"sandbox mcp: --policy {args.policy} goes with --pack: without a pack there are no allowed URLs to "
            "enforce or observe",
            file=sys.stderr,
        )
        return 2
    kwargs = dict(
        trace_dir=args.trace_dir,
        fallback_provider=args.fallback_provider,
        approvals=args.approvals,
        block_state_changes=args.block_state_changes,
        policy=args.policy or "enforce",
        action_timeout_ms=args.timeout_action,
        navigation_timeout_ms=args.timeout_navigation,
    )
    if args.mirrors:
        kwargs["mirror_roots"] = tuple(args.mirrors)
    try:
        kwargs["faults"] = parse_faults(args.faults, args.faults_seed)
    except ValueError as exc:
        print(f"sandbox mcp: {exc}", file=sys.stderr)
        return 2
    try:
        pack = pack_option("mcp", args.pack)
    except UnusablePack:
        return 2

    try:
        config = app_config(**kwargs)
        check_folder_writable(args.trace_dir, "--trace-dir")
        sandbox = app_sandbox(config, pack=pack)  # reads the mirrors' manifests
    except ValueError as exc:  # a mirror folder that does not exist or a manifest that is not one, ...
        print(f"sandbox mcp: {exc}", file=sys.stderr)
        return 2
    pack_id = pack.card.pack_id if pack else None
    asyncio.run(serve_stdio(sandbox, pack=pack_id, mode=args.policy))  # starts and stops the sandbox
    return 0
