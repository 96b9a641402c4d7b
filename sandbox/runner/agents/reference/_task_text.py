"""What a scripted reference agent reads from its task text: the start URL, the allowed
URLs, and how it hands back its answer. Values come from ``task.prompt`` (the runner
prompt states the gates) so a pack with other URLs needs no code change.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import json
import re

from sandbox.runner.task import AgentTask, Tools, ToolCallError

BEGIN, END = "BENCHMARK_JSON_BEGIN", "BENCHMARK_JSON_END"
_START_URL = re.compile(r'browser_start_session call must pass url="([^"]+)" exactly')
_ALLOWED_URLS = re.compile(r"URL-bearing browser calls may use only these exact resource URLs: (.+?)\. A fragment-only")


class TaskTextError(ValueError):
    """The prompt does not state something the agent needs (a prompt, not a page, problem)."""


def start_url(task: AgentTask) -> str:
    match = _START_URL.search(task.prompt)
    if not match:
        raise TaskTextError('the prompt states no start URL (browser_start_session ... url="...")')
    return match.group(1)


def allowed_urls(task: AgentTask) -> list[str]:
    match = _ALLOWED_URLS.search(task.prompt)
    if not match:
        raise TaskTextError("the prompt lists no URL-bearing resource URLs")
    return [url.strip() for url in match.group(1).split(";") if url.strip()]


def other_allowed_url(task: AgentTask, *, ending: str | None = None) -> str:
    """The one allowed URL that is not the start URL (optionally: whose path ends so)."""
    first = start_url(task)
    others = [u for u in allowed_urls(task) if u != first and (ending is None or u.split("?")[0].endswith(ending))]
    if len(others) != 1:
        raise TaskTextError(f"expected one allowed URL besides the start URL, found {others}")
    return others[0]


async def start_session(tools: Tools, task: AgentTask, url: str) -> dict:
    """The one browser_start_session the gates allow (provider kernel, the run plan's key)."""
    result = await tools.call("browser_start_session", provider="kernel", site_key=task.site_key,
                              clear_cookies=False, url=url)
    if result.get("provider") != "kernel":
        raise ToolCallError("browser_start_session", {"type": "ProviderMismatch",
                                                      "message": f"session provider is {result.get('provider')!r}"})
    return result


def benchmark_output(record: dict) -> str:
    return f"{BEGIN}\n{json.dumps([record], ensure_ascii=False, indent=2)}\n{END}"
