"""The ``sandbox`` command line. Each subcommand lives in ``sandbox/cli/commands/<name>.py``
(a module with ``register(subparsers)``): adding a command is adding a module.

The top layer: the only place that wires packs to policies and transports together."""

from __future__ import annotations

import argparse
import importlib
import io
import os
import pkgutil
import sys

from sandbox import __version__
from sandbox.cli import commands
from sandbox.cli.exits import CLOSED_PIPE
from toolserver.errors import ChromiumUnavailable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sandbox", description="Local browser-tool emulation sandbox.")
    parser.add_argument("--version", action="version", version=f"sandbox {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"sandbox.cli.commands.{info.name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    if isinstance(sys.stdout, io.TextIOWrapper):  # a lone surrogate (an answer's "\\ud800") printed escaped
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        parser = build_parser()
    except KeyboardInterrupt:  # Ctrl-C while the commands load
        return 130
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except ChromiumUnavailable as exc:  # no browser to serve or run with
        print(f"sandbox {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a command that does not stop on Ctrl-C in its own way
        print(f"sandbox {args.command}: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output has gone: say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE


if __name__ == "__main__":
    sys.exit(main())
