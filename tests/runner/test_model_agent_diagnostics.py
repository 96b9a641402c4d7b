"""What a person sees when a model agent goes wrong, and what it did: transcript.jsonl (every
message as sent, tool results, usage per turn) shown in the report, API errors naming the
endpoint, one endpoint check before a batch, and --cassette refused for agents without one.
Against the scripted OpenAI-compatible server (a real server on loopback)."""

from __future__ import annotations

import json
import socket

import pytest

from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions
from sandbox.runner.batch import run_batch
from sandbox.runner.report import write_reports
from tests.support.models import scripted_server
from tests.support.reports import open_report
from tests.support.serve import served
from toolserver.contract.trace import read_trace

AGENT = "openai:scripted-browser-1"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def total_tokens(usage: dict) -> int:
    return usage["total_tokens"] if "total_tokens" in usage else usage["input_tokens"] + usage["output_tokens"]


@pytest.mark.parametrize(
    "agent, base_path", [(AGENT, "/v1"), ("anthropic:scripted-browser-1", "")], ids=["openai", "anthropic"]
)
async def test_transcript_holds_the_whole_conversation_and_shows_in_the_report(sandbox, tmp_path, agent, base_path):
    runner, url = await scripted_server().start_server()
    try:
        [outcome] = await run_batch(
            [load_pack("bid-intake")],
            agent,
            out=tmp_path,
            progress=False,
            sandbox=sandbox,
            options=AgentOptions(base_url=f"{url}{base_path}"),
            screenshots="none",
        )
    finally:
        await runner.cleanup()
    assert outcome.status == "completed", outcome.reason
    lines = [json.loads(line) for line in (outcome.directory / "transcript.jsonl").read_text().splitlines()]
    assert [(e["turn"], e["role"]) for e in lines[:2]] == [(0, "system"), (0, "user")]
    assert lines[1]["content"] == (outcome.directory / "prompt.txt").read_text()
    answers = [e for e in lines if e["role"] == "assistant"]
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert [e["turn"] for e in answers] == list(range(1, attempt["agent_details"]["turns"] + 1))
    assert all(total_tokens(e["usage"]) > 0 for e in answers)
    assert sum(total_tokens(e["usage"]) for e in answers) == total_tokens(attempt["token_usage"])
    results = [e for e in lines if e["role"] == "tool"]
    calls = read_trace(outcome.directory / "trace.jsonl").calls
    assert [e["name"] for e in results] == [c.tool for c in calls]
    assert [json.loads(e["content"])["ok"] for e in results] == [c.ok for c in calls]
    asked = [c["id"] for e in answers for c in e["tool_calls"]]
    assert [e["tool_call_id"] for e in results] == asked
    assert answers[-1]["tool_calls"] == [] and "BENCHMARK_JSON_BEGIN" in answers[-1]["content"]

    write_reports(outcome.directory)
    page, context, _ = await open_report(sandbox, outcome.directory / "report.html")
    try:
        transcript = page.get_by_role("region", name="Transcript")
        assert f"Model transcript ({len(lines)} entries)" in await transcript.inner_text()
        assert await transcript.locator(".call").count() == len(lines)
    finally:
        await context.close()


async def one_attempt(sandbox, tmp_path, agent: str, path: str):
    """One bid-intake attempt of ``agent`` on the scripted model server, at base URL ``<server>path``."""
    runner, url = await scripted_server().start_server()
    try:
        [outcome] = await run_batch(
            [load_pack("bid-intake")],
            agent,
            out=tmp_path,
            progress=False,
            sandbox=sandbox,
            options=AgentOptions(base_url=f"{url}{path}"),
            screenshots="none",
        )
    finally:
        await runner.cleanup()
    return outcome, url


