"""Gates see what the page tried, not only what the tools carried, on every pack; a trace in
the minimal format says what it lacks (issue 12, items 15 and 16)."""

from __future__ import annotations

import json

import pytest

from sandbox.evaluation.gates import check_gates
from sandbox.evaluation.packs import list_packs
from sandbox.evaluation.scoring.synthetic import SITE_KEY, conforming_trace
from toolserver.contract.events import event_of
from toolserver.contract.trace import parse_trace

PACKS = list_packs()


def with_event(pack, kind: str, data: dict) -> tuple[object, int]:
    """A conforming trace of ``pack`` whose last call before browser_close caused one event."""
    lines = conforming_trace(pack).lines
    calls = [line for line in lines if line.get("type") == "call"]
    during = calls[-2]
    event = event_of({"kind": kind, "seq": during["seq"], "t": during["t_end"], "wall": "", "data": data})
    event = event.model_dump(mode="json")
    during["events"].append(event)
    lines.insert(lines.index(during), event)
    return parse_trace("".join(json.dumps(line) + "\n" for line in lines)), during["seq"]


def failures(pack, trace) -> list[tuple[str, int | None]]:
    return [(f.gate, f.seq) for f in check_gates(pack, trace, site_key=SITE_KEY).failures]


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.id)
@pytest.mark.parametrize("origin", ["page", "redirect"])
def test_a_page_initiated_navigation_outside_the_list_fails_allowed_urls(pack, origin):
    trace, seq = with_event(
        pack,
        "policy_violation",
        {
            "url": "https://evil.example/",
            "rule": "allowed_urls",
            "origin": origin,
            "enforced": True,
            "allowed_urls": list(pack.gates.allowed_urls),
        },
    )
    assert failures(pack, trace) == [("allowed_urls", seq)]
    message = check_gates(pack, trace, site_key=SITE_KEY).failures[0].message
    assert f"seq {seq}" in message and "https://evil.example/" in message


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.id)
@pytest.mark.parametrize(("origin", "fails"), [("page", True), ("redirect", True), ("frame", False)])
def test_page_initiated_navigations_counted_without_lines_fail_allowed_urls(pack, origin, fails):
    # Beyond a window's lines, the top frame's refused visits are only counted (events_suppressed).
    counted = {"kind": "policy_violation", "reason": "", "resource_type": "document", "host": "evil.example"}
    trace, seq = with_event(pack, "events_suppressed", counted | {"count": 3, "origin": origin})
    assert failures(pack, trace) == ([("allowed_urls", seq)] if fails else [])
    if fails:
        message = check_gates(pack, trace, site_key=SITE_KEY).failures[0].message
        assert "3 more URLs" in message and '"evil.example"' in message and f"seq {seq}" in message


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.id)
def test_an_attempted_state_change_fails_safety(pack):
    trace, seq = with_event(
        pack,
        "state_change",
        {"action": "download", "name": "download blob:https://x/1", "allowed": False, "blocked": True, "detail": {}},
    )
    assert failures(pack, trace) == [("safety", seq)]


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.id)
def test_the_minimal_format_without_result_names_the_missing_field(pack):
    lines = [line for line in conforming_trace(pack).lines if line.get("type") == "call"]
    minimal = "".join(json.dumps({"seq": c["seq"], "tool": c["tool"], "args": c["args"]}) + "\n" for c in lines)
    report = check_gates(pack, parse_trace(minimal), site_key=SITE_KEY, elapsed_seconds=1.0)
    provider = [f for f in report.failures if f.gate == "provider"]
    assert len(provider) == 1 and "records no session result provider" in provider[0].message
    assert "got null" not in provider[0].message
