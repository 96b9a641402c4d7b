"""The pieces of an Inspect task on a sandbox pack: dataset, solver (MCP tools), scorer."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import mcp_connection, mcp_server_stdio
from inspect_ai.util import LimitExceededError, sample_limits

from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring import score_attempt
from sandbox.runner.attempt import new_site_key
from sandbox.runner.recordings import INSPECT_CUT_OFF as CUT_OFF  # why the model gave no answer (an Inspect limit)
from sandbox.runner.recordings import INSPECT_ELAPSED as ELAPSED  # the agent's time, a duration
from toolserver.contract.trace import read_trace

TRACE_DIR = "sandbox_trace_dir"


def sandbox_task(pack_id: str, *, site_key: str | None = None, trace_root: str | None = None) -> Task:
    """One pack as an Inspect task (one sample: the pack's prompt with a fresh site key).
    ``pack_id``: a pack's id, or the absolute path of a pack folder. Relative paths (of the pack,
    of ``trace_root``) are refused or taken at the sample's run: ``inspect eval FILE@TASK`` calls
    the task function inside FILE's folder, and runs the samples in the folder it was run in."""
    folder = pack_folder(pack_id)
    pack = load_pack(folder or pack_id)
    if trace_root is not None and Path(trace_root).is_absolute():  # made at once; a relative one at each sample
        Path(trace_root).mkdir(parents=True, exist_ok=True)
    key = site_key or new_site_key()
    sample = Sample(
        id=pack.id, input=pack.render_prompt(key), target=pack.id, metadata={"pack": pack.id, "site_key": key}
    )
    return Task(
        dataset=[sample],
        solver=sandbox_agent(folder or pack.id, trace_root),  # the server and the scorer load the pack given
        scorer=sandbox_scorer(folder),
        time_limit=int(pack.card.time_limit_seconds),
        name=pack.id.replace("-", "_"),
    )


def pack_folder(ref: str) -> str | None:
    """The pack folder's absolute path ``ref`` names, None for a pack id. A relative path is
    refused: Inspect would read it from the tasks file's folder, where it calls the task function."""
    path = Path(ref)
    if len(path.parts) > 1 or ref.startswith((".", "~")):
        path = path.expanduser()
        if not path.is_absolute():
            raise ValueError(
                f"pack {ref!r} is a relative path, which Inspect would read from the tasks file's folder: "
                f"give the pack's id, or its folder's absolute path (-T pack=$PWD/{ref.removeprefix('./')})"
            )
        return str(path)
    return None


@solver
def sandbox_agent(pack_id: str, trace_root: str | None = None):
    """The model with the sandbox's browser tools (an MCP server per sample, with this process's
    environment: SANDBOX_CHROMIUM and the like), looping on tool calls until it answers.
    ``pack_id``: the pack's id or its folder's absolute path; ``trace_root``: a relative one is
    taken from the folder the sample runs in."""

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        root = None
        if trace_root is not None:
            root = Path(trace_root).absolute()
            root.mkdir(parents=True, exist_ok=True)
        trace_dir = Path(tempfile.mkdtemp(prefix=f"{Path(pack_id).name}-", dir=root))
        state.metadata[TRACE_DIR] = str(trace_dir)
        server = mcp_server_stdio(
            name="sandbox",
            command=sys.executable,
            args=["-m", "sandbox", "mcp", "--pack", pack_id, "--trace-dir", str(trace_dir)],
            env=dict(os.environ),  # else the MCP SDK passes HOME, LOGNAME, PATH, SHELL, TERM and USER alone
        )
        async with mcp_connection([server]):  # one connection for the whole sample: one run, one trace
            state = await use_tools(server)(state, generate_)
            # as `sandbox run` times an attempt: from just before the agent acts (the server process
            # started and connected) to its answer; said even when the sample's time limit cuts it off
            started = time.monotonic()
            answered = False
            try:
                state = await generate(tool_calls="loop")(state, generate_)
                answered = True
            except LimitExceededError as exc:  # a token, message or turn limit: raised in the loop
                state.metadata[CUT_OFF] = f"{exc.type} limit ({exc.limit:g})"
                raise
            finally:
                state.metadata[ELAPSED] = time.monotonic() - started
                if not answered:
                    cut_off(state)
            return state

    return solve


def cut_off(state: TaskState) -> None:
    """Say in the sample why the model did not answer. A time limit cancels the solver (its
    LimitExceededError is raised outside it): then the agent's time is the sample's, at least the
    limit, as `sandbox run` times an attempt stopped at its limit."""
    try:
        clock = sample_limits().time
    except RuntimeError:  # no running sample (the solver called alone)
        clock = None
    if clock is not None and clock.limit is not None and clock.usage >= clock.limit:
        state.metadata[CUT_OFF] = f"time limit ({clock.limit:g} s)"
        state.metadata[ELAPSED] = max(state.metadata[ELAPSED], clock.usage)
    state.metadata.setdefault(CUT_OFF, "stopped before the model answered")


def no_answer(state: TaskState) -> str | None:
    """Why the sample's last output is no answer (None: it is one): the sample hit a limit, or the
    model's last turn made tool calls (Inspect scores its last output all the same)."""
    if reason := state.metadata.get(CUT_OFF):
        return f"no answer: the sample hit an Inspect {reason} (scored as an empty answer)"
    if state.output.choices and state.output.message.tool_calls:
        return "no answer: the model's last turn made tool calls (scored as an empty answer)"
    return None


@scorer(metrics={"qualified_pass": [mean()], "field_accuracy": [mean()], "critical_failures": [mean()]})
def sandbox_scorer(pack_dir: str | None = None):
    """The sandbox's scorer and gates on the sample's trace and the model's final output (an
    empty one when the model did not answer: ``no_answer``). ``pack_dir``: the folder of a pack
    given by its path (None: the sample's pack id)."""

    async def score(state: TaskState, target: Target) -> Score:
        pack = load_pack(pack_dir or state.metadata["pack"])
        traces = sorted(Path(state.metadata[TRACE_DIR]).glob("*.jsonl"))
        trace = read_trace(traces[-1]) if traces else None
        elapsed = state.metadata.get(ELAPSED)  # None (the solver never got to the agent): measured from the trace
        unanswered = no_answer(state)
        answer = "" if unanswered else state.output.completion
        report = score_attempt(pack, answer, trace, elapsed, site_key=state.metadata["site_key"])
        reasons = ([unanswered] if unanswered else []) + report.reasons
        return Score(
            value={
                "qualified_pass": float(report.qualified_pass),
                "field_accuracy": float(report.field_accuracy),
                "critical_failures": float(len(report.critical_failures)),
            },
            answer=answer[:2000],
            explanation="; ".join(reasons) or "qualified pass",
            metadata={
                "score_report": report.model_dump(mode="json"),
                "trace": str(traces[-1]) if traces else None,
                "elapsed_seconds": elapsed,
            },
        )

    return score
