"""``sandbox mirror capture|import-har|check|list``: build, verify and inspect mirror stores.

Exit codes: 0 done/clean, 1 problems found (check), a URL that did not load (capture) or nothing
imported (import-har), 2 bad usage or an unreadable/malformed input file (capture and import-har
then write nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from sandbox.cli.arguments import group_usage, whole_number
from sandbox.cli.exits import declare_exits
from sandbox.paths import MIRRORS_DIR

INTO_HELP = "mirror root to write into (DIR/<host>/; not a host folder, one holding a manifest.json)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mirror",
        help="capture, import, check and list mirrored pages",
        description="Tools for the mirror store (<root>/<host>/manifest.json + bodies).",
    )
    parser.set_defaults(func=lambda args: group_usage(parser))
    commands = parser.add_subparsers(dest="mirror_command", metavar="SUBCOMMAND")

    capture = commands.add_parser(
        "capture",
        help="record live pages with Chromium (the one command that uses the network)",
        description="Visit each URL in headless Chromium, wait for load and network idle, and record every "
        "response (documents, subresources, XHR/fetch; redirects with their location) into "
        "DIR/<host>/ with 'captured' provenance.",
    )
    capture.add_argument("urls", nargs="+", metavar="URL", help="absolute http(s) URL of a page to visit")
    capture.add_argument("--into", type=Path, required=True, metavar="DIR", help=INTO_HELP)
    capture.add_argument(
        "--wait-ms",
        type=whole_number(0, "milliseconds", "ms"),
        default=1000,
        metavar="N",
        help="extra wait after network idle, for late requests (default 1000)",
    )
    capture.add_argument(
        "--chromium",
        help="Chromium binary (default: SANDBOX_CHROMIUM, then Playwright's own if installed, then /usr/bin/chromium)",
    )
    capture.set_defaults(func=run_capture)
    declare_exits(
        capture, {0: "every page recorded", 1: "some page could not be recorded", 2: "bad usage (nothing recorded)"}
    )

    har = commands.add_parser(
        "import-har",
        help="import the responses of a HAR file",
        description="Import every response of a HAR file (e.g. Playwright's record_har_path with "
        "record_har_content='embed') into DIR/<host>/ with 'captured' provenance.",
    )
    har.add_argument("file", type=Path, metavar="FILE", help="the HAR file")
    har.add_argument("--into", type=Path, required=True, metavar="DIR", help=INTO_HELP)
    har.set_defaults(func=run_import_har)
    declare_exits(
        har,
        {
            0: "imported",
            1: "nothing imported: the HAR has no entry, or every one was skipped (the warnings say why)",
            2: "bad usage (nothing written): an unreadable or malformed HAR file, an unsafe host name, "
            "a host folder as --into, a folder it cannot write",
        },
    )

    check = commands.add_parser(
        "check",
        help="verify manifests and bodies (exit 1 on problems)",
        description="Check manifests, body files, hashes, content types and provenance, and name a "
        "manifest.json that no loader reads (one inside a host folder, or deeper than DIR/<host>/).",
    )
    check.add_argument(
        "roots",
        nargs="*",
        type=Path,
        metavar="DIR",
        help=f"mirror root or host folder (default: the bundled {MIRRORS_DIR.name}/)",
    )
    check.set_defaults(func=run_check)
    declare_exits(check, {0: "no problems", 1: "a manifest or body has problems", 2: "no such mirror folder"})

    listing = commands.add_parser(
        "list",
        help="list every mirrored URL",
        description="List every mirrored URL with status, content type and provenance.",
    )
    listing.add_argument(
        "roots",
        nargs="*",
        type=Path,
        metavar="DIR",
        help=f"mirror root or host folder (default: the bundled {MIRRORS_DIR.name}/)",
    )
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.set_defaults(func=run_list)
    declare_exits(listing, {0: "listed", 2: "a manifest that cannot be read"})


def _fail(message: str) -> int:
    print(f"sandbox mirror: {message}", file=sys.stderr)
    return 2


def _print_report(report, verb: str) -> None:
    print(f"{verb} {report.count} response(s) into {report.into}")
    for folder, urls in sorted(report.written.items()):
        print(f"  {folder}: {len(urls)} URL(s)")
        for url in urls:
            print(f"    {url}")
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for failure in report.failures:
        print(f"error: {failure}", file=sys.stderr)


def run_capture(args: argparse.Namespace) -> int:
    from sandbox.mirrors.capture import CaptureError, capture

    try:
        report = capture(args.urls, args.into, wait_ms=args.wait_ms, chromium=args.chromium)
    except CaptureError as exc:
        return _fail(str(exc))
    _print_report(report, "recorded")
    return 1 if report.failures else 0


def run_import_har(args: argparse.Namespace) -> int:
    from sandbox.mirrors.capture import CaptureError, import_har

    try:
        report = import_har(args.file, args.into)
    except CaptureError as exc:
        return _fail(str(exc))
    _print_report(report, "imported")
    if not report.count:  # every entry skipped (said in the warnings above), or none at all
        print(
            f"sandbox mirror: nothing imported from {args.file}: it has no response that can be mirrored",
            file=sys.stderr,
        )
        return 1
    return 0


def run_check(args: argparse.Namespace) -> int:
    from sandbox.mirrors.capture import CaptureError, manifest_paths, read_manifest
    from toolserver.contract.mirror_check import check

    roots = args.roots or [MIRRORS_DIR]
    missing = [str(root) for root in roots if not root.is_dir()]
    if missing:
        return _fail(f"no such mirror directory: {', '.join(missing)}")
    problems = check(*roots)
    entries = manifests = 0
    for root in roots:
        for manifest_path in manifest_paths(root):
            manifests += 1
            with contextlib.suppress(CaptureError):  # already reported by check()
                entries += len(read_manifest(manifest_path).entries)
    for problem in problems:
        print(problem)
    _print_provenance(roots)
    summary = f"{entries} entries in {manifests} manifest(s) checked"
    if problems:
        print(f"{summary}: {len(problems)} problem(s)")
        return 1
    print(f"{summary}: no problems")
    return 0


def _print_provenance(roots: list[Path]) -> None:
    """Per host: how many entries are captured or reconstructed, and each reconstruction's basis
    with the URLs built on it."""
    from toolserver.contract.mirrors import provenance_by_host

    for host in provenance_by_host(*roots):
        count = len(host.captured) + sum(len(urls) for _, urls in host.reconstructed)
        print(
            f"{host.host}: {count} entries, {count - len(host.captured)} reconstructed, {len(host.captured)} captured"
        )
        for basis, urls in host.reconstructed:
            print(f"  reconstructed ({len(urls)}): {', '.join(urls)}")
            print(f"    basis: {basis}")
        for url in host.captured:
            print(f"  captured: {url}")


def run_list(args: argparse.Namespace) -> int:
    from sandbox.mirrors.capture import CaptureError, list_entries

    try:
        rows = list_entries(*(args.roots or [MIRRORS_DIR]))
    except CaptureError as exc:
        return _fail(str(exc))
    records: list[dict[str, Any]] = [
        {
            "url": entry.url,
            "status": entry.status,
            "content_type": {k.lower(): v for k, v in entry.headers.items()}.get("content-type", ""),
            "provenance": entry.provenance.kind,
            **({"captured_at": entry.provenance.captured_at} if entry.provenance.captured_at else {}),
            "manifest": str(manifest_path),
            "body": entry.body,
        }
        for manifest_path, entry in rows
    ]
    if args.json:
        print(json.dumps(records, indent=2, ensure_ascii=False))
        return 0
    for record in records:
        print(f"{record['status']:>3}  {record['content_type'][:34]:<34}  {record['provenance']:<13}  {record['url']}")
    print(f"{len(records)} URL(s)")
    return 0
