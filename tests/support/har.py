"""HAR 1.2 entries for the import tests."""

from __future__ import annotations

import json
from pathlib import Path


def har_entry(url: str, text: str = "hello", status: int = 200, content: dict | None = None) -> dict:
    """A GET answered with ``text`` as text/plain (``content``: the response's content object instead)."""
    return {
        "startedDateTime": "2024-05-01T10:00:00.000Z",
        "request": {"method": "GET", "url": url, "headers": []},
        "response": {
            "status": status,
            "headers": [{"name": "Content-Type", "value": "text/plain"}],
            "content": content if content is not None else {"size": len(text), "mimeType": "text/plain", "text": text},
            "redirectURL": "",
        },
    }


def write_har(path: Path, *entries: dict) -> Path:
    """A HAR file at ``path`` holding ``entries``."""
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": list(entries)}}))
    return path
