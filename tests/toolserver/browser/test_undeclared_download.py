"""A mirrored document Chromium downloads though no Content-Disposition says so (a binary type):
nothing commits in its tab, and the sandbox does not wait for a commit that never comes."""

from __future__ import annotations

import time

from tests.support.hostile import HOSTILE, build_hostile_mirror, hostile_run, start_hostile
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.contract.trace import parse_trace


async def test_a_navigation_to_a_binary_body_is_a_download_not_a_wait(sandbox, tmp_path):
    """The router waited for the document it served to commit: the navigation took 5 s and wrote a
    settle_timeout, and so did every later settle in that tab."""
    root = build_hostile_mirror(tmp_path)
    provenance = reconstructed("a binary body served without Content-Disposition")
    body = b"\x00\x01" * 512
    write_entry(root / "hostile.sandbox.example", f"{HOSTILE}/data.bin", body, "application/octet-stream", provenance)
    run = hostile_run(sandbox, root, "/calm", "/data.bin", mode="observe")
    await start_hostile(run, "/calm")
    began = time.monotonic()
    moved = await run.call("browser_navigate", {"url": f"{HOSTILE}/data.bin"})
    took = time.monotonic() - began
    began = time.monotonic()
    back = await run.call("browser_snapshot", {})
    again = time.monotonic() - began
    await run.close()
    events = parse_trace(run.trace.text()).events
    assert [e.data["url"] for e in events if e.kind == "download"] == [f"{HOSTILE}/data.bin"], events
    assert [e.data for e in events if e.kind == "settle_timeout"] == [], (moved, back)
    assert took < 3.0 and again < 3.0, (took, again)
