"""What every command shares: numbers checked as the command line is read, and a reader of the
output that has gone (a closed pipe) ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "value, says",
    [
        ("0", "0 s: give a number of seconds above 0"),
        ("-5", "-5 s: give a number of seconds above 0"),
        ("soon", "'soon' is not a number of seconds"),
        ("inf", "inf s: give a number of seconds above 0"),
    ],
)
def test_a_time_limit_that_is_not_above_zero_is_refused(capsys, value, says):
    from sandbox.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["run", "bid-intake", "--agent", "reference", "--time-limit", value])
    assert exit_.value.code == 2
    assert f"argument --time-limit: {says}" in capsys.readouterr().err
    args = build_parser().parse_args(["run", "bid-intake", "--agent", "reference", "--time-limit", "2.5"])
    assert args.time_limit == 2.5


def test_a_closed_pipe_ends_the_command_with_141_and_no_traceback():
    reading, writing = os.pipe()
    os.close(reading)  # the reader has gone before the command writes: its write fails (EPIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sandbox", "mirror", "list"],
            stdout=writing,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writing)
    assert (done.returncode, done.stderr) == (141, "")
