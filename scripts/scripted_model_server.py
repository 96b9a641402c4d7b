"""A scripted model server, OpenAI- and Anthropic-compatible: a real HTTP server whose "model"
is a fixed policy.

It exists so the ``openai:MODEL`` and ``anthropic:MODEL`` agents can be exercised end to end
without a language model and without a network: they talk to it through the ``openai`` and
``anthropic`` SDKs exactly as they would talk to vLLM, llama.cpp, Ollama, a gateway or a hosted
endpoint, and vcrpy can record the exchange. Both APIs share one policy (``decide``).

    POST /v1/chat/completions   OpenAI chat completions (non-streaming, tool calls), model "scripted-browser-1";
                                model "scripted-form-1" also streams
    POST /v1/messages           the Anthropic Messages API (non-streaming, tool use), model "scripted-browser-1"
    GET  /v1/models             the model list

The policy of "scripted-browser-1" reads the conversation, never anything else:

1. from the first user message it takes the site key, the canonical start URL and the allowed
   resource URLs (the runner prompt lines) and the REQUIRED OUTPUT JSON SCHEMA;
2. it issues one tool call per turn: browser_start_session(provider="kernel", site_key,
   clear_cookies=false, url=start), browser_snapshot, then browser_navigate + browser_snapshot
   for every other allowed URL, then browser_close with no arguments;
3. it answers with a BENCHMARK_JSON_BEGIN/END block holding one best-effort record: a skeleton
   of the output schema filled with the values it could match by name in the JSON documents it
   saw. The record may be wrong or incomplete: the point is a deterministic, realistic
   exchange, not a good answer.

If the start call fails or names a provider other than Kernel it stops with a benchmark error,
as the runner prompt asks. Token usage is an estimate (about four characters per token).

The second model, "scripted-form-1", is the policy of the framework compatibility suite
(``scripts/compat/form_policy.py``, loaded from that file): it takes the controlled-form workflow
to the form's second step, reading every ref from the tool results, and checks on the way that a
stale ref and a wrongly typed argument come back as tool errors. It answers over chat
completions only, streamed or not, as the frameworks ask. A tool offered with ``strict: true``
gets every property in each call (the ones the policy leaves out as null, or as the empty value
of a type that cannot be null), as OpenAI's strict mode would make a model send them.

Run it by hand: ``.venv/bin/python scripts/scripted_model_server.py --port 8765`` and point an
agent at ``http://127.0.0.1:8765/v1``. Tests call ``start_server()``.
Imports aiohttp only (no sandbox code; the form policy is standard library only): it stands for
a third-party model server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import importlib.util
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import web

MODEL = "scripted-browser-1"
FORM_MODEL = "scripted-form-1"  # the compatibility suite's policy, served over chat completions
SITE_KEY = re.compile(r'site_key="([^"]+)"')
START_URL = re.compile(r'browser_start_session call must pass url="([^"]+)"')
ALLOWED_URLS = re.compile(r"only these exact resource URLs: (.+?)\.(?: A fragment|\s*$)", re.M)
SCHEMA_MARKER = "REQUIRED OUTPUT JSON SCHEMA:"
ABSTAIN = ("NOT_FOUND", "NOT_STATED")


# --- reading the task from the prompt ------------------------------------------------------
def read_plan(prompt: str) -> dict[str, Any]:
    site_key, start = SITE_KEY.search(prompt), START_URL.search(prompt)
    allowed = ALLOWED_URLS.search(prompt)
    return {
        "site_key": site_key.group(1) if site_key else None,
        "start_url": start.group(1) if start else None,
        "allowed_urls": [u.strip() for u in allowed.group(1).split(";")] if allowed else [],
        "schema": read_schema(prompt),
    }


def read_schema(prompt: str) -> dict | None:
    at = prompt.find(SCHEMA_MARKER)
    brace = prompt.find("{", at) if at >= 0 else -1
    if brace < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(prompt[brace:])[0]
    except json.JSONDecodeError:
        return None


def planned_calls(plan: dict[str, Any]) -> list[tuple[str, dict]]:
    start = plan["start_url"] or (plan["allowed_urls"][0] if plan["allowed_urls"] else None)
    calls = [
        (
            "browser_start_session",
            {"provider": "kernel", "site_key": plan["site_key"], "clear_cookies": False, "url": start},
        ),
        ("browser_snapshot", {}),
    ]
    for url in plan["allowed_urls"]:
        if url != start:
            calls += [("browser_navigate", {"url": url}), ("browser_snapshot", {})]
    return calls + [("browser_close", {})]


# --- the best-effort record ----------------------------------------------------------------
def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def documents_seen(tool_results: list[dict]) -> tuple[dict[str, Any], list[str]]:
    """Scalar values by snake_case key from JSON documents seen, and the page headings seen."""
    values: dict[str, Any] = {}
    headings: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, (str, int, float)) and not isinstance(value, bool) and value != "":
                    values.setdefault(snake(key), value)
                else:
                    collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)

    for reply in tool_results:
        text = ((reply.get("result") or {}) if isinstance(reply, dict) else {}).get("snapshot")
        if not isinstance(text, str):
            continue
        headings += re.findall(r'- heading "([^"]+)" \[level=1\]', text)
        if text.startswith("- document (") and "\n" in text:
            with contextlib.suppress(json.JSONDecodeError):
                collect(json.loads(text.split("\n", 1)[1]))
    if headings:
        values.setdefault("title", headings[0])
    return values, headings


def fill(schema: dict, defs: dict, name: str, values: dict[str, Any], urls: list[str]) -> Any:
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "enum" in schema:
        return next((v for v in schema["enum"] if v in ABSTAIN), schema["enum"][0])
    if "object" in kinds:
        props = schema.get("properties", {})
        return {key: fill(sub, defs, key, values, urls) for key, sub in props.items()}
    if "array" in kinds:
        return []
    if "boolean" in kinds:
        return False
    if "integer" in kinds or ("number" in kinds and "string" not in kinds):
        found = values.get(name)
        return found if isinstance(found, int) else 0
    if schema.get("format") == "uri" and urls:
        return urls[0]  # a guess: the canonical start URL
    found = values.get(name)
    return str(found) if found is not None else "NOT_FOUND"


def final_answer(plan: dict[str, Any], tool_results: list[dict]) -> str:
    values, _ = documents_seen(tool_results)
    schema = plan["schema"] or {"type": "object", "properties": {}}
    defs = schema.get("$defs", {})
    urls = [u for u in [plan["start_url"], *plan["allowed_urls"]] if u]
    if schema.get("type") == "array":
        record = [fill(schema.get("items", {}), defs, "", values, urls)]
    else:
        record = [fill(schema, defs, "", values, urls)]
    return (
        "I visited every supplied URL and closed the session. Best-effort record:\n"
        f"BENCHMARK_JSON_BEGIN\n{json.dumps(record, indent=2, ensure_ascii=False)}\nBENCHMARK_JSON_END"
    )


# --- the policy ----------------------------------------------------------------------------
def decide(prompt: str, issued: list[str], replies: dict[int, dict], offered_tools: set[str]) -> dict:
    """The next step of the conversation (a pure function of it), in neither API's format:
    ``{"call": (name, args)}`` or ``{"answer": text}``. ``issued`` are the names of the tool
    calls made so far, ``replies`` the sandbox's replies by call index."""
    plan = read_plan(prompt or "")
    if not plan["site_key"] or not (plan["start_url"] or plan["allowed_urls"]):
        return {"answer": "BENCHMARK_ERROR: the prompt names no site key or start URL."}
    for index, name in enumerate(issued):  # the runner prompt: stop on a failed start or a non-Kernel provider
        if name == "browser_start_session":
            reply = replies.get(index) or {}
            if not reply.get("ok"):
                error = (reply.get("error") or {}).get("message", "no result")
                return {"answer": f"BENCHMARK_ERROR: browser_start_session failed: {error}"}
            provider = (reply.get("result") or {}).get("provider")
            if provider != "kernel":
                return {"answer": f"BENCHMARK_ERROR: the session provider is {provider!r}, not Kernel."}
    calls = [(name, args) for name, args in planned_calls(plan) if name in offered_tools]
    if len(issued) < len(calls):
        return {"call": calls[len(issued)]}
    return {"answer": final_answer(plan, [replies[i] for i in sorted(replies)])}


