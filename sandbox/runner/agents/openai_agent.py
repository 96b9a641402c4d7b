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

The tools are the sandbox's own tool contract, built from ``toolserver.dispatch.ordered_tools()``
(name, description, JSON schema) — not from a ``list_tools`` call, so that asking for the
schemas never adds a line to the measured trace. Every tool call the model makes goes through
``task.client`` (the same dispatcher and trace as HTTP). Arguments that are not valid JSON are
passed through as the raw string, so the sandbox rejects and records them as sent; empty
arguments mean ``{}``. Tool results go back whole, as the JSON the tool server answers.
The whole conversation is saved as ``transcript.jsonl`` in the attempt folder
(``sandbox.runner.transcript``). Errors name the endpoint; ``preflight`` checks once, before a
batch, that the endpoint answers at all.

Cassettes (vcrpy): requests match on method, scheme, host, port and path, in order — bodies
are not matched because they hold run-specific values (session ids, tool results). The
Authorization header is never recorded. This attempt's site key is saved as the placeholder
``<SANDBOX_SITE_KEY>`` and restored as the replaying attempt's fresh key, so a replay issues
the same tool calls with the key its gates expect. Record mode ``all`` re-records from scratch.
vcrpy patches the HTTP library process-wide, so attempts that use a cassette take turns (a
per-event-loop lock); only httpx2 (the SDK's transport) is patched.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from pathlib import Path
from typing import Any

from sandbox.runner.agents import AgentOptions
from sandbox.runner.task import AgentResult, AgentTask
from sandbox.runner.transcript import Transcript

KIND = "openai"
USAGE = "openai:MODEL"
USES_OPTIONS = ("base_url", "cassette", "record_mode", "max_turns")

SYSTEM_PROMPT = ("You are a browser agent. Do the task using only the browser tools provided, following "
                 "every rule in the task exactly, and end with your final answer as plain text.")
SITE_KEY_PLACEHOLDER = "<SANDBOX_SITE_KEY>"
MATCH_ON = ("method", "scheme", "host", "port", "path")
CHAT_PATH = "/chat/completions"
PREFLIGHT_TIMEOUT_S = 10.0
NOT_RECORDED_HEADERS = ("authorization", "openai-organization", "openai-project", "cookie")
_CASSETTE_LOCKS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]" = weakref.WeakKeyDictionary()


class CassetteError(Exception):
    """A cassette could not answer a request (missing cassette, unmatched or extra request)."""


def function_tools(schemas: list[dict]) -> list[dict]:
    """The run's tools (as ``list_tools`` gives them) as OpenAI function tools, in order."""
    return [{"type": "function", "function": {"name": tool["name"], "description": tool["description"],
                                              "parameters": tool["input_schema"]}}
            for tool in schemas]


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


