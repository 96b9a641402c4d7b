"""An MCP client's JSON-RPC messages, read before the SDK reads them (both transports).

``refusal_of`` says why a message the SDK would read wrongly is refused:

- An object that repeats a key: the SDK keeps its last value, so a tool call sent with
  ``"provider": "browserbase"`` and then ``"provider": "kernel"`` ran, and was traced, as the
  second alone; what the agent asked for first was in no record.
- A request whose ``id`` is not a string or an integer (``1.5``, ``true``, ``null``, an object):
  the SDK reads it as a notification, so the tool never ran, nothing was answered and the client
  waited for ever.
- An array (a JSON-RPC batch, which MCP no longer has): over HTTP the SDK answered a dump of its
  validation errors.
- A string with a lone UTF-16 surrogate (``"\\ud800"``, no pair): the SDK's reader refuses it
  with a parse error that names no id ("unexpected end of hex escape"), so the request was never
  answered. (The HTTP API takes it, and the trace escapes it.)
- Over HTTP, a message nested deeper than ``max_json_depth``, as the HTTP API refuses such a body
  (the SDK's only bound was its parser's).
- An integer of more than 4,300 digits (``read_int``, which the HTTP API reads bodies with too):
  the SDK's reader answered a parse error with id null ("number out of range").

Each is answered with an invalid-request error (its id when that can be read) and traced as an
``unreadable_message``. Every refusal's ``data.type`` is the HTTP API's error type for the same
fault in a body: ``malformed_json`` (a repeated key, too deep, a long integer, not JSON),
``invalid_encoding`` (not UTF-8, a lone surrogate), ``invalid_arguments`` (JSON of no JSON-RPC
shape: a batch, an id of another type). A request whose id is in use by one still running (which
the transports refuse: ``id_in_use``) has ``duplicate_request_id``, a fault the HTTP API cannot
have. Over stdio, anything else that is not JSON is left to the
SDK (``stdin_end`` answers it, with ``data.type``). ``initialize_of`` finds an
``initialize``, whose run the transport opens; ``odd_arguments`` a ``tools/call`` whose arguments
are no object, which the run refuses itself, with a trace line.

``http_refusal`` adds what ``/mcp`` refuses for the SDK, so that it answers as stdio does: an
``MCP-Protocol-Version`` this server does not speak, but on an ``initialize``, which negotiates
its version in its body (the transport hides that header from the SDK) (the SDK sent any such request to its
stateless-era entry, whose answer asked for that era's ``params._meta`` envelope or listed
2026-07-28 as supported), a body that is not UTF-8 or not JSON (``parse_error``: in the words of
the SDK's stdio reader), and JSON of no JSON-RPC message's shape (the SDK answered a dump of
pydantic's errors with the invalid-params code and no id).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp_types import jsonrpc_message_adapter
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC
UNSUPPORTED_PROTOCOL_VERSION = -32022  # MCP
SHAPELESS = "Invalid request: not a JSON-RPC 2.0 request, notification or response"


# data.type of each refusal: the HTTP API's error type for the same fault in a request body
MALFORMED_JSON, INVALID_ENCODING = {"type": "malformed_json"}, {"type": "invalid_encoding"}
SHAPE = {"type": "invalid_arguments"}  # JSON of no JSON-RPC shape: the HTTP API's body of the wrong shape
ID_IN_USE = {"type": "duplicate_request_id"}  # no HTTP API fault: its requests have no ids


@dataclass(frozen=True)
class Refused:
    request_id: str | int | None  # the message's id, when it can be read
    code: int
    message: str
    data: dict | None = None  # the JSON-RPC error's data, if any


def http_refusal(method: str, version: str | None, body: bytes, max_depth: int) -> Refused | None:
    """Why a request to ``/mcp`` is refused before the SDK reads it, or None: an
    ``MCP-Protocol-Version`` header (``version``) naming no version this server speaks (but on an
    ``initialize``: its body negotiates); for a
    POST, a body that is not UTF-8, ``refusal_of``'s reasons, or JSON of no JSON-RPC shape. Each
    answered as over stdio."""
    opening = method == "POST" and initialize_of(body) is not None  # its body's version is negotiated, not refused
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS and not opening:
        said, data = unsupported_version(version)
        return Refused(
            request_id_of(body, requests_only=True),
            UNSUPPORTED_PROTOCOL_VERSION,
            f"MCP-Protocol-Version header: {said}",
            data,
        )
    if method != "POST":
        return None
    if (bad := not_utf8(body)) is not None:
        return Refused(None, PARSE_ERROR, bad, INVALID_ENCODING)
    if (unparsed := parse_error(body)) is not None:  # the SDK's own words, with data.type (stdio's too)
        return refusal_of(body, max_depth) or Refused(None, PARSE_ERROR, unparsed, MALFORMED_JSON)
    return refusal_of(body, max_depth) or _shapeless(body)


def id_in_use(request_id: str | int) -> str:
    """Why a request is refused whose id is that of a request of the same connection still running
    (JSON-RPC: ids are unique among a client's requests in flight; the SDK ran both, and answered
    the id twice, or, over HTTP, gave the first request's answer to the second and none to the first)."""
    return (
        f"Invalid request: id {json.dumps(request_id)} is in use: a request with it is still running; give each "
        "request in flight its own id (wait for that answer, or send this request with another id)"
    )


def unsupported_version(requested: str) -> tuple[str, dict]:
    """Why the protocol version ``requested`` is not served, naming the ones that are, and the
    data of its JSON-RPC error (-32022), from which a client in ``auto`` mode picks one."""
    supported = list(HANDSHAKE_PROTOCOL_VERSIONS)
    if requested in MODERN_PROTOCOL_VERSIONS:
        why = (
            f"protocol {requested} (stateless requests) is not served: a run keeps browser state, so this "
            "server uses the initialize handshake"
        )
    else:
        why = f"protocol version {json.dumps(requested)} is not one this server speaks"
    said = f"{why}; connect with one of the supported versions ({', '.join(supported)})"
    return said, {"supported": supported, "requested": requested}


def not_utf8(data: bytes) -> str | None:
    """A parse error's message for ``data`` that is not UTF-8 (what a call types must be what was
    sent: nothing is replaced), or None."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"Parse error: not UTF-8: byte 0x{data[exc.start]:02x} at {exc.start}"
    return None


def _shapeless(body: bytes) -> Refused | None:
    """JSON that is no JSON-RPC message (read as the SDK reads it), refused with its id, if it
    gives a valid one."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:  # not JSON: the SDK's parse error
        return None
    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        given = message.get("id") if isinstance(message, dict) else None
        return Refused(given if _valid_id(given) else None, INVALID_REQUEST, SHAPELESS, SHAPE)
    return None


def request_id_of(body: bytes, requests_only: bool = False) -> str | int | None:
    """The id of the JSON-RPC message ``body`` holds, if it gives a valid one (``requests_only``:
    of a request only, not of a response)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or (requests_only and "method" not in message):
        return None
    given = message.get("id")
    return given if _valid_id(given) else None


def refusal_of(text: str | bytes, max_depth: int | None = None) -> Refused | None:
    """Why the message ``text`` is refused before the SDK reads it, or None. Only a request or a
    notification (a message with a ``method``) is refused: an error in answer to one of the
    client's responses would carry an id of the client's, which it could take for its own
    request's. Over HTTP, a message nested deeper than ``max_depth`` is refused too, as the HTTP
    API refuses such a body."""
    try:
        return _refusal(text, max_depth)
    except RecursionError:  # nested deeper than Python reads: the SDK's parse error says so
        return None


def _refusal(text: str | bytes, max_depth: int | None) -> Refused | None:
    try:
        message = json.loads(text, object_pairs_hook=unique_keys, parse_int=read_int)
    except RepeatedKey as repeated:
        request, request_id = _request_id(text)
        if not request:
            return None
        said = f"the key {json.dumps(repeated.key)} is given twice in one object; give each key once"
        return Refused(request_id, INVALID_REQUEST, f"Invalid request: {said}", MALFORMED_JSON)
    except LongInteger as long:  # the SDK's reader (pydantic's) said "number out of range", with id null
        request, request_id = _request_id(text, parse_int=_short_int)
        said = f"Invalid request: the message has {long}"
        return Refused(request_id, INVALID_REQUEST, said, MALFORMED_JSON) if request else None
    except ValueError:
        return None  # not JSON: the SDK's parse error
    if isinstance(message, list):  # the SDK's refusal over HTTP was a dump of pydantic's errors
        said = "Invalid request: an array (a JSON-RPC batch) is no message; send one at a time"
        return Refused(None, INVALID_REQUEST, said, SHAPE)
    if not isinstance(message, dict) or "method" not in message:
        return None
    if max_depth is not None and json_depth(message) > max_depth:
        request_id = message.get("id") if _valid_id(message.get("id")) else None
        said = f"Invalid request: nested deeper than {max_depth} levels"
        return Refused(request_id, INVALID_REQUEST, said, MALFORMED_JSON)
    if "id" in message and not _valid_id(message["id"]):
        shown = json.dumps(message["id"])[:40]
        said = f"Invalid request: an id must be a string or an integer, not {shown}"
        return Refused(None, INVALID_REQUEST, said, SHAPE)
    escaped = _SURROGATE_BYTES.search(text) if isinstance(text, bytes) else _SURROGATE_TEXT.search(text)
    if escaped and not _is_text(message):
        request_id = message.get("id") if _valid_id(message.get("id")) else None
        return Refused(
            request_id,
            INVALID_REQUEST,
            "Invalid request: a string holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape with no "
            "pair), which is no text; send the character itself, or its escaped pair",
            INVALID_ENCODING,
        )
    return None


# A surrogate comes only from an escape (the text itself is UTF-8): without one, no walk is needed.
_SURROGATE_TEXT, _SURROGATE_BYTES = re.compile(r"\\u[dD][89a-fA-F]"), re.compile(rb"\\u[dD][89a-fA-F]")


def _is_text(value: object) -> bool:
    """Whether every string in ``value`` (keys too) is Unicode text: no lone surrogate. Walked
    without recursion: a message may be nested deeper than Python's calls go."""
    left = [value]
    while left:
        item = left.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            left += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            left += item
    return True


class RepeatedKey(ValueError):
    """An object that gives one key twice (``unique_keys``)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook`` that refuses an object giving one key twice."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise RepeatedKey(key)
        seen[key] = value
    return seen


class LongInteger(ValueError):
    """An integer longer than Python reads (``sys.get_int_max_str_digits()``, 4,300 digits)."""


def read_int(text: str) -> int:
    """``json.loads``'s ``parse_int``: a ``LongInteger`` that says how long, not Python's advice
    to call ``sys.set_int_max_str_digits()``. Every transport reads JSON with it."""
    try:
        return int(text)
    except ValueError:
        limit = sys.get_int_max_str_digits()
        digits = len(text.lstrip("-"))
        raise LongInteger(f"an integer of {digits} digits, longer than the {limit} digits this server reads") from None


def _short_int(text: str) -> int | None:  # a long integer as None: the message's method and id are read
    try:
        return int(text)
    except ValueError:
        return None


def json_depth(value: Any) -> int:
    """How deep ``value`` is nested (a scalar: 0), level by level, without recursion."""
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
    return depth - 1


def _valid_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _request_id(text: str | bytes, parse_int: Any = None) -> tuple[bool, str | int | None]:
    """Whether a message whose objects repeat a key is a request or notification (it has a
    ``method``), and its id, if it has one id, and a valid one."""
    pairs: list[list[tuple[str, Any]]] = []

    def keep(object_pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        pairs.append(object_pairs)
        return dict(object_pairs)

    try:
        message = json.loads(text, object_pairs_hook=keep, parse_int=parse_int)
    except ValueError:
        return False, None
    if not isinstance(message, dict):
        return False, None
    outermost = pairs[-1]  # read last
    ids = [value for key, value in outermost if key == "id"]
    return any(key == "method" for key, _ in outermost), ids[0] if len(ids) == 1 and _valid_id(ids[0]) else None


def initialize_of(body: bytes) -> dict | None:
    """The JSON-RPC ``initialize`` request ``body`` holds, if it is one (the SDK answers anything malformed)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
        return message
    return None


def parse_error(body: bytes) -> str | None:
    """Why ``body`` is not JSON, or None: in the words of the SDK's stdio reader (pydantic's)."""
    try:
        pydantic_core.from_json(body)
    except ValueError as exc:
        return f"Parse error: Invalid JSON: {exc}"
    return None


def odd_arguments(params: Any) -> tuple[str, Any] | None:
    """A ``tools/call`` naming its tool with arguments that are not an object (a list, a string):
    the name and the arguments, which the run refuses as ``invalid_arguments`` with a trace line."""
    if isinstance(params, Mapping) and isinstance(params.get("name"), str):
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            return params["name"], arguments
    return None
