"""What a batch keeps whole: a pack named twice is refused (its two attempts shared one folder, and
the second overwrote the first's record); an attempt the sandbox could not run never writes into a
folder that holds another attempt; a ``cmd:`` agent that prints gigabytes ends as an error, its
answer read up to a cap; the batch's own server gives an agent the pack the batch runs; a run is
closed when its attempt fails before the agent ends; a file the attempt cannot write after its
agent ran is its own status, its agent's tokens kept; a `sandbox run` killed at once takes its
agent with it."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.command import MAX_OUTPUT_BYTES, MAX_STDERR_BYTES
from sandbox.runner.attempt import RECORDING_ERROR, UNRUN, AttemptFolderTaken, run_attempt
from sandbox.runner.batch import resolve_packs, run_batch, unrun_attempt
from sandbox.runner.selection import interruption
from tests.support.agents import TASK_PROMPT
from tests.support.processes import wait_until_gone
from toolserver.contract.trace import read_trace

SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))


def copy_of(pack_id: str, where: Path) -> Path:
    copy = where / pack_id
    shutil.copytree(load_pack(pack_id).dir, copy)
    return copy


def test_a_pack_named_twice_is_refused_however_it_is_named(tmp_path):
    # Before, both made the jobs of one folder (controlled-form-1): the second attempt failed to
    # make it and its "could not run" record overwrote the first attempt's.
    copy = copy_of("controlled-form", tmp_path / "copy")
    for names in (["controlled-form", "controlled-form"], ["controlled-form", str(copy)]):
        with pytest.raises(ValueError, match="a pack is named more than once .*controlled-form as controlled-form, "):
            resolve_packs(names)
    assert [pack.id for pack in resolve_packs(["controlled-form", "bid-intake"])] == ["controlled-form", "bid-intake"]


async def test_a_batch_given_one_pack_twice_is_refused_before_any_folder(sandbox, tmp_path):
    pack = load_pack("controlled-form")
    with pytest.raises(ValueError, match="a pack is named more than once"):
        await run_batch([pack, pack], "reference", out=tmp_path, progress=False, sandbox=sandbox)
    assert list(tmp_path.iterdir()) == []


async def test_an_attempt_that_cannot_run_leaves_another_attempts_folder_as_it_is(sandbox, tmp_path):
    pack = load_pack("controlled-form")
    (first,) = await run_batch([pack], "reference", out=tmp_path, progress=False, sandbox=sandbox)
    record = (first.directory / "attempt.json").read_text()
    with pytest.raises(AttemptFolderTaken):  # the folder is the first attempt's
        await run_attempt(sandbox, pack, _Refused(), first.directory)
    for exc in (AttemptFolderTaken("taken"), RuntimeError("the executor failed")):
        outcome = unrun_attempt(first.directory, pack, "reference", 1, exc)
        assert outcome.status == "crashed" and outcome.reason.startswith(UNRUN)
        assert (first.directory / "attempt.json").read_text() == record
        assert "not run" not in (first.directory / "score.txt").read_text()


class _Refused:
    """An agent whose turn is refused before it starts (as a model agent's cassette lock might fail)."""

    name = "refused"

    @asynccontextmanager
    async def turn(self):
        raise RuntimeError("no turn for this agent")
        yield  # pragma: no cover

    async def run(self, task):  # pragma: no cover: never reached
        raise AssertionError("the agent ran")


async def test_a_run_is_closed_when_its_attempt_fails_before_its_agent_ends(sandbox, tmp_path):
    # Before, the run stayed open (its trace had no run_end) until the whole sandbox stopped.
    with pytest.raises(RuntimeError, match="no turn"):
        await run_attempt(sandbox, load_pack("controlled-form"), _Refused(), tmp_path / "a")
    trace = read_trace(tmp_path / "a" / "trace.jsonl")
    assert trace.end is not None, trace
    header = json.loads((tmp_path / "a" / "trace.jsonl").read_text().splitlines()[0])
    assert header["run_id"] not in {run_id for run_id, run in sandbox.runs.items() if not run.closed}


async def test_an_agent_printing_more_than_the_cap_is_an_error_with_the_head_of_its_output(sandbox, tmp_path):
    # Before, all of it was read into memory, and copied again to decode it.
    over = MAX_OUTPUT_BYTES + 4096
    agent = f"cmd:head -c {over} /dev/zero | tr '\\0' a; head -c {MAX_STDERR_BYTES + 10} /dev/zero | tr '\\0' e >&2"
    (outcome,) = await run_batch([load_pack("controlled-form")], agent, out=tmp_path, progress=False, sandbox=sandbox)
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert outcome.status == "error" and f"output over {MAX_OUTPUT_BYTES} bytes" in attempt["error"], attempt
    assert (outcome.directory / "output.txt").stat().st_size == MAX_OUTPUT_BYTES
    stderr = (outcome.directory / "agent.stderr.txt").read_bytes()
    assert stderr.startswith(b"[sandbox: the first 10 bytes of ") and stderr.endswith(b"e" * MAX_STDERR_BYTES)


async def test_the_batchs_own_server_gives_the_agent_the_pack_the_batch_runs(tmp_path):
    # Before, the batch's server knew only the bundled packs: a changed copy of one got the
    # bundled prompt from GET /runs/{id}/task (and was scored against it by /answer).
    copy = copy_of("controlled-form", tmp_path / "mine")
    prompt = copy / "task_prompt.md"
    prompt.write_text(prompt.read_text() + "\nTHE COPY'S OWN LINE\n")
    (outcome,) = await run_batch([load_pack(copy)], TASK_PROMPT, out=tmp_path / "runs", progress=False)
    assert outcome.status == "completed", (outcome.directory / "agent.stderr.txt").read_text()
    output = (outcome.directory / "output.txt").read_text()
    assert "THE COPY'S OWN LINE" in output
    assert output.strip() == (outcome.directory / "prompt.txt").read_text().strip()


USAGE = '{"model": "m", "input_tokens": 7, "output_tokens": 3}'


async def test_a_file_that_cannot_be_written_after_the_agent_ran_keeps_what_it_ran(sandbox, tmp_path):
    # Before, it was recorded as "the sandbox could not run the attempt" (an interruption, which
    # --replace-interrupted re-ran), its status and tokens lost.
    agent = (
        f'cmd:echo \'{USAGE}\' > "$SANDBOX_ATTEMPT_DIR/usage.json"; mkdir "$SANDBOX_ATTEMPT_DIR/output.txt"; echo hi'
    )
    (outcome,) = await run_batch([load_pack("controlled-form")], agent, out=tmp_path, progress=False, sandbox=sandbox)
    assert outcome.status == RECORDING_ERROR, outcome
    assert outcome.reason.startswith("the agent ended completed, but its attempt could not be recorded: ")
    assert outcome.token_usage == {"input_tokens": 7, "output_tokens": 3} and outcome.elapsed_seconds is not None
    assert interruption(outcome) == ""
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert attempt["status"] == RECORDING_ERROR and attempt["agent_details"]["agent_status"] == "completed"
    assert attempt["token_usage"] == {"input_tokens": 7, "output_tokens": 3}
    assert read_trace(outcome.directory / "trace.jsonl").end is not None


async def test_a_sandbox_run_killed_at_once_takes_its_agent_with_it(tmp_path):
    # Before, SIGKILL (or a second SIGTERM, or the OOM killer) left the agent running.
    hanging = 'echo $$ > "$SANDBOX_ATTEMPT_DIR/agent.pid"; sleep 60'
    process = await asyncio.create_subprocess_exec(
        SANDBOX_CLI, "run", "controlled-form", "--agent", f"cmd:{hanging}", "--out", str(tmp_path), "--no-progress",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(1200):
        pids = [path for path in tmp_path.glob("*/*/agent.pid") if path.read_text().strip()]
        if pids:
            break
        assert process.returncode is None
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the agent never started")
    agent = int(pids[0].read_text())
    # `sandbox run` tells its guard the agent's group once the process is started (the agent may
    # write its pid first): a kill in that moment is not what this tests.
    await asyncio.sleep(1)
    process.send_signal(signal.SIGKILL)
    await process.wait()
    assert await wait_until_gone(agent) == []


class _BigAnswer:
    """An agent that answers at once with a 15 MB JSON answer (most of a second to score), and
    watches its attempt folder meanwhile: whether the event loop ran while the answer was scored
    (``output.txt`` written, ``score.json`` not yet)."""

    name = "big-answer"

    def __init__(self) -> None:
        answer = json.dumps({"notes": "a" * 15_000_000})  # made before the clock: not the attempt's time
        self.output = f"BENCHMARK_JSON_BEGIN\n{answer}\nBENCHMARK_JSON_END\n"
        self.watching: asyncio.Task | None = None

    async def run(self, task):
        from sandbox.runner.task import AgentResult

        self.watching = asyncio.ensure_future(self.watch(task.workdir))
        return AgentResult(output=self.output)

    @staticmethod
    async def watch(folder: Path) -> bool:
        while not (folder / "output.txt").exists():
            await asyncio.sleep(0.001)
        return not (folder / "score.json").exists()


async def test_an_attempt_is_scored_without_holding_up_the_others(sandbox, tmp_path):
    # Before, its trace was read and its answer scored on the event loop: every other attempt's
    # calls waited until its files were all written (1.6 s here).
    agent = _BigAnswer()
    outcome = await run_attempt(sandbox, load_pack("controlled-form"), agent, tmp_path / "a")
    assert outcome.status == "completed" and agent.watching is not None
    assert await agent.watching, "the event loop did not run while the answer was scored"
