"""sandbox replay: reproduce a recorded attempt locally and find where it diverges. The attempt
may have been recorded here (an attempt folder, a trace) or by another harness (an Inspect eval
log, OpenAI or Anthropic chat messages with tool calls): ``sandbox.runner.recordings`` tells
them apart by content.

Exit status: 0 no divergence and the re-score is a qualified pass, 1 a divergence or a
re-score that does not qualify, 2 bad usage (no trace, an unreadable or unknown recording,
no such sample, unknown pack)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import socket
import sys
from pathlib import Path

from sandbox.cli.arguments import check_writable, mirror_roots_option
from sandbox.cli.exits import declare_exits
from sandbox.evaluation.shown import json_shown

DEFAULT_PORT = 8765


def register(subparsers) -> None:
    p = subparsers.add_parser("replay", help="re-issue a recorded attempt's calls and compare the results")
    p.add_argument(
        "attempt",
        type=Path,
        metavar="RECORDING",
        help="an attempt folder (with trace.jsonl), a trace file, an Inspect eval log (.eval or .json), "
        "or a JSON file of OpenAI or Anthropic chat messages with tool calls",
    )
    p.add_argument("--until", type=int, metavar="SEQ", help="stop after this call and keep the session open")
    p.add_argument("--pack", help="pack id, for recordings that do not name one (chat messages, foreign traces)")
    p.add_argument(
        "--mirrors",
        type=Path,
        action="append",
        help="a mirror root to replay against instead of the bundled mirrors/ (repeatable): the recording's own",
    )
    p.add_argument("--sample", metavar="ID", help="the sample of an Inspect log to replay (default: its first sample)")
    p.add_argument(
        "--port", type=int, help=f"with --until: the tool server's port for inspection (default {DEFAULT_PORT})"
    )
    p.add_argument(
        "--hold",
        type=float,
        metavar="SECONDS",
        help="with --until: keep the session open this many seconds (default: until Ctrl-C, which ends the hold)",
    )
    p.add_argument(
        "--report",
        nargs="?",
        type=Path,
        const=True,
        metavar="FILE",
        help="write the attempt's HTML report with the first divergence marked on its timeline "
        "(default FILE: ATTEMPT_DIR/replay-report.html)",
    )
    p.add_argument("--json", action="store_true", help="print the replay report as JSON")
    p.set_defaults(func=command)
    declare_exits(
        p,
        {
            0: "no divergence and a qualified re-score (a bare trace, with no answer to re-score, or --until, "
            "which stops before the answer: no divergence)",
            1: "a divergence (also a recorded call that cannot be read, or a seq missing), or a re-score "
            "that does not qualify",
            2: "bad usage: no trace, an unreadable or unrecognised recording, no such sample, unknown pack, "
            "a --port in use",
            3: "--report could not be written (a full disk, a read-only folder)",
            130: "stopped by Ctrl-C during the replay (during --until's hold, Ctrl-C ends the hold: the exit "
            "status is the replay's)",
        },
    )


def command(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(main(args))
    except (FileNotFoundError, ValueError) as exc:
        print(f"sandbox replay: {exc}", file=sys.stderr)
        return 2


def misused(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, said before the replay (exit 2), or None."""
    if args.until is not None and args.until < 1:
        return f"--until {args.until}: give the seq of a recorded call (from 1)"
    if args.until is None and (args.hold is not None or args.port is not None):
        given = [name for name, value in (("--hold", args.hold), ("--port", args.port)) if value is not None]
        return f"{' and '.join(given)} serve(s) the session kept open by --until SEQ: give --until too"
    if args.hold is not None and not (math.isfinite(args.hold) and args.hold > 0):
        return f"--hold {args.hold}: give a number of seconds above 0 (or leave it out: until Ctrl-C)"
    if args.port is not None and not 0 < args.port < 65536:
        return f"--port {args.port} is not a TCP port: give a number from 1 to 65535"
    return None


async def main(args: argparse.Namespace) -> int:
    from sandbox.runner.recordings import article, load_recording

    problem = misused(args)
    if problem is not None:
        print(f"sandbox replay: {problem}", file=sys.stderr)
        return 2
    args.port = DEFAULT_PORT if args.port is None else args.port
    recording = load_recording(args.attempt, args.sample)
    mirror_roots = mirror_roots_option(args.mirrors)
    for problem in recording.problems:  # lines it could not read are replayed without, and said
        print(f"sandbox replay: {args.attempt}: {problem}", file=sys.stderr)
    if args.report and recording.folder is None:
        print(
            f"sandbox replay: --report marks the divergence on an attempt folder's page; {args.attempt} is "
            f"{article(recording.kind)} (replay it without --report, or replay its attempt folder)",
            file=sys.stderr,
        )
        return 2
    if args.report and recording.folder is not None:  # before the replay, not after it
        check_writable(report_target(args, recording.folder), "--report")
    try:  # with --until: the port is taken now, so a port in use is said before the replay, not after
        listening = listen_on(args.port) if args.until is not None else None
    except OSError as exc:
        print(f"sandbox replay: cannot serve the session on --port {args.port}: {exc.strerror or exc}",
              file=sys.stderr)  # fmt: skip
        return 2
    with listening or contextlib.nullcontext():
        return await replay_and_report(args, recording, mirror_roots, listening)


