"""sandbox results DIR: reprint the summary table of an earlier batch (and why attempts failed)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sandbox.cli.exits import declare_exits
from sandbox.evaluation.shown import json_shown, shown


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "results",
        help="reprint the summary table of an earlier batch folder",
        description="Reprint the tables `sandbox run` printed for a batch folder (its "
        "summary.json, or rebuilt from the attempt folders of an older batch): the comparison too, "
        "for several agents, prices or replaced attempts. "
        "Exit 0 when every attempt qualified, 1 otherwise, 2 when the folder "
        "holds no attempt or cannot be listed or entered.",
    )
    p.add_argument(
        "folder",
        type=Path,
        metavar="DIR",
        help="a batch folder (runs/<time>-<agent>), one attempt folder, or the folder given to "
        "`sandbox run --out` (its newest batch)",
    )
    p.add_argument("--json", action="store_true", help="print summary.json's data")
    p.set_defaults(func=command)
    declare_exits(
        p,
        {
            0: "every attempt a qualified pass",
            1: "some attempt is not",
            2: "no attempt in the folder, or a folder it cannot list or enter",
        },
    )


def command(args: argparse.Namespace) -> int:
    from sandbox.runner.batch import format_reasons, format_table, selected_attempts
    from sandbox.runner.compare import comparison, credits_of, format_comparison
    from sandbox.runner.folders import ClosedFolder, read_summary, resolve_batch

    try:
        folder, note = resolve_batch(args.folder)
        if note:
            print(f"sandbox results: {shown(note, inline=True)}", file=sys.stderr)
        data = read_summary(folder)
    except (FileNotFoundError, NotADirectoryError, ClosedFolder) as exc:
        print(f"sandbox results: {exc}", file=sys.stderr)
        return 2
    if data.get("note"):
        print(f"sandbox results: {shown(data['note'], inline=True)}", file=sys.stderr)
    if not data["attempts"]:
        print(f"sandbox results: {folder}'s summary.json lists no attempt (stopped before any ended)", file=sys.stderr)
        return 2
    if args.json:
        print(json_shown(json.dumps(data, indent=2, ensure_ascii=False)))
    else:
        print(format_table(data["summary"]))
        attempts = data["attempts"]
        compared = (
            len({a["agent"] for a in attempts} - {None}) > 1  # None: a damaged attempt in no agent's row
            or any(a.get("cost_usd") is not None for a in attempts)
            or any(a.get("selection", "selected") != "selected" for a in attempts)
        )
        if compared:  # as `sandbox run` printed it
            print("\n" + format_comparison(comparison(attempts, credits_of(data))))
        reasons = format_reasons(attempts)
        if reasons:
            print(reasons)
    counted = selected_attempts(data["attempts"])  # as sandbox run counts
    return 0 if counted and all(a["qualified_pass"] for a in counted) else 1