def cassette_failure(exc: BaseException) -> BaseException | None:
    """The vcrpy error behind an SDK error, if any (the SDK wraps transport errors)."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (CannotOverwriteExistingCassetteException, CassetteError)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def cassette_lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    lock = _CASSETTE_LOCKS.get(loop)
    if lock is None:
        lock = _CASSETTE_LOCKS[loop] = asyncio.Lock()
    return lock


class OpenAIAgent:
    def __init__(self, model: str, options: AgentOptions | None = None) -> None:
        self.model = model
        self.options = options or AgentOptions()
        self.name = f"openai:{model}"

    # --- the cassette ---------------------------------------------------------------------
    def replaying(self) -> bool:
        cassette = self.options.cassette
        mode = self.options.record_mode
        return cassette is not None and (mode == "none" or (mode == "once" and Path(cassette).is_file()))

    def open_cassette(self, task: AgentTask):
        import vcr
        from vcr.patch import PATCHER_NAMES

        def drop_cookies(response: dict) -> dict:
            response["headers"] = {k: v for k, v in response.get("headers", {}).items()
                                   if k.lower() != "set-cookie"}
            return response

        recorder = vcr.VCR(
            record_mode=self.options.record_mode, match_on=MATCH_ON,
            filter_headers=NOT_RECORDED_HEADERS, before_record_response=drop_cookies,
            decode_compressed_response=True, drop_unused_requests=self.options.record_mode == "all",
            filter_sensitive_data={SITE_KEY_PLACEHOLDER: task.site_key},
            skip_patchers=tuple(name for name in PATCHER_NAMES if name != "httpx2"))
        return recorder.use_cassette(str(self.options.cassette))

    def base_url(self, cassette) -> str | None:
        if self.options.base_url:
            return self.options.base_url
        if cassette is not None and self.replaying() and cassette.requests:
            uri = cassette.requests[0].uri
            if uri.endswith(CHAT_PATH):
                return uri[: -len(CHAT_PATH)]
        return os.environ.get("OPENAI_BASE_URL") or None

    # --- the loop -------------------------------------------------------------------------
    async def run(self, task: AgentTask) -> AgentResult:
        if self.options.cassette is None:
            return await self.converse(task, None)
        async with cassette_lock():
            with self.open_cassette(task) as cassette:
                return await self.converse(task, cassette)

    async def converse(self, task: AgentTask, cassette) -> AgentResult:
        import openai

        base_url = self.base_url(cassette)
        details: dict[str, Any] = {"model": self.model, "base_url": base_url or "SDK default", "turns": 0,
                                   "tool_calls": 0}
        if cassette is not None:
            details.update(cassette=str(self.options.cassette), record_mode=self.options.record_mode,
                           replayed=self.replaying())
        client = openai.AsyncOpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") or "sk-local",
                                    max_retries=0 if self.replaying() else 2)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                          {"role": "user", "content": task.prompt}]
        transcript = Transcript(task.workdir)
        for message in messages:
            transcript.write(message)
        tools = function_tools(await task.client.list_tools())
        usage: dict[str, int] | None = None
        output = ""
        try:
            for _ in range(self.options.max_turns):
                try:
                    response = await client.chat.completions.create(model=self.model, messages=messages,
                                                                    tools=tools)
                except Exception as exc:  # the SDK's errors and vcrpy's (which the SDK may wrap)
                    if not isinstance(exc, openai.OpenAIError) and cassette_failure(exc) is None:
                        raise
                    error = self.describe_failure(exc, details["turns"] + 1, str(client.base_url))
                    transcript.write({"kind": "error", "error": error})
                    return AgentResult(output=output, status="error", token_usage=usage, details=details, error=error)
                details["turns"] += 1
                transcript.turn = details["turns"]
                usage = add_usage(usage, response.usage)
                if not response.choices:
                    return AgentResult(output=output, status="error", error="the model answered with no choices",
                                       token_usage=usage, details=details)
                choice = response.choices[0]
                message = choice.message
                output = message.content or output
                details["finish_reason"] = choice.finish_reason
                calls = [c for c in (message.tool_calls or []) if getattr(c, "function", None) is not None]
                transcript.write({"role": "assistant", "content": message.content, "tool_calls": [
                    {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in calls],
                    "finish_reason": choice.finish_reason, "usage": add_usage(None, response.usage)})
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
                    transcript.write({**messages[-1], "name": call.function.name})
            return AgentResult(output=output, status="error", token_usage=usage, details=details,
                               error=f"no final answer after {self.options.max_turns} model turns (--max-turns)")
        finally:
            await client.close()

    def describe_failure(self, exc: BaseException, request_number: int, endpoint: str) -> str:
        replay_error = cassette_failure(exc)
        if replay_error is not None:
            return (f"cassette {self.options.cassette} (record mode {self.options.record_mode}) cannot answer "
                    f"model request {request_number}; record it with --record-mode all "
                    f"(see fixtures/cassettes/README.md).\n{replay_error}")
        return f"model API error at {endpoint} ({type(exc).__name__}): {exc}"

    async def preflight(self) -> str | None:
        """Before a batch: can the endpoint be reached at all? (None: yes, or a cassette answers.)
        Only a connection failure counts: servers without ``/models`` are fine."""
        import openai

        if self.replaying():
            return None
        client = openai.AsyncOpenAI(base_url=self.base_url(None), max_retries=0, timeout=PREFLIGHT_TIMEOUT_S,
                                    api_key=os.environ.get("OPENAI_API_KEY") or "sk-local")
        try:
            await client.models.list()
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            return (f"cannot reach the model endpoint {client.base_url} ({type(exc).__name__}: {exc}); start your "
                    f"OpenAI-compatible server there, or point --base-url / $OPENAI_BASE_URL at it")
        except openai.OpenAIError:
            return None
        finally:
            await client.close()
        return None


def create(value: str, options: AgentOptions) -> OpenAIAgent:
    return OpenAIAgent(value, options)
