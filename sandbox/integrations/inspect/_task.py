"""The pieces of an Inspect task on a sandbox pack: dataset, solver (MCP tools), scorer."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import mcp_connection, mcp_server_stdio

from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring import score_attempt
from sandbox.runner.attempt import new_site_key
from toolserver.contract.trace import read_trace

TRACE_DIR = "sandbox_trace_dir"
ELAPSED = "sandbox_elapsed_seconds"  # the agent's time, a duration: a log re-scored later reads it as it was


def sandbox_task(pack_id: str, *, site_key: str | None = None, trace_root: str | None = None) -> Task:
    """One pack as an Inspect task (one sample: the pack's prompt with a fresh site key)."""
    pack = load_pack(pack_id)
    if trace_root is not None:  # made here, at once: each sample's folder is made inside it
        Path(trace_root).mkdir(parents=True, exist_ok=True)
    key = site_key or new_site_key()
    sample = Sample(
        id=pack.id, input=pack.render_prompt(key), target=pack.id, metadata={"pack": pack.id, "site_key": key}
    )
    return Task(
        dataset=[sample],
        solver=sandbox_agent(pack.id, trace_root),
        scorer=sandbox_scorer(),
        time_limit=int(pack.card.time_limit_seconds),
        name=pack.id.replace("-", "_"),
    )


@solver
def sandbox_agent(pack_id: str, trace_root: str | None = None):
    """The model with the sandbox's browser tools (an MCP server per sample), looping on tool
    calls until it answers."""

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        trace_dir = Path(tempfile.mkdtemp(prefix=f"{pack_id}-", dir=trace_root))
        state.metadata[TRACE_DIR] = str(trace_dir)
        server = mcp_server_stdio(
            name="sandbox",
            command=sys.executable,
            args=["-m", "sandbox", "mcp", "--pack", pack_id, "--trace-dir", str(trace_dir)],
        )
        async with mcp_connection([server]):  # one connection for the whole sample: one run, one trace
            state = await use_tools(server)(state, generate_)
            # as `sandbox run` times an attempt: from just before the agent acts (the server process
            # started and connected) to its answer; said even when the sample's time limit cuts it off
            started = time.monotonic()
            try:
                state = await generate(tool_calls="loop")(state, generate_)
            finally:
                state.metadata[ELAPSED] = time.monotonic() - started
            return state

    return solve


@scorer(metrics={"qualified_pass": [mean()], "field_accuracy": [mean()], "critical_failures": [mean()]})
def sandbox_scorer():
    """The sandbox's scorer and gates on the sample's trace and the model's final output."""

    async def score(state: TaskState, target: Target) -> Score:
        pack = load_pack(state.metadata["pack"])
        traces = sorted(Path(state.metadata[TRACE_DIR]).glob("*.jsonl"))
        trace = read_trace(traces[-1]) if traces else None
        elapsed = state.metadata.get(ELAPSED)  # None (the solver never got to the agent): measured from the trace
        report = score_attempt(pack, state.output.completion, trace, elapsed, site_key=state.metadata["site_key"])
        return Score(
            value={
                "qualified_pass": float(report.qualified_pass),
                "field_accuracy": float(report.field_accuracy),
                "critical_failures": float(len(report.critical_failures)),
            },
            answer=state.output.completion[:2000],
            explanation="; ".join(report.reasons) or "qualified pass",
            metadata={
                "score_report": report.model_dump(mode="json"),
                "trace": str(traces[-1]) if traces else None,
                "elapsed_seconds": elapsed,
            },
        )

    return score