async def test_api_errors_name_the_endpoint(sandbox, tmp_path):
    outcome, url = await one_attempt(sandbox, tmp_path, "openai:no-such-model", "/v1")
    assert outcome.reason.startswith(f"agent error: model API error at {url}/v1/ (NotFoundError): ")
    assert "usually ends in /v1" not in outcome.reason  # it does: the model is what is not found
    last = json.loads((outcome.directory / "transcript.jsonl").read_text().splitlines()[-1])
    assert last["kind"] == "error" and last["error"].startswith(f"model API error at {url}/v1/")


@pytest.mark.parametrize(
    "credentials",
    [("://user:hunter2@", ""), ("://sk-hunter2@", ""), ("://", "?api-key=hunter2")],
    ids=["password", "key-as-user", "key-in-query"],
)
async def test_a_password_or_key_in_the_base_url_is_in_no_record_of_the_attempt(sandbox, tmp_path, credentials):
    """agent_details.base_url in attempt.json, and the errors, said the endpoint's password; a key
    given as the user (`https://sk-...@proxy/v1`) or in the query (`?api-key=`) they said whole.
    The URL is said as a cassette records it: without them."""
    user, query = credentials
    runner, url = await scripted_server().start_server()
    try:
        [outcome] = await run_batch(
            [load_pack("bid-intake")],
            "openai:no-such-model",
            out=tmp_path,
            progress=False,
            sandbox=sandbox,
            options=AgentOptions(base_url=url.replace("://", user) + "/v1" + query),
            screenshots="none",
        )
    finally:
        await runner.cleanup()
    shown = url + "/v1"
    assert outcome.reason.startswith(f"agent error: model API error at {shown}"), outcome.reason
    assert "(NotFoundError): " in outcome.reason, outcome.reason
    record = json.loads((outcome.directory / "attempt.json").read_text())
    assert record["agent_details"]["base_url"].rstrip("/").startswith(shown)  # as the SDK client says it
    written = [path.read_text(errors="replace") for path in outcome.directory.rglob("*") if path.is_file()]
    assert written and not any("hunter2" in text for text in written)


async def test_a_base_url_without_v1_is_named_as_the_likely_404(sandbox, tmp_path):
    outcome, url = await one_attempt(sandbox, tmp_path, "openai:scripted-browser-1", "")
    assert outcome.reason.startswith(f"agent error: model API error at {url} (NotFoundError): Error code: 404 (")
    assert f"such a base URL usually ends in /v1, as {url}/v1)" in outcome.reason, outcome.reason


