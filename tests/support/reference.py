"""The reference-agent tests' shared steps: run one solver on a pack in-process on the warm
browser, score the attempt, and require a qualified, error-free pass."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.evaluation.packs import Pack, load_pack
from sandbox.evaluation.scoring import ScoreReport, score_attempt
from sandbox.runner.task import AgentTask, InProcessClient, Tools
from toolserver.contract.trace import Trace, parse_trace
from toolserver.faults import parse_faults

SITE_KEY = "reference-agent-test-key"


@dataclass
class Attempt:
    pack: Pack
    output: str
    trace: Trace
    elapsed: float
    report: ScoreReport

    @property
    def benchmark_error(self) -> str:
        """The reason of a benchmark-error answer (the output is nothing else)."""
        assert self.output.startswith("BENCHMARK_ERROR: "), self.output
        return self.output.removeprefix("BENCHMARK_ERROR: ")

    @property
    def record(self) -> dict:
        found = re.search(r"BENCHMARK_JSON_BEGIN\n(.*)\nBENCHMARK_JSON_END", self.output, re.S)
        assert found, self.output
        return json.loads(found.group(1))[0]


def pack_task(pack: Pack) -> AgentTask:
    """The task an agent gets for ``pack`` (what ``run_attempt`` hands it, without a client)."""
    return AgentTask(
        pack_id=pack.id,
        workflow=pack.card.workflow,
        prompt=pack.render_prompt(SITE_KEY),
        site_key=SITE_KEY,
        time_limit_seconds=pack.card.time_limit_seconds,
        input_text=pack.input_text,
        output_schema=pack.schema,
    )


async def run_solver(
    sandbox, solve, pack_id: str, mirror_roots: tuple[Path, ...] | None = None, faults: str | None = None
) -> Attempt:
    """One solver on one pack, on the shared warm browser (with its own mirror, and the
    ``--faults`` spec's faults, when given)."""
    pack = load_pack(pack_id)
    run = sandbox.create_run(
        policy=pack.policy(), header={"site_key": SITE_KEY}, mirror_roots=mirror_roots, faults=parse_faults(faults)
    )
    task = pack_task(pack)
    started = time.monotonic()
    try:
        output = await solve(Tools(InProcessClient(run)), task)
    finally:
        elapsed = time.monotonic() - started
        await run.close()
    trace = parse_trace(run.trace.text())
    return Attempt(pack, output, trace, elapsed, score_attempt(pack, output, trace, elapsed, site_key=SITE_KEY))


def assert_error_free_pass(attempt: Attempt) -> None:
    """A qualified, error-free pass, evidence included."""
    report = attempt.report
    wrong = [(f.name, f.expected, f.got, f.detail) for f in report.fields if not f.correct]
    assert report.output_contract.ok, report.output_contract.errors
    assert not wrong, wrong
    assert report.gates.ok, report.gates.failures
    missing = attempt.pack.scoring_pack().missing_fixtures()
    assert not missing, f"evidence fixtures {missing} are missing (generate them with scripts/make_fixtures.py)"
    assert report.evidence.score == 1.0, report.evidence.failures
    assert report.qualified_pass and report.error_free, report.reasons
