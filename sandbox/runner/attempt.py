"""One attempt: a fresh run with the pack's gates, a never-issued site key, the clock, the
agent, then scoring; everything lands in the attempt's folder.

    <attempt>/trace.jsonl   every tool call and browser event (written as they happen)
    <attempt>/prompt.txt    exactly what the agent was given
    <attempt>/output.txt    the agent's final answer
    <attempt>/score.json    the reviewed scoring pack's verdict plus the gates
    <attempt>/score.txt     the same verdict for people, with why it did not qualify
    <attempt>/attempt.json  pack, agent, site key, times, exit status, counts, usage, versions
    <attempt>/shots/<seq>.png  the active tab after each call (``screenshots``: all, failures, none)
    <attempt>/playwright-trace.zip  each session's Playwright trace (``playwright_trace``)
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from sandbox import __version__
from sandbox.core.policy import PolicyMode
from sandbox.core.trace import read_trace
from sandbox.evaluation.packs import Pack
from sandbox.evaluation.scoring import describe_score, score_attempt
from sandbox.runner.reasons import failure_reasons
from sandbox.runner.task import Agent, AgentResult, AgentTask, InProcessClient

ISSUED_SITE_KEYS: set[str] = set()
SCREENSHOT_MODES = ("all", "failures", "none")
SHOTS_FOLDER = "shots"


def new_site_key() -> str:
    """A profile key never issued before in this process (and never seen by the server)."""
    while True:
        key = f"bench-{secrets.token_hex(8)}"
        if key not in ISSUED_SITE_KEYS:
            ISSUED_SITE_KEYS.add(key)
            return key


def package_versions() -> dict[str, str]:
    out = {"sandbox": __version__}
    for name in ("playwright", "aiohttp", "pydantic", "jsonschema", "openai", "anthropic", "mcp", "vcrpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


@dataclass
class AttemptOutcome:
    pack: str
    agent: str
    directory: Path
    status: str
    elapsed_seconds: float
    qualified_pass: bool
    error_free: bool
    field_accuracy: float
    tool_calls: int
    token_usage: dict[str, int] | None
    reason: str = ""  # why it did not qualify ("" for a qualified pass)

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "directory": str(self.directory)}


async def run_attempt(
    sandbox,
    pack: Pack,
    agent: Agent,
    directory: Path,
    *,
    sandbox_url: str | None = None,
    attempt_number: int = 1,
    time_limit: float | None = None,
    policy: PolicyMode | None = None,
    block_state_changes: bool | None = None,
    mirror_roots: tuple[Path, ...] | None = None,
    screenshots: str = "all",
    playwright_trace: bool = False,
) -> AttemptOutcome:
    """``screenshots``: ``all`` keeps a viewport PNG after every call, ``failures`` only for an
    attempt that does not qualify, ``none`` takes none. ``playwright_trace`` saves each
    session's Playwright trace (``playwright show-trace``; off by default: it costs more than
    the screenshots, see README Speed)."""
    if screenshots not in SCREENSHOT_MODES:
        raise ValueError(f"screenshots must be one of {', '.join(SCREENSHOT_MODES)}, not {screenshots!r}")
    directory.mkdir(parents=True, exist_ok=False)  # an attempt's folder is its own: never appended to
    site_key = new_site_key()
    while site_key in sandbox.host.profiles:  # never-issued also means the server has never seen it
        site_key = new_site_key()
    block = sandbox.config.block_state_changes if block_state_changes is None else block_state_changes
    run = sandbox.create_run(
        policy=pack.policy(policy or sandbox.config.policy, block),
        trace_path=directory / "trace.jsonl",
        header={"site_key": site_key, "agent": agent.name, "attempt": attempt_number},
        mirror_roots=mirror_roots,
        screenshot_dir=None if screenshots == "none" else directory / SHOTS_FOLDER,
        playwright_trace_dir=directory if playwright_trace else None,
    )
    prompt = pack.render_prompt(site_key)
    (directory / "prompt.txt").write_text(prompt, encoding="utf-8")
    limit = time_limit if time_limit is not None else pack.card.time_limit_seconds
    task = AgentTask(
        pack_id=pack.id,
        workflow=pack.card.workflow,
        prompt=prompt,
        site_key=site_key,
        time_limit_seconds=limit,
        input_text=pack.input_text,
        output_schema=pack.schema,
        sandbox_url=sandbox_url,
        run_id=run.id,
        client=InProcessClient(run),
        workdir=directory,
    )
    started_wall = datetime.now(UTC).isoformat(timespec="milliseconds")
    started = time.monotonic()  # the clock starts immediately before the agent
    try:
        result = await asyncio.wait_for(agent.run(task), timeout=limit)
    except TimeoutError:
        result = AgentResult(output="", status="timeout", error=f"stopped at the pack's time limit ({limit:g} s)")
    except Exception as exc:  # a crashed agent never stops the batch
        result = AgentResult(output="", status="crashed", error=f"{type(exc).__name__}: {exc}")
    elapsed = time.monotonic() - started
    await run.close(reason=result.status)

    (directory / "output.txt").write_text(result.output, encoding="utf-8")
    trace = read_trace(directory / "trace.jsonl")
    report = score_attempt(pack, result.output, trace, elapsed, site_key=site_key)
    score = report.model_dump(mode="json")
    (directory / "score.json").write_text(json.dumps(score, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if screenshots == "failures" and report.qualified_pass:
        shutil.rmtree(directory / SHOTS_FOLDER, ignore_errors=True)
    counts = Counter(call.tool for call in trace.calls)
    attempt = {
        "pack": pack.id,
        "scoring_pack": pack.card.scoring_pack,
        "agent": agent.name,
        "attempt": attempt_number,
        "origin": "recorded",
        "recorded_run": True,
        "site_key": site_key,
        "run_id": run.id,
        "started_at": started_wall,
        "elapsed_seconds": round(elapsed, 3),
        "time_limit_seconds": limit,
        "status": result.status,
        "error": result.error,
        "tool_calls": dict(sorted(counts.items())),
        "tool_calls_total": sum(counts.values()),
        "token_usage": result.token_usage,
        "agent_details": result.details,
        "qualified_pass": report.qualified_pass,
        "error_free": report.error_free,
        "versions": package_versions(),
        "chromium": sandbox.host.executable,
        "mirror_checksum": run.store.checksum(),
        "pack_checksum": pack.checksum(),
    }
    (directory / "attempt.json").write_text(json.dumps(attempt, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    stderr_file = directory / "agent.stderr.txt"
    stderr = stderr_file.read_text(encoding="utf-8", errors="replace") if stderr_file.exists() else None
    reasons = failure_reasons(attempt, score, stderr)
    (directory / "score.txt").write_text(describe_attempt(attempt, describe_score(report), reasons), encoding="utf-8")
    return AttemptOutcome(
        pack.id,
        agent.name,
        directory,
        result.status,
        elapsed,
        report.qualified_pass,
        report.error_free,
        float(report.field_accuracy),
        sum(counts.values()),
        result.token_usage,
        "; ".join(reasons),
    )


def describe_attempt(attempt: dict[str, Any], score_text: str, reasons: list[str]) -> str:
    """``score.txt``: who ran, how it ended, the verdict, and why it did not qualify."""
    ended = attempt["status"] + (f" ({attempt['error']})" if attempt.get("error") else "")
    head = (
        f"attempt {attempt['pack']} #{attempt['attempt']} by {attempt['agent']}: {ended}, "
        f"{attempt['elapsed_seconds']:.2f} s of {attempt['time_limit_seconds']:g} s, "
        f"{attempt['tool_calls_total']} tool calls"
    )
    why = ["why it did not qualify:", *(f"  - {r}" for r in reasons)] if reasons else []
    return "\n".join([head, score_text, *why]) + "\n"
