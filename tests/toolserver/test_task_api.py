"""The whole loop over the API, as an external harness does it: POST /runs with a site key,
GET the task, drive the tools, POST the answer and get the score and gates; pack-less runs say
they have no allow-list and can be forbidden; over MCP the pack's prompt is a prompt."""

from __future__ import annotations

import asyncio

from mcp import Client

from sandbox.runner.agents.reference import controlled_form
from sandbox.runner.task import AgentTask, HttpClient, Tools
from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"


async def test_an_external_harness_runs_the_whole_loop_over_http(client):
    created = await client.post("/runs", json={"pack": "controlled-form", "site_key": "harness-key-1"})
    run = await created.json()
    assert created.status == 201 and run["site_key"] == "harness-key-1" and run["policy"] == "enforce"
    task = await (await client.get(f"/runs/{run['run_id']}/task")).json()
    assert task["site_key"] == "harness-key-1" and 'site_key="harness-key-1"' in task["prompt"]
    assert task["allowed_urls"] == [FORM_URL] and task["time_limit_seconds"] == 600
    agent_task = AgentTask(
        pack_id=task["pack"],
        workflow="controlled-form",
        prompt=task["prompt"],
        site_key=task["site_key"],
        time_limit_seconds=task["time_limit_seconds"],
        input_text=task["prompt"],
        output_schema={},
    )
    output = await controlled_form.solve(Tools(HttpClient(str(client.make_url("")), run["run_id"])), agent_task)
    answered = await client.post(f"/runs/{run['run_id']}/answer", json={"output": output})
    report = await answered.json()
    assert answered.status == 200 and report["qualified_pass"] is True, report
    assert report["gates"]["ok"] and not any("site key unverified" in n for n in report["gates"]["notes"])
    trace = parse_trace(await (await client.get(f"/runs/{run['run_id']}/trace")).text())
    assert trace.header["site_key"] == "harness-key-1" and trace.end["reason"] == "answered"
    again = await client.post(f"/runs/{run['run_id']}/answer", json={"output": output})  # a retry
    assert again.status == 200 and await again.json() == report
    other = await client.post(f"/runs/{run['run_id']}/answer", json={"output": "no record here"})
    refused = await other.json()
    assert other.status == 409 and refused["error"]["type"] == "already_answered", refused


async def test_two_answers_sent_at_once_are_one_answer_and_a_refusal(client):
    """Both used to be scored: each client got a report, and the run kept the last one."""
    run = await (await client.post("/runs", json={"pack": "controlled-form"})).json()
    start = {"provider": "kernel", "site_key": run["site_key"], "url": FORM_URL}
    assert (await (await client.post(f"/runs/{run['run_id']}/tools/browser_start_session", json=start)).json())["ok"]
    answers = [{"output": "first answer"}, {"output": "second answer"}]  # each closes the session first
    replies = await asyncio.gather(*(client.post(f"/runs/{run['run_id']}/answer", json=a) for a in answers))
    assert sorted(r.status for r in replies) == [200, 409], [r.status for r in replies]
    kept = answers[[r.status for r in replies].index(200)]
    again = await client.post(f"/runs/{run['run_id']}/answer", json=kept)  # the one answered, again
    assert again.status == 200


async def test_a_pack_run_without_a_site_key_is_issued_one(client):
    run = await (await client.post("/runs", json={"pack": "bid-intake"})).json()
    assert run["site_key"].startswith("sandbox-")
    task = await (await client.get(f"/runs/{run['run_id']}/task")).json()
    assert f'site_key="{run["site_key"]}"' in task["prompt"]


async def test_a_pack_less_run_says_it_has_no_allow_list_and_has_no_task(client):
    created = await client.post("/runs", json={})
    run = await created.json()
    assert created.status == 201 and run["policy"] == "none" and "no allow-list" in run["note"]
    trace = parse_trace(await (await client.get(f"/runs/{run['run_id']}/trace")).text())
    assert trace.header["policy"] == "none" and trace.header["transport"] == "http"
    task = await client.get(f"/runs/{run['run_id']}/task")
    assert task.status == 400 and (await task.json())["error"]["type"] == "no_task"
    bad = await client.post(f"/runs/{run['run_id']}/answer", json={"answer": "x"})
    assert bad.status == 400 and 'takes {"output"' in (await bad.json())["error"]["message"]
    for body in ({"site_key": ""}, {"site_key": 7}):
        assert (await client.post("/runs", json=body)).status == 400


async def test_require_pack_refuses_pack_less_runs_over_http_and_mcp(own_sandbox):
    async with own_sandbox(require_pack=True) as own, http_client(own) as strict:
        refused = await strict.post("/runs", json={})
        error = (await refused.json())["error"]
        assert refused.status == 400 and error["type"] == "invalid_pack" and "--require-pack" in error["message"]
        try:
            async with Client(str(strict.make_url("/mcp"))):
                raise AssertionError("a pack-less MCP session was accepted")
        except BaseException as exc:  # the client's task groups wrap the refusal
            assert "--require-pack" in repr(exc)


async def test_over_mcp_the_pack_prompt_is_a_prompt(client):
    async with Client(str(client.make_url("/mcp?pack=controlled-form"))) as mcp:
        run_id = mcp.session.initialize_result.meta["sandbox/run_id"]
        prompts = (await mcp.list_prompts()).prompts
        assert [p.name for p in prompts] == ["task"]
        prompt = await mcp.get_prompt("task")
        task = await (await client.get(f"/runs/{run_id}/task")).json()
        assert prompt.messages[0].content.text == task["prompt"] and task["site_key"] in task["prompt"]
    async with Client(str(client.make_url("/mcp"))) as mcp:
        assert (await mcp.list_prompts()).prompts == []


async def test_an_answer_racing_a_delete_is_scored_on_the_final_trace(own_sandbox):
    """The answer found the run ending and scored its trace at once, before the call in flight had
    its line: the report missed that call's gate failure, and kept missing it on a retry."""
    from toolserver.faults import parse_faults

    form = "https://sarah27h.github.io/simple-multi-step-form/"
    async with own_sandbox(faults=parse_faults("mirror-delay:ms=1500")) as own, http_client(own) as server:
        run_id = (await (await server.post("/runs", json={"pack": "controlled-form", "site_key": "race"})).json())[
            "run_id"
        ]
        start = {"provider": "kernel", "site_key": "race", "clear_cookies": False, "url": form}
        assert (await server.post(f"/runs/{run_id}/tools/browser_start_session", json=start)).status == 200
        navigating = asyncio.ensure_future(server.post(f"/runs/{run_id}/tools/browser_navigate", json={"url": form}))
        await asyncio.sleep(0.5)  # under way: its page is 1.5 s late
        deleting = asyncio.ensure_future(server.delete(f"/runs/{run_id}"))
        await asyncio.sleep(0.005)
        answered = await server.post(f"/runs/{run_id}/answer", json={"output": "no answer"})
        await asyncio.gather(navigating, deleting)
        report = await answered.json()
    failures = " ".join(f["message"] for f in report["gates"]["failures"])
    assert "browser_navigate" in failures, failures  # the call in flight, in the trace it was scored on
