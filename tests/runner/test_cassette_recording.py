"""What a model agent's cassette holds after a recording: only its own attempt's exchanges (not a
live agent's beside it), only a conversation that completed, written whole or not at all, and no
organisation or project header. Real SDKs against the scripted model server on loopback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions
from sandbox.runner.batch import AgentUnavailable, run_batch
from sandbox.runner.executors import BatchAgent
from tests.support.disks import fill, small_disk
from tests.support.models import scripted_server
from tests.support.serve import served

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "fixtures" / "cassettes" / "openai-bid-intake.yaml"
AGENT = "think:0.05:openai:scripted-browser-1"  # slowed, so the two attempts overlap


def attempt_of(outcome) -> dict:
    return json.loads((outcome.directory / "attempt.json").read_text())


def interactions(cassette: Path) -> list[dict]:
    return yaml.safe_load(cassette.read_text())["interactions"]


async def run_beside_a_live_agent(sandbox, out: Path, **cassette_options) -> tuple[dict, dict]:
    """Two agents at concurrency 2: ``cassette`` with ``cassette_options``, ``live`` without one,
    both against one scripted model server (a replay, given no base URL, goes where its cassette
    was recorded); their attempts."""
    runner, url = await scripted_server().start_server()
    try:
        live = AgentOptions(base_url=f"{url}/v1")
        base_url = {} if cassette_options.get("record_mode") == "none" else {"base_url": f"{url}/v1"}
        outcomes = await run_batch(
            [load_pack("bid-intake")],
            [
                BatchAgent(AGENT, AgentOptions(**{**base_url, **cassette_options}), label="cassette"),
                BatchAgent(AGENT, live, label="live"),
            ],
            concurrency=2, out=out, progress=False, sandbox=sandbox,
        )  # fmt: skip
    finally:
        await runner.cleanup()
    by_agent = {attempt_of(o)["agent"]: attempt_of(o) for o in outcomes}
    return by_agent["cassette"], by_agent["live"]


async def test_a_live_agent_beside_a_recording_one_is_not_recorded_in_its_cassette(sandbox, tmp_path):
    """The live agent's exchanges went through the other's cassette (vcrpy patches httpx2 for the
    whole process): it held 16 interactions, and no replay could use it."""
    cassette = tmp_path / "recorded.yaml"
    recording, live = await run_beside_a_live_agent(sandbox, tmp_path / "runs", cassette=cassette, record_mode="all")
    assert recording["status"] == live["status"] == "completed", (recording["error"], live["error"])
    assert len(interactions(cassette)) == 8
    assert all(i["request"]["uri"].endswith("/v1/chat/completions") for i in interactions(cassette))


async def test_a_live_agent_beside_a_replaying_one_talks_to_its_endpoint(sandbox, tmp_path):
    """The live agent's requests were put to the other's cassette, which refused them: its attempt
    failed with vcrpy's CannotOverwriteExistingCassetteException, naming no cassette."""
    replaying, live = await run_beside_a_live_agent(sandbox, tmp_path / "runs", cassette=COMMITTED, record_mode="none")
    assert replaying["status"] == live["status"] == "completed", (replaying["error"], live["error"])
    assert live["agent_details"]["turns"] == 8


def moved(source: Path, cassette: Path, root: str, model: str | None = None) -> Path:
    """``cassette``: a copy of ``source`` with its requests' server root (``http://127.0.0.1:PORT``)
    made ``root`` and, given ``model``, their model that one (so each is a new request)."""
    data = yaml.safe_load(source.read_text())
    recorded = data["interactions"][0]["request"]["uri"].removesuffix("/v1/chat/completions")
    for interaction in data["interactions"]:
        request = interaction["request"]
        request["uri"] = request["uri"].replace(recorded, root)
        if model is not None:
            request["body"] = json.dumps({**json.loads(request["body"]), "model": model})
    cassette.write_text(yaml.safe_dump(data))
    return cassette


