"""The end of stdin, as a stdio MCP server takes it: the requests already read are answered first;
and its lines that are not JSON-RPC messages, which the SDK drops unanswered, get their error, as
does a request whose id is that of a request read and not yet answered (the SDK ran both, and
answered the id twice).

The SDK ends a connection when its read stream ends, and cancels the requests still running (each
is answered -32000 "Connection closed"). Over stdio the end of stdin only says the client has
nothing more to send: ``sandbox mcp < calls.jsonl``, or a script that writes its calls and closes
stdin, would get none of them done. ``answer_before_end`` holds the read stream's end back until
every request read has been answered or cancelled by the client (``notifications/cancelled``).
Calls run one at a time, so a long file takes long in all: it gives up only when ``limit_s`` pass
with no request answered; what is still running then ends with the connection, as before.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from typing import Any

import mcp_types as types
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from toolserver.transports.messages import ID_IN_USE, MALFORMED_JSON, SHAPE, SHAPELESS, id_in_use
from toolserver.transports.pipes import LINE_START, OnUnreadable

log = logging.getLogger("toolserver.transports.mcp")
ANSWER_WITHIN_S = 60.0  # longer than any one call takes (call_timeout_s 30 s), the browser's start included


class Unanswered:
    """The requests read and not yet answered, by id ("7" and 7 are one id, as in the SDK)."""

    def __init__(self) -> None:
        self.ids: Counter[str] = Counter()
        self.settled = 0  # how many were answered or cancelled, in all
        self.none_left = asyncio.Event()
        self.none_left.set()

    def read(self, item: Any) -> None:
        if not isinstance(item, SessionMessage):
            return
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            self.ids[str(message.id)] += 1
            self.none_left.clear()
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self.settle(cancelled_request_id_from_params(message.params))

    def written(self, item: Any) -> None:
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCResponse | types.JSONRPCError):
            self.settle(item.message.id)

    def settle(self, request_id: Any) -> None:
        key = str(request_id)
        self.settled += 1
        if self.ids[key] > 1:
            self.ids[key] -= 1
        else:
            self.ids.pop(key, None)
        if not self.ids:
            self.none_left.set()


class Wrapped:
    """A stream of the SDK's, with everything but what a subclass adds left to it."""

    def __init__(self, stream: Any, unanswered: Unanswered) -> None:
        self.stream, self.unanswered = stream, unanswered

    def __getattr__(self, name: str) -> Any:  # receive, close, last_context, ...
        return getattr(self.stream, name)

    async def __aenter__(self) -> Any:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self.stream.__aexit__(*exc)


class HeldEnd(Wrapped):
    """The read stream, whose end waits for ``Unanswered.none_left`` (``wait_for_answers``). A line
    that is not a JSON-RPC message is answered here with its error (the SDK drops it unanswered)."""

    def __init__(
        self, stream: Any, unanswered: Unanswered, limit_s: float, writes: Any, told: OnUnreadable | None
    ) -> None:
        super().__init__(stream, unanswered)
        self.limit_s, self.writes, self.told = limit_s, writes, told

    def __aiter__(self) -> HeldEnd:
        return self

    async def __anext__(self) -> Any:
        while True:
            try:
                item = await self.stream.__anext__()
            except StopAsyncIteration:
                await self.wait_for_answers()
                raise
            answer = unreadable(item) if isinstance(item, Exception) else self.in_use(item)
            if answer is None:
                self.unanswered.read(item)
                return item
            if self.told is not None:
                self.told(answer.error.code, answer.error.message, line_of(item))
            await self.writes.send(SessionMessage(answer))  # not counted: the request running keeps its id

    def in_use(self, item: Any) -> types.JSONRPCError | None:
        """The refusal of a request whose id is that of a request read and not yet answered, or None."""
        message = item.message if isinstance(item, SessionMessage) else None
        if not isinstance(message, types.JSONRPCRequest) or str(message.id) not in self.unanswered.ids:
            return None
        log.warning("an MCP request whose id %r is in use by a request still running was refused", message.id)
        error = types.ErrorData(code=types.INVALID_REQUEST, message=id_in_use(message.id), data=ID_IN_USE)
        return types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)

    async def wait_for_answers(self) -> None:
        """Until every request read is settled, or ``limit_s`` pass with none settled."""
        while True:
            settled = self.unanswered.settled
            try:
                await asyncio.wait_for(self.unanswered.none_left.wait(), self.limit_s)
                return
            except TimeoutError:
                if self.unanswered.settled == settled:
                    left = sorted(self.unanswered.ids)
                    log.warning("stdin ended; requests %s, none answered in %g s, end with it", left, self.limit_s)
                    return


class CountedWrites(Wrapped):
    """The write stream, counting the answers written."""

    async def send(self, item: Any) -> None:
        await self.stream.send(item)
        self.unanswered.written(item)


def unreadable(exc: Exception) -> types.JSONRPCError:
    """The answer to a line that is not a JSON-RPC message: a parse error (not JSON), or an invalid
    request with the id it gave, if any (JSON of another shape)."""
    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    if not errors or any(e["type"] == "json_invalid" for e in errors):
        said = errors[0]["msg"] if errors else str(exc)
        log.warning("an MCP line that is not JSON was answered with a parse error: %s", said)
        error = types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {said}", data=MALFORMED_JSON)
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    given: dict = next((e["input"] for e in errors if isinstance(e.get("input"), dict)), {})  # the message itself
    request_id = given.get("id")
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        request_id = None
    message = SHAPELESS
    log.warning("an MCP message of no JSON-RPC shape (id %r) was answered with an invalid request error", request_id)
    error = types.ErrorData(code=types.INVALID_REQUEST, message=message, data=SHAPE)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def line_of(exc: Any) -> str:
    """The start of the line a read error (or a refused message) is about, as far as the error has it."""
    if isinstance(exc, SessionMessage):
        return exc.message.model_dump_json(by_alias=True, exclude_unset=True)[:LINE_START]
    inputs = [e.get("input") for e in exc.errors(include_url=False)] if isinstance(exc, ValidationError) else []
    given = next((i for i in inputs if isinstance(i, dict)), None) or next(
        (i for i in inputs if isinstance(i, str)), None
    )
    if given is None:  # JSON of no message's shape ([1, 2], 42): the input is all there is
        given = inputs[0] if inputs else ""
    text = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False, default=repr)
    return text.rstrip("\r\n")[:LINE_START]


def answer_before_end(
    read_stream: Any, write_stream: Any, limit_s: float = ANSWER_WITHIN_S, told: OnUnreadable | None = None
) -> tuple[Any, Any]:
    """``stdio_server()``'s two streams, with the read stream's end held back until every request
    read has been answered (or cancelled), as long as one is every ``limit_s``; a line that is not
    a JSON-RPC message gets its error, and ``told``."""
    unanswered = Unanswered()
    return HeldEnd(read_stream, unanswered, limit_s, write_stream, told), CountedWrites(write_stream, unanswered)
