"""Stopping a batch (Ctrl-C, SIGTERM, SIGHUP): `sandbox run` as a real process. The attempts
running are stopped and recorded (status ``stopped``, their traces ended), the table,
``summary.json`` and the report cover what ended, a `cmd:` agent's processes are gone, and the
exit status says which signal (130, 143)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.processes import wait_until_gone
from toolserver.contract.trace import read_trace

SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
HANGING = 'cmd:echo $$ > "$SANDBOX_ATTEMPT_DIR/agent.pid"; sleep 60'  # records its process group, then hangs


def has_called(folder: Path) -> bool:
    trace = folder / "trace.jsonl"
    return trace.is_file() and '"type": "call"' in trace.read_text()


async def running_batch(
    tmp_path: Path, ready: Callable[[Path], bool], *args: str
) -> tuple[asyncio.subprocess.Process, list[Path]]:
    """`sandbox run controlled-form ARGS` into ``tmp_path``, once two attempt folders are ``ready``."""
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "run", "controlled-form", "--out", str(tmp_path), "--no-progress", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    for _ in range(600):
        folders = sorted(path for path in tmp_path.glob("*/*") if path.is_dir())
        if len(folders) >= 2 and all(map(ready, folders)):
            return process, folders
        assert process.returncode is None, await process.communicate()
        await asyncio.sleep(0.05)
    raise AssertionError("the batch's attempts never got going")


async def test_sigterm_stops_a_batch_and_records_the_attempts_it_stopped(tmp_path):
    process, folders = await running_batch(
        tmp_path, has_called, "--agent", "think:0.5:reference", "--repeats", "3", "--concurrency", "2"
    )
    process.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 143, err.decode()
    said = "stopped by SIGTERM: the batch was stopped: 0 of 3 attempts finished, 2 stopped while they ran, 1 not"
    assert said in err.decode() and "Traceback" not in err.decode(), err.decode()
    assert "stopped 2" in out.decode()  # the table's status column
    batch = folders[0].parent
    summary = json.loads((batch / "summary.json").read_text())
    assert [a["status"] for a in summary["attempts"]] == ["stopped", "stopped"]
    assert [a["interruption"] for a in summary["attempts"]] == ["the batch was stopped while it ran"] * 2
    assert (batch / "report.html").is_file()
    for folder in folders:
        attempt = json.loads((folder / "attempt.json").read_text())
        assert attempt["status"] == "stopped" and attempt["error"].startswith("the batch was stopped after")
        trace = read_trace(folder / "trace.jsonl")
        assert trace.end is not None and trace.end["reason"] == "stopped" and trace.calls
        assert "agent stopped: the batch was stopped" in (folder / "score.txt").read_text()


async def test_ctrl_c_records_every_attempt_running_however_many_run_at_once(tmp_path):
    """The first attempt to end its recording ended the batch's wait, and the batch then cancelled
    the others again, inside their recording: they were left without attempt.json and run_end,
    and said "not started"."""
    process, _ = await running_batch(
        tmp_path, has_called, "--agent", "think:0.3:reference", "--repeats", "3", "--concurrency", "3"
    )
    for _ in range(100):  # all three under way
        if len([f for f in tmp_path.glob("*/*") if f.is_dir() and has_called(f)]) == 3:
            break
        await asyncio.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 130, err.decode()
    assert "0 of 3 attempts finished, 3 stopped while they ran, 0 not started" in err.decode(), err.decode()
    for folder in sorted(path for path in tmp_path.glob("*/*") if path.is_dir()):
        assert json.loads((folder / "attempt.json").read_text())["status"] == "stopped", folder.name
        assert read_trace(folder / "trace.jsonl").end["reason"] == "stopped", folder.name


async def test_one_ctrl_c_while_the_browser_starts_is_said_as_one(tmp_path):
    """It was said "stopped at once by a second signal" after a single Ctrl-C."""
    slow = tmp_path / "slow-chromium"  # a browser that never comes up: the batch is still starting
    started = tmp_path / "browser-started"  # the batch launches it after its stop handlers are in place
    slow.write_text(f"#!/bin/sh\ntouch {started}\nsleep 30\n")
    slow.chmod(0o755)
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "run", "controlled-form", "--agent", "reference", "--out", str(tmp_path / "out"), "--no-progress",
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "SANDBOX_CHROMIUM": str(slow)},
    )  # fmt: skip
    async with asyncio.timeout(60):  # a fixed 2 s was not always past the imports on a loaded machine
        while not started.exists():
            await asyncio.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert (
        process.returncode == 130
        and err.decode().splitlines()[-1] == "sandbox run: stopped by SIGINT before its attempts"
    )


async def test_ctrl_c_stops_a_cmd_agent_and_its_processes(tmp_path):
    process, folders = await running_batch(
        tmp_path, lambda folder: (folder / "agent.pid").is_file(), "--agent", HANGING, "--repeats", "2",
        "--concurrency", "2",
    )  # fmt: skip
    process.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 130, err.decode()
    assert "stopped by SIGINT" in err.decode() and "Traceback" not in err.decode(), err.decode()
    for folder in folders:
        assert await wait_until_gone(int((folder / "agent.pid").read_text())) == []
        assert json.loads((folder / "attempt.json").read_text())["status"] == "stopped"


async def test_a_stop_as_the_batch_ends_keeps_its_ended_attempts(tmp_path):
    """A stop while the executor stopped, every attempt ended and summary.json written, was said
    "stopped before its attempts": no table, no report."""
    from sandbox.evaluation.packs import load_pack
    from sandbox.runner.batch import BatchStopped, run_batch

    out = tmp_path / "runs"
    batch = asyncio.ensure_future(
        run_batch([load_pack("controlled-form")], "reference", out=out, progress=False, screenshots="none")
    )
    while not list(out.glob("*/summary.json")):  # the attempt ended and is recorded: the browser stops next
        assert not batch.done(), batch
        await asyncio.sleep(0.005)
    batch.cancel()
    with pytest.raises(BatchStopped) as stopped:
        await batch
    assert [o.status for o in stopped.value.outcomes] == ["completed"] and stopped.value.outcomes[0].qualified_pass
