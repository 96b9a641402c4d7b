"""The backstop: a loopback listener the sandbox binds itself (an ephemeral port it owns) and
gives Chromium as its proxy, so that a request that escapes request interception reaches no
network and is not lost.

Playwright's ``context.route`` does not see every request a page causes: a shared worker's
fetch and WebSockets opened inside workers go straight to the network stack, which sends them
to the proxy. Each session's context has a backstop of its own, which records every connection
as a ``blocked_request`` of that session (``reason: escaped_interception``); the browser's own
backstop (its launch-time proxy) catches what the browser does outside any context (``seen``
counts it, ``targets`` keeps the first ones; Chromium's own background requests are sent
nowhere by its flags, ``toolserver.browser.chromium``). Every connection is answered ``403``
and closed: no byte is forwarded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

log = logging.getLogger("toolserver.browser")

READ_BOUND_S = 2.0  # the request line must arrive within this (a silent client is just closed)
MAX_LINE = 8192
_BODY = b"offline sandbox: this request is refused"
REFUSAL = b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
REFUSAL += b"Content-Length: %d\r\n\r\n%s" % (len(_BODY), _BODY)

Report = Callable[[str, str], None]  # (method, url) of a refused connection


class Backstop:
    """An HTTP proxy on 127.0.0.1 that forwards nothing: every request is reported and refused."""

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self.seen = 0  # connections refused so far
        self.targets: list[str] = []  # the first few "METHOD target" refused without a report
        self.server: asyncio.Server | None = None
        self.url = ""

    async def start(self) -> Backstop:
        self.server = await asyncio.start_server(self._refuse, "127.0.0.1", 0, limit=MAX_LINE)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), READ_BOUND_S)
            self.server = None

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.seen += 1
        try:
            line = await asyncio.wait_for(reader.readline(), READ_BOUND_S)
            method, url = request_target(line)
            if self.report is not None:
                self.report(method, url)
            else:
                if len(self.targets) < 100:
                    self.targets.append(f"{method} {url}")
                log.info("the browser's backstop proxy refused %s %s", method, url)
            writer.write(REFUSAL)
            await asyncio.wait_for(writer.drain(), READ_BOUND_S)
        except (TimeoutError, OSError, ValueError, asyncio.LimitOverrunError, asyncio.IncompleteReadError):
            pass  # a silent, slow or garbled client: closed without a word
        finally:
            writer.close()


def request_target(line: bytes) -> tuple[str, str]:
    """``CONNECT host:443 HTTP/1.1`` -> ("CONNECT", "host:443"); ``GET http://h/p HTTP/1.1`` ->
    ("GET", "http://h/p"); anything else -> ("?", its text, shortened)."""
    parts = line.decode("latin-1").strip().split(" ")
    if len(parts) == 3 and parts[2].startswith("HTTP/"):
        return parts[0][:16], parts[1][:2048]
    return "?", line.decode("latin-1", "replace").strip()[:200]
