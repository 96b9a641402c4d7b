"""The end of stdin waits for the requests read (``toolserver.transports.stdin_end``), on the
SDK's own message types and anyio streams. The whole server is in test_mcp.py's stdio tests."""

from __future__ import annotations

import asyncio
import logging

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from toolserver.transports.stdin_end import answer_before_end


def request(request_id: int | str) -> SessionMessage:
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/list"))


def answer(request_id: int | str) -> SessionMessage:
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={}))


def cancelled(request_id: int | str) -> SessionMessage:
    params = {"requestId": request_id}
    return SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params))


async def streams(*incoming: SessionMessage, limit_s: float = 30.0):
    """The held read stream over ``incoming`` (then its end), the counted write stream, and
    what was written to it."""
    sender, receiver = anyio.create_memory_object_stream(len(incoming))
    for item in incoming:
        sender.send_nowait(item)
    sender.close()
    out_sender, out_receiver = anyio.create_memory_object_stream(10)
    read, write = answer_before_end(receiver, out_sender, limit_s)
    return read, write, out_receiver


async def read_all(read) -> list:
    async with read:
        return [item async for item in read]


async def test_the_end_waits_until_every_request_read_is_answered():
    read, write, _ = await streams(request(1), request("2"))
    reading = asyncio.ensure_future(read_all(read))
    await asyncio.sleep(0.1)
    assert not reading.done()  # both read, neither answered
    await write.send(answer(1))
    await asyncio.sleep(0.1)
    assert not reading.done()
    await write.send(answer(2))  # "2" and 2 are one id, as in the SDK
    assert len(await asyncio.wait_for(reading, 5)) == 2


async def test_a_request_the_client_cancelled_does_not_hold_the_end():
    read, _, _ = await streams(request(7), cancelled(7))
    assert len(await asyncio.wait_for(read_all(read), 5)) == 2


async def test_a_request_still_unanswered_after_the_limit_ends_with_the_connection(caplog):
    read, write, _ = await streams(request(1), request(2), limit_s=0.5)
    with caplog.at_level(logging.WARNING, "toolserver.transports.mcp"):
        reading = asyncio.ensure_future(read_all(read))
        await asyncio.sleep(0.1)
        await write.send(answer(1))
        assert len(await asyncio.wait_for(reading, 5)) == 2
    assert "requests ['2'], none answered in 0.5 s, end with it" in caplog.text


async def test_answers_that_keep_coming_hold_the_end_longer_than_the_limit():
    # A file of slow calls: each is answered within the limit, all of them take longer.
    read, write, _ = await streams(*map(request, range(1, 5)), limit_s=0.3)
    reading = asyncio.ensure_future(read_all(read))
    for number in range(1, 5):
        await asyncio.sleep(0.2)
        assert not reading.done()
        await write.send(answer(number))
    assert len(await asyncio.wait_for(reading, 5)) == 4  # after 0.8 s in all


async def test_no_request_no_wait_and_the_streams_are_the_sdks_otherwise():
    read, write, written = await streams(answer(5))  # an answer to a request of ours: not a request
    assert len(await asyncio.wait_for(read_all(read), 5)) == 1
    async with write:
        await write.send(answer(9))  # an answer to no request read counts for nothing
    assert [item.message.id async for item in written] == [9]
