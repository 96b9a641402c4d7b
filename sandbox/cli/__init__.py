"""The ``sandbox`` command line. Each subcommand lives in ``sandbox/cli/commands/<name>.py``
(a module with ``register(subparsers)``): adding a command is adding a module.

The top layer: the only place that wires packs to policies and transports together."""

from __future__ import annotations

import argparse
import difflib
import importlib
import io
import os
import pkgutil
import sys
from collections.abc import Mapping

from sandbox import __version__
from sandbox.cli import commands
from sandbox.cli.exits import CLOSED_PIPE
from toolserver.errors import ChromiumUnavailable


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors also name each option given that it does not have, with
    the nearest it has (``--agnet`` -> ``--agent``): a mistyped required option was said only as
    "required: --agent"."""

    given: tuple[str, ...] = ()  # the command line being parsed
    commands: Mapping[str, argparse.ArgumentParser] = {}  # the top level's: each command's parser

    def error(self, message: str):
        known = [option for action in self._actions for option in action.option_strings]
        hints = []
        for option in dict.fromkeys(word.split("=", 1)[0] for word in self.given if word.startswith("--")):
            if option in known:
                continue
            near = difflib.get_close_matches(option, known, 1)
            if option not in message:  # the error is of something else (a required option missing)
                hints.append(
                    f"{option} is not an option of {self.prog}" + (f" (did you mean {near[0]}?)" if near else "")
                )
            elif near:
                hints.append(f"did you mean {near[0]}?")
        super().error("; ".join([message, *hints]))


def build_parser() -> Parser:
    parser = Parser(prog="sandbox", description="Local browser-tool emulation sandbox.")
    parser.add_argument("--version", action="version", version=f"sandbox {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"sandbox.cli.commands.{info.name}").register(subparsers)
    parser.commands = subparsers.choices
    return parser


def main(argv: list[str] | None = None) -> int:
    if isinstance(sys.stdout, io.TextIOWrapper):  # a lone surrogate (an answer's "\\ud800") printed escaped
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        parser = build_parser()
    except KeyboardInterrupt:  # Ctrl-C while the commands load
        return 130
    Parser.given = tuple(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the command's own usage, not the top level's
        parser.commands.get(args.command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
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
