"""The main job end to end: `sandbox run` with the reference agent, attempt folders,
the summary, replay of a recorded attempt (divergence and --until), and the proof that the
reference agent reads the page, not the expected record."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.reference_agent import ReferenceAgent
from sandbox.runner.attempt import AttemptStopped, run_attempt
from sandbox.runner.batch import format_table, run_batch, summarise
from sandbox.runner.replay import replay
from tests.support.mirrors import mirror_with_changes
from toolserver.contract.trace import read_trace


@pytest.fixture(scope="module")
def attempt_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("attempts")


async def test_batch_writes_attempt_folders_and_summary(sandbox, attempt_root):
    packs = [load_pack("controlled-form"), load_pack("bid-intake")]
    outcomes = await run_batch(packs, "reference", out=attempt_root, progress=False, sandbox=sandbox, concurrency=2)
    assert [o.qualified_pass for o in outcomes] == [True, True], [o.directory for o in outcomes]
    for outcome in outcomes:
        folder = outcome.directory
        assert {p.name for p in folder.iterdir()} >= {
            "trace.jsonl",
            "output.txt",
            "score.json",
            "attempt.json",
            "prompt.txt",
        }
        attempt = json.loads((folder / "attempt.json").read_text())
        assert attempt["status"] == "completed" and attempt["site_key"].startswith("bench-")
        assert attempt["site_key"] in (folder / "prompt.txt").read_text()
        assert attempt["tool_calls_total"] == sum(attempt["tool_calls"].values()) > 0
        assert attempt["versions"]["playwright"] and attempt["pack_checksum"]
        assert all(attempt["versions"][name] != "not installed" for name in ("mcp", "anthropic", "openai"))
        prompt = (folder / "prompt.txt").read_text()
        assert "Expected output records" not in prompt
        trace = read_trace(folder / "trace.jsonl")
        assert trace.header["site_key"] == attempt["site_key"] and trace.end is not None
    keys = [json.loads((o.directory / "attempt.json").read_text())["site_key"] for o in outcomes]
    assert len(set(keys)) == len(keys)
    rows = summarise(outcomes)
    assert [r["qualified_passes"] for r in rows] == [1, 1]
    assert "bid-intake" in format_table(rows)


async def test_replay_matches_then_finds_a_divergence(sandbox, attempt_root):
    pack = load_pack("controlled-form")
    folder = attempt_root / "replay-source"
    outcome = await run_attempt(sandbox, pack, ReferenceAgent(), folder)
    assert outcome.qualified_pass
    report, _ = await replay(folder, sandbox=sandbox)
    assert report.first_divergence is None and report.compared == report.calls_recorded
    assert report.rescore["qualified_pass"] is True

    tampered = attempt_root / "replay-tampered"
    shutil.copytree(folder, tampered)
    lines = (tampered / "trace.jsonl").read_text().splitlines()
    calls = [i for i, line in enumerate(lines) if '"type": "call"' in line and '"browser_snapshot"' in line]
    target = json.loads(lines[calls[-1]])
    target["result"]["snapshot"] = target["result"]["snapshot"].replace("São Paulo", "Sao Paulo")
    lines[calls[-1]] = json.dumps(target, ensure_ascii=False)
    (tampered / "trace.jsonl").write_text("\n".join(lines) + "\n")
    report, _ = await replay(tampered, sandbox=sandbox)
    assert report.first_divergence["seq"] == target["seq"]
    assert "snapshot" in report.first_divergence["difference"]


async def test_replay_until_keeps_the_session_open(sandbox, attempt_root):
    folder = attempt_root / "replay-source"
    report, run = await replay(folder, sandbox=sandbox, until=2, keep_open=True)
    assert report.calls_replayed == 2
    reply = await run.call("browser_snapshot", {})
    assert reply["ok"] and "Enter User Details" in reply["result"]["snapshot"]
    await run.close()


async def test_reference_agent_follows_a_changed_mirror_fact(sandbox, tmp_path):
    """Change the postal code in a copy of the bid-intake notice data: the reference agent's
    answer must follow the page, and the score must fail on that field."""
    mirror = mirror_with_changes(
        tmp_path, "sam.gov", {"api/opps/v2/bid-intake/9998b42f9e27421caa565fead7d8d416.json": [('"78596"', '"78597"')]}
    )
    outcome = await run_attempt(
        sandbox, load_pack("bid-intake"), ReferenceAgent(), tmp_path / "attempt", mirror_roots=(mirror,)
    )
    output = (tmp_path / "attempt" / "output.txt").read_text()
    record = json.loads(re.search(r"BENCHMARK_JSON_BEGIN(.*)BENCHMARK_JSON_END", output, re.S).group(1))[0]
    assert record["place"]["postal_code"] == "78597"
    score = json.loads((tmp_path / "attempt" / "score.json").read_text())
    field = next(f for f in score["fields"] if f["name"] == "place.postal_code")
    assert field["correct"] is False and field["got"] == "78597"
    assert outcome.error_free is False


class StoppedAsItsRunCloses:
    """The reference agent, whose batch is stopped (the attempt's task cancelled, as Ctrl-C does)
    once it has answered, while its run closes."""

    name = "reference"

    def __init__(self) -> None:
        self.attempt: asyncio.Task | None = None

    async def run(self, task):
        result = await ReferenceAgent().run(task)
        run = task.client.run

        async def stop_while_it_closes() -> None:
            while not run.closed:
                await asyncio.sleep(0)
            assert self.attempt is not None
            self.attempt.cancel()

        self.watcher = asyncio.ensure_future(stop_while_it_closes())
        return result


async def test_a_stop_while_the_run_closes_keeps_the_finished_attempt(sandbox, tmp_path):
    """A stop after the agent answered, while its run closed: output.txt, score.json and
    attempt.json were never written, and the batch lost the attempt."""
    agent = StoppedAsItsRunCloses()
    folder = tmp_path / "attempt"
    agent.attempt = asyncio.ensure_future(run_attempt(sandbox, load_pack("controlled-form"), agent, folder))
    with pytest.raises(AttemptStopped) as stopped:
        await agent.attempt
    assert stopped.value.outcome.status == "completed" and stopped.value.outcome.qualified_pass
    assert {"output.txt", "score.json", "attempt.json"} <= {p.name for p in folder.iterdir()}
    assert json.loads((folder / "attempt.json").read_text())["qualified_pass"] is True
    assert read_trace(folder / "trace.jsonl").end is not None


async def test_the_outcome_and_the_folder_read_back_have_one_time(sandbox, tmp_path):
    """The outcome held the unrounded time, attempt.json its round(3): a summary rebuilt from the
    folders could have another median than the batch's."""
    from sandbox.runner.folders import AttemptFolder, outcome

    live = await run_attempt(sandbox, load_pack("controlled-form"), ReferenceAgent(), tmp_path / "attempt")
    assert live.elapsed_seconds == outcome(AttemptFolder.load(tmp_path / "attempt")).elapsed_seconds
    assert live.elapsed_seconds == json.loads((tmp_path / "attempt" / "attempt.json").read_text())["elapsed_seconds"]
