"""The time an answer is scored with is the run's own, to the answer: on the run's monotonic
clock, and without the closing that follows it (review of the gates, item 3)."""

from __future__ import annotations

from toolserver.api import Sandbox
from toolserver.contract.trace import parse_trace

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"


class TimedTasks:
    """The shared sandbox's task provider, keeping the elapsed time each answer is scored with."""

    def __init__(self, tasks) -> None:
        self.tasks = tasks
        self.elapsed: list[float] = []

    def task(self, pack: str, site_key: str) -> dict:
        return self.tasks.task(pack, site_key)

    def score(self, pack: str, output: str, trace_text: str, elapsed_seconds: float, site_key: str | None) -> dict:
        self.elapsed.append(elapsed_seconds)
        return self.tasks.score(pack, output, trace_text, elapsed_seconds, site_key)


async def test_an_answer_is_timed_before_its_run_closes(sandbox):
    """It was timed by the wall clock after the run closed: a clock step changed it (backwards,
    to a negative time), and closing the sessions counted as the agent's time."""
    timed = TimedTasks(sandbox.tasks)
    async with Sandbox(sandbox.config, policies=sandbox.policies, tasks=timed, host=sandbox.host) as own:
        run = own.create_run("controlled-form", header={"site_key": "timed"})
        start = {"provider": "kernel", "site_key": "timed", "clear_cookies": False, "url": FORM_URL}
        assert (await run.call("browser_start_session", start))["ok"]
        last_call_end = run.trace.now()
        await own.answer(run, "no answer")
        trace = parse_trace(run.trace.text())
    assert trace.end["reason"] == "answered"
    [elapsed] = timed.elapsed
    # after the agent's last call, and before run_end, which is written once the session has closed
    assert last_call_end <= elapsed < trace.end["t"], (last_call_end, elapsed, trace.end["t"])
