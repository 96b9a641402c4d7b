"""`sandbox serve` on a busy or invalid port or address: one clear line on stderr, exit 2, no
traceback, and no "serving on" line first (checked before Chromium starts)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests.support.serve import free_port


@pytest.fixture
def busy_port():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sandbox", "serve", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["--port", "{busy}"],
            "sandbox serve: cannot listen on 127.0.0.1:{busy}: Address already in use; "
            "choose another --port or stop the process using it",
        ),
        (["--port", "70000"], "sandbox serve: --port 70000 is not a TCP port: give a number from 1 to 65535"),
        (
            ["--host", "192.0.2.1", "--token", "t0ken"],
            "sandbox serve: cannot listen on 192.0.2.1:8765: Cannot assign requested address; "
            "use an address of this machine (e.g. 127.0.0.1) and a port you may open",
        ),
    ],
)
def test_serve_cannot_listen_is_one_line_and_exit_two(busy_port, args, expected):
    done = serve(*(a.format(busy=busy_port) for a in args))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [expected.format(busy=busy_port)]


@pytest.mark.parametrize("command", ["serve", "mcp"])
@pytest.mark.parametrize(
    "value, says",
    [("0", "0 ms: give a positive number of milliseconds"), ("fast", "'fast' is not a whole number of milliseconds")],
)
def test_a_bad_timeout_is_named(capsys, command, value, says):
    from sandbox.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, "--timeout-action", value])
    assert exit_.value.code == 2
    assert f"argument --timeout-action: {says}" in capsys.readouterr().err


def test_timeout_options_parse_with_playwright_mcp_defaults():
    from sandbox.cli import build_parser

    args = build_parser().parse_args(["serve", "--timeout-action", "1500", "--timeout-navigation", "9000"])
    assert (args.timeout_action, args.timeout_navigation) == (1500, 9000)
    defaults = build_parser().parse_args(["mcp"])
    assert (defaults.timeout_action, defaults.timeout_navigation) == (5000, 15000)


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_mirror_folder_that_does_not_exist_is_refused_by_name(command, tmp_path):
    """It was served as empty: every page refused as not mirrored, and an agent failing for no reason it saw."""
    missing = tmp_path / "no-such-mirrors"
    extra = ["--port", "0"] if command == "serve" else []
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", command, "--mirrors", str(missing), *extra],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.splitlines() == [f"sandbox {command}: no such mirror folder: {missing}"]


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_manifest_that_is_not_one_is_refused_in_one_line(command, tmp_path):
    """It was a traceback, with pydantic's lines, exit 1."""
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "manifest.json").write_text('{"entries": [{"url": "http://x/", "body": "a"}]}')
    extra = ["--port", str(free_port())] if command == "serve" else []
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", command, "--mirrors", str(tmp_path), *extra],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    said = f"sandbox {command}: {tmp_path / 'host' / 'manifest.json'}: invalid mirror manifest: entries.0.sha256: "
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and done.stderr.startswith(said), done.stderr


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_trace_folder_that_cannot_be_written_is_refused_at_start(command):
    """It was accepted, and every run then failed with an OSError naming no path (-32603 over MCP)."""
    extra = ["--port", "0"] if command == "serve" else []
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", command, "--trace-dir", "/proc/traces", *extra],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith(f"sandbox {command}: --trace-dir /proc/traces: cannot write")


@pytest.mark.parametrize(
    ("option", "field"), [("--max-runs", "max_runs"), ("--max-open-sessions", "max_open_sessions")]
)
def test_a_limit_of_zero_is_refused(capsys, option, field):
    """--max-runs 0 was taken: every run was then refused as if the server were full."""
    from sandbox.cli import main

    assert main(["serve", option, "0", "--port", str(free_port())]) == 2
    assert f"{field} must be a whole number of at least 1, not 0" in capsys.readouterr().err