@pytest.mark.parametrize("kind, path, env", [("openai", "/v1", "OPENAI"), ("anthropic", "", "ANTHROPIC")])
def test_an_unreachable_endpoint_stops_the_batch_before_any_attempt(tmp_path, capsys, kind, path, env):
    """anthropic: had no check: 30 attempts failed on "Connection error." (exit 1)."""
    endpoint = f"http://127.0.0.1:{closed_port()}{path}"
    code = main(
        [
            "run",
            "bid-intake",
            "--agent",
            f"{kind}:any",
            "--base-url",
            endpoint,
            "--repeats",
            "30",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    assert code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"sandbox run: cannot reach the model endpoint {endpoint}") and "(APIConnectionError" in line
    assert f"--base-url / ${env}_BASE_URL" in line
    assert list(tmp_path.iterdir()) == []  # not one attempt was started


def test_a_cassette_for_an_agent_that_uses_none_is_an_error(tmp_path, capsys):
    code = main(["run", "bid-intake", "--agent", "reference", "--cassette", str(tmp_path / "c.yaml")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "sandbox run: --cassette is for model agents (anthropic:MODEL, openai:MODEL); reference does not use it"
    )
    assert main(["run", "bid-intake", "--agent", "cmd:true", "--base-url", "http://127.0.0.1:1/v1"]) == 2
    assert "--base-url is for model agents" in capsys.readouterr().err


def test_one_cassette_over_several_packs_is_refused(tmp_path, capsys):
    """The first pack's attempt recorded it and every other pack's failed to replay it."""
    cassette = tmp_path / "c.yaml"
    endpoint = f"http://127.0.0.1:{closed_port()}/v1"  # never asked: the batch is refused before
    args = ["run", "bid-intake", "controlled-form", "--agent", AGENT, "--base-url", endpoint, "--out", str(tmp_path)]
    assert main([*args, "--cassette", str(cassette)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sandbox run: --cassette {cassette} with 2 packs (bid-intake, controlled-form): a cassette holds one "
        "pack's conversation; run one pack per cassette (sandbox run PACK --cassette FILE)"
    )
    assert main([*args[:3], "--agent", "think:0:anthropic:m", "--with", f"cassette={cassette}"]) == 2
    assert "with 2 packs (bid-intake, controlled-form)" in capsys.readouterr().err
    assert not cassette.exists() and [p.name for p in tmp_path.iterdir()] == []


def test_a_think_agents_cassette_is_checked_before_the_batch(tmp_path, capsys):
    """Wrapped in think:, a missing cassette under record mode none was not checked: the batch ran
    and every attempt failed (exit 1)."""
    cassette = tmp_path / "missing.yaml"
    code = main(
        ["run", "bid-intake", "--agent", f"think:0:{AGENT}", "--cassette", str(cassette), "--record-mode", "none",
         "--out", str(tmp_path / "runs"), "--no-progress"]
    )  # fmt: skip
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sandbox run: no cassette at {cassette} and the record mode is 'none': record one first"
    )
    assert not (tmp_path / "runs").exists()


def cut_short_answer(kind: str, ending: str, text: str) -> dict:
    """A model's first turn that asks for no tool and ends in ``ending``, in the API's own form."""
    if kind == "openai":
        refused = ending == "refusal"
        message = {"role": "assistant", "content": None if refused else text, "refusal": text if refused else None}
        return {
            "id": "chatcmpl-cut", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop" if refused else ending}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }  # fmt: skip
    return {
        "id": "msg_cut", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": text}], "stop_reason": ending, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }  # fmt: skip


@pytest.mark.parametrize(
    "kind, ending, says",
    [
        ("openai", "length", "the model hit its token limit before a final answer (finish_reason 'length')"),
        ("openai", "content_filter", "the endpoint's content filter stopped the model's answer "
                                     "(finish_reason 'content_filter')"),
        ("openai", "refusal", "the model refused: 'I cannot help with that.'"),
        ("anthropic", "max_tokens", "the model hit its token limit (max_tokens=4096) before a final answer"),
        ("anthropic", "refusal", "the model refused: 'I cannot help with that.' (stop_reason 'refusal')"),
    ],
)  # fmt: skip
async def test_a_turn_cut_short_or_refused_is_an_error_not_an_answer(sandbox, tmp_path, kind, ending, says):
    """It was taken as the final answer: the attempt completed, its partial text (or nothing) scored."""
    from aiohttp import web

    text = "I cannot help with that." if ending == "refusal" else '{"partial": "BENCHMARK_JSON_BEG'

    async def answer(_: web.Request) -> web.Response:
        return web.json_response(cut_short_answer(kind, ending, text))

    app = web.Application()
    app.router.add_post("/v1/chat/completions" if kind == "openai" else "/v1/messages", answer)
    runner, url = await served(app)
    try:
        [outcome] = await run_batch(
            [load_pack("bid-intake")], f"{kind}:m", out=tmp_path, progress=False, sandbox=sandbox,
            options=AgentOptions(base_url=f"{url}/v1" if kind == "openai" else url), screenshots="none",
        )  # fmt: skip
    finally:
        await runner.cleanup()
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert attempt["status"] == "error" and attempt["error"] == says, attempt
    lines = [json.loads(line) for line in (outcome.directory / "transcript.jsonl").read_text().splitlines()]
    assert lines[-1] == {**lines[-1], "kind": "error", "error": says}
    [answered] = [line for line in lines if line.get("role") == "assistant"]
    assert (answered.get("refusal") or answered["content"]) == text  # kept in the transcript
