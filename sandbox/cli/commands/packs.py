"""``sandbox packs [--json]``: list the task packs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TypedDict

from sandbox.cli.exits import declare_exits
from sandbox.evaluation.packs import PackError, list_packs


class _PackRow(TypedDict):
    id: str
    workflow: str
    pack_number: int
    kind: str
    time_limit_seconds: int
    scoring_pack: str
    fixtures_missing: list[str]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "packs",
        help="list the task packs",
        description="List every pack: workflow, pack number, reviewed or historical, "
        "time limit, scoring pack and evidence fixtures present.",
    )
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    parser.set_defaults(func=run)
    declare_exits(parser, {0: "listed", 2: "a pack could not be loaded"})


def run(args: argparse.Namespace) -> int:
    try:
        packs = list_packs()
    except PackError as exc:
        print(f"sandbox: {exc}", file=sys.stderr)
        return 2
    rows: list[_PackRow] = [
        {
            "id": p.id,
            "workflow": p.card.workflow,
            "pack_number": p.card.pack_number,
            "kind": p.card.pack_kind,
            "time_limit_seconds": p.card.time_limit_seconds,
            "scoring_pack": p.card.scoring_pack,
            "fixtures_missing": p.missing_fixtures() if p.card.reviewed else [],
        }
        for p in packs
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'id':<18} {'workflow':<16} {'pack':>4}  {'kind':<10} {'limit':>6}  {'scoring pack':<16} fixtures")
    for row, pack in zip(rows, packs, strict=True):
        total = len(pack.fixture_paths())
        fixtures = (
            f"{total - len(row['fixtures_missing'])}/{total} present"
            if pack.card.reviewed
            else "(scored by the reviewed pack)"
        )
        print(
            f"{row['id']:<18} {row['workflow']:<16} {row['pack_number']:>4}  {row['kind']:<10} "
            f"{row['time_limit_seconds'] // 60:>4} m  {row['scoring_pack']:<16} {fixtures}"
        )
    return 0
