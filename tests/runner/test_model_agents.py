"""The model agents through the real SDKs — ``openai:`` (chat completions) and ``anthropic:``
(the Messages API): live against the scripted model server on loopback (recording a cassette),
offline replay of the committed cassettes (no server running), and the clear errors of a
cassette that cannot answer. Every test runs for both APIs."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from sandbox.cli import build_parser
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions, RecordMode
from sandbox.runner.agents._cassette import SITE_KEY_PLACEHOLDER
from sandbox.runner.agents.openai_agent import parse_arguments
from sandbox.runner.batch import AgentUnavailable, BatchStopped, run_batch
from tests.support.models import scripted_server
from tests.support.serve import served
from toolserver.contract.trace import read_trace

ROOT = Path(__file__).resolve().parents[2]
URLS = [
    "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view",
    "https://sam.gov/api/prod/opps/v2/opportunities/9998b42f9e27421caa565fead7d8d416?latest=true",
    "https://sam.gov/api/prod/opps/v3/opportunities/9998b42f9e27421caa565fead7d8d416/resources",
]


@dataclass(frozen=True)
class Api:
    kind: str  # the agent kind
    base_path: str  # what the SDK's base URL adds to the server's root
    endpoint: str  # the path the SDK posts to

    @property
    def agent(self) -> str:
        return f"{self.kind}:scripted-browser-1"

    @property
    def cassette(self) -> Path:
        return ROOT / "fixtures" / "cassettes" / f"{self.kind}-bid-intake.yaml"

    def recorded_exchange(self, site_key: str) -> tuple[list[tuple[str, object]], str]:
        """The tool calls and the final answer the committed cassette's responses hold."""
        data = yaml.safe_load(self.cassette.read_text().replace(SITE_KEY_PLACEHOLDER, site_key))
        calls, answer = [], None
        for interaction in data["interactions"]:
            body = json.loads(interaction["response"]["body"]["string"])
            if self.kind == "openai":
                message = body["choices"][0]["message"]
                calls += [
                    (c["function"]["name"], json.loads(c["function"]["arguments"]))
                    for c in message.get("tool_calls") or []
                ]
                answer = message["content"]
            else:
                calls += [(b["name"], b["input"]) for b in body["content"] if b["type"] == "tool_use"]
                answer = "".join(b["text"] for b in body["content"] if b["type"] == "text")
        return calls, answer

    def usage_ok(self, usage: dict) -> bool:
        if self.kind == "openai":
            return (
                usage["prompt_tokens"] > 0
                and usage["completion_tokens"] > 0
                and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
            )
        return usage["input_tokens"] > 0 and usage["output_tokens"] > 0


APIS = [Api("openai", "/v1", "/v1/chat/completions"), Api("anthropic", "", "/v1/messages")]
by_api = pytest.mark.parametrize("api", APIS, ids=lambda api: api.kind)


def expected_calls(site_key: str) -> list[tuple[str, dict]]:
    return [
        ("browser_start_session", {"provider": "kernel", "site_key": site_key, "clear_cookies": False, "url": URLS[0]}),
        ("browser_snapshot", {}),
        ("browser_navigate", {"url": URLS[1]}),
        ("browser_snapshot", {}),
        ("browser_navigate", {"url": URLS[2]}),
        ("browser_snapshot", {}),
        ("browser_close", {}),
    ]


def attempt_of(outcome) -> tuple[dict, list[tuple[str, object]], str]:
    folder = outcome.directory
    attempt = json.loads((folder / "attempt.json").read_text())
    calls = [(call.tool, call.args) for call in read_trace(folder / "trace.jsonl").calls]
    return attempt, calls, (folder / "output.txt").read_text()


async def run_one(sandbox, api: Api, out: Path, **options):
    (outcome,) = await run_batch(
        [load_pack("bid-intake")], api.agent, out=out, progress=False, sandbox=sandbox, options=AgentOptions(**options)
    )
    return outcome


async def run_live(sandbox, api: Api, out: Path, **options):
    """``run_one`` against a scripted model server started for it."""
    runner, url = await scripted_server().start_server()
    try:
        return await run_one(sandbox, api, out, base_url=f"{url}{api.base_path}", **options)
    finally:
        await runner.cleanup()


