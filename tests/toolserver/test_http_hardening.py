"""Hostile HTTP requests on a real loopback server: bad bodies are 4xx JSON errors and trace
lines, bodies that never complete are bounded, foreign hosts/origins/types are refused, the
token is enforced, and pack paths are not accepted (issue 12, items 5, 7-11)."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
import pytest_asyncio
from multidict import CIMultiDict

from tests.support.calls import handshake_then
from tests.support.sandboxes import http_client
from tests.support.traces import strict_lines
from toolserver.config import ServerConfig

JSON = {"content-type": "application/json"}


async def new_run(client) -> str:
    response = await client.post("/runs", json={})
    assert response.status == 201, await response.text()
    return (await response.json())["run_id"]


async def trace_lines(client, run_id: str) -> list[dict]:
    response = await client.get(f"/runs/{run_id}/trace")
    assert response.status == 200
    return strict_lines(await response.text())


BAD_BODIES = {
    "deeply nested": (b"[" * 5000 + b"]" * 5000, JSON, 400, "malformed_json"),
    "nested past the depth bound": (b'{"a":' * 100 + b"1" + b"}" * 100, JSON, 400, "malformed_json"),
    "5,000-digit integer": (b'{"amount": ' + b"9" * 5000 + b', "direction": "down"}', JSON, 400, "malformed_json"),
    "unknown charset": (
        b'{"direction": "down"}',
        {"content-type": "application/json; charset=x-no-such"},
        415,
        "unsupported_charset",
    ),
    "latin-1 charset": (
        b'{"direction": "down"}',
        {"content-type": "application/json; charset=latin-1"},
        415,
        "unsupported_charset",
    ),
    "invalid UTF-8": (b'{"direction": "d\xffown"}', JSON, 400, "invalid_encoding"),
    "text/plain": (b'{"direction": "down"}', {"content-type": "text/plain"}, 415, "unsupported_media_type"),
    "no Content-Type": (b'{"direction": "down"}', {"content-type": ""}, 415, "unsupported_media_type"),
    "a key given twice": (b'{"direction": "up", "direction": "down"}', JSON, 400, "malformed_json"),
}  # NaN and Infinity are a tool's argument error, as over MCP (test_transport_agreement.py)


@pytest.mark.parametrize("case", BAD_BODIES)
async def test_a_bad_body_is_a_4xx_json_error_and_a_trace_line(client, case):
    body, headers, status, error_type = BAD_BODIES[case]
    run_id = await new_run(client)
    response = await client.post(f"/runs/{run_id}/tools/browser_scroll", data=body, headers=headers)
    assert response.status == status, await response.text()
    assert (await response.json())["error"]["type"] == error_type
    calls = [line for line in await trace_lines(client, run_id) if line["type"] == "call"]
    assert [(c["tool"], c["error"]["type"]) for c in calls] == [("browser_scroll", error_type)]
    if case == "invalid UTF-8":  # kept as received, the undecodable byte escaped and noted
        assert calls[0]["args"] == '{"direction": "d\\udcffown"}' and calls[0]["escaped"] == ["args"]
    if case == "5,000-digit integer":  # Python's own words advised a call of sys.set_int_max_str_digits()
        expected = "request body has an integer of 5000 digits, longer than the 4300 digits this server reads"
        assert calls[0]["error"]["message"] == expected
    if case == "a key given twice":  # the call ran as the last value: what was asked first was in no record
        assert calls[0]["args"] == body.decode() and '"direction" twice' in calls[0]["error"]["message"]
    assert (await client.get("/health")).status == 200


async def test_a_lone_surrogate_argument_is_traced_exactly_and_the_trace_stays_readable(client):
    run_id = await new_run(client)
    raw = b'{"provider": "kernel", "site_key": "a\\ud800b", "url": "https://nowhere.example/"}'
    response = await client.post(f"/runs/{run_id}/tools/browser_start_session", data=raw, headers=JSON)
    assert response.status == 200 and (await response.json())["error"]["type"] == "invalid_arguments"  # no key
    calls = [line for line in await trace_lines(client, run_id) if line["type"] == "call"]
    assert calls[0]["args"]["site_key"] == "a\\ud800b" and calls[0]["escaped"] == ["args.site_key"]
    follow_up = await client.post(f"/runs/{run_id}/tools/list_tools", json={})
    assert follow_up.status == 200
    assert len(await trace_lines(client, run_id)) == 3


async def raw_exchange(client, head: bytes, body: bytes, read_within: float) -> bytes:
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    try:
        writer.write(head + body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(4096), read_within)
    finally:
        writer.close()


@pytest_asyncio.fixture
async def impatient(own_sandbox):
    """An HTTP server for a sandbox of its own whose body timeout is short."""
    async with own_sandbox(request_body_timeout_s=1.0) as own, http_client(own) as test_client:
        yield test_client


@pytest.mark.parametrize("framing", ["short of its Content-Length", "unfinished chunked"])
async def test_a_body_that_never_completes_gets_408_and_a_trace_line(impatient, framing):
    run_id = await new_run(impatient)
    if framing == "short of its Content-Length":
        head = (
            f"POST /runs/{run_id}/tools/browser_snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        ).encode()
        body = b'{"max_chars":'
    else:
        head = (
            f"POST /runs/{run_id}/tools/browser_snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
        body = b'5\r\n{"max\r\n'
    answer = await raw_exchange(impatient, head, body, read_within=5)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    calls = [line for line in await trace_lines(impatient, run_id) if line["type"] == "call"]
    assert [c["error"]["type"] for c in calls] == ["request_timeout"]


FOREIGN = {
    "Host evil.example": ({"Host": "evil.example", **JSON}, 403, "forbidden_host"),
    "rebinding Host with a port": ({"Host": "attacker.example:8765", **JSON}, 403, "forbidden_host"),
    "Origin evil.example": ({"Origin": "http://evil.example", **JSON}, 403, "forbidden_origin"),
    "Origin null": ({"Origin": "null", **JSON}, 403, "forbidden_origin"),
    # A broken bracket or port was a 500 server_fault with a traceback in the log (urlsplit raised).
    "Host with a broken bracket": ({"Host": "[::1", **JSON}, 403, "forbidden_host"),
    "Host [evil]": ({"Host": "[evil]", **JSON}, 403, "forbidden_host"),
    "Host with a port that is none": ({"Host": "localhost:abc", **JSON}, 403, "forbidden_host"),
    "Host with a port out of range": ({"Host": "localhost:99999", **JSON}, 403, "forbidden_host"),
    "Origin with a broken bracket": ({"Origin": "http://[::1", **JSON}, 403, "forbidden_origin"),
    "text/plain": ({"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
    "form encoded": ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"),
}


@pytest.mark.parametrize("case", FOREIGN)
async def test_foreign_hosts_origins_and_types_cannot_create_runs(client, sandbox, case):
    headers, status, error_type = FOREIGN[case]
    before = len(sandbox.runs)
    response = await client.post("/runs", data=b"{}", headers=headers)
    assert response.status == status and (await response.json())["error"]["type"] == error_type
    assert len(sandbox.runs) == before


async def test_a_wrong_method_or_path_is_said_as_such_whatever_the_body_type(client):
    """A PUT without Content-Type was answered 415, naming the type, not the method."""
    for method, path, status in (("PUT", "/runs", 405), ("POST", "/no/such/route", 404)):
        response = await client.request(method, path, data=b"x", headers={"Content-Type": "text/plain"})
        error = (await response.json())["error"]
        assert (response.status, error["type"]) == (status, "http_error") and method in error["message"], error


async def test_loopback_names_and_allowed_hosts_are_accepted(own_sandbox):
    async with own_sandbox(allowed_hosts=("sandbox.internal",)) as own, http_client(own) as test_client:
        for host in ("localhost:8765", "127.0.0.1", "127.5.6.7:1", "[::1]:8765", "sandbox.internal:8765"):
            response = await test_client.get("/health", headers={"Host": host, "Origin": f"http://{host}"})
            assert response.status == 200, host
        assert (await test_client.get("/health", headers={"Host": "other.internal"})).status == 403


async def test_any_host_name_lets_no_web_page_in_and_every_origin_is_checked(own_sandbox):
    # --allowed-hosts '*' let any Origin drive the server, and of two Origin headers only the first was read.
    async with own_sandbox(allowed_hosts=("*",)) as own, http_client(own) as test_client:
        assert (await test_client.get("/health", headers={"Host": "box.lan:8765"})).status == 200
        for origins in (["https://evil.example"], ["null"], ["http://127.0.0.1", "https://evil.example"]):
            headers = CIMultiDict([*(("Origin", origin) for origin in origins), ("Content-Type", "application/json")])
            response = await test_client.post("/runs", data=b"{}", headers=headers)
            assert response.status == 403 and (await response.json())["error"]["type"] == "forbidden_origin", origins
        assert not own.runs


async def test_mcp_takes_the_host_names_every_other_route_takes_and_refuses_deep_messages(own_sandbox):
    """The SDK's own host list refused localhost with no port, *.localhost and --allowed-hosts
    names with 421; and a message nested past max_json_depth opened a run, where /runs refused it."""
    async with own_sandbox(allowed_hosts=("box.lan",)) as own, http_client(own) as test_client:
        accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        initialize = json.loads(handshake_then().splitlines()[0])
        for host in ("localhost", "127.0.0.1", "app.localhost:8765", "box.lan:8765"):
            opened = await test_client.post("/mcp?pack=bid-intake", json=initialize, headers={**accept, "Host": host})
            assert opened.status == 200, (host, await opened.text())
        runs = len(own.runs)
        deep = {
            **initialize,
            "params": {**initialize["params"], "capabilities": {"x": json.loads("[" * 80 + "]" * 80)}},
        }
        refused = await test_client.post("/mcp?pack=bid-intake", json=deep, headers=accept)
        assert refused.status == 400 and (await refused.json())["error"] == {
            "code": -32600,
            "message": f"Invalid request: nested deeper than {own.config.max_json_depth} levels",
            "data": {"type": "malformed_json"},
        }
        assert len(own.runs) == runs


async def test_a_configured_token_is_required(own_sandbox):
    async with own_sandbox(token="s3cret") as own, http_client(own) as test_client:
        missing = await test_client.post("/runs", json={})
        wrong = await test_client.post("/runs", json={}, headers={"Authorization": "Bearer nope"})
        right = await test_client.post("/runs", json={}, headers={"Authorization": "Bearer s3cret"})
        assert (missing.status, wrong.status, right.status) == (401, 401, 201)
        assert (await missing.json())["error"]["type"] == "unauthorized"
        # A byte that is not UTF-8 in the header (aiohttp reads it as a lone surrogate) was a 500.
        reader, writer = await asyncio.open_connection("127.0.0.1", test_client.port)
        writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xff\r\n")
        writer.write(b"Connection: close\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 401") and b'"unauthorized"' in answer, answer[:300]


async def test_a_deleted_trace_of_an_ended_run_is_unknown_run_not_a_fault(own_sandbox, tmp_path):
    """An ended run still held in memory whose trace file was deleted: GET /trace and POST /answer
    answered 500 server_fault (the trace reader's OSError)."""
    async with own_sandbox(trace_dir=str(tmp_path)) as own, http_client(own) as test_client:
        response = await test_client.post("/runs", json={"pack": "bid-intake"})
        run_id = (await response.json())["run_id"]
        assert (await test_client.delete(f"/runs/{run_id}")).status == 200
        (tmp_path / f"{run_id}.jsonl").unlink()
        for response in (
            await test_client.get(f"/runs/{run_id}/trace"),
            await test_client.post(f"/runs/{run_id}/answer", json={"output": "{}"}),
        ):
            error = (await response.json())["error"]
            assert (response.status, error["type"]) == (404, "unknown_run") and "was deleted" in error["message"], error


async def test_a_wrong_type_to_an_ended_run_is_unknown_run_as_with_the_right_type(client):
    """A tool call of an ended run was 404 unknown_run with Content-Type JSON, 415 without."""
    run_id = await new_run(client)
    assert (await client.delete(f"/runs/{run_id}")).status == 200
    for headers in (JSON, {"content-type": "text/plain"}):
        response = await client.post(f"/runs/{run_id}/tools/browser_snapshot", data=b"{}", headers=headers)
        assert (response.status, (await response.json())["error"]["type"]) == (404, "unknown_run"), headers


async def test_a_malformed_chunked_body_of_the_wrong_type_is_traced_and_closes_the_connection(client, monkeypatch):
    """The 415 of a tool call whose chunked body was malformed left the connection open (aiohttp then
    answered the parse error a second time on it), and said the type, not the framing. With
    aiohttp's pure-Python parser, which gives the route that error (its C parser lets the route
    wait for the body: ``request_body_timeout_s``)."""
    monkeypatch.setattr(aiohttp.web_protocol, "HttpRequestParser", aiohttp.http_parser.HttpRequestParserPy)
    run_id = await new_run(client)
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    writer.write(
        f"POST /runs/{run_id}/tools/browser_snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    )
    await writer.drain()
    await asyncio.sleep(0.3)  # the route has begun: the bad chunk is found while it reads the body
    writer.write(b"zz\r\n{}\r\n0\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 10)  # read to the end: the server closed the connection
    writer.close()
    assert answer.count(b"HTTP/1.") == 1 and answer.startswith(b"HTTP/1.1 400"), answer[:500]
    assert b'"malformed_http"' in answer and b"TransferEncodingError" in answer, answer[:500]
    calls = [line for line in await trace_lines(client, run_id) if line["type"] == "call"]
    assert [(c["tool"], c["error"]["type"]) for c in calls] == [("browser_snapshot", "unsupported_media_type")]


@pytest.mark.parametrize(
    ("field", "said"),
    [("max_runs", "of at least 1"), ("max_sessions_per_core", ">= 0"), ("max_downloads", ">= 0")],
)
def test_a_limit_given_as_a_bool_is_refused(field, said):
    """``max_downloads=True`` was taken as 1 (a bool is an int to Python)."""
    with pytest.raises(ValueError, match=f"{field} must be a whole number {said}.*not True"):
        ServerConfig(**{field: True})


def test_binding_beyond_loopback_needs_a_token():
    with pytest.raises(ValueError, match="--token"):
        ServerConfig(host="0.0.0.0")
    for unsendable in ("", " t", "t\t"):  # SANDBOX_TOKEN= started a server that refused every request
        with pytest.raises(ValueError, match="empty or begins or ends with white space"):
            ServerConfig(host="0.0.0.0", token=unsendable)
    assert ServerConfig(host="0.0.0.0", token="t").token == "t"
    assert ServerConfig(host="::1").token is None


@pytest.mark.parametrize("idle", [0, -1, float("inf"), float("nan"), True])
def test_an_mcp_idle_time_must_be_a_positive_number_of_seconds(idle):
    with pytest.raises(ValueError, match="mcp_session_idle_s must be a positive number"):
        ServerConfig(mcp_session_idle_s=idle)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("max_body_bytes", 0, "of at least 1"),  # aiohttp takes a client_max_size of 0 as no bound at all
        ("max_json_depth", 0, "of at least 1"),
        ("request_body_timeout_s", 0, "positive number of seconds"),  # every body was a 408
        ("request_body_timeout_s", -1.0, "positive number of seconds"),
    ],
)
def test_an_http_limit_that_bounds_nothing_or_everything_is_refused(field, value, said):
    with pytest.raises(ValueError, match=f"{field} must be a .*{said}"):
        ServerConfig(**{field: value})


@pytest.mark.parametrize(
    "pack",
    [
        "/etc",
        "/nonexistent-dir",
        "/tmp",
        "../packs/bid-intake",
        "packs/bid-intake",
        "bid-intake/../bid-intake",
        "bid-intake\n",
        "C:\\packs",
    ],
)
async def test_pack_paths_are_refused_with_one_uniform_error(client, pack):
    """Existing and missing directories, relative and absolute paths: the same message, which
    reveals nothing about the file system."""

    async def message(name: str) -> str:
        response = await client.post("/runs", json={"pack": name})
        body = await response.json()
        assert response.status == 400 and body["error"]["type"] == "invalid_pack"
        return body["error"]["message"].replace(repr(name), "<pack>")

    assert await message(pack) == await message("no-such-pack")
