"""A batch's tool server serves each agent only the run it was given: a ``cmd:`` agent can neither
list the batch's runs (and find another attempt's id and site key) nor make runs of its own (and
take the slots the batch's next attempts need), over HTTP or MCP."""

from __future__ import annotations

import json
import shlex
import sys

from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch

PROBE = """
import json, os, urllib.error, urllib.request

base, run = os.environ["SANDBOX_URL"], os.environ["SANDBOX_RUN_ID"]
mcp = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
       "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}}

def status(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    try:
        with urllib.request.urlopen(urllib.request.Request(base + path, data, headers, method=method)) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"null")

said = {
    "list": status("GET", "/runs"),
    "make": status("POST", "/runs", {"pack": "controlled-form"}),
    "mcp_new": status("POST", "/mcp?pack=controlled-form", mcp),
    "own_tools": status("GET", f"/runs/{run}/tools")[0],
    "own_mcp": status("POST", f"/mcp?run={run}", mcp)[0],
}
with open(os.path.join(os.environ["SANDBOX_ATTEMPT_DIR"], "said.json"), "w") as out:
    json.dump(said, out)
"""


async def test_an_agent_of_a_batch_reaches_only_its_own_run(sandbox, tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    agent = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    (outcome,) = await run_batch([load_pack("controlled-form")], agent, out=tmp_path / "out", progress=False)
    said = json.loads((outcome.directory / "said.json").read_text())
    for asked in ("list", "make"):
        status, body = said[asked]
        assert (status, body["error"]["type"]) == (403, "runs_given"), (asked, said)
        assert "$SANDBOX_RUN_ID" in body["error"]["message"]
    status, body = said["mcp_new"]  # a JSON-RPC error, its type in data
    assert (status, body["error"]["data"]["type"]) == (403, "runs_given"), said
    assert "$SANDBOX_MCP_URL" in body["error"]["message"]
    assert (said["own_tools"], said["own_mcp"]) == (200, 200), said
