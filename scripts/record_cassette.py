"""Record fixtures/cassettes/{openai,anthropic}-bid-intake.yaml: real recordings of the
``openai:`` and ``anthropic:`` agents talking to the scripted model server
(scripts/scripted_model_server.py, OpenAI chat completions and the Anthropic Messages API) on
loopback.

    .venv/bin/python scripts/record_cassette.py [--api openai|anthropic]          # re-record
    .venv/bin/python scripts/record_cassette.py [--api openai|anthropic] --check  # replay and compare

Recording runs, in this process, exactly what a user would type, e.g.:

    sandbox run bid-intake --agent openai:scripted-browser-1 --base-url <server>/v1 \\
        --cassette fixtures/cassettes/openai-bid-intake.yaml --record-mode all
    sandbox run bid-intake --agent anthropic:scripted-browser-1 --base-url <server> \\
        --cassette fixtures/cassettes/anthropic-bid-intake.yaml --record-mode all

then replays the new cassette with ``--record-mode none`` (no server running) and checks that
the replay issued the same tool calls and gave the same answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import json
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACK = "bid-intake"
# api -> (cassette, agent, the server path its SDK's base URL ends with)
APIS = {
    "openai": (Path("fixtures/cassettes/openai-bid-intake.yaml"), "openai:scripted-browser-1", "/v1"),
    "anthropic": (Path("fixtures/cassettes/anthropic-bid-intake.yaml"), "anthropic:scripted-browser-1", ""),
}


def load_server_module():
    spec = importlib.util.spec_from_file_location(
        "scripted_model_server", ROOT / "scripts" / "scripted_model_server.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ServerThread:
    """The scripted server on its own event loop, so the CLI can run its own ``asyncio.run``."""

    def __enter__(self) -> str:
        server = load_server_module()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runner, url = asyncio.run_coroutine_threadsafe(server.start_server(), self.loop).result(timeout=10)
        return url

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def sandbox_run(agent: str, arguments: list[str]) -> dict:
    """``sandbox run ... --json`` in this process; returns the single attempt's summary."""
    from sandbox.cli import main

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        main(["run", PACK, "--agent", agent, "--json", *arguments])
    report = json.loads(stdout.getvalue())
    (attempt,) = report["attempts"]
    return attempt


def calls_and_output(attempt: dict) -> tuple[list[tuple[str, str]], str]:
    folder = Path(attempt["directory"])
    site_key = json.loads((folder / "attempt.json").read_text())["site_key"]
    calls = []
    for line in (folder / "trace.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "call":  # the site key differs per attempt: compare without it
            calls.append((record["tool"], json.dumps(record["args"], sort_keys=True).replace(site_key, "<KEY>")))
    return calls, (folder / "output.txt").read_text()


def record(api: str, check: bool) -> int:
    relative, agent, base_path = APIS[api]
    cassette = ROOT / relative
    with tempfile.TemporaryDirectory(prefix="record-cassette-") as out:
        recorded = None
        if not check:
            with ServerThread() as url:
                print(f"scripted model server at {url}; recording {relative}", file=sys.stderr)
                recorded = sandbox_run(
                    agent,
                    [
                        "--base-url",
                        f"{url}{base_path}",
                        "--cassette",
                        str(cassette),
                        "--record-mode",
                        "all",
                        "--out",
                        out,
                    ],
                )
            if recorded["status"] != "completed":
                print(
                    f"recording failed: attempt status {recorded['status']} (see {recorded['directory']})",
                    file=sys.stderr,
                )
                return 1
        replayed = sandbox_run(agent, ["--cassette", str(cassette), "--record-mode", "none", "--out", out])
        if replayed["status"] != "completed":
            error = json.loads((Path(replayed["directory"]) / "attempt.json").read_text())["error"]
            print(f"replay failed: {replayed['status']}: {error}", file=sys.stderr)
            return 1
        calls, output = calls_and_output(replayed)
        if recorded is not None and (calls, output) != calls_and_output(recorded):
            print("replay differs from the recording (tool calls or output)", file=sys.stderr)
            return 1
        size = cassette.stat().st_size
        print(
            f"{relative}: {size:,} bytes; replay offline: {len(calls)} tool calls "
            f"({', '.join(tool for tool, _ in calls)}), token usage {replayed['token_usage']}"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only replay the committed cassette(s)")
    parser.add_argument("--api", choices=sorted(APIS), help="one API only (default: both)")
    args = parser.parse_args()
    return max(record(api, args.check) for api in ([args.api] if args.api else sorted(APIS)))


if __name__ == "__main__":
    sys.exit(main())
