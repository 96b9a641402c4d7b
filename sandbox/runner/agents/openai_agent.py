"""openai:MODEL — a tool-calling loop through the ``openai`` SDK against any OpenAI-compatible
chat-completions endpoint, optionally recorded to / replayed from a vcrpy cassette.

Endpoint (first that applies):
1. ``--base-url`` (``AgentOptions.base_url``);
2. when a cassette's recording is replayed (record mode ``none``, or ``once`` with a
   recording): the endpoint it was recorded against, so replays need no flag; a recording never
   goes to a cassette's endpoint, which would be sent the key (``new_episodes`` into a cassette
   recorded elsewhere is refused: ``_cassette.Cassette.other_endpoint``);
3. ``$OPENAI_BASE_URL``;
4. the SDK's default (api.openai.com).
The sandbox itself never needs the network. The offline way to run a real model is a local
OpenAI-compatible server — vLLM (``vllm serve MODEL`` → http://127.0.0.1:8000/v1), llama.cpp
(``llama-server`` → http://127.0.0.1:8080/v1) or Ollama (http://127.0.0.1:11434/v1) — with
``--base-url``. The API key is ``$OPENAI_API_KEY``, else the placeholder ``sk-local`` that
local servers accept. ``scripts/scripted_model_server.py`` is such a server with a scripted
policy instead of a model.

The tools are the sandbox's own tool contract in OpenAI's strict format (``toolserver.formats``,
the one source ``sandbox tools --format openai-strict`` and the MCP transport use too: every
property required, the optional ones nullable, ``strict: true``), from the client's
schemas — not from a ``list_tools`` call, so that asking for the
schemas never adds a line to the measured trace. Every tool call the model makes goes through
``task.client`` (the same dispatcher and trace as HTTP). Arguments that are not valid JSON are
passed through as the raw string, so the sandbox rejects and records them as sent; empty
arguments mean ``{}``. Tool results go back whole, as the JSON the tool server answers. The final
answer is the first message that asks for no tool, unless it stopped at the token limit
(``finish_reason`` ``length``), at a content filter, is a refusal (``message.refusal``), or asks
only for tools that are no function (custom tool calls): then the attempt is an error saying so.

Cassettes (vcrpy): see ``sandbox.runner.agents._cassette`` (shared with ``anthropic:``).

The whole conversation is saved as ``transcript.jsonl`` in the attempt folder
(``sandbox.runner.transcript``). Errors name the endpoint; ``preflight`` (``_model``) checks once,
before a batch, that the endpoint answers at all.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from sandbox.runner.agents._kinds import AgentOptions, agent_kind
from sandbox.runner.agents._model import MODEL_OPTIONS, SYSTEM_PROMPT, ModelAgent, add_usage, garbled_usage
from sandbox.runner.task import AgentResult, AgentTask
from sandbox.runner.transcript import Transcript
from toolserver.formats import tool_definitions

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionMessageFunctionToolCall,
        ChatCompletionMessageParam,
        ChatCompletionToolUnionParam,
    )

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
CUT_SHORT = {  # a turn that ended so is no final answer, even with text and no tool call
    "length": "the model hit its token limit before a final answer",
    "content_filter": "the endpoint's content filter stopped the model's answer",
}


def parse_arguments(raw: Any) -> Any:
    """The model's JSON arguments; the raw value when they are not JSON text (the sandbox rejects
    what is no object: a number past Python's 4,300 digits, nesting past its recursion limit, an
    endpoint's object where the API sends text all ended the attempt as crashed)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError, as is the digit limit's
        return raw


def garbled(response: Any) -> str | None:
    """Why an endpoint's answer is not what the Chat Completions API returns, or None (the SDK
    builds its objects without checking: a null message, a list for content, a usage that is no
    object each ended the attempt as crashed)."""
    if response.choices:
        message = response.choices[0].message
        if message is None or not hasattr(message, "content"):
            return "its first choice has no message"
        if message.content is not None and not isinstance(message.content, str):
            return f"its message's content is {type(message.content).__name__}, not text"
        if message.tool_calls is not None and not isinstance(message.tool_calls, list):
            return f"its message's tool_calls is {type(message.tool_calls).__name__}, not a list"
    return garbled_usage(response.usage, USAGE_KEYS)


def names_function(call: object) -> TypeGuard[ChatCompletionMessageFunctionToolCall]:
    """A tool call that names a function (the SDK's custom tool calls have none)."""
    return getattr(call, "function", None) is not None


