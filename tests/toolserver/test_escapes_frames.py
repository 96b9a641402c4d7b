"""Frames showing documents their page made itself (``data:``, ``blob:``), which no request
brings and the router never sees: checked against the allow-list when they commit, recorded,
and (enforced) taken off, as the top frame's are."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio

from tests.support.hostile import (
    HOSTILE,
    build_hostile_mirror,
    hostile_run,
    past_the_line_cap,
    snapshot_text,
    start_hostile,
)
from toolserver.contract.trace import parse_trace
from toolserver.run import Run


@pytest_asyncio.fixture(scope="module")
def hostile_root(tmp_path_factory):
    return build_hostile_mirror(tmp_path_factory.mktemp("hostile"))


def violations(run: Run) -> list[dict]:
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == "policy_violation"]


async def both_frames_seen(run: Run) -> list[dict]:
    """The run's violations once both frames' are in (at most 5 s)."""
    for _ in range(50):
        if len(violations(run)) >= 2:
            break
        await asyncio.sleep(0.1)
    return violations(run)


@pytest.mark.parametrize("mode", ["enforce", "observe"])
async def test_frames_at_data_and_blob_urls_are_policy_violations(sandbox, hostile_root, mode):
    # Before, a frame's commit was not looked at: neither was recorded, and both texts were shown.
    run = hostile_run(sandbox, hostile_root, "/frame-local", mode=mode)
    await start_hostile(run, "/frame-local")
    seen = await both_frames_seen(run)
    text = await snapshot_text(run)
    await run.close()
    schemes = sorted(v["url"].split(":", 1)[0] for v in seen)
    assert schemes == ["blob", "data"], seen
    assert all(v["origin"] == "frame" and v["enforced"] == (mode == "enforce") for v in seen), seen
    assert next(v for v in seen if v["url"].startswith("blob:"))["url"].startswith(f"blob:{HOSTILE}/")
    if mode == "enforce":
        assert "SECRET-PAGE-TEXT" not in text and "DATA-FRAME-TEXT" not in text, text
        assert text.count("Blocked by the sandbox") == 2, text
    else:
        assert "SECRET-PAGE-TEXT" in text and "DATA-FRAME-TEXT" in text, text


async def test_a_frame_flooding_local_documents_grows_its_trace_by_a_bounded_amount(own_sandbox, hostile_root):
    async with own_sandbox(max_page_event_lines=10) as own:
        run = hostile_run(own, hostile_root, "/local-frame-flood")
        await start_hostile(run, "/local-frame-flood")
        await past_the_line_cap(run, 10)  # a data: document every 5 ms, each taken off, no call in flight
        text = await snapshot_text(run)
        await run.close()
    assert "Local frame flood" in text, text
    trace = parse_trace(run.trace.text())
    written = [e for e in trace.events if e.kind == "policy_violation"]
    suppressed = sum(e.data["count"] for e in trace.events if e.kind == "events_suppressed")
    assert 0 < len(written) <= 10 * (len(trace.calls) + 1), (len(written), suppressed)