async def record(sandbox, out: Path, cassette: Path, mode: str, agent: str = AGENT, app=None, **options) -> dict:
    """One attempt of ``agent`` recording into ``cassette`` under ``mode``, against the scripted
    model server (``app``: its app, changed); ``options``: run_batch's (``time_limit``), a
    ``prepare(url)`` called with the server's URL, and the agent's (``max_turns``)."""
    time_limit, prepare = options.pop("time_limit", None), options.pop("prepare", None)
    runner, url = await (served(app) if app is not None else scripted_server().start_server())
    if prepare is not None:
        prepare(url)
    try:
        agent_options = AgentOptions(base_url=f"{url}/v1", cassette=cassette, record_mode=mode, **options)
        (outcome,) = await run_batch(
            [load_pack("bid-intake")], agent, out=out, progress=False, sandbox=sandbox, options=agent_options,
            time_limit=time_limit,
        )  # fmt: skip
    finally:
        await runner.cleanup()
    return attempt_of(outcome) | {"transcript": (outcome.directory / "transcript.jsonl").read_text()}


@pytest.mark.parametrize("cut", ["turn limit", "time limit"])
async def test_new_episodes_cut_short_saves_what_it_added(sandbox, tmp_path, cut):
    """Unlike all and once, it adds to a recording: what it added is kept however it ended."""
    cassette = tmp_path / "recorded.yaml"
    cut_short = {"max_turns": 2} if cut == "turn limit" else {"time_limit": 1.0}
    agent = "think:0.3:openai:scripted-browser-1"
    attempt = await record(
        sandbox, tmp_path / "runs", cassette, "new_episodes", agent, **cut_short,
        prepare=lambda url: moved(COMMITTED, cassette, url, model="an-older-model"),  # every request a new one
    )  # fmt: skip
    assert attempt["status"] == ("error" if cut == "turn limit" else "timeout"), attempt
    assert len(interactions(cassette)) > 8 and "was not saved" not in attempt["transcript"]


@pytest.mark.parametrize("mode", ["all", "once"])
@pytest.mark.parametrize("cut", ["turn limit", "time limit"])
async def test_a_recording_cut_short_leaves_the_cassette_as_it_was(sandbox, tmp_path, cut, mode):
    """vcrpy saved what it had: under all, a good 8-interaction cassette became the 2 requests of a
    conversation cut short; under once, the partial first recording was saved, then replayed."""
    cassette = tmp_path / "recorded.yaml"
    if mode == "all":
        shutil.copy(COMMITTED, cassette)
    before = cassette.read_bytes() if cassette.exists() else None
    cut_short = {"max_turns": 2} if cut == "turn limit" else {"time_limit": 1.0}
    attempt = await record(
        sandbox, tmp_path / "runs", cassette, mode, "think:0.3:openai:scripted-browser-1", **cut_short
    )
    assert (cassette.read_bytes() if cassette.exists() else None) == before
    assert attempt["status"] == ("error" if cut == "turn limit" else "timeout"), attempt
    kept = "the earlier recording is kept" if mode == "all" else "no recording was made"
    said = f"cassette {cassette} (record mode {mode}) was not saved: the conversation did not complete; {kept}"
    assert said in attempt["transcript"], attempt["transcript"]
    if cut == "turn limit":
        assert attempt["error"] == f"no final answer after 2 model turns (--max-turns); {said}"


async def test_a_recording_the_disk_cannot_hold_leaves_the_old_one_whole(sandbox, tmp_path):
    """The cassette was written in place: a full disk left the old recording cut off mid-way, a
    file no replay could read, and the attempt crashed in an OSError."""
    with small_disk(tmp_path / "disk") as disk:
        cassette = disk / "recorded.yaml"
        data = yaml.safe_load(COMMITTED.read_text())
        data["interactions"] = data["interactions"][:1]
        cassette.write_text(yaml.safe_dump(data))
        before = cassette.read_bytes()
        filler = fill(disk)
        try:
            attempt = await record(sandbox, tmp_path / "runs", cassette, "all")
        finally:
            filler.unlink()
        assert cassette.read_bytes() == before
        assert [p.name for p in disk.iterdir()] == ["recorded.yaml"]
    assert attempt["status"] == "error", attempt
    assert attempt["error"].startswith(f"cassette {cassette} (record mode all) was not saved: it could not be written")
    assert "No space left on device" in attempt["error"] and "the earlier recording is kept" in attempt["error"]


