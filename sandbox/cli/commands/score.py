"""``sandbox score`` and ``sandbox gates``: judge a finished attempt offline.

    sandbox score --pack PACK --output FILE [--trace FILE] [--elapsed SECONDS] [--site-key KEY] [--json]
    sandbox score ATTEMPT_DIR [...]      pack, output, trace, elapsed and site key from the folder
    sandbox gates --pack PACK --trace FILE [--elapsed SECONDS] [--site-key KEY] [--json]

Exit status: 0 qualified pass (gates: all passed), 1 not, 2 bad usage or unreadable file,
3 an evaluator (a gate, a rule, an evidence check) raised: status error, the attempt not judged.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sandbox.cli.exits import declare_exits
from sandbox.evaluation.gates import check_gates
from sandbox.evaluation.packs import Pack, PackError, load_pack
from sandbox.evaluation.shown import json_shown
from toolserver.contract.trace import Trace, parse_trace

EVALUATION_ERROR_EXIT = 3


class UsageError(Exception):
    pass


def register(subparsers: argparse._SubParsersAction) -> None:
    score = subparsers.add_parser(
        "score",
        help="score an attempt's output (and trace) against its pack",
        description="Score one attempt: output contract, fields, evidence and gates. "
        "Exit 0 for a qualified pass, 1 otherwise, 2 for bad usage, 3 when an evaluator raised.",
    )
    score.add_argument(
        "attempt",
        nargs="?",
        type=Path,
        metavar="ATTEMPT_DIR",
        help="an attempt folder: pack, output.txt, trace.jsonl, elapsed and site key are taken "
        "from it (options given explicitly win)",
    )
    score.add_argument("--pack", help="pack id (e.g. bid-intake) or pack folder (required without ATTEMPT_DIR)")
    score.add_argument(
        "--output", type=Path, help="a file holding the model's final output text (required without ATTEMPT_DIR)"
    )
    score.add_argument("--trace", type=Path, help="the attempt's trace (JSONL); without it gates are not measured")
    _common(score)
    score.set_defaults(func=run_score)
    declare_exits(
        score,
        {
            0: "a qualified pass",
            1: "not a qualified pass",
            2: "bad usage: an unreadable file, not an attempt folder",
            EVALUATION_ERROR_EXIT: "an evaluator raised (status error): not judged, the traceback is shown",
        },
    )

    gates = subparsers.add_parser(
        "gates",
        help="check a trace against a pack's gates",
        description="Check the execution, provider, time, safety and measurement gates "
        "of one trace. Exit 0 when all pass, 1 otherwise, 2 for bad usage, 3 when a gate raised.",
    )
    gates.add_argument("--pack", required=True, help="pack id (e.g. bid-intake) or pack folder")
    gates.add_argument("--trace", required=True, type=Path, help="the attempt's trace (JSONL)")
    _common(gates)
    gates.set_defaults(func=run_gates)
    declare_exits(
        gates,
        {
            0: "every gate passes",
            1: "a gate fails",
            2: "bad usage: an unreadable file",
            EVALUATION_ERROR_EXIT: "a gate raised: not judged, the traceback is shown",
        },
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--elapsed",
        type=float,
        metavar="SECONDS",
        help="measured attempt time (default: the trace's run_end time, else its last call end)",
    )
    parser.add_argument("--site-key", help="the run plan's site key (default: the trace header's site_key)")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {what} {path}: {exc}") from exc


def _inputs(args: argparse.Namespace) -> tuple[Pack, Trace | None]:
    if args.elapsed is not None and not args.elapsed >= 0:
        raise UsageError("--elapsed must be a non-negative number of seconds")
    pack = load_pack(args.pack)
    trace = parse_trace(_read(args.trace, "trace")) if args.trace else None
    if trace is not None and trace.problems and trace.header is None and not (trace.calls or trace.events):
        said = "; ".join(trace.problems[:3]) + (
            f" (+{len(trace.problems) - 3} more)" if len(trace.problems) > 3 else ""
        )
        raise UsageError(f"{args.trace} is not a trace: no line of it is a trace line ({said})")
    return pack, trace  # a trace with some unreadable lines fails the measurement gate, which names them


def _fail_usage(args: argparse.Namespace, exc: Exception) -> int:
    print(f"sandbox {args.command}: {exc}", file=sys.stderr)
    return 2


def inside_file(folder: Path, name: str) -> Path | None:
    """The attempt folder's file (None: missing); a ``UsageError`` for one that is no file inside it."""
    from sandbox.runner.files import folder_file

    file, odd = folder_file(folder, name)
    if odd is not None:  # a symbolic link out of the folder is never read as the attempt's
        raise UsageError(f"{folder}: {odd}; give the file with --{Path(name).stem} if it is the attempt's")
    return file


