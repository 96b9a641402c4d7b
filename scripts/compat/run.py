"""The framework compatibility suite (``make compat``): agent frameworks nobody here wrote, each
in its own virtualenv, drive the controlled-form workflow over ``sandbox mcp`` (stdio) and over
``sandbox serve``'s ``/mcp`` (streamable HTTP), with a scripted model instead of a language model.

For every client in ``CLIENTS``:

1. its venv ``.compat/<framework>/`` from ``scripts/compat/<framework>/requirements.txt`` (pinned;
   a ``# python: X.Y`` line picks the interpreter), installed again only when that file or the
   interpreter changed;
2. the client on each transport, with a time limit: it takes the task (the MCP prompt ``task``,
   or the HTTP API's ``GET /runs/{id}/task`` for a framework that cannot read prompts), and its
   agent, on the scripted model, starts a Kernel session, snapshots, calls a missing ref and a
   wrongly typed argument (both must come back as tool errors the agent reads), fills the first
   step, clicks Next and snapshots the second step (``form_policy.py``);
3. the runs and traces the client produced (one client session should be one run and one
   trace), and the trace checked call by call: what the server saw, not only what the agent said;
4. once per framework, its own schema converters on ``sandbox tools --format ...``.

It prints the matrix and writes it as JSON (``scripts/compat/matrix.json`` by default), and exits
1 when a client session failed. Nothing
leaves 127.0.0.1 while the clients run: the model is the scripted server on loopback, telemetry
is switched off by environment, and a proxy on a closed loopback port catches any other request.
Runs in the project's venv; imports nothing from the sandbox (it uses the ``sandbox`` command,
as a user would).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VENVS = ROOT / ".compat"
SANDBOX = ROOT / ".venv" / "bin" / "sandbox"
PYTHON = ROOT / ".venv" / "bin" / "python"
PACK = "controlled-form"
REPORT_MARKER = "COMPAT_CLIENT "
FORMATS = ("mcp", "openai", "openai-strict", "anthropic", "json-schema")

sys.path.insert(0, str(HERE))
import form_policy  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Client:
    """One row of the matrix: a framework used one way."""

    framework: str  # the folder under scripts/compat/ and .compat/
    dist: str  # the distribution whose version the row shows
    usage: str  # how the client uses the framework, as the docs' snippet does
    variant: str = ""
    per_call: bool = False  # opens an MCP session per tool call: keeps one run by joining a named run
    reads_prompt: bool = True  # reads the MCP prompt `task` itself; else the runner gives it the task

    @property
    def row(self) -> str:
        return f"{self.framework} ({self.variant})" if self.variant else self.framework

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.row.lower()).strip("-")


CLIENTS = (
    Client(
        "pydantic-ai", "pydantic-ai-slim", "Agent(FunctionModel, toolsets=[MCPServerStdio | MCPServerStreamableHTTP])"
    ),
    Client("openai-agents", "openai-agents", "Agent(mcp_servers=[MCPServerStdio | MCPServerStreamableHttp])"),
    Client(
        "openai-agents",
        "openai-agents",
        'Agent(mcp_config={"convert_schemas_to_strict": True})',
        variant="strict",
    ),
    Client(
        "langchain-mcp-adapters",
        "langchain-mcp-adapters",
        "async with client.session('sandbox'): load_mcp_tools(session)",
        variant="session",
    ),
    Client(
        "langchain-mcp-adapters",
        "langchain-mcp-adapters",
        "await MultiServerMCPClient(...).get_tools()",
        variant="get_tools",
        per_call=True,
    ),
    Client("smolagents", "smolagents", "ToolCallingAgent(tools=MCPClient(...).get_tools())", reads_prompt=False),
    Client("google-adk", "google-adk", "LlmAgent(tools=[McpToolset(...)]) + Runner", reads_prompt=False),
    Client("strands-agents", "strands-agents", "with MCPClient(...) as mcp: Agent(tools=mcp.list_tools_sync())"),
    Client(
        "llama-index",
        "llama-index-tools-mcp",
        "McpToolSpec(BasicMCPClient(...)).to_tool_list_async() + FunctionAgent",
        per_call=True,
    ),
    Client("mcp-use", "mcp-use", "MCPAgent(llm, client=MCPClient(config))"),
    Client(
        "autogen",
        "autogen-ext",
        "async with McpWorkbench(params): AssistantAgent(workbench=...)",
        variant="McpWorkbench",
    ),
    Client(
        "autogen",
        "autogen-ext",
        "await mcp_server_tools(params) + AssistantAgent(tools=...)",
        variant="mcp_server_tools",
        per_call=True,
        reads_prompt=False,
    ),
    Client("fast-agent", "fast-agent-mcp", "@fast.agent(servers=['sandbox']) + fast.run()"),
)

# Telemetry off and no way out but loopback: the clients run with these on top of the environment.
QUIET = {
    "OTEL_SDK_DISABLED": "true",
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "DO_NOT_TRACK": "1",
    "ANONYMIZED_TELEMETRY": "false",
    "MCP_USE_ANONYMIZED_TELEMETRY": "false",
    "POSTHOG_DISABLED": "1",
    "SCARF_NO_ANALYTICS": "true",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ADK_DISABLE_TELEMETRY": "1",
    "GOOGLE_GENAI_USE_VERTEXAI": "false",
    "OPENAI_API_KEY": "local-placeholder",
    "ANTHROPIC_API_KEY": "local-placeholder",
    "GOOGLE_API_KEY": "local-placeholder",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "",
    # Any request to a host other than loopback goes to a closed port and fails at once.
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "all_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost,::1",
    "no_proxy": "127.0.0.1,localhost,::1",
}


# --- venvs ---------------------------------------------------------------------------------
def interpreter(wanted: str) -> tuple[str, str] | None:
    """A Python of version ``wanted`` (``3.12``), on PATH or else under pyenv's versions: its
    path and its full version."""
    candidates = [shutil.which(f"python{wanted}")]
    candidates += sorted(
        glob.glob(os.path.expanduser(f"~/.pyenv/versions/{wanted}.*/bin/python{wanted}")), reverse=True
    )
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "--version"], capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.split()[-1].startswith(wanted + "."):
            return candidate, probe.stdout.split()[-1]
    return None


def ensure_venv(framework: str, log: list[str]) -> dict[str, Any]:
    """The framework's venv, installed when its requirements or interpreter changed. Returns
    ``{"python": its version, "versions"}`` or ``{"error"}``."""
    requirements = HERE / framework / "requirements.txt"
    text = requirements.read_text()
    wanted = re.search(r"^#\s*python:\s*(\d+\.\d+)", text, re.M)
    wanted_version = wanted.group(1) if wanted else f"{sys.version_info.major}.{sys.version_info.minor}"
    found = interpreter(wanted_version)
    if found is None:
        return {"error": f"needs Python {wanted_version}: no python{wanted_version} on PATH or under ~/.pyenv"}
    python, full_version = found
    venv = VENVS / framework
    stamp_file = venv / "compat-stamp.json"
    stamp = {"requirements_sha256": hashlib.sha256(text.encode()).hexdigest(), "python": full_version}
    with contextlib.suppress(FileNotFoundError, json.JSONDecodeError):
        recorded = json.loads(stamp_file.read_text())
        if {k: recorded.get(k) for k in stamp} == stamp:
            return {**recorded, "versions": installed_versions(framework)}
    log.append(f"installing {framework} (Python {wanted_version}) into {venv.relative_to(ROOT)}")
    started = time.monotonic()
    install_log = VENVS / f"{framework}.install.log"
    with install_log.open("w") as out:
        steps = (
            [python, "-m", "venv", "--clear", str(venv)],
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"],
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(requirements)],
        )
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                tail = install_log.read_text().strip().splitlines()[-3:]
                return {"error": f"pip install failed ({install_log.relative_to(ROOT)}): {' | '.join(tail)[:300]}"}
    recorded = {**stamp, "installed_s": round(time.monotonic() - started, 1)}
    stamp_file.write_text(json.dumps(recorded, indent=2) + "\n")
    return {**recorded, "versions": installed_versions(framework)}


def installed_versions(framework: str) -> dict[str, str]:
    """The versions in the venv of the framework's distributions and of the MCP SDK it uses."""
    dists = sorted({c.dist for c in CLIENTS if c.framework == framework} | {"mcp"})
    probe = (
        "import importlib.metadata as m, json, sys\n"
        "def v(d):\n"
        "    try: return m.version(d)\n"
        "    except m.PackageNotFoundError: return '-'\n"
        "print(json.dumps({d: v(d) for d in sys.argv[1:]}))"
    )
    python = VENVS / framework / "bin" / "python"
    return json.loads(subprocess.check_output([str(python), "-c", probe, *dists], text=True))


