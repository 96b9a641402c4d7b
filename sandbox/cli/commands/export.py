"""sandbox export --format inspect DIR: a batch folder (or one attempt folder) as an Inspect eval
log that ``inspect view`` opens and ``inspect_ai.log.read_eval_log`` reads; one sample per attempt.

Exit status: 0 written, 2 bad usage (no attempt in the folder, an output that is not .eval or
.json, inspect_ai not installed)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from sandbox.cli.exits import declare_exits
from sandbox.runner.folders import left_out_folders, left_out_note

FORMATS = ("inspect",)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a batch or attempt folder as another tool's log (an Inspect eval log)",
        description="Write the attempts of a batch folder (or one attempt folder) as an Inspect eval log: one "
        "sample per attempt with its prompt, its tool calls and results as events and messages, its answer, and "
        "its score and gates as an Inspect score. `inspect view` opens it; `sandbox replay` replays it.",
    )
    p.add_argument(
        "folder", type=Path, metavar="DIR", help="a batch folder (runs/<time>-<agent>) or one attempt folder"
    )
    p.add_argument("--format", choices=FORMATS, default="inspect", help="inspect: an Inspect eval log")
    p.add_argument(
        "-o",
        "--out",
        type=Path,
        metavar="FILE",
        help="the log file: .eval (Inspect's default format) or .json (default: DIR/inspect.eval)",
    )
    p.set_defaults(func=command)
    declare_exits(
        p,
        {
            0: "the log is written",
            2: "bad usage: no attempt in the folder, an output that is not .eval or .json, inspect_ai not installed",
            3: "the log could not be written (a full disk, a read-only folder)",
        },
    )


def command(args: argparse.Namespace) -> int:
    try:
        from sandbox.runner.folders import ClosedFolder
        from sandbox.runner.inspect_export import LogNotWritten, export_inspect_log
    except ImportError as exc:
        print(
            f"sandbox export: the Inspect format needs inspect_ai ({exc}): pip install -e '.[inspect]'",
            file=sys.stderr,
        )
        return 2
    try:
        target, log = export_inspect_log(args.folder, args.out)
    except (FileNotFoundError, NotADirectoryError, ValueError, ClosedFolder) as exc:
        print(f"sandbox export: {exc}", file=sys.stderr)
        return 2
    except LogNotWritten as exc:  # a full disk, a read-only folder
        print(f"sandbox export: {exc}", file=sys.stderr)
        return 3
    samples = log.samples or []
    folder = Path(args.folder)
    if folder.is_dir() and (left_out := left_out_folders(folder)):  # as `sandbox results` says it
        print(f"sandbox export: {left_out_note(left_out, folder)}", file=sys.stderr)
    print(
        f"{target}: {len(samples)} sample{'s' if len(samples) != 1 else ''} ({', '.join(str(s.id) for s in samples)})"
    )
    if target.suffix == ".eval":  # a .json log is listed only under a name starting with its time
        print(f"  inspect view --log-dir {shlex.quote(str(target.parent))}")
    return 0