def _from_attempt_folder(args: argparse.Namespace) -> None:
    """Fill --pack, --output, --trace, --elapsed and --site-key from ATTEMPT_DIR where not given."""
    from sandbox.runner.folders import AttemptFolder, is_attempt_folder

    if args.attempt is None:
        if not (args.pack and args.output):
            raise UsageError("give an attempt folder (sandbox score ATTEMPT_DIR) or both --pack and --output")
        return
    if not is_attempt_folder(args.attempt):
        raise UsageError(
            f"{args.attempt} is not an attempt folder (it holds none of attempt.json, trace.jsonl, "
            f"score.json, output.txt)"
        )
    folder = AttemptFolder.load(args.attempt)
    attempt = folder.attempt
    recorded = attempt.pack_path if attempt is not None and attempt.pack_path else None
    args.pack = args.pack or (recorded if recorded and Path(recorded).is_dir() else None) or folder.pack
    if not args.pack:
        raise UsageError(f"{args.attempt} does not name its pack (no attempt.json or trace header): add --pack")
    output = inside_file(args.attempt, "output.txt") if args.output is None else None
    trace = inside_file(args.attempt, "trace.jsonl") if args.trace is None else None
    args.output_missing = args.output is None and output is None
    if args.output_missing:  # what is missing is named, never fatal
        print(f"sandbox score: {args.attempt} has no output.txt (its run was cut short): scored as an empty answer",
              file=sys.stderr)  # fmt: skip
    args.output = args.output or args.attempt / "output.txt"
    if args.trace is None and trace is not None:
        args.trace = trace
    if args.elapsed is None and attempt is not None and attempt.elapsed_seconds is not None:
        args.elapsed = attempt.elapsed_seconds
    args.site_key = args.site_key or (attempt.site_key if attempt is not None else None)
    args.recorded_checksum = attempt.pack_checksum if attempt is not None else None
    args.attempt_pack = folder.pack


def run_score(args: argparse.Namespace) -> int:
    from sandbox.evaluation.scoring import describe_score, score_attempt

    try:
        _from_attempt_folder(args)
        pack, trace = _inputs(args)
        recorded = getattr(args, "recorded_checksum", None)
        ran = getattr(args, "attempt_pack", None)
        if ran and ran != pack.id:  # --pack named another pack
            print(f"sandbox score: {args.attempt} is an attempt of pack {ran}, not {pack.id}: scored with "
                  f"{pack.id} as asked; leave out --pack to score it with its own", file=sys.stderr)  # fmt: skip
        elif recorded and recorded != pack.checksum():  # another pack of that id, or the pack edited since
            print(f"sandbox score: {pack.dir} (checksum {pack.checksum()}) is not the pack the attempt ran "
                  f"with (checksum {recorded}): give that pack's folder with --pack PATH", file=sys.stderr)  # fmt: skip
        output = "" if getattr(args, "output_missing", False) else _read(args.output, "output")
        report = score_attempt(pack, output, trace, args.elapsed, site_key=args.site_key)
    except (UsageError, PackError) as exc:
        return _fail_usage(args, exc)
    if args.json:
        print(json_shown(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2)))
    else:
        print(describe_score(report))
    if report.status == "error":
        return EVALUATION_ERROR_EXIT
    return 0 if report.qualified_pass else 1


def run_gates(args: argparse.Namespace) -> int:
    from sandbox.evaluation.scoring import describe_gates

    try:
        pack, trace = _inputs(args)
    except (UsageError, PackError) as exc:
        return _fail_usage(args, exc)
    report = check_gates(pack, trace, elapsed_seconds=args.elapsed, site_key=args.site_key)
    if args.json:
        print(json_shown(json.dumps({"pack": pack.id, **report.model_dump(mode="json")}, ensure_ascii=False, indent=2)))
    else:
        print(f"pack {pack.id}: " + describe_gates(report))
    if report.errors:
        return EVALUATION_ERROR_EXIT
    return 0 if report.ok else 1
