"""What a scripted reference agent reads from its task text: the start URL, the allowed
URLs, the conventions the prompt fixes (the abstention tokens, the benchmark error) and how
it hands back its answer. Values come from ``task.prompt`` (the runner prompt states the
gates) so a pack with other URLs needs no code change.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import json
import re

from sandbox.runner.task import AgentTask, ToolCallError, Tools

BEGIN, END = "BENCHMARK_JSON_BEGIN", "BENCHMARK_JSON_END"
_START_URL = re.compile(r'browser_start_session call must pass url="([^"]+)" exactly')
_ALLOWED_URLS = re.compile(r"URL-bearing browser calls may use only these exact resource URLs: (.+?)\. A fragment-only")


# The abstention tokens: an item the sources were searched for and do not state / show.
NOT_STATED, NOT_FOUND = "NOT_STATED", "NOT_FOUND"


class BenchmarkError(Exception):
    """The run must stop: the prompt or a page does not state what the task needs, or a tool
    failed (the runner prompt says: report the benchmark error and stop)."""


def start_url(task: AgentTask) -> str:
    match = _START_URL.search(task.prompt)
    if not match:
        raise BenchmarkError('the prompt states no start URL (browser_start_session ... url="...")')
    return match.group(1)


def allowed_urls(task: AgentTask) -> list[str]:
    match = _ALLOWED_URLS.search(task.prompt)
    if not match:
        raise BenchmarkError("the prompt lists no URL-bearing resource URLs")
    return [url.strip() for url in match.group(1).split(";") if url.strip()]


async def start_session(tools: Tools, task: AgentTask, url: str) -> dict:
    """The one browser_start_session the gates allow (provider kernel, the run plan's key)."""
    result = await tools.call(
        "browser_start_session", provider="kernel", site_key=task.site_key, clear_cookies=False, url=url
    )
    if result.get("provider") != "kernel":
        raise ToolCallError(
            "browser_start_session",
            {"type": "ProviderMismatch", "message": f"session provider is {result.get('provider')!r}"},
        )
    return result


def benchmark_output(record: dict) -> str:
    return f"{BEGIN}\n{json.dumps([record], ensure_ascii=False, indent=2)}\n{END}"
