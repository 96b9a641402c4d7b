"""Event lines: one model per kind, the same models on the way in and out."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from toolserver.contract import events
from toolserver.contract.events import EVENT_KINDS, EVENT_MODELS, event_of
from toolserver.contract.trace import parse_trace

FRAME = {"type": "event", "seq": 3, "t": 1.5, "wall": "2026-01-01T00:00:00.000+00:00", "session_id": "s1", "tab": "t1"}

REQUEST = {"url": "https://example.gov/a", "method": "GET", "resource_type": "document"}


def test_every_kind_is_its_own_model_with_a_literal_kind():
    kinds = [model.model_fields["kind"].default for model in EVENT_MODELS]
    assert kinds == list(EVENT_KINDS) and len(set(kinds)) == len(kinds) == 22
    for model in EVENT_MODELS:
        assert model.model_fields["kind"].annotation.__args__ == (model.model_fields["kind"].default,)
        assert model.Data is not None and model.__doc__


def test_the_reader_returns_the_kinds_model_and_keeps_extra_fields():
    lines = [
        {**FRAME, "kind": "navigation", "data": {"url": "https://example.gov/"}},
        {
            **FRAME,
            "kind": "redirect",
            "data": {"url": "a", "method": "GET", "resource_type": "document", "location": "b"},
        },
        {**FRAME, "kind": "server_fault", "data": {"error": "boom", "where": "router", "extra": [1]}},
    ]
    trace = parse_trace("".join(json.dumps(line) + "\n" for line in lines))
    assert trace.problems == []
    assert [type(e) for e in trace.events] == [events.Navigation, events.Redirect, events.ServerFault]
    assert trace.events[2].data == {"error": "boom", "where": "router", "extra": [1]}
    assert [e.model_dump(mode="json") for e in trace.events] == [{**line, "escaped": None} for line in lines]


@pytest.mark.parametrize(
    ("kind", "data", "complaint"),
    [
        ("navigation", {}, "navigation.data.url"),
        (
            "state_change",
            {"action": "submit", "name": "x", "allowed": "maybe", "blocked": False, "detail": {}},
            "allowed",
        ),
        ("teleport", {"url": "x"}, "does not match any of the expected tags"),
    ],
)
def test_a_malformed_event_is_refused_when_written_and_a_named_problem_when_read(kind, data, complaint):
    line = {**FRAME, "kind": kind, "data": data}
    with pytest.raises(ValidationError, match=complaint):
        event_of(line)
    trace = parse_trace(json.dumps(line) + "\n")
    assert trace.events == [] and len(trace.problems) == 1 and "line 1: unreadable" in trace.problems[0]
