"""What a model request says that the agent chose, for matching a replayed request against the
recorded one (the cassettes' ``conversation`` matcher) and saying where the two differ.

A request body is the model, its parameters, the system prompt, the tools and the messages so far.
All of it is the agent's doing except the tool results it passes back (OpenAI's ``tool`` messages,
Anthropic's ``tool_result`` blocks): they hold per-run values (session ids, timings), so they are
left out. What is left is the same on every faithful replay (the site key is the replaying
attempt's in both), and different when the agent changed since the recording: another model or
system prompt, a parameter added, a turn more or less.

Pure: imports no SDK and no vcrpy.
"""

from __future__ import annotations

import json
import weakref
from contextlib import suppress
from typing import Any

TOOL_RESULT = "<tool result>"
SHOWN_DIFFERENCES = 3
SHOWN_CHARACTERS = 80
_CANONICAL: weakref.WeakKeyDictionary[object, str | None] = weakref.WeakKeyDictionary()


def masked(body: object) -> Any:
    """A request body's JSON with the tool results left out; None when it is not a JSON object."""
    found = canonical(body)
    return None if found is None else json.loads(found)


def canonical(body: object) -> str | None:
    """``masked`` as one text (keys sorted), for comparing; None when it is not a JSON object."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    if not isinstance(body, (bytes, bytearray)) or not body:
        return None
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(request, dict):
        return None
    messages = request.get("messages")
    if isinstance(messages, list):
        request["messages"] = [without_tool_results(message) for message in messages]
    return json.dumps(request, sort_keys=True, ensure_ascii=False)


def without_tool_results(message: object) -> object:
    if not isinstance(message, dict):
        return message
    if message.get("role") == "tool":  # OpenAI: a message per tool result
        return {**message, "content": TOOL_RESULT}
    content = message.get("content")
    if isinstance(content, list):  # Anthropic: tool_result blocks in a user message
        blocks = [
            {"type": "tool_result", "tool_use_id": block.get("tool_use_id"), "content": TOOL_RESULT}
            if isinstance(block, dict) and block.get("type") == "tool_result"
            else block
            for block in content
        ]
        return {**message, "content": blocks}
    return message


def conversation(sent, recorded) -> bool:
    """vcrpy's matcher ``conversation``: whether the request made (``sent``) and one the cassette
    holds (``recorded``) are the same conversation. A body that is not a JSON object matches only
    the same bytes: a recorded body cut short matches no request, rather than any.
    Where they differ (``differences``) is worked out only when no recorded request matches:
    vcrpy compares each request with every recorded one, and a long conversation's are large."""
    mine, theirs = canonical_of(sent), canonical_of(recorded)
    if mine is None and theirs is None:
        return raw_body(sent) == raw_body(recorded)
    return mine == theirs


def raw_body(request: object) -> bytes | None:
    body = getattr(request, "body", None)
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body) if isinstance(body, (bytes, bytearray)) else None


def canonical_of(request: object) -> str | None:
    """A vcrpy request's ``canonical`` body, worked out once per request object."""
    try:
        return _CANONICAL[request]
    except (KeyError, TypeError):  # not seen yet, or not weakly referable
        pass
    body = getattr(request, "body", None)
    found = canonical(body if isinstance(body, (str, bytes, bytearray)) else None)
    with suppress(TypeError):
        _CANONICAL[request] = found
    return found


def differences(recorded: Any, sent: Any, where: str = "") -> list[str]:
    """Where ``sent`` differs from ``recorded`` (at most ``SHOWN_DIFFERENCES``): the JSON path and
    both values, shortened."""
    if recorded == sent:
        return []
    name = where or "the request"
    if isinstance(recorded, dict) and isinstance(sent, dict):
        found: list[str] = []
        for key in sorted(set(recorded) | set(sent)):
            at = f"{where}.{key}" if where else str(key)
            if key not in sent:
                found.append(f"{at}: recorded {shown(recorded[key])}, not sent")
            elif key not in recorded:
                found.append(f"{at}: not recorded, sent {shown(sent[key])}")
            elif recorded[key] != sent[key]:
                found += differences(recorded[key], sent[key], at)
            if len(found) >= SHOWN_DIFFERENCES:
                break
        return found[:SHOWN_DIFFERENCES]
    if isinstance(recorded, list) and isinstance(sent, list):
        found = []
        first = next((n for n, (a, b) in enumerate(zip(recorded, sent, strict=False)) if a != b), None)
        if first is not None:
            found += differences(recorded[first], sent[first], f"{where}[{first}]")
        if len(recorded) != len(sent):
            found.append(f"{name}: recorded {len(recorded)} items, sent {len(sent)}")
        return found[:SHOWN_DIFFERENCES]
    return [f"{name}: recorded {shown(recorded)}, sent {shown(sent)}"]


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARACTERS else f"{text[:SHOWN_CHARACTERS]}..."
