"""An MCP-speaking external agent runs under ``sandbox run`` unchanged: ``cmd:`` agents get
SANDBOX_MCP_URL bound to their run, and scripts/example_mcp_agent.py (the official MCP client)
qualifies on controlled-form, its calls in the attempt's own trace."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch
from toolserver.contract.trace import read_trace

ROOT = Path(__file__).resolve().parents[2]
MCP_EXAMPLE = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'scripts' / 'example_mcp_agent.py'))}"


async def test_example_mcp_agent_qualifies_on_controlled_form(sandbox, tmp_path):
    (outcome,) = await run_batch(
        [load_pack("controlled-form")], MCP_EXAMPLE, out=tmp_path, progress=False, sandbox=sandbox
    )
    folder = outcome.directory
    attempt = json.loads((folder / "attempt.json").read_text())
    assert attempt["status"] == "completed", (attempt["error"], (folder / "agent.stderr.txt").read_text())
    assert outcome.qualified_pass and outcome.field_accuracy == 1.0
    trace = read_trace(folder / "trace.jsonl")
    assert trace.header["run_id"] == attempt["run_id"] and trace.end["reason"] == "completed"
    assert [c.tool for c in trace.calls] == [
        "browser_start_session",
        "browser_snapshot",
        "browser_type",
        "browser_type",
        "browser_click",
        "browser_snapshot",
        "browser_type",
        "browser_type",
        "browser_click",
        "browser_snapshot",
        "browser_close",
    ]
    assert all(c.ok for c in trace.calls)


async def test_cmd_agents_get_an_mcp_url_bound_to_their_run(sandbox, tmp_path):
    (outcome,) = await run_batch(
        [load_pack("controlled-form")],
        'cmd:echo "$SANDBOX_MCP_URL|$SANDBOX_RUN_ID"',
        out=tmp_path,
        progress=False,
        sandbox=sandbox,
    )
    url, run_id = (outcome.directory / "output.txt").read_text().strip().split("|")
    assert url.startswith("http://127.0.0.1:") and url.endswith(f"/mcp?run={run_id}")