def call_id(prefix: str, step: int, name: str) -> str:
    return prefix + hashlib.sha256(f"{step}:{name}".encode()).hexdigest()[:24]


def tool_reply(content: Any) -> dict:
    """The sandbox reply an agent sent back as a tool result (JSON text)."""
    if isinstance(content, list):  # content blocks
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    try:
        reply = json.loads(content or "null")
    except json.JSONDecodeError:
        reply = None
    return reply if isinstance(reply, dict) else {"ok": False, "error": {"message": str(content)}}


def text_of(content: Any) -> str:
    if isinstance(content, list):  # content parts / blocks
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text")
    return content or ""


def openai_step(messages: list[dict], offered_tools: set[str]) -> dict:
    """The next assistant message of an OpenAI chat-completions conversation."""
    prompt = text_of(next((m.get("content") for m in messages if m.get("role") == "user"), None))
    issued = [c for m in messages if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
    by_id = {m.get("tool_call_id"): tool_reply(m.get("content")) for m in messages if m.get("role") == "tool"}
    replies = {i: by_id[c.get("id")] for i, c in enumerate(issued) if c.get("id") in by_id}
    step = decide(prompt, [c.get("function", {}).get("name") for c in issued], replies, offered_tools)
    if "answer" in step:
        return {"role": "assistant", "content": step["answer"]}
    name, args = step["call"]
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id("call_", len(issued), name),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def anthropic_step(messages: list[dict], offered_tools: set[str]) -> list[dict]:
    """The content blocks of the next assistant message of an Anthropic Messages conversation."""
    blocks = [
        (m.get("role"), b)
        for m in messages
        for b in (
            m.get("content")
            if isinstance(m.get("content"), list)
            else [{"type": "text", "text": m.get("content") or ""}]
        )
    ]
    prompt = next((b.get("text", "") for role, b in blocks if role == "user" and b.get("type") == "text"), "")
    issued = [b for role, b in blocks if role == "assistant" and b.get("type") == "tool_use"]
    by_id = {
        b.get("tool_use_id"): tool_reply(b.get("content"))
        for role, b in blocks
        if role == "user" and b.get("type") == "tool_result"
    }
    replies = {i: by_id[b.get("id")] for i, b in enumerate(issued) if b.get("id") in by_id}
    step = decide(prompt, [b.get("name") for b in issued], replies, offered_tools)
    if "answer" in step:
        return [{"type": "text", "text": step["answer"]}]
    name, args = step["call"]
    return [{"type": "tool_use", "id": call_id("toolu_", len(issued), name), "name": name, "input": args}]


def estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


# --- HTTP ----------------------------------------------------------------------------------
def api_error(message: str, status: int, param: str | None = None, code: str | None = None) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}, status=status
    )


