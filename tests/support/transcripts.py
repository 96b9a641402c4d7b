"""Chat transcripts of a real attempt, derived from its trace, as other harnesses record them:
OpenAI chat-completions messages whose tool messages carry the sandbox's reply (as the sandbox's
own OpenAI agent sends it), and Anthropic messages whose tool results carry the text an MCP
client reads (a snapshot's text, compact JSON otherwise; ``is_error`` on errors). Nothing is
written by hand: every call, argument and result comes from the trace."""

from __future__ import annotations

import json
from typing import Any

from toolserver.contract.trace import CallRecord

SYSTEM = "You drive a browser through tools."


def reply_of(call: CallRecord) -> dict[str, Any]:
    if call.ok:
        return {"ok": True, "result": call.result}
    return {"ok": False, "error": call.error.model_dump(mode="json", exclude_none=True) if call.error else None}


def openai_messages(prompt: str, calls: list[CallRecord], answer: str) -> list[dict[str, Any]]:
    """One assistant message per call (``arguments`` as JSON text), its tool message, the answer."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    for call in calls:
        call_id = f"call_{call.seq:03d}"
        function = {"name": call.tool, "arguments": json.dumps(call.args, ensure_ascii=False)}
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(reply_of(call), ensure_ascii=False)}
        )
    messages.append({"role": "assistant", "content": answer})
    return messages


def mcp_text(call: CallRecord) -> list[dict[str, str]]:
    """What an MCP client that keeps the snapshot's text reads: the snapshot alone for a snapshot,
    compact JSON of the result (or of the error) otherwise."""
    if not call.ok:
        error = call.error.model_dump(mode="json", exclude_none=True) if call.error else {}
        return [{"type": "text", "text": json.dumps(error, separators=(",", ":"))}]
    result = call.result or {}
    if isinstance(result.get("snapshot"), str):
        return [{"type": "text", "text": result["snapshot"]}]
    return [{"type": "text", "text": json.dumps(result, ensure_ascii=False, separators=(",", ":"))}]


def anthropic_messages(prompt: str, calls: list[CallRecord], answer: str, per_turn: int = 2) -> list[dict[str, Any]]:
    """Assistant turns of ``per_turn`` ``tool_use`` blocks each, answered by one user message of
    ``tool_result`` blocks, then the answer as a text block."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for start in range(0, len(calls), per_turn):
        turn = calls[start : start + per_turn]
        uses = [
            {"type": "tool_use", "id": f"toolu_{call.seq:03d}", "name": call.tool, "input": call.args} for call in turn
        ]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Next step."}, *uses]})
        results = [
            {
                "type": "tool_result",
                "tool_use_id": f"toolu_{call.seq:03d}",
                "content": mcp_text(call),
                "is_error": not call.ok,
            }
            for call in turn
        ]
        messages.append({"role": "user", "content": results})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return messages
