"""``transcript.jsonl``: a model agent's whole conversation, one JSON line per message as sent
or received, written (and flushed) as it happens, so a killed attempt keeps what it had.

    {"turn": 0, "role": "system" | "user", "content": ...}                  what the model was given
    {"turn": n, "role": "assistant", "content", "tool_calls", "finish_reason", "usage"}   answer n
    {"turn": n, "role": "tool", "tool_call_id", "name", "content"}        a tool result as sent back
    {"turn": n, "kind": "error", "error": ...}                            why the conversation stopped
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TRANSCRIPT_FILE = "transcript.jsonl"


class Transcript:
    def __init__(self, folder: Path | None) -> None:
        self.path = Path(folder) / TRANSCRIPT_FILE if folder is not None else None
        self.turn = 0

    def write(self, entry: Mapping[str, Any]) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(json.dumps({"turn": self.turn, **entry}, ensure_ascii=False, default=str) + "\n")