# --- servers -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http(method: str, url: str, body: Any = None, timeout: float = 10) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
    try:
        with opener.open(request, timeout=timeout) as reply:
            raw, status = reply.read(), reply.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    text = raw.decode("utf-8", "replace")
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


@contextlib.contextmanager
def background(argv: list[str], ready_url: str, log_path: Path, timeout: float = 60) -> Iterator[None]:
    """A server process for the duration of the block, once ``ready_url`` answers 200."""
    with log_path.open("w") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise SystemExit(f"{argv[:3]} exited with {process.returncode}: see {log_path}")
            with contextlib.suppress(OSError):
                if http("GET", ready_url, timeout=2)[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"{argv[:3]} not ready within {timeout:.0f} s: see {log_path}")
            time.sleep(0.2)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- one client on one transport -----------------------------------------------------------
@dataclasses.dataclass
class Session:
    """What one client session (one transport) left: its outcome and where to find its runs."""

    status: str = "fail"
    reason: str = ""
    seconds: float = 0.0
    runs: int | None = None
    traces: int | None = None
    task_source: str = ""
    connection: str = ""
    run_ids: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    def cell(self) -> str:
        return "pass" if self.status == "pass" else f"fail: {self.reason}"


class Suite:
    def __init__(self, out: Path, server: str, model_url: str, timeout: float) -> None:
        self.out, self.server, self.model_url, self.timeout = out, server, model_url, timeout
        self.http_traces = out / "http-traces"

    def server_runs(self) -> set[str]:
        """Run ids the HTTP server knows: ``GET /runs`` when the server has it, else its traces."""
        status, reply = http("GET", f"{self.server}/runs")
        if status == 200 and isinstance(reply, (list, dict)):
            runs = reply.get("runs", []) if isinstance(reply, dict) else reply
            return {r["run_id"] if isinstance(r, dict) else str(r) for r in runs}
        return {p.stem for p in self.http_traces.glob("*.jsonl")}

    def task_prompt(self, client: Client, transport: str, name: str) -> tuple[str, str | None]:
        """For a client whose framework cannot read MCP prompts: the task from the HTTP API, as a
        user of that framework would fetch it. A client of a named run creates that run with
        ``POST /runs {"pack", "name"}`` (its sessions join it); any other gets the task of a run
        of its own, ended at once (returned, so that it is not counted as the client's)."""
        body = {"pack": PACK, "name": name} if client.per_call else {"pack": PACK}
        status, created = http("POST", f"{self.server}/runs", body)
        if status not in (200, 201):
            raise SystemExit(f"POST /runs {json.dumps(body)} answered {status}: {created}")
        run_id = created["run_id"]
        _, task = http("GET", f"{self.server}/runs/{run_id}/task")
        path = self.out / "prompts" / f"{client.slug}-{transport}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(task["prompt"], encoding="utf-8")
        if client.per_call:
            return str(path), None
        http("DELETE", f"{self.server}/runs/{run_id}")
        return str(path), run_id

    def run(self, client: Client, transport: str) -> Session:
        session = Session()
        name = f"compat-{client.slug}-{transport}-{os.urandom(3).hex()}"
        stdio_traces = self.out / "stdio-traces" / client.slug
        job: dict[str, Any] = {"transport": transport, "model_url": self.model_url, "variant": client.variant}
        if transport == "stdio":
            job["command"] = str(SANDBOX)
            if client.per_call:
                job["args"] = ["mcp", "--attach", self.server, "--pack", PACK, "--name", name]
            else:
                job["args"] = ["mcp", "--pack", PACK, "--trace-dir", str(stdio_traces)]
        else:
            job["url"] = f"{self.server}/mcp?pack={PACK}" + (f"&name={name}" if client.per_call else "")
        session.connection = job.get("url") or " ".join(["sandbox", *job["args"]])
        ignored: set[str] = set()
        before = self.server_runs()
        if not client.reads_prompt:
            job["prompt_file"], throwaway = self.task_prompt(client, transport, name)
            ignored |= {throwaway} if throwaway else set()
        stdio_before = set(stdio_traces.glob("*.jsonl"))
        work = self.out / "work" / f"{client.slug}-{transport}"
        work.mkdir(parents=True, exist_ok=True)
        argv = [str(VENVS / client.framework / "bin" / "python"), str(HERE / client.framework / "client.py")]
        started = time.monotonic()
        stdout, stderr, code = bounded(
            [*argv, "workflow", "--job", json.dumps(job)],
            self.timeout,
            cwd=work,
            env={**os.environ, **QUIET, "OPENAI_BASE_URL": self.model_url},
        )
        session.seconds = round(time.monotonic() - started, 1)
        (work / "stdout.txt").write_text(stdout)
        (work / "stderr.txt").write_text(stderr)
        reply = last_report(stdout)

        # The runs and traces of this session (GET /runs and GET /runs/{id}/trace on the server,
        # or the stdio server's trace folder), then end the runs still open: a named run stays
        # open until its idle time-out or DELETE /runs/{id}.
        if transport == "stdio" and not client.per_call:
            paths = sorted(set(stdio_traces.glob("*.jsonl")) - stdio_before)
            session.run_ids = [p.stem for p in paths]
            session.traces = len(paths)
            calls = [c for p in paths for c in trace_calls(p.read_text(encoding="utf-8"))]
        else:
            session.run_ids = sorted(self.server_runs() - before - ignored)
            session.traces = sum((self.http_traces / f"{r}.jsonl").exists() for r in session.run_ids)
            calls = []
            for run_id in session.run_ids:
                status, text = http("GET", f"{self.server}/runs/{run_id}/trace")
                calls += trace_calls(text if status == 200 and isinstance(text, str) else "")
                http("DELETE", f"{self.server}/runs/{run_id}")
        session.runs = len(session.run_ids)

        session.task_source = reply.get("task_source", "HTTP API" if not client.reads_prompt else "")
        result = reply.get("result") or {}
        problems = []
        if code is None:
            problems.append(f"timed out after {self.timeout:.0f} s{stderr_hint(stderr)}")
        elif "error" in reply:
            problems.append(f"client ended by {reply['error']}")
        elif code != 0 or not reply:
            problems.append(f"exit {code}{stderr_hint(stderr)}")
        elif not result:
            problems.append(f"no COMPAT_RESULT in the agent's final output: {str(reply.get('final'))[:200]!r}")
        elif not result.get("ok"):
            why, shown = str(result.get("why")), str(result.get("shown", ""))
            evidence = f" (shown: {shown[:160]})" if shown and shown[:100] not in why and why[:100] not in shown else ""
            problems.append(f"agent: {result.get('step')}: {why[:240]}{evidence}")
        if not problems:
            problems += check_trace(calls, result)
            if (session.runs, session.traces) != (1, 1):
                problems.append(
                    f"{session.runs} runs and {session.traces} traces for one client session (expected 1 and 1)"
                )
        session.status = "fail" if problems else "pass"
        session.reason = problems[0] if problems else ""
        session.notes = problems[1:] + reply.get("notes", [])
        if (
            result.get("ok")
            and "wrong_type_error" in result
            and not any(c.get("args", {}).get("max_chars") == "lots" for c in calls)
        ):
            session.notes.append("the wrongly typed argument was refused by the framework before it reached the server")
        return session

    def schemas(self, framework: str, tools: Path) -> dict[str, str]:
        argv = [str(VENVS / framework / "bin" / "python"), str(HERE / framework / "client.py"), "schemas"]
        stdout, stderr, code = bounded(
            [*argv, "--tools", str(tools)], self.timeout, cwd=self.out, env={**os.environ, **QUIET}
        )
        if code is None:
            return {"error": f"timed out after {self.timeout:.0f} s"}
        reply = last_report(stdout)
        if "schemas" in reply:
            return reply["schemas"]
        return {"error": reply.get("error") or f"exit {code}{stderr_hint(stderr)}"}


