"""cmd: agents — real processes talking to the real HTTP tool server: the standard-library
example agent completes an attempt the gates can judge; a hung agent is killed at the time
limit with its process group; a crashing agent is an error; a mixed batch finishes."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch
from sandbox.runner.report import write_attempt_report
from tests.support.processes import wait_until_gone
from toolserver.contract.trace import read_trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'scripts' / 'example_agent.py'))}"
HUNG = 'cmd:echo $$ > "$SANDBOX_ATTEMPT_DIR/agent.pid"; sleep 60'  # the shell records its pid, then hangs
CRASHING = "cmd:exit 3"


async def test_example_agent_completes_and_the_gates_see_its_calls(sandbox, tmp_path):
    (outcome,) = await run_batch([load_pack("bid-intake")], EXAMPLE, out=tmp_path, progress=False, sandbox=sandbox)
    folder = outcome.directory
    attempt = json.loads((folder / "attempt.json").read_text())
    assert attempt["status"] == "completed", (attempt["error"], (folder / "agent.stderr.txt").read_text())
    calls = read_trace(folder / "trace.jsonl").calls
    assert [c.tool for c in calls] == [
        "browser_start_session",
        "browser_snapshot",
        "browser_navigate",
        "browser_snapshot",
        "browser_navigate",
        "browser_snapshot",
        "browser_close",
    ]
    assert calls[0].args["site_key"] == attempt["site_key"] and all(c.ok for c in calls)
    output = (folder / "output.txt").read_text()
    assert output.startswith("BENCHMARK_JSON_BEGIN") and "BENCHMARK_JSON_END" in output
    gates = json.loads((folder / "score.json").read_text())["gates"]
    assert gates["measured"] and gates["ok"], gates["failures"]


async def test_hung_agent_times_out_and_its_process_is_gone(sandbox, tmp_path):
    (outcome,) = await run_batch(
        [load_pack("controlled-form")], HUNG, out=tmp_path, progress=False, sandbox=sandbox, time_limit=2
    )
    assert outcome.status == "timeout"
    assert not (outcome.directory / "agent.stdout.txt").exists()  # it printed nothing
    group = int((outcome.directory / "agent.pid").read_text())  # the agent runs in its own session
    assert await wait_until_gone(group) == []
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert "time limit" in attempt["error"]


async def test_a_timed_out_agent_keeps_what_its_usage_file_said(sandbox, tmp_path):
    """Its tokens and model were kept, its usage_problem dropped: the cost unknown, and not why."""
    bad = 'cmd:echo \'{"model": "m", "input_tokens": 1.5}\' > "$SANDBOX_ATTEMPT_DIR/usage.json"; sleep 60'
    (outcome,) = await run_batch(
        [load_pack("controlled-form")], bad, out=tmp_path, progress=False, sandbox=sandbox, time_limit=2
    )
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert attempt["status"] == "timeout", attempt
    assert attempt["agent_details"]["usage_problem"].startswith("usage.json: input_tokens"), attempt["agent_details"]


async def test_what_a_timed_out_agent_printed_is_kept_apart_from_its_answer(sandbox, tmp_path):
    """It was dropped with the temporary file its stdout went to: a user reproducing a timeout did
    not see how far the agent got."""
    agent = "cmd:echo step 1 done; printf 'BENCHMARK_JSON_BEGIN'; sleep 60"
    (outcome,) = await run_batch(
        [load_pack("controlled-form")], agent, out=tmp_path, progress=False, sandbox=sandbox, time_limit=2
    )
    assert outcome.status == "timeout"
    assert (outcome.directory / "agent.stdout.txt").read_text() == "step 1 done\nBENCHMARK_JSON_BEGIN"
    assert (outcome.directory / "output.txt").read_text() == ""  # not an answer
    assert 'href="agent.stdout.txt"' in write_attempt_report(outcome.directory).read_text()  # linked


# A process the agent starts that leaves its process group (setsid) and keeps its stdout and stderr
# open: it records its pid, then sleeps; the agent itself then answers at once, or hangs.
ESCAPING = (
    "setsid sh -c 'echo $$ > \"$SANDBOX_ATTEMPT_DIR/escaped.pid\"; sleep 30' & "
    'while [ ! -s "$SANDBOX_ATTEMPT_DIR/escaped.pid" ]; do sleep 0.05; done;'
)


async def test_an_agent_whose_escaped_child_holds_its_output_ends_when_it_exits_or_at_its_time_limit(sandbox, tmp_path):
    # Before, the attempt waited for the child's end: a finished agent became a timeout, and a
    # timed-out one held the batch as long as the child lived (forever, for a daemon).
    pack = load_pack("controlled-form")
    began = time.monotonic()
    (answered,) = await run_batch(
        [pack], f"cmd:{ESCAPING} echo no answer", out=tmp_path / "a", progress=False, sandbox=sandbox, time_limit=20
    )
    (hung,) = await run_batch(
        [pack], f"cmd:{ESCAPING} sleep 60", out=tmp_path / "b", progress=False, sandbox=sandbox, time_limit=2
    )
    assert time.monotonic() - began < 15
    assert answered.status == "completed" and (answered.directory / "output.txt").read_text() == "no answer\n"
    assert hung.status == "timeout"
    for outcome in (answered, hung):
        escaped = int((outcome.directory / "escaped.pid").read_text())
        os.kill(escaped, signal.SIGKILL)  # outside the agent's group: this test's to end


async def test_crashing_agent_is_an_error(sandbox, tmp_path):
    (outcome,) = await run_batch(
        [load_pack("controlled-form")], CRASHING, out=tmp_path, progress=False, sandbox=sandbox
    )
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert outcome.status == "error" and attempt["agent_details"] == {"exit_code": 3}


async def test_mixed_batches_with_concurrency_two_finish(sandbox, tmp_path):
    packs = [load_pack("bid-intake"), load_pack("controlled-form")]
    started = time.monotonic()
    batches = await asyncio.gather(  # one batch per agent, all at once on the shared sandbox
        run_batch(packs, EXAMPLE, out=tmp_path, progress=False, sandbox=sandbox, concurrency=2),
        run_batch(packs, HUNG, out=tmp_path, progress=False, sandbox=sandbox, concurrency=2, time_limit=2),
        run_batch(packs, CRASHING, out=tmp_path, progress=False, sandbox=sandbox, concurrency=2),
    )
    statuses = [[outcome.status for outcome in batch] for batch in batches]
    assert statuses == [["completed", "completed"], ["timeout", "timeout"], ["error", "error"]]
    assert time.monotonic() - started < 20
    for outcome in batches[1]:
        assert await wait_until_gone(int((outcome.directory / "agent.pid").read_text())) == []


async def test_the_prompt_file_is_found_from_the_attempt_folder_when_out_is_relative(sandbox, tmp_path, monkeypatch):
    """The agent runs in its attempt folder, so a prompt path relative to where `sandbox run` started
    would not resolve there: the path it is given is absolute."""
    monkeypatch.chdir(tmp_path)
    agent = 'cmd:test -r "$SANDBOX_PROMPT_FILE" && head -c 9 "$SANDBOX_PROMPT_FILE"; echo " $SANDBOX_PROMPT_FILE"'
    (outcome,) = await run_batch(
        [load_pack("controlled-form")], agent, out=Path("relative-out"), progress=False, sandbox=sandbox
    )
    output = (outcome.directory / "output.txt").read_text()
    prompt, path = output.split(" ", 1)
    assert path.strip() == str((tmp_path / outcome.directory / "prompt.txt").resolve())
    assert prompt == (tmp_path / outcome.directory / "prompt.txt").read_text()[:9]


async def test_an_agent_stopped_while_its_process_starts_is_ended_all_the_same(tmp_path):
    """The stop comes after the process was spawned and before its pipes are connected (the
    spawn's first step): under load, a batch stopped as an agent started left it running."""
    from sandbox.runner.agents.command import CommandAgent
    from sandbox.runner.task import AgentTask

    pid_file = tmp_path / "agent.pid"
    agent = CommandAgent(f"echo $$ > {shlex.quote(str(pid_file))}; sleep 60")
    task = AgentTask("p", "w", "prompt", "key", 60.0, "", {}, sandbox_url="http://127.0.0.1:9", workdir=tmp_path)
    running = asyncio.ensure_future(agent.run(task))
    await asyncio.sleep(0)  # the spawn's first step: the process exists, its pipes not yet
    running.cancel()
    done, _ = await asyncio.wait([running], timeout=30)
    assert done and running.cancelled()
    for _ in range(100):  # the shell writes its pid even if it is killed a moment later
        if pid_file.is_file() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    else:
        return  # killed before it wrote anything: nothing is left running
    assert await wait_until_gone(int(pid_file.read_text())) == []


def test_a_usage_file_that_cannot_be_read_says_why_in_the_attempts_details(tmp_path):
    from sandbox.runner.agents.command import reported_usage

    usage = tmp_path / "usage.json"
    assert reported_usage(usage) == (None, {})  # the agent reported nothing: nothing to say
    good = {"model": "m", "input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 2}
    usage.write_text(json.dumps(good))
    assert reported_usage(usage) == ({"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 2}, {"model": "m"})
    usage.write_text('{"input_tokens": ')
    assert reported_usage(usage)[1]["usage_problem"].startswith("usage.json is unreadable: ")
    usage.write_text(json.dumps({**good, "output_tokens": -5}))
    counts, facts = reported_usage(usage)
    assert counts is None and facts == {
        "model": "m",
        "usage_problem": "usage.json: output_tokens (token counts are whole numbers of at least 0)",
    }
    usage.write_text(json.dumps({**good, "input_tokens": True}))  # a bool is no count (the record refused it)
    counts, facts = reported_usage(usage)
    assert counts is None and facts["usage_problem"].startswith("usage.json: input_tokens"), facts
    usage.write_text("[1, 2]")
    assert reported_usage(usage) == (None, {"usage_problem": "usage.json is not a JSON object"})
    usage.write_text("[" * 100_000 + "]" * 100_000)  # deeper than the JSON reader goes
    assert reported_usage(usage) == (None, {"usage_problem": "usage.json is unreadable: nested too deep"})
    usage.write_bytes(b'{"input_tokens": 1, "model": "' + b"m" * (1024 * 1024) + b'"}')
    assert reported_usage(usage)[1]["usage_problem"] == f"usage.json is over {1024 * 1024} bytes: not read"
    usage.write_bytes(b'{"input_tokens": 1, "model": "\xff"}')  # not UTF-8
    assert reported_usage(usage)[1]["usage_problem"].startswith("usage.json is unreadable: 'utf-8' codec")
    usage.write_text(json.dumps({"input_tokens": 10, "cache_read_input_tokens": 5000, "output_tokens": 1}))
    assert reported_usage(usage) == ({"input_tokens": 10, "cache_read_input_tokens": 5000, "output_tokens": 1}, {})
    usage.unlink()
    os.mkfifo(usage)  # opening it waited for a writer: the event loop, and every attempt of the batch, with it
    assert reported_usage(usage) == (None, {"usage_problem": "usage.json is not a regular file: not read"})