async def test_the_account_s_organisation_and_project_are_not_recorded(sandbox, tmp_path):
    """Only set-cookie was taken out of the responses: the openai-organization, openai-project and
    anthropic-organization-id headers an endpoint sends back were saved in the cassette."""
    from aiohttp import web

    @web.middleware
    async def account_headers(request: web.Request, handler):
        response = await handler(request)
        response.headers.update(
            {"OpenAI-Organization": "org-q7x1", "openai-project": "proj_q7x2", "anthropic-organization-id": "q7x3"}
        )
        return response

    app = scripted_server().create_app()
    app.middlewares.append(account_headers)
    cassette = tmp_path / "recorded.yaml"
    attempt = await record(sandbox, tmp_path / "runs", cassette, "all", app=app)
    assert attempt["status"] == "completed", attempt["error"]
    assert len(interactions(cassette)) == 8
    for interaction in interactions(cassette):
        named = {name.lower() for name in interaction["response"]["headers"]}
        assert "content-type" in named and not named & {
            "openai-organization",
            "openai-project",
            "anthropic-organization-id",
        }
    assert "q7x" not in cassette.read_text()


async def test_a_cassette_s_turn_is_taken_alone_and_in_order():
    """Live turns are shared; a cassette's waits for them and holds back live ones that came after
    it; one stopped while it waits gives up its place."""
    import asyncio

    from sandbox.runner.agents._cassette import Turns

    turns, taken = Turns(), []

    async def take(name: str, alone: bool) -> None:
        await turns.take(alone)
        taken.append(name)

    await take("live 1", False)
    await take("live 2", False)  # beside the first
    waiting = [asyncio.ensure_future(take(name, alone)) for name, alone in [("cassette", True), ("live 3", False)]]
    stopped = asyncio.ensure_future(take("stopped", True))
    await asyncio.sleep(0)
    assert taken == ["live 1", "live 2"]
    stopped.cancel()
    turns.give_back(False)
    turns.give_back(False)
    await asyncio.sleep(0)
    assert taken == ["live 1", "live 2", "cassette"] and turns.alone
    turns.give_back(True)
    await asyncio.gather(*waiting)
    assert taken == ["live 1", "live 2", "cassette", "live 3"] and turns.live == 1 and not turns.waiting
    assert stopped.cancelled()


