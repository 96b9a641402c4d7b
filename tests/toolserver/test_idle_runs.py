"""Runs no connection ends are reclaimed (issue 30, item 10): a run made with ``POST /runs`` that
its client abandons ends after ``http_run_idle_s`` without a tool call (``idle_timeout``), so
abandoned runs cannot fill ``max_runs`` for good; a busy run, a run with a call in flight, and
the runs the runner makes for its attempts (``sandbox run``, driven over HTTP by ``cmd:``
agents) are never ended by it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time

from pydantic import Field

from sandbox.evaluation.packs import load_pack
from sandbox.runner.attempt import run_attempt
from sandbox.runner.task import AgentResult, AgentTask
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace
from toolserver.registry import ToolArgs, ToolRegistry, tool
from toolserver.tools import ALL_TOOLS


class PauseArgs(ToolArgs):
    seconds: float = Field(description="How long the call takes.")


@tool("browser_pause", args=PauseArgs, side_effect="read_only", title="Pause", description="Take a while.", scope="run")
async def browser_pause(ctx, args: PauseArgs, response) -> None:
    await asyncio.sleep(args.seconds)
    response.add(paused=args.seconds)


async def trace_of(server, run_id: str):
    return parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())


async def test_an_abandoned_http_run_ends_and_frees_its_place(own_sandbox):
    async with own_sandbox(http_run_idle_s=1.5, max_runs=2) as own, http_client(own) as server:
        abandoned = (await (await server.post("/runs", json={})).json())["run_id"]
        busy = (await (await server.post("/runs", json={})).json())["run_id"]
        assert (await server.post("/runs", json={})).status == 429  # full
        deadline = time.monotonic() + 15
        while not own.runs[abandoned].closed and time.monotonic() < deadline:  # calls 0.15 s apart
            assert (await server.post(f"/runs/{busy}/tools/list_tools", json={})).status == 200
            await asyncio.sleep(0.15)
        assert own.runs[abandoned].closed and not own.runs[busy].closed
        trace = await trace_of(server, abandoned)
        assert trace.end is not None and trace.end["reason"] == "idle_timeout" and trace.calls == []
        assert (await server.delete(f"/runs/{abandoned}")).status == 404
        assert (await server.post("/runs", json={})).status == 201  # its place is free again
        assert (await server.delete(f"/runs/{busy}")).status == 200


async def test_a_call_in_flight_longer_than_the_idle_bound_keeps_the_run(own_sandbox):
    registry = ToolRegistry([*ALL_TOOLS, browser_pause])
    async with own_sandbox(http_run_idle_s=0.6, registry=registry) as own, http_client(own) as server:
        run_id = (await (await server.post("/runs", json={})).json())["run_id"]
        paused = await server.post(f"/runs/{run_id}/tools/browser_pause", json={"seconds": 1.5})
        assert (await paused.json())["ok"] and not own.runs[run_id].closed
        await asyncio.sleep(2.0)
        trace = await trace_of(server, run_id)
        assert [c.tool for c in trace.calls] == ["browser_pause"] and trace.end["reason"] == "idle_timeout"


class PatientAgent:
    """A ``cmd:``-like agent: it thinks longer than ``http_run_idle_s``, then calls a tool of its
    run over the HTTP API (as ``cmd:`` agents do with the URL and run id they are given)."""

    name = "patient"

    def __init__(self, server) -> None:
        self.server = server

    async def run(self, task: AgentTask) -> AgentResult:
        for _ in range(2):
            await asyncio.sleep(0.8)
            called = await self.server.post(f"/runs/{task.run_id}/tools/list_tools", json={})
            assert called.status == 200, await called.text()
        return AgentResult(output="{}")


async def test_the_runners_runs_end_with_their_attempt_not_when_idle(own_sandbox, tmp_path):
    async with own_sandbox(http_run_idle_s=0.3, named_run_idle_s=0.3) as own, http_client(own) as server:
        outcome = await run_attempt(
            own, load_pack("controlled-form"), PatientAgent(server), tmp_path / "attempt", screenshots="none"
        )
        trace = parse_trace((outcome.directory / "trace.jsonl").read_text(encoding="utf-8"))
        assert [c.tool for c in trace.calls] == ["list_tools", "list_tools"] and all(c.ok for c in trace.calls)
        assert trace.end is not None and trace.end["reason"] == "completed"


async def test_a_run_whose_end_cannot_be_written_leaves_the_sweep_going(own_sandbox, tmp_path):
    """Its trace could not be finished (the folder gone, a file in its place): the OSError ended the
    sweep for good, and abandoned runs were never ended again."""
    traces = tmp_path / "traces"
    async with own_sandbox(http_run_idle_s=0.3, trace_dir=traces) as own, http_client(own) as server:
        first = (await (await server.post("/runs", json={})).json())["run_id"]
        shutil.rmtree(traces)
        traces.write_text("not a folder")  # the trace cannot be written anew at its path
        for _ in range(40):
            if own.runs[first].closed:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # its end under way meets the trace it cannot write
        traces.unlink()
        second = (await (await server.post("/runs", json={})).json())["run_id"]
        for _ in range(40):
            if own.runs[second].closed:
                break
            await asyncio.sleep(0.05)
        assert own.runs[first].closed and own.runs[second].closed  # the sweep went on
        assert (await trace_of(server, second)).end["reason"] == "idle_timeout"


async def test_a_call_that_outlasts_its_runs_end_keeps_its_trace_line_before_run_end(own_sandbox, tmp_path):
    """The end waits ``close_timeout_s`` for a call in flight, then wrote ``run_end``: the call's own
    line came after it and was dropped (a trace file) or written after ``run_end`` (a trace in
    memory), and a call waiting for its turn behind it wrote a line after ``run_end`` too."""
    registry = ToolRegistry([*ALL_TOOLS, browser_pause])
    for trace_dir in (tmp_path, None):
        own_config = own_sandbox(close_timeout_s=0.2, trace_dir=trace_dir, registry=registry)
        async with own_config as own, http_client(own) as server:
            run_id = (await (await server.post("/runs", json={})).json())["run_id"]
            slow = asyncio.ensure_future(server.post(f"/runs/{run_id}/tools/browser_pause", json={"seconds": 1.5}))
            await asyncio.sleep(0.3)
            queued = asyncio.ensure_future(server.post(f"/runs/{run_id}/tools/list_tools", json={}))
            await asyncio.sleep(0.1)
            assert (await server.delete(f"/runs/{run_id}")).status == 200
            trace = await trace_of(server, run_id)
            assert [(c.seq, c.tool, c.ok) for c in trace.calls] == [(1, "browser_pause", False)], trace_dir
            assert "did not finish within close_timeout_s" in trace.calls[0].error.message
            for reply in await asyncio.gather(slow, queued):
                assert reply.status == 404 and (await reply.json())["error"]["type"] == "unknown_run"
            said = (await queued.result().json())["error"]["message"]  # the words of every ended-run refusal
            assert said.startswith(f"run {run_id} has ended: nothing more can be done in it"), said
            await asyncio.sleep(0.2)
            text = (await (await server.get(f"/runs/{run_id}/trace")).text()).splitlines()
            assert json.loads(text[-1])["type"] == "run_end" and len(text) == 3, (trace_dir, text)


async def test_a_cancelled_call_leaves_nothing_for_a_later_end_to_write(own_sandbox):
    """A call cancelled in its handler (its client gone) left its place as the call in flight: an
    end that then timed out waiting for the next call (before its own flight) wrote the cancelled call's line."""
    registry = ToolRegistry([*ALL_TOOLS, browser_pause])
    async with own_sandbox(close_timeout_s=0.2, registry=registry) as own:
        run = own.create_run()
        cancelled = asyncio.ensure_future(run.call("browser_pause", {"seconds": 5}))
        await asyncio.sleep(0.2)
        cancelled.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await cancelled
        own.dispatcher.write_unfinished(run)  # what an end does that times out on the next call's turn
        await own.end_run(run.id)
        assert parse_trace(run.trace.text()).calls == []
