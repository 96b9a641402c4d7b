"""A batch stopped twice (Ctrl-C, then Ctrl-C again) after an attempt's agent answered, while its
run closes: the second stop is taken back as the first is, so the attempt is still recorded and its
trace finished. Before, the second cancelled the run's close itself, and the attempt ended in a
bare CancelledError before its files were written (no attempt.json), not in AttemptStopped."""

from __future__ import annotations

import asyncio
import json

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.reference_agent import ReferenceAgent
from sandbox.runner.attempt import AttemptStopped, run_attempt
from toolserver.contract.trace import read_trace


class StoppedTwiceAsItsRunCloses:
    """The reference agent, whose attempt's task is cancelled once it has answered, while its run
    closes, and again once the first stop was taken back and the close still runs."""

    name = "reference"

    def __init__(self) -> None:
        self.attempt: asyncio.Task | None = None
        self.stops_during_close = 0

    async def run(self, task):
        result = await ReferenceAgent().run(task)
        run = task.client.run

        async def stop_twice_while_it_closes() -> None:
            assert self.attempt is not None
            while not (run.closed or self.attempt.done()):
                await asyncio.sleep(0)
            self.attempt.cancel()
            # Until the first stop is taken back (if it never is, the attempt ends: no wait for ever).
            while self.attempt.cancelling() and not self.attempt.done():
                await asyncio.sleep(0)
            if run.ending is not None and not run.ending.done():
                self.stops_during_close = 2
                self.attempt.cancel()

        self.watcher = asyncio.ensure_future(stop_twice_while_it_closes())
        return result


async def test_a_second_stop_while_the_run_closes_is_taken_back_too(sandbox, tmp_path):
    agent = StoppedTwiceAsItsRunCloses()
    folder = tmp_path / "attempt"
    agent.attempt = asyncio.ensure_future(run_attempt(sandbox, load_pack("controlled-form"), agent, folder))
    try:
        await agent.attempt
    except BaseException as exc:  # noqa: BLE001 - which stop came out is what is checked
        raised: BaseException | None = exc
    else:
        raised = None
    await agent.watcher
    assert agent.stops_during_close == 2, "the second stop came after the close: nothing was tried"
    assert isinstance(raised, AttemptStopped), repr(raised)
    assert raised.outcome.status == "completed" and raised.outcome.qualified_pass
    assert {"output.txt", "score.json", "attempt.json"} <= {p.name for p in folder.iterdir()}
    assert json.loads((folder / "attempt.json").read_text())["qualified_pass"] is True
    end = read_trace(folder / "trace.jsonl").end
    assert end is not None and end["reason"] == "completed", end
