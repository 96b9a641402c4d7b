"""Exit codes, declared once per command: shown at the end of ``--help`` and rendered into the
generated command reference (``docs/reference/exit-codes.md``)."""

from __future__ import annotations

import argparse

# Every command exits 2 on a malformed command line (argparse's own rule).
BAD_COMMAND_LINE = "a malformed command line (argparse)"
# ... and 141 (128 + SIGPIPE, as a shell reports a tool a closed pipe ended) when the reader of its
# output has gone (`sandbox mirror list | head -1`), without a traceback.
CLOSED_PIPE = 141
# ... and 130 (128 + SIGINT) when Ctrl-C stops it, with one line ("sandbox COMMAND: stopped
# (Ctrl-C)"), unless it declares another meaning for Ctrl-C (serve and mcp stop cleanly with 0).
STOPPED = 130


def declare_exits(parser: argparse.ArgumentParser, codes: dict[int, str]) -> None:
    """Record what each exit status of this command means, and say it in ``--help``."""
    parser.set_defaults(exit_codes=codes)
    parser.epilog = "exit status: " + "; ".join(f"{code} {meaning}" for code, meaning in sorted(codes.items()))


def exit_codes(parser: argparse.ArgumentParser) -> dict[int, str]:
    """What ``declare_exits`` recorded for this parser (empty for a group of subcommands)."""
    codes = parser.get_default("exit_codes")
    return dict(codes) if codes else {}