async def read_body(
    request: web.Request, served: tuple[str, ...] = (MODEL,)
) -> tuple[dict | None, tuple[str, int, str | None] | None]:
    """The request body, or what is wrong with it as (message, HTTP status, field): the checks
    both APIs make alike."""
    try:
        body = await request.json()
    except json.JSONDecodeError as exc:
        return None, (f"request body is not valid JSON: {exc}", 400, None)
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None, ("'messages' must be a list of message objects", 400, "messages")
    if body.get("model") not in served:
        model = body.get("model")
        return None, (f"The model {model!r} does not exist; this server serves {served[0]!r}.", 404, "model")
    if body.get("stream") and body.get("model") != FORM_MODEL:
        return None, ("streaming is not supported by this server; send stream=false", 400, "stream")
    return body, None


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body, problem = await read_body(request, (MODEL, FORM_MODEL))
    if problem:
        message, status, field = problem
        return api_error(message, status, field, "model_not_found" if status == 404 else None)
    if body["model"] == FORM_MODEL:
        return await form_completion(request, body)
    offered = {t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    message = openai_step(body["messages"], offered)
    turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    prompt_tokens = estimate_tokens([body["messages"], body.get("tools") or []])
    completion_tokens = estimate_tokens(message)
    return web.json_response(
        {
            "id": f"chatcmpl-scripted-{turn:03d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL,
            "system_fingerprint": "scripted-v1",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


# --- the form model (the compatibility suite's policy) ---------------------------------------
@functools.cache
def load_form_policy() -> Any:
    path = Path(__file__).resolve().parent / "compat" / "form_policy.py"
    spec = importlib.util.spec_from_file_location("form_policy", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def form_step(messages: list[dict], tools: list[dict]) -> dict:
    """The next assistant message of the form policy: the task is read from every system and
    user message, each tool call is paired with the tool message that answers it."""
    policy = load_form_policy()
    prompt = "\n".join(text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer", "user"))
    results = {m.get("tool_call_id"): text_of(m.get("content")) for m in messages if m.get("role") == "tool"}
    turns = []
    for message in messages:
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            function = call.get("function") or {}
            try:
                args = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            turns.append(policy.Turn(function.get("name", ""), args, results.get(call.get("id"), "")))
    step = policy.next_step(prompt, turns)
    if "answer" in step:
        return {"role": "assistant", "content": step["answer"]}
    name, args = step["call"]
    offered = {t.get("function", {}).get("name"): t.get("function", {}) for t in tools if isinstance(t, dict)}
    name = policy.offered_name(name, list(offered))
    function = offered.get(name) or {}
    if function.get("strict"):  # OpenAI's strict mode: every property is required, so every one is sent
        args = policy.completed(args, function.get("parameters") or {})
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id("call_", len(turns), name),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
        ],
    }


async def form_completion(request: web.Request, body: dict) -> web.StreamResponse:
    message = form_step(body["messages"], body.get("tools") or [])
    turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    reason = "tool_calls" if message.get("tool_calls") else "stop"
    prompt_tokens = estimate_tokens([body["messages"], body.get("tools") or []])
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": estimate_tokens(message),
        "total_tokens": prompt_tokens + estimate_tokens(message),
    }
    head = {"id": f"chatcmpl-form-{turn:03d}", "created": int(time.time()), "model": FORM_MODEL}
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": reason}
        return web.json_response({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    chunks = [
        {"choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}]},
    ]
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({"choices": [], "usage": usage})
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    for chunk in chunks:
        data = json.dumps({**head, "object": "chat.completion.chunk", **chunk}, ensure_ascii=False)
        await response.write(f"data: {data}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def anthropic_error(message: str, status: int, kind: str = "invalid_request_error") -> web.Response:
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)


async def messages_api(request: web.Request) -> web.Response:
    """POST /v1/messages: the Anthropic Messages API (non-streaming, tool use)."""
    body, problem = await read_body(request)
    if problem:
        message, status, _field = problem
        return anthropic_error(message, status, "not_found_error" if status == 404 else "invalid_request_error")
    messages = body["messages"]
    if not isinstance(body.get("max_tokens"), int):
        return anthropic_error("max_tokens: Field required", 400)
    offered = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    content = anthropic_step(messages, offered)
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    return web.json_response(
        {
            "id": f"msg_scripted_{turn:03d}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": estimate_tokens([body.get("system"), messages, body.get("tools") or []]),
                "output_tokens": estimate_tokens(content),
            },
        }
    )


async def list_models(request: web.Request) -> web.Response:
    return web.json_response(
        {
            "object": "list",
            "data": [
                {"id": model, "object": "model", "created": 0, "owned_by": "browser-tool-sandbox"}
                for model in (MODEL, FORM_MODEL)
            ],
        }
    )


def create_app() -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/messages", messages_api)
    app.router.add_get("/v1/models", list_models)
    return app


async def start_server(host: str = "127.0.0.1", port: int = 0) -> tuple[web.AppRunner, str]:
    """Start on ``host:port`` (0: a free port); returns the runner (``await runner.cleanup()``)
    and the server's root URL (the OpenAI base URL is that plus ``/v1``)."""
    runner = web.AppRunner(create_app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]
    return runner, f"http://{host}:{bound}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()

    async def serve() -> None:
        runner, url = await start_server(args.host, args.port)
        print(f"scripted models {MODEL!r} and {FORM_MODEL!r} at {url}/v1 (Ctrl-C stops)", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
