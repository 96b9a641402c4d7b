"""Every call keeps its trace line, and no line follows ``run_end``: an integer too long to write,
a refused call of a run that ended while its body was read, a browser crash under a call with
Playwright traces on. And what ``/mcp`` and ``/answer`` answer when something else goes wrong."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.support.hostile import HOSTILE, build_hostile_mirror
from tests.support.polling import until
from tests.support.sandboxes import http_client
from tests.support.traces import strict_lines
from toolserver.api import Sandbox
from toolserver.contract.policy import Policy
from toolserver.transports.asgi import asgi_bridge
from toolserver.transports.http import MCP_PATH, error_boundary


async def test_an_integer_too_long_to_write_is_an_argument_error_and_its_line_keeps_its_digits(run):
    """From the Python API: the message said "not a finite number", and writing the call's line
    raised ValueError (json.dumps of an int past 4,300 digits), out of ``run.call``."""
    reply = await run.call("browser_scroll", {"direction": "down", "amount": 10**5000})
    assert reply["error"] == {
        "type": "invalid_arguments",
        "message": "browser_scroll: argument 'amount' is an integer longer than the 4300 digits this server "
        "reads; pass a shorter one",
    }
    (line,) = [line for line in strict_lines(run.trace.text()) if line["type"] == "call"]
    assert line["args"]["amount"] == "1" + "0" * 5000 and line["escaped"] == ["args.amount"]


@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
async def test_a_refused_call_of_a_run_that_ended_while_its_body_was_read_is_unknown_run(client, content_type):
    """The call's refusal (malformed JSON, or its Content-Type) was written after ``run_end`` and
    answered 400, though the run had ended: now 404 unknown_run, and nothing after ``run_end``."""
    run_id = (await (await client.post("/runs", json={})).json())["run_id"]
    reader, writer = await asyncio.open_connection(client.host, client.port)
    body = b'{"not": json}'
    writer.write(
        f"POST /runs/{run_id}/tools/browser_snapshot HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body[:4]
    )
    await writer.drain()
    await asyncio.sleep(0.3)  # the route has found the run live and reads the body
    assert (await client.delete(f"/runs/{run_id}")).status == 200
    writer.write(body[4:])
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, said = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404"), answer
    assert json.loads(said)["error"]["type"] == "unknown_run"
    lines = strict_lines(await (await client.get(f"/runs/{run_id}/trace")).text())
    assert lines[-1]["type"] == "run_end" and not [line for line in lines if line["type"] == "call"], lines[-1]


async def crash_browser(own: Sandbox) -> None:
    cdp = await own.host.browser.new_browser_cdp_session()
    with contextlib.suppress(Exception):  # the connection goes down with the browser
        await cdp.send("Browser.crash")


async def test_a_browser_crash_under_a_call_with_playwright_traces_on_keeps_the_calls_line(own_sandbox, tmp_path):
    """Ending the call's Playwright trace group on the crashed context raised: the call's line was
    lost and the answer was a 500 server_fault."""
    root = build_hostile_mirror(tmp_path / "hostile")
    async with own_sandbox(own_browser=True, action_timeout_ms=3000) as own, http_client(own) as client:
        run = own.create_run(
            policy=Policy(mode="observe"), mirror_roots=(root,), playwright_trace_dir=tmp_path / "playwright"
        )
        start = {"provider": "kernel", "site_key": "hostile", "url": f"{HOSTILE}/calm"}
        assert (await (await client.post(f"/runs/{run.id}/tools/browser_start_session", json=start)).json())["ok"]
        await run.current_session().active_tab.page.evaluate("setTimeout(() => { while (true) {} }, 0)")
        call = asyncio.ensure_future(client.post(f"/runs/{run.id}/tools/browser_snapshot", json={}))
        await asyncio.sleep(0.5)  # the snapshot waits on the spinning page
        await crash_browser(own)
        answer = await asyncio.wait_for(call, 15)
        reply = await answer.json()
        assert answer.status == 200 and reply["error"]["type"] == "browser_crashed", reply
        await run.close()
    calls = [line for line in strict_lines(run.trace.text()) if line["type"] == "call"]
    assert [(c["tool"], c["ok"]) for c in calls] == [("browser_start_session", True), ("browser_snapshot", False)]
    assert calls[-1]["error"]["type"] == "browser_crashed"


async def test_an_http_error_on_mcp_is_a_jsonrpc_error():
    """An aiohttp HTTPException on ``/mcp`` (the SDK's app answering nothing) was answered in the
    HTTP API's shape, ``{"ok": false, ...}``, which no MCP client reads."""

    async def silent(scope, receive, send) -> None:  # an ASGI app that answers nothing
        await receive()

    async def mcp(request: web.Request) -> web.StreamResponse:
        return await asgi_bridge(request, b"{}", silent, 0.05, lambda r, s, h: h, "x", asyncio.Event())

    app = web.Application(middlewares=[error_boundary])
    app.router.add_route("*", MCP_PATH, mcp)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        answer = await client.post(MCP_PATH, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        said = await answer.json()
    assert answer.status == 500 and said["jsonrpc"] == "2.0" and said["id"] is None, said
    assert said["error"]["code"] == -32603 and said["error"]["data"] == {"type": "server_fault"}
    assert said["error"]["message"] == "server_fault: 500 Internal Server Error: POST /mcp"


class SlowScoring:
    """The shared sandbox's tasks, whose scoring takes ``seconds`` of CPU-bound work (as parsing a
    long trace and scoring a 1 MB output does), and says which thread it ran in."""

    def __init__(self, tasks, seconds: float) -> None:
        self.tasks, self.seconds, self.threads = tasks, seconds, []

    def task(self, pack: str, site_key: str) -> dict:
        return self.tasks.task(pack, site_key)

    def score(self, pack, output, trace_text, elapsed_seconds, site_key) -> dict:
        self.threads.append(threading.current_thread())
        time.sleep(self.seconds)  # holds whatever thread it runs in
        return self.tasks.score(pack, output, trace_text, elapsed_seconds, site_key)


async def test_an_answer_is_scored_off_the_event_loop_and_the_run_stays_answered_once(sandbox):
    """Scoring ran on the event loop: every other run (and /health) waited for it."""
    scoring = SlowScoring(sandbox.tasks, 4.0)
    async with (
        Sandbox(sandbox.config, policies=sandbox.policies, tasks=scoring, host=sandbox.host) as own,
        http_client(own) as client,
    ):
        run_id = (await (await client.post("/runs", json={"pack": "controlled-form"})).json())["run_id"]
        other = (await (await client.post("/runs", json={"pack": "controlled-form"})).json())["run_id"]
        answering = asyncio.ensure_future(client.post(f"/runs/{run_id}/answer", json={"output": "{}"}))
        await until(lambda: scoring.threads, 10)  # the answer is being scored
        began = time.monotonic()
        listed = await client.post(f"/runs/{other}/tools/list_tools", json={})
        waited = time.monotonic() - began  # on the event loop, the 4 s of scoring were waited for too
        assert scoring.threads and not answering.done()
        again = asyncio.ensure_future(client.post(f"/runs/{run_id}/answer", json={"output": "{}"}))
        deleted = await client.delete(f"/runs/{run_id}")  # the run has ended: its answer is being scored
        first, second = await asyncio.gather(answering, again)
        assert listed.status == 200 and waited < 2.0, waited
        assert deleted.status == 404 and (await deleted.json())["error"]["type"] == "unknown_run"
        assert first.status == second.status == 200 and await first.json() == await second.json()
        assert scoring.threads[0] is not threading.main_thread() and len(scoring.threads) == 1
        other_answer = await client.post(f"/runs/{run_id}/answer", json={"output": "another"})
        assert other_answer.status == 409