def test_a_cassette_written_anew_keeps_its_link_and_its_permissions(tmp_path):
    """The new file is renamed over the old one: a link to the cassette must stay a link (its
    target replaced), and the file keep its permissions (the temporary file's are 0600)."""
    from sandbox.runner.agents._cassette import replace_file

    target = tmp_path / "kept" / "recorded.yaml"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    replace_file(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["recorded.yaml"]


def test_a_cassette_whose_name_is_as_long_as_a_name_can_be_is_written(tmp_path):
    """The new file's name added 18 bytes to the cassette's: a name over 237 bytes (pytest's
    parameter ids make long ones) could never be saved again ("File name too long")."""
    from sandbox.runner.agents._cassette import replace_file

    path = tmp_path / ("c" * 250 + ".yaml")
    replace_file(path, "first\n")
    replace_file(path, "second\n")
    assert path.read_text() == "second\n" and [p.name for p in tmp_path.iterdir()] == [path.name]


async def test_a_password_or_key_in_the_base_url_is_not_recorded_and_the_replay_matches(sandbox, tmp_path):
    """vcrpy's httpx stub records str(request.url): `--base-url http://user:s3cret@proxy/v1` kept
    `user:s3cret@` in every uri of the cassette, and the replay's recorded base URL reused it."""
    from sandbox.runner.agents._cassette import without_credentials

    assert without_credentials("http://u:s3cret@h:1/v1/chat?api-key=s3cret&v=2&KEY=s3cret") == "http://h:1/v1/chat?v=2"
    assert without_credentials("http://h:1/v1/messages") == "http://h:1/v1/messages"
    cassette = tmp_path / "recorded.yaml"
    runner, url = await scripted_server().start_server()
    base_url = url.replace("://", "://user:s3cret@") + "/v1"
    try:
        (outcome,) = await run_batch(
            [load_pack("bid-intake")], AGENT, out=tmp_path / "runs", progress=False, sandbox=sandbox,
            options=AgentOptions(base_url=base_url, cassette=cassette, record_mode="all"),
        )  # fmt: skip
    finally:
        await runner.cleanup()
    assert attempt_of(outcome)["status"] == "completed", attempt_of(outcome)["error"]
    assert "s3cret" not in cassette.read_text() and "user" not in interactions(cassette)[0]["request"]["uri"]
    assert all(i["request"]["uri"] == f"{url}/v1/chat/completions" for i in interactions(cassette))
    for given in (base_url, None):  # matched as recorded, at the URL given or at the one recorded
        (replayed,) = await run_batch(
            [load_pack("bid-intake")], AGENT, out=tmp_path / "replays", progress=False, sandbox=sandbox,
            options=AgentOptions(base_url=given, cassette=cassette, record_mode="none"),
        )  # fmt: skip
        assert attempt_of(replayed)["status"] == "completed", attempt_of(replayed)["error"]


@pytest.mark.parametrize("text", ["# to record\n", "---\n", "interactions: []\n"], ids=["comment", "document", "none"])
async def test_a_cassette_without_interactions_is_recorded_into_as_none(sandbox, tmp_path, text):
    """The checks took it for a recording: vcrpy's loader then failed on a comment or a lone `---`
    ("cannot be loaded (TypeError: 'NoneType' object is not subscriptable)"), and `interactions: []`
    was replayed under once, each request ending in vcrpy's raw message."""
    from sandbox.runner.agents._cassette import holds_recording
    from sandbox.runner.cassettes import nothing_recorded

    cassette = tmp_path / "recorded.yaml"
    cassette.write_text(text)
    assert not holds_recording(cassette)
    assert nothing_recorded(cassette) == f"the cassette {cassette} holds no interactions"
    attempt = await record(sandbox, tmp_path / "runs", cassette, "once")
    assert attempt["status"] == "completed", attempt["error"]
    assert len(interactions(cassette)) == 8 and holds_recording(cassette) and nothing_recorded(cassette) is None


async def test_an_error_answer_is_never_recorded(sandbox, tmp_path):
    """Under new_episodes the endpoint's 404 (a model not found; a key refused, a request refused as
    invalid likewise) was saved in the cassette and replayed from then on, the endpoint unasked."""
    from sandbox.runner.agents._cassette import holds_recording

    cassette = tmp_path / "recorded.yaml"
    attempt = await record(sandbox, tmp_path / "runs", cassette, "new_episodes", "openai:no-such-model")
    assert attempt["status"] == "error" and "NotFoundError" in attempt["error"], attempt
    assert not holds_recording(cassette), cassette.read_text()


async def test_an_error_answer_an_older_cassette_replays_is_said_to_come_from_it(sandbox, tmp_path):
    """It was said as the endpoint's ("model API error at http://127.0.0.1:PORT/v1 (NotFoundError)"),
    the endpoint never asked."""
    data = yaml.safe_load(COMMITTED.read_text())
    body = {"error": {"message": "The model does not exist", "type": "invalid_request_error"}}
    data["interactions"][0]["response"].update(
        status={"code": 404, "message": "Not Found"}, body={"string": json.dumps(body)}
    )
    cassette = tmp_path / "older.yaml"
    cassette.write_text(yaml.safe_dump(data))
    (outcome,) = await run_batch(
        [load_pack("bid-intake")], AGENT, out=tmp_path / "runs", progress=False, sandbox=sandbox,
        options=AgentOptions(cassette=cassette, record_mode="none"),
    )  # fmt: skip
    attempt = attempt_of(outcome)
    assert attempt["status"] == "error", attempt
    assert attempt["error"].startswith(
        f"cassette {cassette} (record mode none) answered model request 1 with the error answer it holds as "
        "interaction 1 (NotFoundError: "
    ), attempt["error"]
    assert "error answers are no longer recorded; " in attempt["error"] and "record" in attempt["error"].split("; ")[-1]


@pytest.fixture
def elsewhere(monkeypatch):
    """A scripted model server the environment names (``$OPENAI_BASE_URL``), and an API key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-q7x-secret")

    async def start() -> tuple:
        runner, url = await scripted_server().start_server()
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        return runner, url

    return start


def asked(app) -> list[str]:
    """The requests ``app`` is asked, said as ``METHOD /path key``, as a middleware sees them."""
    from aiohttp import web

    seen: list[str] = []

    @web.middleware
    async def note(request: web.Request, handler):
        seen.append(f"{request.method} {request.path} {request.headers.get('authorization')}")
        return await handler(request)

    app.middlewares.append(note)
    return seen


async def test_new_episodes_never_send_the_key_to_the_cassette_s_endpoint(sandbox, tmp_path, elsewhere):
    """The cassette's recorded endpoint overrode $OPENAI_BASE_URL while recording: the batch's check
    of the endpoint (GET /models), then the attempt, sent the API key to the cassette's host. Both
    refuse now, before any request: the batch's check, and the attempt run alone."""
    from sandbox.runner.agents import make_agent
    from sandbox.runner.attempt import run_attempt

    theirs = scripted_server().create_app()
    seen = asked(theirs)
    their_runner, their_url = await served(theirs)
    our_runner, our_url = await elsewhere()
    cassette = moved(COMMITTED, tmp_path / "theirs.yaml", their_url, model="an-older-model")
    before = cassette.read_bytes()
    options = AgentOptions(cassette=cassette, record_mode="new_episodes")
    try:
        refused = await make_agent(AGENT, options).preflight()
        with pytest.raises(AgentUnavailable) as stopped:
            await run_batch(
                [load_pack("bid-intake")], AGENT, out=tmp_path, progress=False, sandbox=sandbox, options=options
            )
        outcome = await run_attempt(sandbox, load_pack("bid-intake"), make_agent(AGENT, options), tmp_path / "alone")
    finally:
        await their_runner.cleanup()
        await our_runner.cleanup()
    assert seen == [], seen
    said = (
        f"cassette {cassette} (record mode new_episodes) was recorded against {their_url}/v1, and this attempt's "
        f"endpoint is {our_url}/v1: new episodes are recorded only where the recording was made. Point "
        f"--base-url / $OPENAI_BASE_URL at {their_url}/v1, or record it again"
    )
    assert refused is not None and refused.startswith(said), refused
    assert str(stopped.value) == refused
    attempt = json.loads((outcome.directory / "attempt.json").read_text())
    assert attempt["status"] == "error" and attempt["error"] == refused, attempt
    assert cassette.read_bytes() == before


async def test_a_replay_goes_to_the_cassette_s_endpoint_where_nothing_leaves(sandbox, tmp_path, elsewhere):
    """A replay (record mode none, or once with a recording) answers every request from the
    cassette: it goes where the cassette was recorded, whatever $OPENAI_BASE_URL says."""
    our_runner, our_url = await elsewhere()
    try:
        for mode in ("none", "once"):
            (outcome,) = await run_batch(
                [load_pack("bid-intake")], AGENT, out=tmp_path / mode, progress=False, sandbox=sandbox,
                options=AgentOptions(cassette=COMMITTED, record_mode=mode),
            )  # fmt: skip
            attempt = attempt_of(outcome)
            assert attempt["status"] == "completed", attempt["error"]
            assert attempt["agent_details"]["base_url"] != f"{our_url}/v1"
    finally:
        await our_runner.cleanup()
