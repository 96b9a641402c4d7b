"""``transcript.jsonl``: a model agent's whole conversation, one JSON line per message as sent
or received, written (and flushed) as it happens, so a killed attempt keeps what it had.

    {"turn": 0, "role": "system" | "user", "content": ...}                  what the model was given
    {"turn": n, "role": "assistant", "content", "tool_calls", "finish_reason", "usage"}   answer n
    {"turn": n, "role": "tool", "tool_call_id", "name", "content"}        a tool result as sent back
    {"turn": n, "kind": "error", "error": ...}                            why the conversation stopped
    {"turn": n, "kind": "cassette", "error": ...}            why the cassette's recording was not saved

A ``Transcript`` opened on a folder that has one goes on at its last line's turn. Text that is
not valid Unicode (half a surrogate pair, from a model's JSON escape) is written as its JSON
escape (``\\ud83d``), as the model sent it, rather than failing the attempt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolserver.contract.lines import escape_line_breaks

TRANSCRIPT_FILE = "transcript.jsonl"
_TAIL_BLOCK = 65536


class Transcript:
    def __init__(self, folder: Path | None) -> None:
        self.path = Path(folder) / TRANSCRIPT_FILE if folder is not None else None
        self.turn = last_turn(self.path) if self.path is not None else 0

    def write(self, entry: Mapping[str, Any]) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8", errors="backslashreplace") as file:
            # the characters JSONL readers end a line at are escapes, as in the trace: one line, one message
            line = escape_line_breaks(json.dumps({"turn": self.turn, **entry}, ensure_ascii=False, default=str))
            file.write(line + "\n")


def last_turn(path: Path) -> int:
    """The turn of the transcript's last whole line (0: no file, or none to read), read from its end."""
    try:
        with open(path, "rb") as file:
            end = file.seek(0, os.SEEK_END)
            tail = b""
            while end > 0 and tail[:-1].count(b"\n") < 1:  # back to the line before the last one
                start = max(0, end - _TAIL_BLOCK)
                file.seek(start)
                tail = file.read(end - start) + tail
                end = start
    except OSError:
        return 0
    try:
        turn = json.loads(tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]).get("turn")
    except (ValueError, AttributeError):
        return 0
    return turn if type(turn) is int else 0
