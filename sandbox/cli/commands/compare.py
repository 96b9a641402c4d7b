"""sandbox compare BATCH_DIR...: the comparison table of `sandbox run` over earlier batches."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sandbox.cli.arguments import check_writable
from sandbox.cli.exits import declare_exits
from sandbox.evaluation.shown import shown


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare the agents of earlier batch folders (ranked, with 95%% intervals)",
        description="Rank the agents of one or more batch folders as `sandbox run` does: qualified "
        "passes (as a rate when the agents ran different numbers of attempts), then mean cost, then "
        "median time, with a 95% Wilson interval on each pass rate and "
        "the agent x workflow matrix. With several folders every agent is labelled by its batch, so "
        "the same agent in two batches stays two rows. Only the workflows every folder ran are "
        "compared (a historical pack counts as its workflow's reviewed pack); the others are named.",
    )
    p.add_argument(
        "folders",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="batch folders (or folders given to `sandbox run --out`: their newest batch)",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the leaderboard page here (links to the attempts are relative to FILE's folder)",
    )
    p.set_defaults(func=command)
    declare_exits(
        p,
        {
            0: "compared; every attempt a qualified pass",
            1: "compared; some attempt is not",
            2: "a folder holds no attempt or cannot be listed or entered; --html names a file that cannot be "
            "written (a folder, a read-only one)",
            3: "--html could not be written (a full disk)",
        },
    )


def command(args: argparse.Namespace) -> int:
    from sandbox.runner.batch import selected_attempts
    from sandbox.runner.compare import comparison, credits_of, format_comparison, scored_as, workflow
    from sandbox.runner.folders import ClosedFolder, read_summary, resolve_batch
    from sandbox.runner.prices import DEFAULT_CREDITS_PER_DOLLAR

    if args.html:
        try:  # before comparing, so that nothing is printed for a page that cannot be written
            check_writable(args.html, "--html")
        except ValueError as exc:
            print(f"sandbox compare: {exc}", file=sys.stderr)
            return 2
    batches: list[tuple[Path, list]] = []
    rates: set[float] = set()  # the batches' credits per dollar (their --prices files')
    for given in args.folders:
        try:
            folder, note = resolve_batch(given)
            if note:
                print(f"sandbox compare: {shown(note, inline=True)}", file=sys.stderr)
            if any(folder.resolve() == seen.resolve() for seen, _ in batches):
                print(f"sandbox compare: {given} is {folder} again: its attempts are counted once", file=sys.stderr)
                continue
            data = read_summary(folder)
        except (FileNotFoundError, NotADirectoryError, ClosedFolder) as exc:
            print(f"sandbox compare: {exc}", file=sys.stderr)
            return 2
        if data.get("note"):
            print(f"sandbox compare: {shown(data['note'], inline=True)}", file=sys.stderr)
        batches.append((folder, data["attempts"]))
        if any(a.get("cost_usd") is not None for a in data["attempts"]):  # a batch that priced nothing has no rate
            rates.add(credits_of(data))
    # Compared by workflow: a historical pack and its reviewed pack are one workflow, scored alike.
    historical = scored_as({str(a["pack"]) for _, attempts in batches for a in attempts})
    workflow_sets = [  # of the attempts in an agent's row: not a damaged one naming no agent, nor its batch
        {workflow(str(a["pack"]), historical) for a in attempts if a["agent"] is not None} for _, attempts in batches
    ]
    common = set.intersection(*workflow_sets)
    left_out = sorted(set.union(*workflow_sets) - common)
    if not common:
        ran = "; ".join(
            f"{f} ran {', '.join(sorted(w)) or 'nothing'}" for (f, _), w in zip(batches, workflow_sets, strict=True)
        )
        said = shown(ran, inline=True)
        print(f"sandbox compare: nothing to compare: no workflow was run in every folder ({said})", file=sys.stderr)
        return 2
    if left_out:
        said = f"not every folder ran {', '.join(left_out)}: compared on {', '.join(sorted(common))}"
        said = shown(said, inline=True)  # pack names from the folders' files, on one line as the other notes
        print(f"sandbox compare: {said}", file=sys.stderr)
    labels = batch_labels([folder for folder, _ in batches])
    attempts = [
        {**a, "agent": f"{a['agent']} @ {label}" if len(batches) > 1 and a["agent"] is not None else a["agent"]}
        for label, (_, found) in zip(labels, batches, strict=True)
        for a in found
        if workflow(str(a["pack"]), historical) in common
    ]
    rate = rates.pop() if len(rates) == 1 else DEFAULT_CREDITS_PER_DOLLAR
    if rates:
        print(
            f"sandbox compare: the batches priced credits differently; credits here are {rate:g} a dollar",
            file=sys.stderr,
        )
    result = comparison(attempts, rate)
    if args.html:
        from sandbox.runner.files import write_file
        from sandbox.runner.report import render_leaderboard

        try:
            args.html.parent.mkdir(parents=True, exist_ok=True)
            write_file(args.html, render_leaderboard(result, attempts, args.html.parent))
        except OSError as exc:  # a full disk
            print(f"sandbox compare: cannot write {args.html}: {exc.strerror or exc}", file=sys.stderr)
            return 3
        print(f"leaderboard: {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps({"batches": [str(f) for f, _ in batches], "left_out": left_out, **result}, indent=2))
    else:
        print(format_comparison(result))
    counted = selected_attempts(attempts)
    return 0 if counted and all(a["qualified_pass"] for a in counted) else 1


def batch_labels(folders: list[Path]) -> list[str]:
    """Each folder's label: its name, or as many of its last path parts as make every label
    differ (two copies of one batch, ``a/x/B`` and ``b/x/B``, are ``a/x/B`` and ``b/x/B``)."""
    parts = [folder.resolve().parts for folder in folders]
    for depth in range(1, max(len(p) for p in parts) + 1):
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
    return [str(folder.resolve()) for folder in folders]  # only the same folder twice, which is skipped
