"""stdin and stdout as asyncio pipes for the MCP stdio transport.

The SDK's ``stdio_server()`` wraps the standard streams in anyio file objects, which hand each
line read and each write and flush to a worker thread: three thread hand-offs per tool call, on
the path of every call. ``stdio_pipes`` gives ``stdio_server`` the same streams read and written
on the event loop itself. Like the SDK, it takes the wire off fds 0 and 1 while serving (fd 0
reads nothing, fd 1 writes to stderr), so stray output of a handler or a child never lands on it.

A pipe, a socket or a terminal is watched by the event loop; a regular file (``< calls.jsonl``,
``> answers.jsonl``) or another device (``/dev/null``), which never makes a read or write wait,
is read in a thread and written at once. The SDK's own streams, which read stdin in a thread,
held a stop signal until stdin closed (a terminal's Ctrl-C). For anything else (no stream at
all) ``stdio_pipes`` gives ``None``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
from collections.abc import AsyncIterator, Callable

from toolserver.transports.messages import INVALID_ENCODING, not_utf8, refusal_of

log = logging.getLogger("toolserver.transports.mcp")
PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC
# Told of each line refused, with its JSON-RPC error code, the error's message and the line (its start).
OnUnreadable = Callable[[int, str, str], None]
LINE_START = 200  # characters of a refused line told to ``OnUnreadable``


def _kind(fd: int) -> str | None:
    """``"watched"``: a pipe, socket or terminal (the event loop waits on it); ``"file"``: a regular
    file, or a device that is no terminal (``/dev/null``: epoll refuses to watch it, and a read
    of it never waits); None: neither, or no such stream."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd)):
        return "watched"
    return "file" if stat.S_ISREG(mode) or stat.S_ISCHR(mode) else None


class PipeLines:
    """The lines of the wire, as the SDK reads them (``async for line in stdin``). A line that is
    not UTF-8 is answered with a JSON-RPC parse error, one longer than the limit with an invalid
    request error whose ``data.type`` is ``body_too_large`` (as over HTTP), both with id null (the
    id is not read), and skipped; so is a message the SDK would read wrongly, or nested deeper than
    ``max_depth`` (as over HTTP), with an invalid request error (``toolserver.transports.messages``)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        limit: int,
        writer: PipeWriter,
        told: OnUnreadable | None = None,
        max_depth: int | None = None,
    ) -> None:
        self.reader, self.limit, self.writer, self.told, self.max_depth = reader, limit, writer, told, max_depth

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:  # the wire closed: its last line, if any
                line = end.partial
            except asyncio.LimitOverrunError:
                start = await self.skip_line()
                said = f"the message is larger than {self.limit} bytes (max_body_bytes)"  # as over HTTP: 413's
                await self.refuse(said, start, INVALID_REQUEST, data={"type": "body_too_large"})
                continue
            if not line:
                raise StopAsyncIteration
            if (bad := not_utf8(line)) is not None:
                await self.refuse(bad, line, data=INVALID_ENCODING)
                continue
            text = line.decode("utf-8")
            refused = refusal_of(text, self.max_depth)  # what the SDK would read wrongly
            if refused is None:
                return text
            await self.refuse(refused.message, line, refused.code, refused.request_id, refused.data)

    async def refuse(
        self, message: str, line: bytes, code: int = PARSE_ERROR, request_id: object = None, data: dict | None = None
    ) -> None:
        """Answer a line that cannot be read with a JSON-RPC error (a parse error, id null, unless
        ``code`` and ``request_id`` say otherwise; ``data`` if given)."""
        log.warning("an MCP message was refused: %s", message)
        if self.told is not None:
            self.told(code, message, line.rstrip(b"\r\n").decode("utf-8", "backslashreplace")[:LINE_START])
        error = {"code": code, "message": message} | ({"data": data} if data else {})
        await self.writer.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n")
        await self.writer.flush()

    async def skip_line(self) -> bytes:
        """Drop the rest of the line being read, through its newline, however long it is; returns
        its first bytes."""
        start = b""
        while True:
            try:
                rest = await self.reader.readuntil(b"\n")
                return start or rest[: LINE_START * 4]
            except asyncio.LimitOverrunError as over:  # no newline within the limit yet: drop what is there
                dropped = await self.reader.readexactly(over.consumed)
                start = start or dropped[: LINE_START * 4]
            except asyncio.IncompleteReadError:  # the wire closed mid-line
                return start


class PipeWriter:
    """The wire's write side, as the SDK writes it (``await stdout.write(text)``, ``await stdout.flush()``).
    Once the client has closed its end, what is written is dropped: the client left (the run ends
    when stdin does), which is no error of the server's. ``file``: stdout is a regular file,
    written at once (a file write never waits on a reader)."""

    def __init__(self, writer: asyncio.StreamWriter | None, file: int | None = None) -> None:
        self.writer, self.file = writer, file
        self.gone = False

    async def write(self, text: str) -> None:
        if self.gone:
            return
        if self.file is not None:
            data = memoryview(text.encode("utf-8"))
            while data:
                data = data[os.write(self.file, data) :]
        elif self.writer is not None:
            self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        if self.gone or self.writer is None:
            return
        try:
            await self.writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            self.gone = True
            log.info("the MCP client closed its end of stdout; answers still due are dropped")


@contextlib.asynccontextmanager
async def stdio_pipes(
    max_line_bytes: int, told: OnUnreadable | None = None, max_depth: int | None = None
) -> AsyncIterator[tuple[PipeLines, PipeWriter] | None]:
    """The standard streams read and written on the event loop, or None when either is neither a
    pipe, socket, device nor regular file (``_kind``). A line longer than ``max_line_bytes``, not UTF-8,
    or nested deeper than ``max_depth`` is refused (``PipeLines``), and ``told``."""
    kinds = _kind(0), _kind(1)
    if None in kinds:
        yield None
        return
    loop = asyncio.get_running_loop()
    wire = os.dup(0), os.dup(1)  # put back on fds 0 and 1 at the end
    blocking = [os.get_blocking(fd) for fd in wire]  # a terminal's mode is shared with the shell: restored
    reader = asyncio.StreamReader(limit=max_line_bytes)
    closing: list[Callable[[], object]] = []
    if kinds[0] == "watched":
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", buffering=0)
        )
        closing.append(read_transport.close)
    else:
        closing.append(asyncio.ensure_future(read_file(os.fdopen(os.dup(0), "rb", buffering=0), reader)).cancel)
    if kinds[1] == "watched":
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(os.dup(1), "wb", buffering=0)
        )
        closing.append(write_transport.close)
        writer = PipeWriter(asyncio.StreamWriter(write_transport, protocol, None, loop))
    else:
        writer = PipeWriter(None, file=wire[1])
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)
    try:
        yield PipeLines(reader, max_line_bytes, writer, told, max_depth), writer
    finally:
        for close in closing:
            close()
        for fd, saved in enumerate(wire):
            os.dup2(saved, fd)
            os.set_blocking(fd, blocking[fd])
            os.close(saved)


async def read_file(file, reader: asyncio.StreamReader) -> None:
    """Feed ``reader`` from a regular file, read in a thread (a file read never waits for long)."""
    with file:
        while chunk := await asyncio.to_thread(file.read, 1 << 16):
            reader.feed_data(chunk)
    reader.feed_eof()
