"""The ``sandbox`` command line. Each subcommand lives in ``sandbox/cli/commands/<name>.py``
(a module with ``register(subparsers)``): adding a command is adding a module.

The top layer: the only place that wires packs to policies and transports together."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import io
import os
import pkgutil
import re
import resource
import sys

from sandbox import __version__
from sandbox.cli import commands
from sandbox.cli.arguments import group_usage
from sandbox.cli.exits import CLOSED_PIPE, STOPPED
from toolserver.errors import ChromiumUnavailable


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors also name the nearest option to each one given that it
    does not have (``--agnet``: "did you mean --agent?"), even where the error is another (the
    missing required ``--agent``)."""

    given: tuple[str, ...] = ()  # the command line being parsed

    def error(self, message: str):
        mistyped = re.search(r"invalid choice: '([^']*)'", message)
        if mistyped:  # a mistyped command: the options given are not this parser's, the nearest command is
            commands = [name for action in self._actions if action.choices for name in action.choices]
            near = difflib.get_close_matches(mistyped[1], commands, 1)
            message += f"; did you mean {near[0]}?" if near else ""
        else:
            message = "; ".join([message, *self.hints(message)])
        super().error(message)

    def hints(self, message: str) -> list[str]:
        known = [option for action in self._actions for option in action.option_strings if option.startswith("--")]
        hints = []
        for option in dict.fromkeys(word.split("=", 1)[0] for word in self.given if word.startswith("--")):
            if option == "--" or any(name.startswith(option) for name in known):  # one, or argparse's abbreviation
                continue
            near = difflib.get_close_matches(option, known, 1)
            if option in message:  # said as not recognised
                hints += [f"did you mean {near[0]}?"] if near else []
            else:
                hints.append(
                    f"{option} is not an option of {self.prog}" + (f" (did you mean {near[0]}?)" if near else "")
                )
        return hints


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost command's parser the command line chose (``sandbox mirror import-har``'s)."""
    while True:
        commands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, commands.dest, None) if commands is not None else None
        if commands is None or name not in commands.choices:
            return parser
        parser = commands.choices[name]


def build_parser() -> Parser:
    parser = Parser(prog="sandbox", description="Local browser-tool emulation sandbox.")
    parser.add_argument("--version", action="version", version=f"sandbox {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"sandbox.cli.commands.{info.name}").register(subparsers)
    return parser


OPEN_FILES_CEILING = 1 << 20  # Linux's default most open files a process may have (fs.nr_open)


def raise_open_file_limit() -> None:
    """Raise this process's soft limit on open files to its hard limit, as Go's runtime does: each
    session holds a few descriptors, and a shell's soft limit (1,024, or 256) made the server keep
    its reserve of free ones (``min_free_fds``) by refusing every run. Chromium inherits it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES_CEILING if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):  # a ceiling lower than the default: the soft limit stays
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def main(argv: list[str] | None = None) -> int:
    raise_open_file_limit()
    if isinstance(sys.stdout, io.TextIOWrapper):  # a lone surrogate (an answer's "\\ud800") printed escaped
        sys.stdout.reconfigure(errors="backslashreplace")
    given = tuple(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
    except KeyboardInterrupt:  # Ctrl-C while the commands load: one line, as once they run
        named = given[0] if given and not given[0].startswith("-") else None
        print(f"sandbox{f' {named}' if named else ''}: stopped (Ctrl-C)", file=sys.stderr)
        return STOPPED
    Parser.given = given
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the command's own usage, not the top level's
        chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):  # no command: as a command group without its subcommand
        return group_usage(parser)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except ChromiumUnavailable as exc:  # no browser to serve or run with
        print(f"sandbox {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a command that does not stop on Ctrl-C in its own way
        print(f"sandbox {args.command}: stopped (Ctrl-C)", file=sys.stderr)
        return STOPPED
    except BrokenPipeError:  # the reader of our output has gone: say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE


if __name__ == "__main__":
    sys.exit(main())
