"""``sandbox score`` and ``sandbox gates``: judge a finished attempt offline.

    sandbox score --pack PACK --output FILE [--trace FILE] [--elapsed SECONDS] [--site-key KEY] [--json]
    sandbox gates --pack PACK --trace FILE [--elapsed SECONDS] [--site-key KEY] [--json]

Exit status: 0 qualified pass (gates: all passed), 1 not, 2 bad usage or unreadable file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sandbox.evaluation.gates import GateReport, check_gates
from sandbox.evaluation.packs import Pack, PackError, load_pack
from sandbox.core.trace import Trace, parse_trace


class UsageError(Exception):
    pass


def register(subparsers: argparse._SubParsersAction) -> None:
    score = subparsers.add_parser("score", help="score an attempt's output (and trace) against its pack",
                                  description="Score one attempt: output contract, fields, evidence and gates. "
                                              "Exit 0 for a qualified pass, 1 otherwise, 2 for bad usage.")
    score.add_argument("--pack", required=True, help="pack id (e.g. bid-intake) or pack folder")
    score.add_argument("--output", required=True, type=Path, help="the model's final output text")
    score.add_argument("--trace", type=Path, help="the attempt's trace (JSONL); without it gates are not measured")
    _common(score)
    score.set_defaults(func=run_score)

    gates = subparsers.add_parser("gates", help="check a trace against a pack's gates",
                                  description="Check the execution, provider, time, safety and measurement gates "
                                              "of one trace. Exit 0 when all pass, 1 otherwise, 2 for bad usage.")
    gates.add_argument("--pack", required=True, help="pack id (e.g. bid-intake) or pack folder")
    gates.add_argument("--trace", required=True, type=Path, help="the attempt's trace (JSONL)")
    _common(gates)
    gates.set_defaults(func=run_gates)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--elapsed", type=float, metavar="SECONDS",
                        help="measured attempt time (default: the trace's last call end)")
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
    return pack, trace


def _fail_usage(exc: Exception) -> int:
    print(f"sandbox: {exc}", file=sys.stderr)
    return 2


def run_score(args: argparse.Namespace) -> int:
    from sandbox.evaluation.scoring import score_attempt

    try:
        pack, trace = _inputs(args)
        output = _read(args.output, "output")
        report = score_attempt(pack, output, trace, args.elapsed, site_key=args.site_key)
    except (UsageError, PackError) as exc:
        return _fail_usage(exc)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(_describe_score(report))
    return 0 if report.qualified_pass else 1


def run_gates(args: argparse.Namespace) -> int:
    try:
        pack, trace = _inputs(args)
    except (UsageError, PackError) as exc:
        return _fail_usage(exc)
    report = check_gates(pack, trace, elapsed_seconds=args.elapsed, site_key=args.site_key)
    if args.json:
        print(json.dumps({"pack": pack.id, **report.model_dump(mode="json")}, ensure_ascii=False, indent=2))
    else:
        print(f"pack {pack.id}: " + _describe_gates(report))
    return 0 if report.ok else 1


def _describe_gates(report: GateReport) -> str:
    if not report.measured:
        head = "gates NOT MEASURED"
    else:
        head = "gates passed" if report.ok else f"gates FAILED ({len(report.failures)})"
    lines = [head]
    lines += [f"  [{f.gate}] " + (f"seq {f.seq}: " if f.seq is not None else "") + f.message for f in report.failures]
    lines += [f"  note: {n}" for n in report.notes]
    return "\n".join(lines)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 90 else text[:87] + "..."


def _describe_score(report: Any) -> str:
    verdict = ("QUALIFIED PASS" + (" (error-free)" if report.error_free else " (not error-free)")
               if report.qualified_pass else "NOT A QUALIFIED PASS")
    correct = sum(f.correct for f in report.fields)
    lines = [
        f"pack {report.pack} (scored with {report.scoring_pack}, checksum {report.stamp.checksum[:12]})",
        f"verdict: {verdict}",
        f"field accuracy {report.field_accuracy:.4f} ({correct}/{len(report.fields)})",
        f"evidence {report.evidence.score:.4f} ({report.evidence.valid}/{report.evidence.required})",
        "output contract: " + ("ok" if report.output_contract.ok else "NOT MET"),
    ]
    lines += [f"  [{e.code}] {e.message}" for e in report.output_contract.errors]
    for field in report.fields:
        if not field.correct:
            mark = "critical " if field.critical else ""
            lines.append(f"  wrong {mark}field {field.name}: expected {_short(field.expected)}, got "
                         f"{_short(field.got)} ({field.detail})")
    lines += [f"  evidence {f.field}: {f.message}" for f in report.evidence.failures]
    lines.append(_describe_gates(report.gates))
    lines += [f"reason: {r}" for r in report.reasons]
    return "\n".join(lines)