def test_the_record_modes_are_one_list_for_the_command_line_the_plugin_and_the_options():
    (run,) = [a.choices["run"] for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    (cli,) = [action.choices for action in run._actions if action.dest == "record_mode"]
    assert cli == RecordMode.values() == ["once", "none", "all", "new_episodes"]
    shown = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], capture_output=True, text=True, check=True
    ).stdout
    assert "--sandbox-record-mode={once,none,all,new_episodes}" in shown
    assert AgentOptions(record_mode="new_episodes").record_mode is RecordMode.NEW_EPISODES
    with pytest.raises(ValueError, match="'onse' is not a valid RecordMode"):
        AgentOptions(record_mode="onse")


def test_arguments_that_are_not_json_pass_through_unchanged():
    assert parse_arguments('{"url": "https://x"}') == {"url": "https://x"}
    assert parse_arguments("") == {} and parse_arguments(None) == {}
    assert parse_arguments('{"url": ') == '{"url": '
    # each ended the attempt as crashed, the call never traced
    huge, deep = '{"n": ' + "1" * 5000 + "}", "[" * 100_000 + "]" * 100_000
    assert parse_arguments(huge) == huge and parse_arguments(deep) == deep
    assert parse_arguments({"url": "https://x"}) == {"url": "https://x"}  # an endpoint's object, not JSON text


@by_api
async def test_live_against_the_scripted_server_records_a_cassette(sandbox, tmp_path, api):
    cassette = tmp_path / "live.yaml"
    outcome = await run_live(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="all")
    attempt, calls, output = attempt_of(outcome)
    assert attempt["status"] == "completed", attempt["error"]
    assert calls == expected_calls(attempt["site_key"])
    assert "BENCHMARK_JSON_BEGIN" in output and "Install Gravel Pad" in output
    assert api.usage_ok(attempt["token_usage"])
    assert attempt["agent_details"]["turns"] == 8
    assert json.loads((outcome.directory / "score.json").read_text())["gates"]["ok"] is True
    recorded = cassette.read_text()
    assert attempt["site_key"] not in recorded and SITE_KEY_PLACEHOLDER in recorded
    assert "authorization" not in recorded.lower() and "x-api-key" not in recorded.lower()


@by_api
async def test_committed_cassette_replays_offline_and_deterministically(sandbox, tmp_path, api):
    runs = []
    for number in (1, 2):  # no model server is running: vcrpy answers every request
        outcome = await run_one(sandbox, api, tmp_path / f"replay-{number}", cassette=api.cassette, record_mode="none")
        runs.append(attempt_of(outcome))
    for attempt, calls, output in runs:
        assert attempt["status"] == "completed", attempt["error"]
        assert attempt["agent_details"]["replayed"] is True
        recorded_calls, recorded_answer = api.recorded_exchange(attempt["site_key"])
        assert calls == recorded_calls == expected_calls(attempt["site_key"])
        assert output == recorded_answer
        assert api.usage_ok(attempt["token_usage"])
    (first, first_calls, first_output), (second, second_calls, second_output) = runs
    assert first["site_key"] != second["site_key"]
    assert [tool for tool, _ in first_calls] == [tool for tool, _ in second_calls]
    assert first_output == second_output and first["token_usage"] == second["token_usage"]


async def test_attempts_sharing_a_cassette_take_turns_outside_their_clocks(sandbox, tmp_path):
    """The wait for the cassette's turn was inside each attempt's clock: identical replays took
    3.0, 4.2 and 7.7 s at concurrency 3, and a time limit cut the later ones off."""
    api = APIS[0]
    outcomes = await run_batch(
        [load_pack("bid-intake")], f"think:0.05:{api.agent}", repeats=3, concurrency=3, out=tmp_path,
        progress=False, sandbox=sandbox, options=AgentOptions(cassette=api.cassette, record_mode="none"),
    )  # fmt: skip
    attempts = sorted((attempt_of(o)[0] for o in outcomes), key=lambda a: a["started_at"])
    assert [a["status"] for a in attempts] == ["completed"] * 3, [a["error"] for a in attempts]
    for before, after in itertools.pairwise(attempts):  # one clock runs at a time: each after the one before
        ended = datetime.fromisoformat(before["started_at"]) + timedelta(seconds=before["elapsed_seconds"])
        assert datetime.fromisoformat(after["started_at"]) >= ended - timedelta(milliseconds=20), (before, after)
        assert after["dispatch_wait_seconds"] >= before["elapsed_seconds"] * 0.5, (before, after)


