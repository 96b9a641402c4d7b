"""openai:MODEL — a tool-calling loop through the ``openai`` SDK against any OpenAI-compatible
chat-completions endpoint, optionally recorded to / replayed from a vcrpy cassette.

Endpoint (first that applies):
1. ``--base-url`` (``AgentOptions.base_url``);
2. when a cassette is being replayed (record mode ``none``, or ``once`` with an existing
   cassette): the endpoint the cassette was recorded against, so replays need no flag;
3. ``$OPENAI_BASE_URL``;
4. the SDK's default (api.openai.com).
The sandbox itself never needs the network. The offline way to run a real model is a local
OpenAI-compatible server — vLLM (``vllm serve MODEL`` → http://127.0.0.1:8000/v1), llama.cpp
(``llama-server`` → http://127.0.0.1:8080/v1) or Ollama (http://127.0.0.1:11434/v1) — with
``--base-url``. The API key is ``$OPENAI_API_KEY``, else the placeholder ``sk-local`` that
local servers accept. ``scripts/scripted_model_server.py`` is such a server with a scripted
policy instead of a model.

The tools are the sandbox's own tool contract in OpenAI's format (``toolserver.formats``, the
one source ``sandbox tools --format openai`` and the MCP transport use too), from the client's
schemas — not from a ``list_tools`` call, so that asking for the
schemas never adds a line to the measured trace. Every tool call the model makes goes through
``task.client`` (the same dispatcher and trace as HTTP). Arguments that are not valid JSON are
passed through as the raw string, so the sandbox rejects and records them as sent; empty
arguments mean ``{}``. Tool results go back whole, as the JSON the tool server answers.

Cassettes (vcrpy): see ``sandbox.runner.agents._cassette`` (shared with ``anthropic:``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from sandbox.runner.agents import AgentOptions
from sandbox.runner.agents._cassette import Cassette, failure_in
from sandbox.runner.task import AgentResult, AgentTask
from toolserver.formats import tool_definitions

KIND = "openai"
USAGE = "openai:MODEL"

SYSTEM_PROMPT = ("You are a browser agent. Do the task using only the browser tools provided, following "
                 "every rule in the task exactly, and end with your final answer as plain text.")
CHAT_PATH = "/chat/completions"


def parse_arguments(raw: str | None) -> Any:
    """The model's JSON arguments; the raw string when they are not JSON (the sandbox rejects it)."""
    if raw is None or not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def add_usage(total: dict[str, int] | None, usage: Any) -> dict[str, int] | None:
    if usage is None:
        return total
    total = dict(total or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    for key in total:
        total[key] += int(getattr(usage, key, 0) or 0)
    return total


class OpenAIAgent:
    def __init__(self, model: str, options: AgentOptions | None = None) -> None:
        self.model = model
        self.options = options or AgentOptions()
        self.name = f"openai:{model}"
        self.cassette = Cassette(self.options.cassette, self.options.record_mode)

    def base_url(self, cassette) -> str | None:
        return (self.options.base_url or self.cassette.recorded_base_url(cassette, CHAT_PATH)
                or os.environ.get("OPENAI_BASE_URL") or None)

    # --- the loop -------------------------------------------------------------------------
    async def run(self, task: AgentTask) -> AgentResult:
        async with self.cassette.use(task.site_key) as cassette:
            return await self.converse(task, cassette)

    async def converse(self, task: AgentTask, cassette) -> AgentResult:
        import openai

        base_url = self.base_url(cassette)
        details: dict[str, Any] = {"model": self.model, "base_url": base_url or "SDK default", "turns": 0,
                                   "tool_calls": 0}
        if cassette is not None:
            details.update(cassette=str(self.options.cassette), record_mode=self.options.record_mode,
                           replayed=self.cassette.replaying)
        client = openai.AsyncOpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") or "sk-local",
                                    max_retries=0 if self.cassette.replaying else 2)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                          {"role": "user", "content": task.prompt}]
        tools = tool_definitions("openai", await task.client.list_tools())
        usage: dict[str, int] | None = None
        output = ""
        try:
            for _ in range(self.options.max_turns):
                try:
                    response = await client.chat.completions.create(model=self.model, messages=messages,
                                                                    tools=tools)
                except Exception as exc:  # the SDK's errors and vcrpy's (which the SDK may wrap)
                    if not isinstance(exc, openai.OpenAIError) and failure_in(exc) is None:
                        raise
                    return AgentResult(output=output, status="error", token_usage=usage, details=details,
                                       error=self.describe_failure(exc, details["turns"] + 1))
                details["turns"] += 1
                usage = add_usage(usage, response.usage)
                if not response.choices:
                    return AgentResult(output=output, status="error", error="the model answered with no choices",
                                       token_usage=usage, details=details)
                choice = response.choices[0]
                message = choice.message
                output = message.content or output
                details["finish_reason"] = choice.finish_reason
                calls = [c for c in (message.tool_calls or []) if getattr(c, "function", None) is not None]
                if not calls:
                    return AgentResult(output=message.content or "", token_usage=usage, details=details)
                messages.append({"role": "assistant", "content": message.content, "tool_calls": [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.function.name, "arguments": c.function.arguments}} for c in calls]})
                for call in calls:
                    details["tool_calls"] += 1
                    reply = await task.client.call_raw(call.function.name, parse_arguments(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": json.dumps(reply, ensure_ascii=False)})
            return AgentResult(output=output, status="error", token_usage=usage, details=details,
                               error=f"no final answer after {self.options.max_turns} model turns (--max-turns)")
        finally:
            await client.close()

    def describe_failure(self, exc: BaseException, request_number: int) -> str:
        return (self.cassette.describe_failure(exc, request_number)
                or f"model API error ({type(exc).__name__}): {exc}")


def create(value: str, options: AgentOptions) -> OpenAIAgent:
    return OpenAIAgent(value, options)
