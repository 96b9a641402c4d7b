"""What is refused before the MCP SDK reads a message (``toolserver.transports.messages``); the
transports' own tests send them over stdio and HTTP (test_mcp.py)."""

from __future__ import annotations

import pytest

from toolserver.transports.messages import Refused, refusal_of

CALL = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "browser_scroll", "arguments": %s}}'


@pytest.mark.parametrize("raw", [str, str.encode], ids=["stdio line", "HTTP body"])
def test_a_request_is_refused_with_its_id_and_the_reason(raw):
    twice = refusal_of(raw(CALL % '{"direction": "up", "direction": "down"}'))
    assert twice == Refused(
        7,
        -32600,
        'Invalid request: the key "direction" is given twice in one object; give each key once',
        {"type": "malformed_json"},
    )
    long = refusal_of(raw(CALL % ('{"amount": %s}' % ("9" * 4301))))  # the SDK's reader: id null, "out of range"
    assert long == Refused(
        7,
        -32600,
        "Invalid request: the message has an integer of 4301 digits, longer than the 4300 digits this server reads",
        {"type": "malformed_json"},
    )
    surrogate = refusal_of(raw(CALL % '{"direction": "\\ud800"}'))
    assert surrogate is not None and surrogate.request_id == 7 and "lone UTF-16 surrogate" in surrogate.message
    assert surrogate.data == {"type": "invalid_encoding"}
    assert refusal_of(raw(CALL % '{"direction": "\\ud83d\\ude00"}')) is None  # a pair is a character
    assert refusal_of(raw(CALL % '{"direction": "down"}')) is None


def test_a_response_of_the_clients_is_left_to_the_sdk():
    # An error in answer carries the response's id, which is of the client's own requests.
    assert refusal_of('{"jsonrpc": "2.0", "id": 7, "result": {"a": 1, "a": 2}}') is None
    assert refusal_of('{"jsonrpc": "2.0", "id": 7, "result": {"text": "\\ud800"}}') is None


def test_a_message_nested_deeper_than_python_calls_go_is_walked_or_left_to_the_sdk():
    # Walking it for surrogates raised RecursionError, which ended the stdio server.
    nested = '{"a": ' * 400 + '"\\ud800"' + "}" * 400  # read by json, deeper than a recursive walk goes
    refused = refusal_of(CALL % nested)
    assert refused is not None and refused.request_id == 7 and "surrogate" in refused.message
    deeper = '{"a": ' * 5000 + "1" + "}" * 5000  # deeper than json reads: the SDK's parse error
    assert refusal_of(CALL % deeper) is None