def bounded(argv: list[str], timeout: float, **options: Any) -> tuple[str, str, int | None]:
    """Run ``argv`` in a process group of its own; past ``timeout`` the whole group (the client,
    the ``sandbox mcp`` it started, that server's Chromium) is killed. The exit code is None
    after a time-out."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **options
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        return stdout, stderr, process.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return stdout, stderr, None


def last_report(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(REPORT_MARKER):
            with contextlib.suppress(json.JSONDecodeError):
                return json.loads(line[len(REPORT_MARKER) :])
    return {}


def stderr_hint(stderr: str) -> str:
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


def trace_calls(text: str) -> list[dict[str, Any]]:
    calls = []
    for line in text.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(line)
            if record.get("type") == "call":
                calls.append(record)
    return calls


def check_trace(calls: list[dict[str, Any]], result: dict[str, Any]) -> list[str]:
    """What the server saw, beside what the agent said: one Kernel session, the missing ref
    refused as stale_ref, two typed fields, Next clicked, the second step in the last snapshot."""
    if not calls:
        return ["no trace of the session (no run found on the server or in the trace folder)"]

    def ok(tool: str) -> list[dict[str, Any]]:
        return [c for c in calls if c["tool"] == tool and c.get("ok")]

    problems = []
    if len(ok("browser_start_session")) != 1:
        problems.append(f"trace: {len(ok('browser_start_session'))} successful browser_start_session (expected 1)")
    stale = [c for c in calls if c["tool"] == "browser_click" and form_policy.MISSING_REF in json.dumps(c["args"])]
    if not stale or (stale[0].get("error") or {}).get("type") != "stale_ref":
        problems.append(f"trace: the missing ref was not answered stale_ref: {stale[:1]}")
    wrong = [c for c in calls if c.get("args", {}).get("max_chars") == "lots"]
    if wrong and (wrong[0].get("error") or {}).get("type") != "invalid_arguments":
        problems.append(f"trace: max_chars='lots' was not answered invalid_arguments: {wrong[0].get('error')}")
    if len(ok("browser_type")) < 2 or not [c for c in ok("browser_click")]:
        problems.append(
            f"trace: {len(ok('browser_type'))} typed fields and {len(ok('browser_click'))} clicks succeeded"
        )
    snapshots = ok("browser_snapshot")
    last = (snapshots[-1].get("result") or {}).get("snapshot", "") if snapshots else ""
    if "(Step 2 of 3)" not in last:
        problems.append("trace: the last snapshot does not show the form's second step")
    failed = [c for c in calls if not c.get("ok") and c not in stale and c not in wrong]
    if failed:
        first = failed[0]
        problems.append(f"trace: {first['tool']}({json.dumps(first.get('args'))[:120]}) failed: {first.get('error')}")
    return problems


# --- the matrix ----------------------------------------------------------------------------
def published_tools(folder: Path) -> list[str]:
    """``sandbox tools --format F`` for every format, as ``F.json``; the formats it refused."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = []
    for fmt in FORMATS:
        done = subprocess.run([str(SANDBOX), "tools", "--format", fmt], capture_output=True, text=True)
        if done.returncode == 0:
            (folder / f"{fmt}.json").write_text(done.stdout)
        else:
            missing.append(fmt)
    return missing