async def test_a_stop_while_attempts_wait_for_the_cassette_records_them_all(sandbox, tmp_path):
    api = APIS[0]
    batch = asyncio.ensure_future(
        run_batch(
            [load_pack("bid-intake")],
            f"think:0.2:{api.agent}",
            repeats=3,
            concurrency=3,
            out=tmp_path,
            progress=False,
            sandbox=sandbox,
            options=AgentOptions(cassette=api.cassette, record_mode="none"),
        )  # fmt: skip
    )
    while not any('"type": "call"' in t.read_text() for t in tmp_path.glob("*/*/trace.jsonl")):
        await asyncio.sleep(0.05)  # until the first attempt made a call: the others wait for its turn
    batch.cancel()
    with pytest.raises(BatchStopped) as stopped:
        await batch
    attempts = sorted((attempt_of(o)[0] for o in stopped.value.outcomes), key=lambda a: a["error"])
    assert len(attempts) == 3 and all(o.status == "stopped" for o in stopped.value.outcomes), attempts
    waited = attempts[1:]  # "...stopped after N s" sorts before "...stopped before the attempt's turn came"
    assert [a["error"] for a in waited] == ["the batch was stopped before the attempt's turn came"] * 2, waited
    assert all(a["elapsed_seconds"] < 0.05 < a["dispatch_wait_seconds"] for a in waited), waited


@by_api
@pytest.mark.parametrize("case", ["missing cassette", "unmatched request"])
async def test_a_cassette_that_cannot_answer_is_a_clear_error(sandbox, tmp_path, case, api):
    if case == "missing cassette":
        cassette, options = tmp_path / "absent.yaml", {}
        reason = "the cassette doesn't exist"
    else:  # the committed cassette, asked about another endpoint
        cassette, options = api.cassette, {"base_url": f"http://127.0.0.1:9{api.base_path}"}
        reason = "is not the request recorded as interaction 1, POST http://127.0.0.1:"
    outcome = await run_one(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="none", **options)
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and calls == []
    error = attempt["error"]
    assert str(cassette) in error and reason in error and "record mode none" in error
    assert "record it again with --record-mode all" in error and "README" not in error  # none where pip put it
    assert "POST " in error and api.endpoint in error
    assert "How to fix" not in error and "allow_playback_repeats" not in error  # vcrpy's options, not ours
    assert not cassette.exists() or cassette == api.cassette


@by_api
@pytest.mark.parametrize("damage", ["a response that is not JSON", "an interaction without its response"])
async def test_a_damaged_cassette_is_a_clear_error_like_a_miss(sandbox, tmp_path, damage, api):
    """The attempt crashed with a bare JSONDecodeError or KeyError: 'response', naming neither the
    cassette nor the request (run_batch replays without the check `sandbox run` makes first)."""
    data = yaml.safe_load(api.cassette.read_text())
    if damage == "a response that is not JSON":
        data["interactions"][1]["response"]["body"]["string"] = "<html>502 Bad Gateway</html>"
        says = "interaction 2's response body is not the JSON its content-type says (Expecting value: line 1"
    else:
        del data["interactions"][1]["response"]
        says = "cannot be read: interaction 2's response is missing, not a mapping"
    cassette = tmp_path / "damaged.yaml"
    cassette.write_text(yaml.safe_dump(data))
    outcome = await run_one(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="none")
    attempt, _, _ = attempt_of(outcome)
    assert attempt["status"] == "error", attempt
    assert attempt["error"].startswith(f"cassette {cassette} ") and says in attempt["error"], attempt["error"]
    assert "--record-mode all" in attempt["error"]


