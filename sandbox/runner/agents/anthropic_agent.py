"""anthropic:MODEL — a tool-use loop through the official ``anthropic`` SDK (the Messages API),
optionally recorded to / replayed from a vcrpy cassette (``_cassette``, shared with ``openai:``).

Endpoint (first that applies): ``--base-url`` (any Messages-compatible gateway, e.g.
``http://127.0.0.1:4000`` for a local proxy); on replay, the endpoint the cassette was recorded
against; ``$ANTHROPIC_BASE_URL``; the SDK's default. The API key is ``$ANTHROPIC_API_KEY``, else
the placeholder ``sk-local`` a local gateway accepts. ``scripts/scripted_model_server.py``
serves the Messages API with a scripted policy instead of a model.

The tools are the sandbox's contract in Anthropic's format (``toolserver.formats``, the source of
``sandbox tools --format anthropic``). Every ``tool_use`` block goes through ``task.client`` (the
same dispatcher and trace as HTTP and MCP); its ``tool_result`` is the sandbox's JSON reply,
``is_error`` when the tool failed. The final answer is the text of the first message that asks
for no tool.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sandbox.runner.agents import AgentOptions
from sandbox.runner.agents._cassette import Cassette, failure_in
from sandbox.runner.agents.openai_agent import SYSTEM_PROMPT
from sandbox.runner.task import AgentResult, AgentTask
from toolserver.formats import tool_definitions

KIND = "anthropic"
USAGE = "anthropic:MODEL"
MESSAGES_PATH = "/v1/messages"
MAX_TOKENS = 4096


def add_usage(total: dict[str, int] | None, usage: Any) -> dict[str, int] | None:
    if usage is None:
        return total
    total = dict(total or {"input_tokens": 0, "output_tokens": 0})
    for key in total:
        total[key] += int(getattr(usage, key, 0) or 0)
    return total


class AnthropicAgent:
    def __init__(self, model: str, options: AgentOptions | None = None) -> None:
        self.model = model
        self.options = options or AgentOptions()
        self.name = f"anthropic:{model}"
        self.cassette = Cassette(self.options.cassette, self.options.record_mode)

    def base_url(self, cassette) -> str | None:
        return (self.options.base_url or self.cassette.recorded_base_url(cassette, MESSAGES_PATH)
                or os.environ.get("ANTHROPIC_BASE_URL") or None)

    async def run(self, task: AgentTask) -> AgentResult:
        async with self.cassette.use(task.site_key) as cassette:
            return await self.converse(task, cassette)

    async def converse(self, task: AgentTask, cassette) -> AgentResult:
        import anthropic

        base_url = self.base_url(cassette)
        details: dict[str, Any] = {"model": self.model, "base_url": base_url or "SDK default", "turns": 0,
                                   "tool_calls": 0}
        if cassette is not None:
            details.update(cassette=str(self.options.cassette), record_mode=self.options.record_mode,
                           replayed=self.cassette.replaying)
        client = anthropic.AsyncAnthropic(base_url=base_url, api_key=os.environ.get("ANTHROPIC_API_KEY") or "sk-local",
                                          max_retries=0 if self.cassette.replaying else 2)
        messages: list[dict[str, Any]] = [{"role": "user", "content": task.prompt}]
        tools = tool_definitions("anthropic", await task.client.list_tools())
        usage: dict[str, int] | None = None
        output = ""
        try:
            for _ in range(self.options.max_turns):
                try:
                    response = await client.messages.create(model=self.model, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT,
                                                            messages=messages, tools=tools)
                except Exception as exc:  # the SDK's errors and vcrpy's (which the SDK may wrap)
                    if not isinstance(exc, anthropic.AnthropicError) and failure_in(exc) is None:
                        raise
                    return AgentResult(output=output, status="error", token_usage=usage, details=details,
                                       error=self.describe_failure(exc, details["turns"] + 1))
                details["turns"] += 1
                details["stop_reason"] = response.stop_reason
                usage = add_usage(usage, response.usage)
                text = "".join(block.text for block in response.content if block.type == "text")
                output = text or output
                uses = [block for block in response.content if block.type == "tool_use"]
                if not uses:
                    return AgentResult(output=text, token_usage=usage, details=details)
                messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True)
                                                                  for block in response.content]})
                results = []
                for use in uses:
                    details["tool_calls"] += 1
                    reply = await task.client.call_raw(use.name, use.input)
                    results.append({"type": "tool_result", "tool_use_id": use.id, "is_error": not reply.get("ok"),
                                    "content": json.dumps(reply, ensure_ascii=False)})
                messages.append({"role": "user", "content": results})
            return AgentResult(output=output, status="error", token_usage=usage, details=details,
                               error=f"no final answer after {self.options.max_turns} model turns (--max-turns)")
        finally:
            await client.close()

    def describe_failure(self, exc: BaseException, request_number: int) -> str:
        return (self.cassette.describe_failure(exc, request_number)
                or f"model API error ({type(exc).__name__}): {exc}")


def create(value: str, options: AgentOptions) -> AnthropicAgent:
    return AnthropicAgent(value, options)
