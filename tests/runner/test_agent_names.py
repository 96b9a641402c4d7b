"""One name per agent of a batch, decided on the driver (the made agent's, or its label), for
every attempt whatever its path: one that ran, one the sandbox could not run, one whose Ray
worker died; and its relative paths mean the driver's working directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions, make_agent
from sandbox.runner.batch import check_names, decided, run_batch, summarise
from sandbox.runner.executors import BatchAgent


async def test_an_attempt_that_could_not_run_is_recorded_under_the_name_of_one_that_ran(own_sandbox, tmp_path):
    """The one that ran was ``think:0.5:reference`` (the made agent's name), the refused one
    ``think:0.50:reference`` (the spec): two rows of the table for one agent."""
    async with own_sandbox(max_runs=1) as own:  # two attempts at once: the second run is refused
        outcomes = await run_batch(
            [load_pack("controlled-form")], "think:0.50:reference", repeats=2, concurrency=2, out=tmp_path,
            progress=False, sandbox=own,
        )  # fmt: skip
    assert sorted(o.status for o in outcomes) == ["completed", "crashed"]
    assert {o.agent for o in outcomes} == {"think:0.5:reference"}
    assert {json.loads((o.directory / "attempt.json").read_text())["agent"] for o in outcomes} == {
        "think:0.5:reference"
    }
    (row,) = summarise(outcomes)
    assert row["attempts"] == 2


@pytest.mark.parametrize(
    ("first", "second"),
    [("think:0.5:reference", "think:0.50:reference"), ("reference", "reference:")],
)
async def test_two_specs_of_one_agent_are_one_name_twice(first, second, tmp_path):
    agents = [BatchAgent(first, AgentOptions()), BatchAgent(second, AgentOptions())]
    with pytest.raises(ValueError, match="two agents of the batch have the same name"):
        check_names(agents)
    with pytest.raises(ValueError, match="two agents of the batch have the same name"):  # before any browser starts
        await run_batch([load_pack("controlled-form")], agents, out=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_two_delays_are_two_names_and_a_whole_one_is_written_whole():
    """``:g`` named 0.1234567 and 0.1234568 alike (refused as one agent twice) and 1000000 1e+06."""
    check_names(
        [
            BatchAgent("think:0.1234567:reference", AgentOptions()),
            BatchAgent("think:0.1234568:reference", AgentOptions()),
        ]
    )
    assert decided(BatchAgent("think:1000000:reference", AgentOptions())).name == "think:1000000:reference"


def test_a_label_is_the_name_whatever_the_spec(tmp_path):
    agent = decided(BatchAgent("think:0.50:reference", AgentOptions(), "slow"))
    assert agent.name == "slow"
    assert decided(BatchAgent("think:0.50:reference", AgentOptions())).name == "think:0.5:reference"


def test_relative_paths_mean_the_drivers_working_directory_wherever_the_agent_is_made(tmp_path, monkeypatch):
    """A Ray worker makes the agent in a working directory of its own: the paths were its."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    (here / "runs" / "x").mkdir(parents=True)
    (here / "runs" / "x" / "trace.jsonl").write_text("")
    elsewhere.mkdir()
    monkeypatch.chdir(here)
    command = decided(BatchAgent("cmd:python3 agent.py", AgentOptions()))
    replay = decided(BatchAgent("replay:./runs/x/", AgentOptions()))
    model = decided(BatchAgent("openai:m", AgentOptions(cassette=Path("c.yaml"))))
    monkeypatch.chdir(elsewhere)  # as on a worker
    assert make_agent(command.spec, command.options).cwd == str(here)
    made = make_agent(replay.spec, replay.options)  # its trace is found: not "no trace.jsonl there"
    assert made.directory == here / "runs" / "x" and made.name == replay.name == "replay:runs/x"
    assert make_agent(model.spec, model.options).options.cassette == here / "c.yaml"
    assert os.getcwd() == str(elsewhere)
