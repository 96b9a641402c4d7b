"""Fuzzing the HTTP API and tool arguments with hypothesis on a real loopback server: well
over 2,000 generated requests, 0 × 5xx, 0 lost trace lines, every line strict JSON
(issue 12). The generator runs in a worker thread with a plain HTTP/1.1 client while the
server answers on the test's event loop."""

from __future__ import annotations

import asyncio
import http.client
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.traces import strict_lines
from toolserver.tools import default_registry

TOOL_NAMES = list(default_registry().names)
EXAMPLES = 300  # each example is one run with up to 12 requests, plus 3 of its own

# Text including lone surrogates and every other code point; numbers including NaN and
# Infinity (integers of thousands of digits are sent as raw bodies below).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | ANY_TEXT
    | st.sampled_from(["kernel", "e1", "down", "https://test.sandbox.example/", "t1"])
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(ANY_TEXT | st.sampled_from(["url", "ref", "text", "provider"]), inner, max_size=4)
    ),
    max_leaves=12,
)
ARG_NAMES = st.sampled_from(
    [
        "url",
        "ref",
        "target",
        "text",
        "submit",
        "direction",
        "amount",
        "max_chars",
        "tab",
        "provider",
        "site_key",
        "clear_cookies",
        "session_id",
        "close_all",
        "element",
    ]
)
ARGS = st.dictionaries(ARG_NAMES, JSON_VALUES, max_size=4) | JSON_VALUES
CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/json; charset=utf-8",
        "application/json; charset=latin-1",
        "application/json; charset=nope",
        "text/plain",
        "application/x-www-form-urlencoded",
    ]
)


def encoded(value) -> bytes:
    # ensure_ascii writes lone surrogates as \udXXX escapes; allow_nan writes NaN/Infinity raw.
    return json.dumps(value, allow_nan=True).encode()


TOOL_CALLS = st.tuples(
    st.sampled_from(TOOL_NAMES) | st.from_regex(r"[A-Za-z0-9_.~-]{1,20}", fullmatch=True),
    st.one_of(
        ARGS.map(encoded),
        st.binary(max_size=60),
        st.integers(1, 300).map(lambda n: b"[" * n + b"]" * n),
        st.integers(4000, 6000).map(lambda n: b'{"amount": ' + b"9" * n + b"}"),
    ),
    CONTENT_TYPES,
)


class Fuzzer:
    """Sends requests over one keep-alive connection and checks what came back."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.requests = 0
        self.failures: list[str] = []

    def send(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        headers = {"Content-Type": content_type} if body is not None else {}
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            status, data = response.status, response.read()
        except (http.client.HTTPException, OSError):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            raise
        self.requests += 1
        if status >= 500:
            self.failures.append(f"{status} on {method} {path} {body[:100] if body else b''!r}: {data[:300]!r}")
        return status, data

    def one_run(self, calls: list[tuple[str, bytes, str]], create_body: bytes) -> None:
        status, data = self.send("POST", "/runs", create_body)  # a fuzzed creation first: never a 5xx
        if status == 201:
            self.send("DELETE", f"/runs/{json.loads(data)['run_id']}")
        status, data = self.send("POST", "/runs", b"{}")
        run_id = json.loads(data)["run_id"]
        try:
            traced = 0
            for name, body, content_type in calls:
                status, data = self.send("POST", f"/runs/{run_id}/tools/{name}", body, content_type)
                json.loads(data)
                traced += 1  # every call is a line, also one refused for its Content-Type
            status, data = self.send("GET", f"/runs/{run_id}/trace")
            lines = strict_lines(data.decode("utf-8"))
            calls_traced = sum(line["type"] == "call" for line in lines)
            if calls_traced != traced:
                self.failures.append(f"run {run_id}: {traced} calls sent, {calls_traced} traced")
        finally:
            self.send("DELETE", f"/runs/{run_id}")


def fuzz(port: int) -> Fuzzer:
    fuzzer = Fuzzer(port)

    @settings(
        max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(calls=st.lists(TOOL_CALLS, max_size=12), create_body=ARGS.map(encoded))
    def example(calls, create_body) -> None:
        fuzzer.one_run(calls, create_body)

    example()
    return fuzzer


async def test_fuzzed_requests_never_5xx_and_every_call_is_traced(client):
    fuzzer = await asyncio.to_thread(fuzz, client.server.port)
    print(f"fuzz: {fuzzer.requests} requests, {len(fuzzer.failures)} failures")
    assert fuzzer.failures == []
    assert fuzzer.requests >= 2000, fuzzer.requests
    assert (await client.get("/health")).status == 200
