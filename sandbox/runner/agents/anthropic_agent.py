"""anthropic:MODEL — a tool-use loop through the official ``anthropic`` SDK (the Messages API),
optionally recorded to / replayed from a vcrpy cassette (``_cassette``, shared with ``openai:``).

Endpoint (first that applies): ``--base-url`` (any Messages-compatible gateway, e.g.
``http://127.0.0.1:4000`` for a local proxy); when a cassette's recording is replayed (``none``,
or ``once`` with a recording), the endpoint it was recorded against; ``$ANTHROPIC_BASE_URL``; the
SDK's default. A recording never goes to a cassette's endpoint (``_model.ModelAgent.base_url``).
The API key is ``$ANTHROPIC_API_KEY``, else the placeholder ``sk-local`` a local gateway accepts.
``scripts/scripted_model_server.py`` serves the Messages API with a scripted policy instead of a
model.

The tools are the sandbox's contract in Anthropic's format (``toolserver.formats``, the source of
``sandbox tools --format anthropic``). Every ``tool_use`` block goes through ``task.client`` (the
same dispatcher and trace as HTTP and MCP); its ``tool_result`` is the sandbox's JSON reply,
``is_error`` when the tool failed. The final answer is the text of the first message that asks
for no tool, unless it stopped at the token limit (``max_tokens``) or in a refusal: then the
attempt is an error saying so. The whole conversation is saved as ``transcript.jsonl`` in the attempt folder
(``sandbox.runner.transcript``), in the same lines as ``openai:`` writes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from sandbox.runner.agents._kinds import AgentOptions, agent_kind
from sandbox.runner.agents._model import MODEL_OPTIONS, SYSTEM_PROMPT, ModelAgent, add_usage, garbled_usage
from sandbox.runner.task import AgentResult, AgentTask
from sandbox.runner.transcript import Transcript
from toolserver.formats import tool_definitions

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam, ToolResultBlockParam, ToolUnionParam

USAGE_KEYS = ("input_tokens", "output_tokens")
MAX_TOKENS = 4096


class AnthropicAgent(ModelAgent):
    kind, endpoint_path, base_url_env, api_key_env = (
        "anthropic",
        "/v1/messages",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
    )
    tool_format = "anthropic"
    server_kind = "Messages-compatible"

    async def converse(self, task: AgentTask, cassette) -> AgentResult:
        import anthropic

        details = self.details(cassette)
        client = self.sdk_client(self.client_options(cassette, task))
        messages: list[MessageParam] = [{"role": "user", "content": task.prompt}]
        transcript = Transcript(task.workdir)
        transcript.write({"role": "system", "content": SYSTEM_PROMPT})
        transcript.write(messages[0])
        assert task.client is not None, "run_attempt always gives the agent a tool client"
        # the sandbox's own contract in Anthropic's tool format (toolserver.formats builds plain dicts)
        tools = cast("list[ToolUnionParam]", tool_definitions("anthropic", await task.client.list_tools()))
        usage: dict[str, int] | None = None
        output = ""
        try:
            for _ in range(self.options.max_turns):
                try:
                    response = await client.messages.create(
                        model=self.model, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT, messages=messages, tools=tools
                    )
                except Exception as exc:  # the SDK's errors and vcrpy's (which the SDK may wrap)
                    if not isinstance(exc, anthropic.AnthropicError) and self.cassette.failure(exc) is None:
                        raise
                    return self.request_failed(exc, output, usage, details, transcript)
                details["turns"] += 1
                transcript.turn = details["turns"]
                if (why := garbled(response)) is not None:
                    error = f"the model endpoint's answer is not the Messages API's: {why}"
                    return AgentResult(output=output, status="error", error=error, token_usage=usage, details=details)
                details["stop_reason"] = response.stop_reason
                usage = add_usage(usage, response.usage, USAGE_KEYS)
                task.spent.token_usage, task.spent.model = usage, self.model  # what a time-out still costs
                text = "".join(block.text for block in response.content if block.type == "text")
                output = text or output
                uses = [block for block in response.content if block.type == "tool_use"]
                transcript.write(
                    {
                        "role": "assistant",
                        "content": text,
                        "tool_calls": [{"id": use.id, "name": use.name, "arguments": use.input} for use in uses],
                        "finish_reason": response.stop_reason,
                        "usage": response.usage.model_dump(exclude_none=True),
                    }
                )
                if not uses and response.stop_reason == "max_tokens":
                    error = f"the model hit its token limit (max_tokens={MAX_TOKENS}) before a final answer"
                    return self.cut_short(output, usage, details, transcript, error)
                if not uses and response.stop_reason == "refusal":
                    error = f"the model refused: {text!r}" if text else "the model refused"
                    return self.cut_short(output, usage, details, transcript, f"{error} (stop_reason 'refusal')")
                if not uses:
                    return AgentResult(output=text, token_usage=usage, details=details)
                messages.append(
                    {
                        "role": "assistant",
                        # the model's own blocks sent back as they came (the SDK types them as responses)
                        "content": cast(
                            "list[ContentBlockParam]",
                            [block.model_dump(exclude_none=True) for block in response.content],
                        ),
                    }
                )
                results: list[ToolResultBlockParam] = []
                for use in uses:
                    details["tool_calls"] += 1
                    reply = await task.client.call_raw(use.name, use.input)
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": use.id,
                            "is_error": not reply.get("ok"),
                            "content": json.dumps(reply, ensure_ascii=False),
                        }
                    )
                    transcript.write(
                        {
                            "role": "tool",
                            "tool_call_id": use.id,
                            "name": use.name,
                            "content": results[-1]["content"],
                            "is_error": results[-1]["is_error"],
                        }
                    )
                messages.append({"role": "user", "content": results})
            return self.out_of_turns(output, usage, details)
        finally:
            await client.close()

    def sdk_client(self, options: dict[str, Any]) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**options)

    def sdk_errors(self) -> tuple[type[Exception], type[Exception]]:
        import anthropic

        return anthropic.APIConnectionError, anthropic.AnthropicError


def garbled(response: Any) -> str | None:
    """Why an endpoint's answer is not what the Messages API returns, or None (the SDK builds its
    objects without checking: no usage, null content, a text block of no text each ended the
    attempt as crashed)."""
    if not isinstance(response.content, list):
        return f"its content is {type(response.content).__name__}, not a list of blocks"
    for block in response.content:
        if not isinstance(getattr(block, "type", None), str):
            return "a content block has no type"
        if block.type == "text" and not isinstance(getattr(block, "text", None), str):
            return "a text block holds no text"
        if block.type == "tool_use" and not isinstance(getattr(block, "name", None), str):
            return "a tool_use block names no tool"
    if response.usage is None:
        return "it has no usage"
    return garbled_usage(response.usage, USAGE_KEYS)


@agent_kind("anthropic", usage="anthropic:MODEL", uses=MODEL_OPTIONS)
def create(model: str, options: AgentOptions) -> AnthropicAgent:
    return AnthropicAgent(model, options)
