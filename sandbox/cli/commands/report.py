"""sandbox report DIR: (re)write the HTML reports of a batch folder or one attempt folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sandbox.cli.arguments import check_writable
from sandbox.cli.exits import declare_exits


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="write the HTML report of a batch or attempt folder",
        description="Write report.html for a batch folder (and each of its attempts) or for one "
        "attempt folder; older folders work too (what is missing is named in the "
        "report). Exit 0 when written, 2 when the folder holds nothing to report or cannot be "
        "listed or entered, or --junit names a file it cannot write.",
    )
    p.add_argument("folder", type=Path, metavar="DIR", help="a batch folder (runs/<time>-<agent>) or an attempt folder")
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write the folder's JUnit XML here")
    p.set_defaults(func=command)
    declare_exits(
        p,
        {
            0: "reports written (an attempt page of the batch that cannot be written is named on stderr, "
            "and left unlinked on the batch page)",
            2: "nothing to report (no attempt in the folder, or a folder it cannot list or enter), or a --junit "
            "path that is a folder or in one it cannot write (nothing written)",
            3: "the batch page, a lone attempt's page or the --junit file could not be written (a full disk, "
            "a read-only folder)",
        },
    )


def command(args: argparse.Namespace) -> int:
    from sandbox.runner.report import NothingToReport

    try:
        if args.junit:
            check_writable(args.junit, "--junit")
    except ValueError as exc:  # checked before the pages are written: nothing was written (as run --junit)
        print(f"sandbox report: {exc}", file=sys.stderr)
        return 2
    try:
        written = write_pages(args.folder, "report")
    except (NothingToReport, ValueError) as exc:
        print(f"sandbox report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a read-only folder: the pages already there are left whole
        print(f"sandbox report: cannot write the report: {exc}", file=sys.stderr)
        return 3
    print(
        f"report: {written[0]}"
        + (f" (and {len(written) - 1} attempt report{'s' if len(written) > 2 else ''})" if len(written) > 1 else "")
    )
    if args.junit:
        from sandbox.runner.junit import write_junit

        try:
            print(f"junit: {write_junit(args.folder, args.junit)}")
        except OSError as exc:
            print(f"sandbox report: cannot write {args.junit}: {exc}", file=sys.stderr)
            return 3
    return 0


def write_pages(folder: Path, command: str) -> list[Path]:
    """A batch folder's pages (``write_reports``), each attempt page that could not be written or
    whose folder could not be entered named on stderr, with why (``sandbox run`` and ``sandbox report``)."""
    from sandbox.runner.report import unreadable_pages, write_reports

    unwritten: list[str] = []
    written = write_reports(folder, unwritten)
    for unread in [*unreadable_pages(folder), *unwritten]:
        print(f"sandbox {command}: no page for {unread}", file=sys.stderr)
    return written
