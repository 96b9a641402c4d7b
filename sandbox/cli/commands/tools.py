"""sandbox tools: print the tool definitions for an agent stack (MCP, OpenAI, Anthropic, JSON Schema)."""

from __future__ import annotations

import argparse
import json

from sandbox.cli.exits import declare_exits
from toolserver.formats import FORMATS


def register(subparsers) -> None:
    p = subparsers.add_parser("tools", help="print the tool definitions in an agent stack's format")
    p.add_argument(
        "--format",
        default="json-schema",
        choices=list(FORMATS),
        help="mcp: MCP Tool objects; openai: function tools; openai-strict: function tools under OpenAI's "
        "strict rules (strict: true; every property required, optional ones nullable); anthropic: "
        "Messages API tools; json-schema: the list_tools contract (default)",
    )
    p.add_argument(
        "--pack",
        help="check that the pack (an id or a pack folder's path) can be used; the tools and schemas "
        "are the same for every pack "
        "(a pack's allowed URLs are enforced by its runs, not by the schemas)",
    )
    p.set_defaults(func=command)
    declare_exits(p, {0: "printed", 2: "an unknown or unusable pack"})


def command(args: argparse.Namespace) -> int:
    from sandbox.cli.wiring import UnusablePack, pack_option
    from toolserver.formats import tool_definitions
    from toolserver.tools import default_registry

    try:
        pack_option("tools", args.pack)
    except UnusablePack:
        return 2
    print(json.dumps(tool_definitions(args.format, default_registry().schemas()), indent=2, ensure_ascii=False))
    return 0
