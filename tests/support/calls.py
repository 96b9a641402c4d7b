"""Tool calls the browser tests repeat: start a session, take a snapshot, find a ref in it; the
lines a raw stdio MCP client sends."""

from __future__ import annotations

import json
import re

from tests.support.site import SITE


async def start(run, url: str = f"{SITE}/", site_key: str = "test-key", **extra) -> dict:
    reply = await run.call(
        "browser_start_session",
        {"provider": "kernel", "site_key": site_key, "clear_cookies": False, "url": url, **extra},
    )
    assert reply["ok"], reply
    return reply["result"]


async def snapshot(run) -> dict:
    reply = await run.call("browser_snapshot", {})
    assert reply["ok"], reply
    return reply["result"]


def ref_of(snapshot_text: str, needle: str) -> str:
    """The ref on the first snapshot line that contains ``needle``."""
    for line in snapshot_text.splitlines():
        if needle in line:
            found = re.search(r"\[ref=(\w+)\]", line)
            if found:
                return found.group(1)
    raise AssertionError(f"{needle!r} not in snapshot:\n{snapshot_text}")


def handshake_then(*requests: dict) -> bytes:
    """``initialize``, ``initialized``, then ``requests`` (ids from 2), as JSON lines a raw stdio client sends."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": number, **request} for number, request in enumerate(requests, 2)),
    ]
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)
