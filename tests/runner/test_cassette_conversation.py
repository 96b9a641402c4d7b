"""The cassettes' ``conversation`` matcher (``sandbox.runner.agents._conversation``): a replayed
request matches the recorded one when only the tool results differ (they hold per-run values),
and does not when the agent's own part changed; ``differences`` says where. Pure: the committed
cassettes' request bodies, changed on a copy."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace

import pytest
import yaml

from sandbox import PROJECT_ROOT
from sandbox.runner.agents._conversation import conversation, differences, masked

CASSETTES = PROJECT_ROOT / "fixtures" / "cassettes"


def recorded_body(api: str, number: int) -> dict:
    data = yaml.safe_load((CASSETTES / f"{api}-bid-intake.yaml").read_text(encoding="utf-8"))
    body = data["interactions"][number]["request"]["body"]
    return json.loads(body["string"] if isinstance(body, dict) else body)


def request(body: dict) -> SimpleNamespace:
    return SimpleNamespace(body=json.dumps(body).encode())


def changed(body: dict, change: Callable[[dict], object]) -> dict:
    copy = json.loads(json.dumps(body))
    change(copy)
    return copy


def openai_tool_result(body: dict) -> None:
    next(m for m in body["messages"] if m["role"] == "tool")["content"] = '{"ok": true, "session_id": "ses_other"}'


def anthropic_tool_result(body: dict) -> None:
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    block = next(b for b in blocks if b["type"] == "tool_result")
    block.update(content='{"ok": false}', is_error=True)


@pytest.mark.parametrize(
    "api, change",
    [("openai", openai_tool_result), ("anthropic", anthropic_tool_result)],
    ids=["openai", "anthropic"],
)
def test_requests_that_differ_in_tool_results_only_match(api, change):
    recorded = recorded_body(api, 3)
    sent = changed(recorded, change)
    assert sent != recorded and conversation(request(sent), request(recorded))


@pytest.mark.parametrize(
    "api, change, says",
    [
        ("openai", lambda b: b.update(model="gpt-4o"), 'model: recorded "scripted-browser-1", sent "gpt-4o"'),
        ("openai", lambda b: b.update(temperature=0), "temperature: not recorded, sent 0"),
        (
            "openai",
            lambda b: b["messages"][0].update(content="Be brief."),
            'messages[0].content: recorded "You are a browser agent. Do the task using only the browser tools '
            'provided, fol..., sent "Be brief."',
        ),
        ("openai", lambda b: b["messages"].pop(), "messages: recorded 8 items, sent 7"),
        ("anthropic", lambda b: b.pop("max_tokens"), "max_tokens: recorded 4096, not sent"),
        ("anthropic", lambda b: b.update(system="Be brief."), 'system: recorded "You are a browser agent.'),
    ],
    ids=["model", "parameter", "system", "turns", "anthropic-parameter", "anthropic-system"],
)
def test_a_request_the_agent_changed_does_not_match_and_says_where(api, change, says):
    recorded = recorded_body(api, 3)
    sent = changed(recorded, change)
    assert not conversation(request(sent), request(recorded))
    said = "; ".join(differences(masked(json.dumps(recorded)), masked(json.dumps(sent))))
    assert said.startswith(says), said


def test_a_body_that_is_not_a_json_object_matches_only_the_same_bytes():
    """A recorded body that was not JSON (cut inside a quote) matched every request: the cassette
    replayed for another model or task."""
    cut = SimpleNamespace(body=json.dumps(recorded_body("openai", 0))[:500].encode())
    assert not conversation(request(recorded_body("openai", 0)), cut)
    assert not conversation(request({"model": "m"}), SimpleNamespace(body=None))
    assert not conversation(SimpleNamespace(body=b"[1]"), SimpleNamespace(body=b"[2]"))
    assert conversation(SimpleNamespace(body=b"[1]"), SimpleNamespace(body="[1]"))
    assert conversation(SimpleNamespace(body=None), SimpleNamespace(body=None))
    assert not conversation(request({"model": "m"}), request({"model": "n"}))