@by_api
async def test_api_errors_and_the_turn_limit_end_as_errors(sandbox, tmp_path, api):
    runner, url = await scripted_server().start_server()
    try:
        (unknown,) = await run_batch(
            [load_pack("bid-intake")],
            f"{api.kind}:no-such-model",
            out=tmp_path,
            progress=False,
            sandbox=sandbox,
            options=AgentOptions(base_url=f"{url}{api.base_path}"),
        )
        limited = await run_one(sandbox, api, tmp_path, base_url=f"{url}{api.base_path}", max_turns=2)
    finally:
        await runner.cleanup()
    attempt, calls, _ = attempt_of(unknown)
    assert attempt["status"] == "error" and calls == []
    assert "NotFoundError" in attempt["error"] and "no-such-model" in attempt["error"]
    attempt, calls, _ = attempt_of(limited)
    assert attempt["status"] == "error" and "after 2 model turns" in attempt["error"]
    assert [tool for tool, _ in calls] == ["browser_start_session", "browser_snapshot"]
    assert api.usage_ok(attempt["token_usage"])


def cassette_copy(api: Api, folder: Path, damage=None, root: str | None = None) -> Path:
    """A copy of the committed cassette, with ``damage`` done to its data and its requests' server
    root (``http://127.0.0.1:PORT``) made ``root``, so a server there answers what it does not."""
    data = yaml.safe_load(api.cassette.read_text())
    if root is not None:
        recorded = data["interactions"][0]["request"]["uri"].removesuffix(api.endpoint)
        for interaction in data["interactions"]:
            interaction["request"]["uri"] = interaction["request"]["uri"].replace(recorded, root)
    if damage is not None:
        damage(data)
    path = folder / "copy.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


HINT = "record it again with --record-mode all, against your model endpoint"


@by_api
@pytest.mark.parametrize("key", ["status", "headers", "body"])
async def test_a_response_without_its_status_headers_or_body_names_the_interaction(sandbox, tmp_path, key, api):
    """The attempt crashed in a KeyError (openai: status, body), ended in the SDK's "Connection
    error." (anthropic:), or said vcrpy's "cannot be loaded (KeyError: 'headers')"."""
    cassette = cassette_copy(api, tmp_path, lambda data: data["interactions"][1]["response"].pop(key))
    outcome = await run_one(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="none")
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and calls == [], attempt
    assert attempt["error"] == (
        f"cassette {cassette} cannot be read: interaction 2's response has no {key!r} "
        f"(vcrpy's responses hold status, headers and body); {HINT}"
    )


@by_api
async def test_a_recorded_response_that_is_not_json_is_refused_under_new_episodes_too(sandbox, tmp_path, api):
    """Under new_episodes the attempt crashed in a bare JSONDecodeError once the cassette
    answered with the damaged response (only none and once said which cassette)."""

    def damage(data: dict) -> None:
        data["interactions"][1]["response"]["body"]["string"] = "<html>502 Bad Gateway</html>"

    runner, url = await scripted_server().start_server()
    try:
        cassette = cassette_copy(api, tmp_path, damage, root=url)
        before = cassette.read_text()
        base_url = f"{url}{api.base_path}"
        outcome = await run_one(
            sandbox, api, tmp_path / "runs", base_url=base_url, cassette=cassette, record_mode="new_episodes"
        )
    finally:
        await runner.cleanup()
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and calls == [], attempt
    assert attempt["error"] == (
        f"cassette {cassette} cannot be replayed: interaction 2's response body is not the JSON its content-type "
        f"says (Expecting value: line 1 column 1 (char 0)): '<html>502 Bad Gateway</html>'; {HINT}"
    )
    assert cassette.read_text() == before


@by_api
async def test_a_live_answer_that_is_not_json_under_new_episodes_names_the_endpoint(sandbox, tmp_path, api):
    """The attempt crashed in a bare JSONDecodeError; now it is the endpoint's error, not the
    cassette's (which answered the first request well), and the answer is not recorded (the next
    replay refused the cassette it made)."""
    from aiohttp import web

    async def not_json(_: web.Request) -> web.Response:
        return web.Response(text="<html>oops</html>", content_type="application/json")

    app = web.Application()
    app.router.add_post(api.endpoint, not_json)
    runner, url = await served(app)
    try:
        cassette = cassette_copy(api, tmp_path, lambda data: data.update(interactions=data["interactions"][:1]), url)
        base_url = f"{url}{api.base_path}"
        outcome = await run_one(
            sandbox, api, tmp_path / "runs", base_url=base_url, cassette=cassette, record_mode="new_episodes"
        )
    finally:
        await runner.cleanup()
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and [tool for tool, _ in calls] == ["browser_start_session"], attempt
    assert (
        attempt["error"].startswith(f"model API error at {base_url}")
        and "(JSONDecodeError): Expecting value" in (attempt["error"])
    ), attempt["error"]
    assert str(cassette) not in attempt["error"]
    assert len(yaml.safe_load(cassette.read_text())["interactions"]) == 1


