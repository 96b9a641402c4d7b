"""A client nobody here wrote: the MCP Inspector's CLI mode (npm ``@modelcontextprotocol/inspector``,
pinned in node/package-lock.json, installed by ``make node`` / ``make test``) lists the tools
and calls ``browser_start_session`` against ``sandbox mcp`` (stdio), and chains
``browser_start_session`` + ``browser_snapshot`` on one run over streamable HTTP (``?run=``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from toolserver.contract.names import TOOL_NAMES
from toolserver.contract.trace import parse_trace, read_trace

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / "node" / "node_modules" / ".bin" / "mcp-inspector"
SANDBOX_CLI = str(Path(sys.executable).with_name("sandbox"))
FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"
START = {"provider": "kernel", "site_key": "inspector-key", "clear_cookies": False, "url": FORM_URL}


async def inspector(*args: str) -> dict:
    # --connect-timeout: `sandbox mcp` answers initialize once Chromium is up, which on a busy
    # machine can take longer than the Inspector's default 15 s.
    assert INSPECTOR.exists(), f"{INSPECTOR} is missing: run `make node` (npm ci in node/)"
    process = await asyncio.create_subprocess_exec(
        str(INSPECTOR),
        "--cli",
        "--format",
        "json",
        "-q",
        "--connect-timeout",
        "120000",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == 0, stderr.decode()
    return json.loads(stdout)["result"]


async def test_inspector_lists_tools_and_starts_a_session_over_stdio(tmp_path):
    server = [SANDBOX_CLI, "mcp", "--pack", "controlled-form", "--trace-dir", str(tmp_path)]
    listed, started = await asyncio.gather(  # two Inspectors, each spawning its own server
        inspector("--method", "tools/list", *server),
        inspector(
            "--method",
            "tools/call",
            "--tool-name",
            "browser_start_session",
            "--tool-args-json",
            json.dumps(START),
            *server,
        ),
    )
    assert [t["name"] for t in listed["tools"]] == list(TOOL_NAMES)
    assert all(t["annotations"]["openWorldHint"] is False and t["title"] for t in listed["tools"])
    assert started["isError"] is False and started["structuredContent"]["url"] == FORM_URL
    traces = [read_trace(path) for path in sorted(tmp_path.glob("run_*.jsonl"))]
    assert sorted(len(t.calls) for t in traces) == [0, 1] and all(t.end["reason"] == "mcp_disconnected" for t in traces)


async def test_inspector_chains_calls_on_one_run_over_streamable_http(client):
    run = await (await client.post("/runs", json={"pack": "controlled-form"})).json()
    url = str(client.make_url(f"/mcp?run={run['run_id']}"))
    started = await inspector(
        "--method", "tools/call", "--tool-name", "browser_start_session", "--tool-args-json", json.dumps(START), url
    )
    assert started["isError"] is False
    snapshot = await inspector("--method", "tools/call", "--tool-name", "browser_snapshot", url)
    assert snapshot["content"][0]["text"] == snapshot["structuredContent"]["snapshot"]
    assert 'textbox "Name' in snapshot["structuredContent"]["snapshot"]
    trace = parse_trace(await (await client.get(f"/runs/{run['run_id']}/trace")).text())
    assert [c.tool for c in trace.calls] == ["browser_start_session", "browser_snapshot"] and trace.end is None


async def test_inspector_calls_one_per_process_share_a_named_run(client):
    """The Inspector's CLI opens a connection per invocation: a run name keeps them on one run."""
    url = str(client.make_url("/mcp?pack=controlled-form&name=inspector-cli"))
    started = await inspector(
        "--method", "tools/call", "--tool-name", "browser_start_session", "--tool-args-json", json.dumps(START), url
    )
    assert started["isError"] is False
    snapshot = await inspector("--method", "tools/call", "--tool-name", "browser_snapshot", url)
    assert snapshot["isError"] is False and 'textbox "Name' in snapshot["content"][0]["text"]
    listed = await (await client.get("/runs")).json()
    (run,) = [r for r in listed["runs"] if r.get("name") == "inspector-cli"]
    trace = parse_trace(await (await client.get(f"/runs/{run['run_id']}/trace")).text())
    assert [c.tool for c in trace.calls] == ["browser_start_session", "browser_snapshot"] and trace.end is None
    assert (await client.delete(f"/runs/{run['run_id']}")).status == 200
