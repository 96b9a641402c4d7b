"""`sandbox mcp` on the standard streams a user gives it: a terminal (Ctrl-C), stdin a pipe and
stdout a file, stdin a file. A stop signal stops it at once whatever they are (the SDK's own
streams read stdin in a thread, and held the stop until stdin closed), the answers reach a file,
and a terminal is left in the mode it had."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

from tests.support.calls import handshake_then

SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
STOP_S = 20  # far above a stop's time (under 2 s here), far below the wait it ended before (stdin's close)


def wait_for(path: Path, text: str, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while text not in (path.read_text() if path.exists() else ""):
        assert time.monotonic() < deadline, f"{text!r} never came in {path}"
        time.sleep(0.05)


def read_until(fd: int, text: bytes, deadline_s: float = 60) -> bytes:
    got, deadline = b"", time.monotonic() + deadline_s
    while text not in got:
        assert time.monotonic() < deadline, f"{text!r} never came: {got[-300:]!r}"
        if select.select([fd], [], [], 0.1)[0]:
            got += os.read(fd, 65536)
    return got


def test_ctrl_c_on_a_terminal_stops_the_server_and_leaves_the_terminal_blocking(tmp_path):
    main, terminal = pty.openpty()
    tty.setraw(terminal)  # no echo, no line editing: the lines go through as a client sends them
    process = subprocess.Popen(
        [SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path)], stdin=terminal, stdout=terminal, stderr=subprocess.DEVNULL
    )
    try:
        os.write(main, handshake_then({"method": "tools/list", "params": {}}))
        assert b"browser_snapshot" in read_until(main, b"browser_snapshot")  # serving: a terminal is read
        process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        assert process.wait(STOP_S) == 0
        assert os.get_blocking(terminal), "the terminal was left non-blocking: the shell's next read fails"
    finally:
        process.kill()
        os.close(main)
        os.close(terminal)


def test_sigterm_stops_a_server_whose_stdout_is_a_file_and_the_answers_are_in_it(tmp_path):
    answers = tmp_path / "answers.jsonl"
    log = tmp_path / "stderr.txt"
    with answers.open("wb") as stdout, log.open("wb") as stderr:
        process = subprocess.Popen(
            [SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path)], stdin=subprocess.PIPE, stdout=stdout, stderr=stderr
        )
    try:
        assert process.stdin is not None
        process.stdin.write(handshake_then({"method": "tools/list", "params": {}}))
        process.stdin.flush()  # and left open, as a client that has not finished
        wait_for(answers, '"tools"')
        process.send_signal(signal.SIGTERM)
        assert process.wait(STOP_S) == 0
    finally:
        process.kill()
    replies = [json.loads(line) for line in answers.read_text().splitlines()]
    assert [reply.get("id") for reply in replies] == [1, 2]
    assert "browser_snapshot" in {tool["name"] for tool in replies[1]["result"]["tools"]}


def test_dev_null_on_stdin_ends_the_server_at_once(tmp_path):
    """A device that is no terminal: epoll refuses to watch /dev/null, and the server waited for ever."""
    with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as stdout:
        done = subprocess.run(
            [SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path)], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
            timeout=STOP_S,
        )  # fmt: skip
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()


def test_a_file_on_stdin_is_served_to_its_end(tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_bytes(handshake_then({"method": "tools/list", "params": {}}))
    with calls.open("rb") as stdin:
        done = subprocess.run(
            [SANDBOX_CLI, "mcp", "--trace-dir", str(tmp_path)], stdin=stdin, capture_output=True, timeout=120
        )
    assert done.returncode == 0, done.stderr.decode()
    assert [json.loads(line).get("id") for line in done.stdout.decode().splitlines()] == [1, 2]