@by_api
async def test_record_mode_all_records_over_a_damaged_cassette(sandbox, tmp_path, api):
    """Mode all refused it, saying to record it again with --record-mode all."""
    cassette = tmp_path / "truncated.yaml"
    cassette.write_text(api.cassette.read_text()[:5000])
    outcome = await run_live(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="all")
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "completed", attempt
    recorded = yaml.safe_load(cassette.read_text())["interactions"]
    assert len(recorded) == attempt["agent_details"]["turns"] == len(calls) + 1


async def test_a_folder_for_a_cassette_is_refused_before_any_request(sandbox, tmp_path):
    """The attempt talked to its model to the end, then crashed in an IsADirectoryError."""
    api, cassette = APIS[0], tmp_path / "folder.yaml"
    cassette.mkdir()
    outcome = await run_live(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="once")
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and calls == [], attempt
    assert attempt["error"] == f"cassette {cassette} is a folder, not a file; {HINT}"


def other_system_prompt(api: Api, throughout: bool = False):
    """The first recorded request with another system prompt; ``throughout``: every one, as a
    recording whose agent had another system prompt."""

    def damage(data: dict) -> None:
        for interaction in data["interactions"] if throughout else data["interactions"][:1]:
            request = interaction["request"]
            body = json.loads(request["body"])
            if api.kind == "openai":
                body["messages"][0]["content"] = "Be brief."
            else:
                body["system"] = "Be brief."
            request["body"] = json.dumps(body)

    return damage


def a_turn_twice(data: dict) -> None:
    data["interactions"].insert(4, data["interactions"][3])


def a_turn_more(data: dict) -> None:
    extra = json.loads(json.dumps(data["interactions"][-1]))
    body = json.loads(extra["request"]["body"])
    body["messages"].append({"role": "user", "content": "And then?"})
    extra["request"]["body"] = json.dumps(body)
    data["interactions"].append(extra)


@by_api
@pytest.mark.parametrize("case", ["another model", "another system prompt", "a turn twice", "a turn more"])
async def test_a_replay_unlike_its_recording_is_an_error_saying_how(sandbox, tmp_path, case, api):
    """Each replayed to the end and completed: the recorded answers to requests the agent no longer
    makes (another model, another system prompt), a turn answered twice (the agent repeated its
    tool call), a recording longer than the conversation."""
    agent, damage = api.agent, None
    if case == "another model":
        agent = f"{api.kind}:other-model"
        says = (
            "is not the request recorded as interaction 1: the agent's request changed since the recording "
            '(model: recorded "scripted-browser-1", sent "other-model")'
        )
    elif case == "another system prompt":
        damage = other_system_prompt(api)
        what = "messages[0].content" if api.kind == "openai" else "system"
        says = f'the agent\'s request changed since the recording ({what}: recorded "Be brief.", sent "You are a'
    elif case == "a turn twice":
        damage = a_turn_twice
        says = "cannot be replayed: interaction 5 repeats interaction 4's request"
    else:
        damage = a_turn_more
        says = "holds 9 model requests, the attempt made 8: interaction(s) 9 were not replayed"
    cassette = cassette_copy(api, tmp_path, damage)
    (outcome,) = await run_batch(
        [load_pack("bid-intake")],
        agent,
        out=tmp_path / "runs",
        progress=False,
        sandbox=sandbox,
        options=AgentOptions(cassette=cassette, record_mode="none"),
    )
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and attempt["error"].startswith(f"cassette {cassette} "), attempt
    assert says in attempt["error"] and HINT in attempt["error"], attempt["error"]
    assert len(calls) == (7 if case == "a turn more" else 0), calls