def git_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    return done.stdout.strip() + ("+dirty" if dirty else "")


def print_matrix(rows: list[dict[str, Any]]) -> None:
    header = ("framework", "version", "mcp SDK", "stdio", "HTTP", "runs/traces", "s")
    table = [header]
    for row in rows:
        cells = [row["stdio"], row["http"]]
        table.append(
            (
                row["row"],
                row["version"],
                row.get("mcp_sdk", "-"),
                *(cell_text(c) for c in cells),
                "  ".join("-" if c.get("runs") is None else f"{c['runs']}/{c['traces']}" for c in cells),
                "/".join(f"{c.get('seconds', 0):.0f}" for c in cells),
            )
        )
    widths = [min(max(len(str(r[i])) for r in table), 60) for i in range(len(header))]
    for line in table:
        print("  ".join(str(cell)[:60].ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    print()
    for row in rows:
        for transport in ("stdio", "http"):
            cell = row[transport]
            if cell.get("status") != "pass" and cell.get("reason"):
                print(f"{row['row']} / {transport}: {cell['reason']}")
    print()
    seen = set()
    for row in rows:
        if row["framework"] in seen:
            continue
        seen.add(row["framework"])
        for check, result in (row.get("schemas") or {}).items():
            print(f"schemas {row['framework']}: {check}: {result}")


def display(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def cell_text(cell: dict[str, Any]) -> str:
    return "pass" if cell.get("status") == "pass" else ("skipped" if cell.get("status") == "skipped" else "FAIL")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated frameworks or rows (e.g. openai-agents,autogen)")
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per client run (default 120)")
    parser.add_argument(
        "--json",
        help="where the matrix goes (JSON; default scripts/compat/matrix.json, or with --only the run's folder)",
    )
    parser.add_argument("--install-only", action="store_true", help="install the venvs and stop")
    parser.add_argument("--no-schemas", action="store_true", help="skip the schema checks")
    options = parser.parse_args()
    began = time.monotonic()
    wanted = {w.strip() for w in (options.only or "").split(",") if w.strip()}
    clients = [c for c in CLIENTS if not wanted or c.framework in wanted or c.row in wanted or c.slug in wanted]
    if not clients:
        raise SystemExit(f"--only {options.only!r} names no client; the clients: {', '.join(c.row for c in CLIENTS)}")

    VENVS.mkdir(exist_ok=True)
    venvs: dict[str, dict[str, Any]] = {}
    for framework in dict.fromkeys(c.framework for c in clients):
        log: list[str] = []
        venvs[framework] = ensure_venv(framework, log)
        for line in log:
            print(line, flush=True)
        if "error" in venvs[framework]:
            print(f"{framework}: {venvs[framework]['error']}", flush=True)
    installed_s = time.monotonic() - began
    if options.install_only:
        return

    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    out = ROOT / "runs" / "compat" / stamp
    out.mkdir(parents=True)
    missing_formats = published_tools(out / "tools")
    model_port, server_port = free_port(), free_port()
    model_url, server = f"http://127.0.0.1:{model_port}/v1", f"http://127.0.0.1:{server_port}"
    suite = Suite(out, server, model_url, options.timeout)
    rows = []
    model_argv = [str(PYTHON), str(HERE.parent / "scripted_model_server.py"), "--port", str(model_port)]
    serve_argv = [str(SANDBOX), "serve", "--port", str(server_port), "--trace-dir", str(suite.http_traces)]
    with (
        background(model_argv, f"{model_url}/models", out / "model-server.log"),
        background(serve_argv, f"{server}/health", out / "sandbox-serve.log"),
    ):
        checked_schemas: dict[str, dict[str, str]] = {}
        for client in clients:
            venv = venvs[client.framework]
            row: dict[str, Any] = {
                "row": client.row,
                "framework": client.framework,
                "variant": client.variant,
                "dist": client.dist,
                "usage": client.usage,
                "per_call_sessions": client.per_call,
                "version": (venv.get("versions") or {}).get(client.dist, "-"),
                "mcp_sdk": (venv.get("versions") or {}).get("mcp", "-"),
                "python": venv.get("python", ""),
            }
            for transport in ("stdio", "http"):
                if "error" in venv:
                    row[transport] = {"status": "fail", "reason": venv["error"]}
                elif options.transport not in ("both", transport):
                    row[transport] = {"status": "skipped"}
                else:
                    row[transport] = dataclasses.asdict(suite.run(client, transport))
                cell = row[transport]
                print(f"{client.row:40} {transport:5} {cell_text(cell):5} {cell.get('reason', '')[:200]}", flush=True)
            if "error" not in venv and not options.no_schemas and client.framework not in checked_schemas:
                checked_schemas[client.framework] = suite.schemas(client.framework, out / "tools")
            row["schemas"] = checked_schemas.get(client.framework, {})
            rows.append(row)
    matrix = {
        "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "pack": PACK,
        "model": form_policy.MODEL,
        "missing_tool_formats": missing_formats,
        "seconds": {"install": round(installed_s, 1), "total": round(time.monotonic() - began, 1)},
        "artifacts": str(out.relative_to(ROOT)),
        "rows": rows,
    }
    print()
    print_matrix(rows)
    target = Path(options.json) if options.json else (out / "matrix.json" if wanted else HERE / "matrix.json")
    target.write_text(json.dumps(matrix, indent=2, ensure_ascii=False) + "\n")
    passed = sum(row[t].get("status") == "pass" for row in rows for t in ("stdio", "http"))
    total = sum(row[t].get("status") != "skipped" for row in rows for t in ("stdio", "http"))
    print(
        f"\n{passed}/{total} client sessions passed in {matrix['seconds']['total']:.0f} s; matrix in {display(target)}"
    )
    print(f"artifacts (client output, traces, server logs): {out.relative_to(ROOT)}")
    if passed < total:
        sys.exit(1)


if __name__ == "__main__":
    main()
