"""The compatibility suite's scripted model (``scripts/compat/form_policy.py``, served by the
scripted model server as ``scripted-form-1``): it reads every ref from the tool results, however a
framework wraps them; it fails loudly when the error path does not come back as a tool error;
and over chat completions it streams and fills a strict tool's properties. No browser, no
framework venv: the tool results are written here as the server words them."""

from __future__ import annotations

import json

import pytest
from openai import AsyncOpenAI

from sandbox.evaluation.packs import load_pack
from tests.support.models import scripted_server

SITE_KEY = "compat-free-form-key_7"
STEP_ONE = """- generic [ref=e3]:
  - banner [ref=e4]:
    - heading "Enter User Details (Step 1 of 3)" [level=1] [ref=e5]
  - textbox "Name" [ref=e31]
  - textbox "Email" [ref=e32]
  - button "Next" [ref=e40] [cursor=pointer]"""
STEP_TWO = """- generic [ref=e3]:
  - heading "Enter Personal Details (Step 2 of 3)" [level=1] [ref=e50]
  - textbox "City" [ref=e51]
  - textbox "Bio" [ref=e52]
  - button "Next" [ref=e53]"""


@pytest.fixture(scope="module")
def policy():
    return scripted_server().load_form_policy()


@pytest.fixture(scope="module")
def prompt():
    return load_pack("controlled-form").render_prompt(SITE_KEY)


def error(kind: str, message: str) -> str:
    return json.dumps({"type": kind, "message": message})


def sandbox_reply(name: str, args: dict, clicked: list[str]) -> str:
    """What the server answers, as the text of the MCP result (the snapshot text first)."""
    if name == "browser_start_session":
        return json.dumps({"provider": "kernel", "session_id": "ses_1", "tab": "t1", "url": args["url"]})
    if name == "browser_snapshot":
        if args.get("max_chars") == "lots":
            return error("invalid_arguments", "browser_snapshot: argument 'max_chars': Input should be a valid integer")
        return (STEP_TWO if clicked else STEP_ONE) + '\n{"snapshot_id": "s1", "tab": "t1"}'
    if name == "browser_click" and args.get("ref") not in ("e40",):
        return error("stale_ref", f"Ref {args.get('ref')} not found in the current page snapshot (s1).")
    if name == "browser_click":
        clicked.append(args["ref"])
    return json.dumps({"tab": "t1", "url": "https://sarah27h.github.io/simple-multi-step-form/"})


def converse(policy, prompt: str, wrap=lambda text: text, prefix: str = "") -> tuple[list, dict]:
    """The policy against the scripted replies until it answers: its calls and its record."""
    turns, clicked = [], []
    for _ in range(20):
        step = policy.next_step(prompt, turns)
        if "answer" in step:
            return [(t.name, t.args) for t in turns], policy.read_result(step["answer"])
        name, args = step["call"]
        turns.append(policy.Turn(prefix + name, args, wrap(sandbox_reply(name, args, clicked))))
    raise AssertionError("the policy never answered")


def test_the_policy_takes_the_form_to_its_second_step_with_refs_read_from_the_snapshot(policy, prompt):
    calls, record = converse(policy, prompt)
    assert calls[0] == (
        "browser_start_session",
        {
            "provider": "kernel",
            "site_key": SITE_KEY,
            "clear_cookies": False,
            "url": "https://sarah27h.github.io/simple-multi-step-form/",
        },
    )
    assert calls[2:] == [
        ("browser_click", {"ref": "e9999"}),
        ("browser_snapshot", {"max_chars": "lots"}),
        ("browser_type", {"ref": "e31", "text": "João Muñoz"}),
        ("browser_type", {"ref": "e32", "text": "joao.munoz@example.com"}),
        ("browser_click", {"ref": "e40"}),
        ("browser_snapshot", {}),
        ("browser_close", {}),
    ]
    assert record["ok"] is True and record["heading"] == "Enter Personal Details (Step 2 of 3)"
    assert record["stale_ref_error"].startswith("stale_ref: Ref e9999")
    assert record["wrong_type_error"].startswith("invalid_arguments:")


def test_results_wrapped_as_content_blocks_and_prefixed_tool_names_read_the_same(policy, prompt):
    def as_blocks(text: str) -> str:  # openai-agents hands a model several blocks as one JSON list
        first, _, rest = text.partition("\n{")
        return json.dumps([{"type": "text", "text": first}] + ([{"type": "text", "text": "{" + rest}] if rest else []))

    _, record = converse(policy, prompt, wrap=as_blocks, prefix="sandbox__")
    assert record["ok"] is True and record["refs"] == {"Name": "e31", "Email": "e32", "Next": "e40"}


def test_an_error_path_that_does_not_come_back_as_a_tool_error_fails_the_conversation(policy, prompt):
    turns = []
    for result in ('{"provider": "kernel", "session_id": "ses_1"}', STEP_ONE, '{"tab": "t1", "url": "u"}'):
        name, args = policy.next_step(prompt, turns)["call"]
        turns.append(policy.Turn(name, args, result))
    record = policy.read_result(policy.next_step(prompt, turns)["answer"])
    assert (
        record["ok"] is False and record["step"] == "browser_click" and "not reported as a tool error" in record["why"]
    )


def test_a_first_snapshot_without_refs_fails_with_what_the_model_was_shown(policy, prompt):
    first = policy.next_step(prompt, [])["call"]
    turns = [policy.Turn(*first, '{"provider": "kernel"}')]
    turns.append(policy.Turn("browser_snapshot", {}, error("no_session", "no open browser session in this run")))
    record = policy.read_result(policy.next_step(prompt, turns)["answer"])
    assert record == {
        "ok": False,
        "step": "browser_snapshot",
        "why": "no_session: no open browser session in this run",
        "shown": error("no_session", "no open browser session in this run"),
    }


async def test_the_form_model_streams_and_sends_every_property_of_a_strict_tool(prompt):
    strict_click = {
        "type": "function",
        "function": {
            "name": "browser_click",
            "strict": True,
            "parameters": {
                "type": "object",
                "additionalProperties": False,
                "required": ["ref", "target", "element"],
                "properties": {
                    "ref": {"type": ["string", "null"]},
                    "target": {"type": ["string", "null"]},
                    "element": {"type": ["string", "null"]},
                },
            },
        },
    }
    start = {"type": "function", "function": {"name": "browser_start_session", "parameters": {"type": "object"}}}
    snapshot = {"type": "function", "function": {"name": "browser_snapshot", "parameters": {"type": "object"}}}
    messages = [{"role": "user", "content": prompt}]
    runner, url = await scripted_server().start_server()
    try:
        client = AsyncOpenAI(base_url=f"{url}/v1", api_key="local")
        for result in ('{"provider": "kernel", "session_id": "ses_1"}', STEP_ONE):
            reply = await client.chat.completions.create(
                model="scripted-form-1", messages=messages, tools=[start, snapshot, strict_click]
            )
            call = reply.choices[0].message.tool_calls[0]
            messages += [reply.choices[0].message.model_dump(exclude_none=True)]
            messages += [{"role": "tool", "tool_call_id": call.id, "content": result}]
        stream = await client.chat.completions.create(
            model="scripted-form-1", messages=messages, tools=[start, snapshot, strict_click], stream=True
        )
        chunks = [chunk async for chunk in stream]
    finally:
        await runner.cleanup()
    (call,) = chunks[0].choices[0].delta.tool_calls
    assert call.function.name == "browser_click"
    assert json.loads(call.function.arguments) == {"ref": "e9999", "target": None, "element": None}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