@by_api
async def test_a_request_the_sdk_retried_while_recording_is_recorded_once(sandbox, tmp_path, api):
    """A rate limit met while recording (a 429, then the SDK's retry answered) was recorded with
    the request twice, and every replay refused the cassette: "interaction 3 repeats interaction 2's
    request" (replays do not retry)."""
    from aiohttp import web

    answered: list[str] = []

    @web.middleware
    async def rate_limited_once(request: web.Request, handler):
        if request.path != api.endpoint:  # the openai: agent's look at /v1/models first
            return await handler(request)
        answered.append(request.path)
        if len(answered) == 2:
            body = {"error": {"message": "rate limited", "type": "rate_limit_error"}}
            return web.json_response(body, status=429, headers={"retry-after-ms": "10"})
        return await handler(request)

    app = scripted_server().create_app()
    app.middlewares.append(rate_limited_once)
    runner, url = await served(app)
    cassette = tmp_path / "recorded.yaml"
    try:
        recording = await run_one(
            sandbox, api, tmp_path / "record", base_url=f"{url}{api.base_path}", cassette=cassette, record_mode="once"
        )
    finally:
        await runner.cleanup()
    attempt, _, _ = attempt_of(recording)
    assert attempt["status"] == "completed" and len(answered) == 9, (attempt, answered)
    codes = [i["response"]["status"]["code"] for i in yaml.safe_load(cassette.read_text())["interactions"]]
    assert codes == [200] * 8, codes
    attempt, calls, _ = attempt_of(await run_one(sandbox, api, tmp_path / "replay", cassette=cassette))
    assert attempt["status"] == "completed" and calls == expected_calls(attempt["site_key"]), attempt


@by_api
@pytest.mark.parametrize("case", ["another system prompt", "a turn more"])
async def test_new_episodes_saves_the_conversation_the_agent_now_has(sandbox, tmp_path, case, api):
    """Under new_episodes, the recorded requests the agent no longer makes (its system prompt
    changed, or it takes a turn less) were kept beside the ones it recorded, and every later replay
    refused the cassette: "interaction(s) 1-8 were not replayed"."""
    runner, url = await scripted_server().start_server()
    try:
        damage = other_system_prompt(api, throughout=True) if case == "another system prompt" else a_turn_more
        cassette = cassette_copy(api, tmp_path, damage, root=url)
        extended = await run_one(
            sandbox, api, tmp_path / "extend", base_url=f"{url}{api.base_path}", cassette=cassette,
            record_mode="new_episodes",
        )  # fmt: skip
    finally:
        await runner.cleanup()
    assert attempt_of(extended)[0]["status"] == "completed"
    assert len(yaml.safe_load(cassette.read_text())["interactions"]) == 8
    attempt, calls, _ = attempt_of(await run_one(sandbox, api, tmp_path / "replay", cassette=cassette))
    assert attempt["status"] == "completed" and calls == expected_calls(attempt["site_key"]), attempt["error"]


async def test_an_empty_cassette_under_once_is_recorded_as_none_would_be(sandbox, tmp_path):
    """vcrpy records into an empty file, but the attempt took it for a replay: its record said
    replayed, and the SDK was given no retries (a rate limit met while recording ended it)."""
    api, cassette = APIS[0], tmp_path / "empty.yaml"
    cassette.write_text("\n")
    outcome = await run_live(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="once")
    attempt, _, _ = attempt_of(outcome)
    assert attempt["status"] == "completed" and attempt["agent_details"]["replayed"] is False, attempt
    assert len(yaml.safe_load(cassette.read_text())["interactions"]) == 8


@by_api
@pytest.mark.parametrize("wrapper", ["", "think:0:"])
async def test_a_model_fault_answers_every_request_of_either_sdk(sandbox, tmp_path, api, wrapper):
    """The fault's HTTP client was built on httpx, where the SDKs use httpx2: the anthropic SDK
    refused it (TypeError, the attempt crashed). In ``think:`` the model agent found no run on its
    tool client (the thinking one) and so no fault: every request was answered."""
    from toolserver.contract.trace import parse_trace
    from toolserver.faults import parse_faults

    runner, url = await scripted_server().start_server()
    try:
        (outcome,) = await run_batch(
            [load_pack("bid-intake")], wrapper + api.agent, out=tmp_path, progress=False, sandbox=sandbox,
            options=AgentOptions(base_url=f"{url}{api.base_path}"), faults=parse_faults("model-429"),
        )  # fmt: skip
    finally:
        await runner.cleanup()
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "error" and calls == [], attempt
    assert "RateLimitError" in attempt["error"] and "injected fault model-429" in attempt["error"], attempt["error"]
    events = parse_trace((outcome.directory / "trace.jsonl").read_text()).events
    assert len([e for e in events if e.kind == "fault_injected"]) == 3  # a request, two retries