class OpenAIAgent(ModelAgent):
    kind, endpoint_path, base_url_env, api_key_env = "openai", "/chat/completions", "OPENAI_BASE_URL", "OPENAI_API_KEY"
    tool_format = "openai-strict"  # strict function calling: the model's arguments always fit the schema
    server_kind = "OpenAI-compatible"
    base_url_suffix = "/v1"  # an OpenAI-compatible server's routes: a base URL without it answers 404

    async def converse(self, task: AgentTask, cassette) -> AgentResult:
        import openai

        details = self.details(cassette)
        client = self.sdk_client(self.client_options(cassette, task))
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task.prompt},
        ]
        transcript = Transcript(task.workdir)
        for opening in messages:
            transcript.write(opening)
        assert task.client is not None, "run_attempt always gives the agent a tool client"
        # the sandbox's own contract in OpenAI's strict tool format (toolserver.formats builds plain dicts)
        tools = cast(
            "list[ChatCompletionToolUnionParam]", tool_definitions(self.tool_format, await task.client.list_tools())
        )
        usage: dict[str, int] | None = None
        output = ""
        try:
            for _ in range(self.options.max_turns):
                try:
                    response = await client.chat.completions.create(model=self.model, messages=messages, tools=tools)
                except Exception as exc:  # the SDK's errors and vcrpy's (which the SDK may wrap)
                    if not isinstance(exc, openai.OpenAIError) and self.cassette.failure(exc) is None:
                        raise
                    return self.request_failed(
                        exc, output, usage, {**details, "base_url": str(client.base_url)}, transcript
                    )
                details["turns"] += 1
                transcript.turn = details["turns"]
                if (why := garbled(response)) is not None:
                    error = f"the model endpoint's answer is not the Chat Completions API's: {why}"
                    return AgentResult(output=output, status="error", error=error, token_usage=usage, details=details)
                usage = add_usage(usage, response.usage, USAGE_KEYS)
                task.spent.token_usage, task.spent.model = usage, self.model  # what a time-out still costs
                if not response.choices:
                    return AgentResult(
                        output=output,
                        status="error",
                        error="the model answered with no choices",
                        token_usage=usage,
                        details=details,
                    )
                choice = response.choices[0]
                message = choice.message
                output = message.content or output
                details["finish_reason"] = choice.finish_reason
                calls = [c for c in (message.tool_calls or []) if names_function(c)]
                transcript.write(
                    {
                        "role": "assistant",
                        "content": message.content,
                        "tool_calls": [
                            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in calls
                        ],
                        "finish_reason": choice.finish_reason,
                        "usage": response.usage.model_dump() if response.usage is not None else None,
                        **({"refusal": message.refusal} if message.refusal else {}),
                    }
                )
                if message.refusal:
                    error = f"the model refused: {message.refusal!r}"
                    return self.cut_short(output, usage, details, transcript, error)
                if not calls and message.tool_calls:  # only calls of no function: none the sandbox offered
                    error = (
                        f"the model's {len(message.tool_calls)} tool call(s) name no function (custom tool calls): "
                        "the sandbox offers functions only, so none was made"
                    )
                    return self.cut_short(output, usage, details, transcript, error)
                if not calls and choice.finish_reason in CUT_SHORT:
                    error = f"{CUT_SHORT[choice.finish_reason]} (finish_reason {choice.finish_reason!r})"
                    return self.cut_short(output, usage, details, transcript, error)
                if not calls:
                    return AgentResult(output=message.content or "", token_usage=usage, details=details)
                messages.append(
                    {
                        "role": "assistant",
                        "content": message.content,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.function.name, "arguments": c.function.arguments},
                            }
                            for c in calls
                        ],
                    }
                )
                for call in calls:
                    details["tool_calls"] += 1
                    reply = await task.client.call_raw(call.function.name, parse_arguments(call.function.arguments))
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(reply, ensure_ascii=False)}
                    )
                    transcript.write({**messages[-1], "name": call.function.name})
            return self.out_of_turns(output, usage, details)
        finally:
            await client.close()

    def sdk_client(self, options: dict[str, Any]) -> Any:
        import openai

        return openai.AsyncOpenAI(**options)

    def sdk_errors(self) -> tuple[type[Exception], type[Exception]]:
        import openai

        return openai.APIConnectionError, openai.OpenAIError


@agent_kind("openai", usage="openai:MODEL", uses=MODEL_OPTIONS)
def create(model: str, options: AgentOptions) -> OpenAIAgent:
    return OpenAIAgent(model, options)
