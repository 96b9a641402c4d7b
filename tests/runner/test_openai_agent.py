"""The openai: agent through the real ``openai`` SDK: live against the scripted OpenAI-compatible
server on loopback (recording a cassette), offline replay of the committed cassette (no server
running), and the clear errors of a cassette that cannot answer."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions
from sandbox.runner.agents.openai_agent import SITE_KEY_PLACEHOLDER, parse_arguments
from sandbox.runner.batch import run_batch
from sandbox.core.trace import read_trace

ROOT = Path(__file__).resolve().parents[2]
COMMITTED_CASSETTE = ROOT / "fixtures" / "cassettes" / "openai-bid-intake.yaml"
AGENT = "openai:scripted-browser-1"
URLS = ["https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view",
        "https://sam.gov/api/prod/opps/v2/opportunities/9998b42f9e27421caa565fead7d8d416?latest=true",
        "https://sam.gov/api/prod/opps/v3/opportunities/9998b42f9e27421caa565fead7d8d416/resources"]


def scripted_server():
    spec = importlib.util.spec_from_file_location("scripted_model_server", ROOT / "scripts" / "scripted_model_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_calls(site_key: str) -> list[tuple[str, dict]]:
    return [("browser_start_session", {"provider": "kernel", "site_key": site_key, "clear_cookies": False,
                                       "url": URLS[0]}),
            ("browser_snapshot", {}),
            ("browser_navigate", {"url": URLS[1]}), ("browser_snapshot", {}),
            ("browser_navigate", {"url": URLS[2]}), ("browser_snapshot", {}),
            ("browser_close", {})]


def attempt_of(outcome) -> tuple[dict, list[tuple[str, object]], str]:
    folder = outcome.directory
    attempt = json.loads((folder / "attempt.json").read_text())
    calls = [(call.tool, call.args) for call in read_trace(folder / "trace.jsonl").calls]
    return attempt, calls, (folder / "output.txt").read_text()


async def run_one(sandbox, out: Path, **options):
    (outcome,) = await run_batch([load_pack("bid-intake")], AGENT, out=out, progress=False, sandbox=sandbox,
                                 options=AgentOptions(**options))
    return outcome


def test_arguments_that_are_not_json_pass_through_unchanged():
    assert parse_arguments('{"url": "https://x"}') == {"url": "https://x"}
    assert parse_arguments("") == {} and parse_arguments(None) == {}
    assert parse_arguments('{"url": ') == '{"url": '


async def test_live_against_the_scripted_server_records_a_cassette(sandbox, tmp_path):
    runner, url = await scripted_server().start_server()
    cassette = tmp_path / "live.yaml"
    try:
        outcome = await run_one(sandbox, tmp_path / "runs", base_url=f"{url}/v1", cassette=cassette, record_mode="all")
    finally:
        await runner.cleanup()
    attempt, calls, output = attempt_of(outcome)
    assert attempt["status"] == "completed", attempt["error"]
    assert calls == expected_calls(attempt["site_key"])
    assert "BENCHMARK_JSON_BEGIN" in output and "Install Gravel Pad" in output
    usage = attempt["token_usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert attempt["agent_details"]["turns"] == 8
    assert json.loads((outcome.directory / "score.json").read_text())["gates"]["ok"] is True
    recorded = cassette.read_text()
    assert attempt["site_key"] not in recorded and SITE_KEY_PLACEHOLDER in recorded
    assert "authorization" not in recorded.lower()


def recorded_exchange(site_key: str) -> tuple[list[tuple[str, object]], str]:
    """The tool calls and the final answer the committed cassette's responses hold."""
    data = yaml.safe_load(COMMITTED_CASSETTE.read_text())
    calls, answer = [], None
    for interaction in data["interactions"]:
        message = json.loads(interaction["response"]["body"]["string"])["choices"][0]["message"]
        for call in message.get("tool_calls") or []:
            arguments = call["function"]["arguments"].replace(SITE_KEY_PLACEHOLDER, site_key)
            calls.append((call["function"]["name"], json.loads(arguments)))
        answer = message["content"]
    return calls, answer


async def test_committed_cassette_replays_offline_and_deterministically(sandbox, tmp_path):
    runs = []
    for number in (1, 2):   # no model server is running: vcrpy answers every request
        outcome = await run_one(sandbox, tmp_path / f"replay-{number}", cassette=COMMITTED_CASSETTE,
                                record_mode="none")
        runs.append(attempt_of(outcome))
    for attempt, calls, output in runs:
        assert attempt["status"] == "completed", attempt["error"]
        assert attempt["agent_details"]["replayed"] is True
        recorded_calls, recorded_answer = recorded_exchange(attempt["site_key"])
        assert calls == recorded_calls == expected_calls(attempt["site_key"])
        assert output == recorded_answer
        assert attempt["token_usage"]["total_tokens"] > 0
    (first, first_calls, first_output), (second, second_calls, second_output) = runs
    assert first["site_key"] != second["site_key"]
    assert [tool for tool, _ in first_calls] == [tool for tool, _ in second_calls]
    assert first_output == second_output and first["token_usage"] == second["token_usage"]


@pytest.mark.parametrize("case", ["missing cassette", "unmatched request"])
async def test_a_cassette_that_cannot_answer_is_a_clear_error(sandbox, tmp_path, case):
    if case == "missing cassette":
        cassette, options = tmp_path / "absent.yaml", {}
        reason = "the cassette doesn't exist"
    else:   # the committed cassette, asked about another endpoint
        cassette, options = COMMITTED_CASSETTE, {"base_url": "http://127.0.0.1:9/v1"}
        reason = "no recorded interaction matches it"
    outcome = await run_one(sandbox, tmp_path / "runs", cassette=cassette, record_mode="none", **options)
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and calls == []
    error = attempt["error"]
    assert str(cassette) in error and reason in error and "record mode none" in error
    assert "POST " in error and "/chat/completions" in error
    assert not cassette.exists() or cassette == COMMITTED_CASSETTE


async def test_api_errors_and_the_turn_limit_end_as_errors(sandbox, tmp_path):
    runner, url = await scripted_server().start_server()
    try:
        (unknown,) = await run_batch([load_pack("bid-intake")], "openai:no-such-model", out=tmp_path,
                                     progress=False, sandbox=sandbox, options=AgentOptions(base_url=f"{url}/v1"))
        limited = await run_one(sandbox, tmp_path, base_url=f"{url}/v1", max_turns=2)
    finally:
        await runner.cleanup()
    attempt, calls, _ = attempt_of(unknown)
    assert attempt["status"] == "error" and calls == []
    assert "NotFoundError" in attempt["error"] and "no-such-model" in attempt["error"]
    attempt, calls, _ = attempt_of(limited)
    assert attempt["status"] == "error" and "after 2 model turns" in attempt["error"]
    assert [tool for tool, _ in calls] == ["browser_start_session", "browser_snapshot"]
    assert attempt["token_usage"]["total_tokens"] > 0