@by_api
async def test_a_cassette_still_answers_when_model_faults_are_on(sandbox, tmp_path, api):
    """With a model fault planned, requests went past the cassette (httpx, not the httpx2 vcrpy
    patches) to the recorded endpoint, long closed: a replay under ``none`` failed to connect."""
    from toolserver.faults import parse_faults

    (outcome,) = await run_batch(
        [load_pack("bid-intake")], api.agent, out=tmp_path, progress=False, sandbox=sandbox,
        options=AgentOptions(cassette=api.cassette, record_mode="none"), faults=parse_faults("model-5xx:p=0"),
    )  # fmt: skip
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "completed", attempt["error"]
    assert calls == expected_calls(attempt["site_key"])


@by_api
async def test_new_episodes_records_only_at_the_endpoint_the_cassette_was_recorded_against(
    sandbox, tmp_path, api, monkeypatch
):
    """With no --base-url, new_episodes sent the requests the cassette could not answer to the
    cassette's endpoint, whatever the SDK's variable said, and the API key with them. Now the
    configured endpoint is used: another than the cassette's is refused before any request (here
    a closed port, which the old code never tried), the cassette's own records there."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    variable = f"{api.kind.upper()}_BASE_URL"
    runner, url = await scripted_server().start_server()
    try:
        cassette = cassette_copy(api, tmp_path, lambda data: data.update(interactions=data["interactions"][:1]), url)
        monkeypatch.setenv(variable, f"http://127.0.0.1:{closed}{api.base_path}")
        with pytest.raises(AgentUnavailable) as refused:  # the batch's check, before any attempt
            await run_one(sandbox, api, tmp_path / "refused", cassette=cassette, record_mode="new_episodes")
        monkeypatch.setenv(variable, f"{url}{api.base_path}")
        outcome = await run_one(sandbox, api, tmp_path / "runs", cassette=cassette, record_mode="new_episodes")
    finally:
        await runner.cleanup()
    assert str(refused.value).startswith(
        f"cassette {cassette} (record mode new_episodes) was recorded against {url}{api.base_path}, and this "
        f"attempt's endpoint is http://127.0.0.1:{closed}{api.base_path}: new episodes are recorded only where"
    ), refused.value
    assert f"Point --base-url / ${variable} at {url}{api.base_path}, or " in str(refused.value)
    attempt, calls, _ = attempt_of(outcome)
    assert attempt["status"] == "completed", attempt["error"]
    assert attempt["agent_details"]["base_url"].rstrip("/") == f"{url}{api.base_path}"
    assert calls == expected_calls(attempt["site_key"])
    recorded = yaml.safe_load(cassette.read_text())["interactions"]
    assert len(recorded) == 8 and all(i["request"]["uri"] == f"{url}{api.endpoint}" for i in recorded)


OPENAI_ANSWER = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
ANTHROPIC_ANSWER = {"id": "m", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn"}
STOPPED = {"index": 0, "finish_reason": "stop"}
GARBLED = [  # each ended the attempt as crashed, its traceback the error
    ("openai", {"choices": [{**STOPPED, "message": None}]}, "its first choice has no message"),
    (
        "openai",
        {"choices": [{**STOPPED, "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}}]},
        "its message's content is list, not text",  # some compatible servers send parts
    ),
    (
        "openai",
        {"choices": [{**STOPPED, "message": {"role": "assistant", "content": "x"}}], "usage": [1, 2]},
        "its usage is list, not an object",
    ),
    (
        "openai",
        {
            "choices": [{**STOPPED, "message": {"role": "assistant", "content": "x"}}],
            "usage": {"prompt_tokens": "abc", "completion_tokens": 1, "total_tokens": 1},
        },
        "its usage prompt_tokens is 'abc', not a count",
    ),
    ("anthropic", {"content": [{"type": "text", "text": "x"}], "usage": None}, "it has no usage"),
    ("anthropic", {"content": None, "usage": {"input_tokens": 1, "output_tokens": 1}}, "its content is NoneType"),
    (
        "anthropic",
        {"content": [{"type": "text", "text": None}], "usage": {"input_tokens": 1, "output_tokens": 1}},
        "a text block holds no text",
    ),
]


async def answered_by(sandbox, api: Api, out: Path, body: dict) -> tuple[dict, list[tuple[str, object]], str]:
    """``attempt_of`` an attempt whose model endpoint answers ``body`` to every request."""
    from aiohttp import web

    async def answering(request: web.Request) -> web.Response:
        return web.json_response(body)

    app = web.Application()
    app.router.add_post(api.endpoint, answering)
    runner, url = await served(app)
    try:
        return attempt_of(await run_one(sandbox, api, out, base_url=f"{url}{api.base_path}"))
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("kind, answer, says", GARBLED, ids=[f"{k}-{n}" for n, (k, _, _) in enumerate(GARBLED)])
async def test_an_endpoint_answer_unlike_the_apis_is_an_error_saying_how(sandbox, tmp_path, kind, answer, says):
    api = next(api for api in APIS if api.kind == kind)
    body = {**(OPENAI_ANSWER if kind == "openai" else ANTHROPIC_ANSWER), **answer}
    attempt, calls, _ = await answered_by(sandbox, api, tmp_path, body)
    assert attempt["status"] == "error", attempt
    assert attempt["error"].startswith("the model endpoint's answer is not the ") and says in attempt["error"], attempt
    assert calls == []


async def test_a_negative_token_count_leaves_the_attempt_its_answer(sandbox, tmp_path):
    """Counts that do not add up make the cost unknown (``usage_problem``), not the attempt an error."""
    usage = {"prompt_tokens": -5, "completion_tokens": 1, "total_tokens": -4}
    body = {**OPENAI_ANSWER, "choices": [{**STOPPED, "message": {"role": "assistant", "content": "x"}}], "usage": usage}
    attempt, _, output = await answered_by(sandbox, APIS[0], tmp_path, body)
    assert attempt["status"] == "completed" and output == "x", attempt


async def test_a_turn_asking_only_for_custom_tools_is_an_error_not_an_empty_answer(sandbox, tmp_path):
    """A turn whose tool calls named no function (custom tool calls, which the sandbox never
    offers) completed with its content as the answer: those calls were dropped without a word."""
    custom = {"id": "call_1", "type": "custom", "custom": {"name": "browser_snapshot", "input": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [custom]}
    body = {**OPENAI_ANSWER, "choices": [{**STOPPED, "finish_reason": "tool_calls", "message": message}]}
    attempt, calls, _ = await answered_by(sandbox, APIS[0], tmp_path, body)
    assert attempt["status"] == "error", attempt
    assert attempt["error"].startswith("the model's 1 tool call(s) name no function (custom tool calls)"), attempt
    assert calls == []


def test_a_turn_without_token_counts_makes_the_cost_unknown_not_zero():
    """A turn without usage was skipped, and missing counts were 0: a partial total was priced as
    known (usage {} as $0), where the cost boundary says unknown, never zero."""
    from types import SimpleNamespace

    from sandbox.runner.agents._model import add_usage
    from sandbox.runner.agents.openai_agent import USAGE_KEYS
    from sandbox.runner.prices import tokens, usage_problem

    counted = add_usage(None, SimpleNamespace(prompt_tokens=10, completion_tokens=2, total_tokens=12), USAGE_KEYS)
    assert tokens(counted) == (10, 0, 0, 2) and usage_problem(counted) is None
    for turn in (None, SimpleNamespace(total_tokens=50), SimpleNamespace(prompt_tokens=5, completion_tokens=None)):
        total = add_usage(counted, turn, USAGE_KEYS)
        assert tokens(total) is None, (turn, total)
        assert usage_problem(total) == "the endpoint gave no token counts for 1 model turn(s): the cost is unknown"
    assert usage_problem(add_usage(None, None, USAGE_KEYS)) is not None  # the first turn too