async def replay_and_report(args: argparse.Namespace, recording, mirror_roots, listening) -> int:
    from sandbox.evaluation.packs import PackError
    from sandbox.runner.replay import replay
    from sandbox.runner.wiring import app_sandbox

    async with app_sandbox() as sandbox:
        try:
            report, run = await replay(
                recording,
                sandbox=sandbox,
                pack_id=args.pack,
                until=args.until,
                keep_open=args.until is not None,
                mirror_roots=mirror_roots,
            )
        except PackError as exc:
            print(f"sandbox replay: {exc}", file=sys.stderr)
            return 2
        print_report(report, args.json)  # before the hold: what the session is open for
        if listening is not None:
            last = max(call.seq for call in recording.calls)
            stopped = (
                f"stopped after call {args.until}"
                if args.until <= last
                else f"--until {args.until} is past the recording's last call, seq {last}: stopped after it"
            )
            await hold_open(sandbox, run, args, listening, stopped)
    if args.report and recording.folder is not None:
        from sandbox.runner.report import write_attempt_report

        folder = recording.folder
        try:
            written = write_attempt_report(
                folder, divergence=report.first_divergence, target=report_target(args, folder)
            )
        except OSError as exc:  # a full disk, a read-only folder
            print(f"sandbox replay: cannot write the report: {exc}", file=sys.stderr)
            return 3
        print(f"report: {written}", file=sys.stderr if args.json else sys.stdout)
    rescore_failed = report.rescore is not None and not report.rescore["qualified_pass"]
    return 1 if report.first_divergence or rescore_failed else 0


def report_target(args: argparse.Namespace, folder: Path) -> Path:
    return folder / "replay-report.html" if args.report is True else args.report


def listen_on(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` (``OSError`` when it is taken)."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(("127.0.0.1", port))
        listening.listen(128)
    except OSError:
        listening.close()
        raise
    return listening


async def hold_open(sandbox, run, args, listening: socket.socket, stopped: str) -> None:
    """Serve the run on ``listening`` for ``--hold`` seconds, or until Ctrl-C, which ends the hold
    (not the command: the exit status is the replay's). What it prints goes to stderr under
    ``--json``, whose stdout is the report alone."""
    from aiohttp import web

    from toolserver.transports.http import create_app
    from toolserver.transports.serving import AppRunner

    runner = AppRunner(create_app(sandbox=sandbox), access_log=None)
    await runner.setup()
    await web.SockSite(runner, listening).start()
    base = f"http://127.0.0.1:{args.port}/runs/{run.id}"
    print(
        f"{stopped}; the session is open for inspection:\n"
        f"  curl -s -X POST {base}/tools/browser_snapshot -H 'Content-Type: application/json' -d '{{}}'\n"
        f"  trace: {base}/trace",
        file=sys.stderr if args.json else sys.stdout,
        flush=True,
    )
    try:
        if args.hold is not None:
            await asyncio.sleep(args.hold)
        else:
            await asyncio.Event().wait()
    except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C: the hold is over, the verdict stands
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
    finally:
        await runner.cleanup()


def print_report(report, as_json: bool) -> None:
    if as_json:
        print(json_shown(json.dumps(report.to_json(), indent=2, ensure_ascii=False)))
        return
    source = ""
    if report.source != "attempt folder":
        source = f" ({report.source}, sample {report.sample})" if report.sample else f" ({report.source})"
    blocked = ", state changes blocked" if report.block_state_changes else ""
    print(
        f"pack {report.pack}{source}: replayed {report.calls_replayed}/{report.calls_recorded} calls, "
        f"compared {report.compared} (policy {report.policy}{blocked})"
    )
    if report.not_sent:
        print(
            f"{report.not_sent} recorded call(s) were refused by the recording's harness before they were sent "
            "(Inspect's parsing or approval errors): not replayed, as the sandbox never saw them"
        )
    if report.recorded_faults:
        print(
            f"the recording had injected faults ({', '.join(report.recorded_faults)}); the replay has none, "
            "so a call they failed diverges"
        )
    if report.first_divergence:
        d = report.first_divergence
        print(f"first divergence at seq {d['seq']} ({d['tool']}): {d['difference']}")
    if report.not_read:
        print(
            f"{report.not_read} recorded call(s) could not be read or are missing, and were not replayed: the "
            "calls after them ran on another state"
        )
    elif not report.first_divergence:
        print("no divergence: every compared result matches the recording (ids and times ignored)")
    if report.other_pack:
        print(
            f"the pack loaded ({report.pack}) is not the one the attempt ran with (checksum {report.other_pack}): "
            "give that pack's folder with --pack PATH"
        )
    if report.other_mirrors:
        print(
            f"the mirrors served are not the ones the recording read (checksum {report.other_mirrors}): a page "
            "that changed diverges; give those mirrors with --mirrors DIR (a recording made before the checksum "
            "covered whole entries, on 2026-12-06, differs on any mirrors: re-record it to compare them)"
        )
    if not report.answer_recorded:
        print("no recorded answer (a trace without its attempt folder): only the calls are compared")
    elif report.rescore is None:  # --until: the run is held open, not ended
        print("the recorded output is not re-scored: --until stops the replay before the answer")
    if report.rescore:
        r = report.rescore
        print(
            f"re-score of the recorded output: qualified_pass={r['qualified_pass']} "
            f"field_accuracy={r['field_accuracy']} gates_ok={r['gates']['ok']}"
        )
        for reason in r.get("reasons", [])[:10]:
            print(f"  - {reason}")
