"""Two batches started in the same second with the same --out never share a folder or a trace
file, and an attempt never writes into an existing folder (issue 12, item 13)."""

from __future__ import annotations

import asyncio

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.reference_agent import ReferenceAgent
from sandbox.runner.attempt import run_attempt
from sandbox.runner.batch import exclusive_dir, run_batch
from toolserver.contract.trace import read_trace


async def test_two_batches_in_the_same_second_get_their_own_folders(sandbox, tmp_path):
    pack = load_pack("controlled-form")
    agent = 'cmd:"true"'  # answers nothing at once: the folders are what is tested here
    first, second = await asyncio.gather(
        run_batch([pack], agent, out=tmp_path, progress=False, sandbox=sandbox),
        run_batch([pack], agent, out=tmp_path, progress=False, sandbox=sandbox),
    )
    folders = {first[0].directory, second[0].directory}
    assert len(folders) == 2 and len({f.parent for f in folders}) == 2
    for folder in folders:
        trace = read_trace(folder / "trace.jsonl")
        assert trace.problems == [] and trace.header["run_id"] and trace.end is not None
        assert (folder / "trace.jsonl").read_text().count('"type": "run"') == 1


def test_exclusive_dir_never_reuses_a_name(tmp_path):
    made = [exclusive_dir(tmp_path, "20260101-000000-agent") for _ in range(3)]
    assert [p.name for p in made] == ["20260101-000000-agent", "20260101-000000-agent-2", "20260101-000000-agent-3"]


async def test_an_attempt_refuses_an_existing_folder(sandbox, tmp_path):
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "trace.jsonl").write_text("someone else's trace\n")
    with pytest.raises(FileExistsError):
        await run_attempt(sandbox, load_pack("controlled-form"), ReferenceAgent(), folder)
    assert (folder / "trace.jsonl").read_text() == "someone else's trace\n"
