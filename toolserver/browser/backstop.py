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

An https request reaches a proxy as ``CONNECT host:443``, with its method and path inside TLS.
The backstop answers the CONNECT and takes the TLS itself, with a certificate it made for itself
(Chromium is told to accept that key, and no other: ``backstop_spki``), so it reports the request
inside (``POST https://host/path``): a page's POST as it unloads, which escapes interception, is
then a state change like any other. Chromium sends a worker's ``ws://`` WebSocket (and any plain
http request) through the proxy as ``CONNECT host:80`` too, then speaks plain HTTP in it: the
backstop looks at the first byte the client sends after the ``200`` (TLS begins with 0x16) and
reads such a request plainly (``GET ws://host/path``). A tunnel with no request in it (Chromium
connecting ahead of a navigation: nothing sent, or TLS and then nothing) goes to ``idle`` when it
is set; one whose TLS failed or timed out is reported as the bare ``CONNECT``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import functools
import hashlib
import logging
import os
import socket
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import cast

log = logging.getLogger("toolserver.browser")

READ_BOUND_S = 2.0  # the request line must arrive within this (a silent client is just closed)
HANDSHAKE_BOUND_S = 10.0  # a TLS handshake on a loaded machine: slow, but a request may follow it
TLS_RECORD = 0x16  # the first byte of a TLS handshake record
MAX_LINE = 8192
_BODY = b"offline sandbox: this request is refused"
REFUSAL = b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
REFUSAL += b"Content-Length: %d\r\n\r\n%s" % (len(_BODY), _BODY)

Report = Callable[[str, str], None]  # (method, url) of a refused request, or ("CONNECT", "host:port")
Idle = Callable[[str], None]  # "host:port" of a tunnel no request was sent in


class _Idle(Exception):
    """The tunnel stayed empty: no request came in it."""


class Backstop:
    """An HTTP proxy on 127.0.0.1 that forwards nothing: every request is reported and refused."""

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self.idle: Idle | None = None  # a tunnel with no request in it goes here, when set (else reported)
        self.tls = backstop_tls()
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
            method, url = request_target(await read_line(reader))
            if method == "CONNECT":
                try:
                    method, url = await self._inside(reader, writer, url)
                except _Idle:
                    if self.idle is not None:
                        return self.idle(url)
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

    async def _inside(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: str) -> tuple[str, str]:
        """The request inside a CONNECT to ``target`` (``host:port``): its method and URL (TLS or
        plain), or the CONNECT itself when it cannot be read. ``_Idle``: no request came in it."""
        host, _, port = target.rpartition(":")
        try:
            while (await asyncio.wait_for(reader.readline(), READ_BOUND_S)).strip():
                pass  # the CONNECT's own headers
            # The client starts TLS the moment it reads the 200: its first bytes must wait in the
            # socket for TLS to take them, not be read by the plain reader, which would keep them.
            cast(asyncio.Transport, writer.transport).pause_reading()  # a socket: it reads too
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            first = await first_byte(writer)
            if not first:
                raise _Idle
            if first[0] != TLS_RECORD:  # plain HTTP in the tunnel: a ws:// WebSocket, an http request
                cast(asyncio.Transport, writer.transport).resume_reading()
                return await request_in(reader, "http", host, port)
            async with asyncio.timeout(HANDSHAKE_BOUND_S):
                await writer.start_tls(self.tls)  # reads again once TLS has the connection
        except (
            TimeoutError,
            OSError,
            ValueError,
            ssl.SSLError,
            asyncio.LimitOverrunError,
            asyncio.IncompleteReadError,
        ):
            return "CONNECT", target
        try:
            return await request_in(reader, "https", host, port)
        except (TimeoutError, asyncio.IncompleteReadError):
            raise _Idle from None  # TLS, and then nothing: Chromium's connection ahead of a navigation
        except (OSError, ValueError, ssl.SSLError, asyncio.LimitOverrunError):
            return "CONNECT", target


async def first_byte(writer: asyncio.StreamWriter) -> bytes:
    """The first byte the client sends, left in the socket (a peek, on a duplicate of its
    descriptor: the transport, paused, reads nothing meanwhile); empty when none comes within
    ``READ_BOUND_S`` or the client closed."""
    loop = asyncio.get_running_loop()
    peeker = socket.socket(fileno=os.dup(writer.get_extra_info("socket").fileno()))
    try:
        ready: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(peeker.fileno(), readable)
        try:
            async with asyncio.timeout(READ_BOUND_S):
                await ready
        except TimeoutError:
            return b""
        finally:
            loop.remove_reader(peeker.fileno())
        return peeker.recv(1, socket.MSG_PEEK)
    finally:
        peeker.close()  # the duplicate only: the connection stays open


async def request_in(reader: asyncio.StreamReader, scheme: str, host: str, port: str) -> tuple[str, str]:
    """The request in a tunnel to ``host:port`` (``scheme``: TLS or not): its method and URL,
    ``ws://`` or ``wss://`` for a WebSocket's handshake (its ``Upgrade: websocket`` header); the
    bare CONNECT when it is no request."""
    method, path = request_target(await read_line(reader))
    if method == "?" or not path.startswith("/"):
        return "CONNECT", f"{host}:{port}"
    websocket = False
    with contextlib.suppress(TimeoutError, ValueError, asyncio.LimitOverrunError, asyncio.IncompleteReadError):
        async with asyncio.timeout(READ_BOUND_S):
            for _ in range(100):  # its headers, as far as they come: the request is reported anyway
                line = (await reader.readline()).strip().lower()
                if not line:
                    break
                websocket = websocket or line.replace(b" ", b"") == b"upgrade:websocket"
    default = "443" if scheme == "https" else "80"
    scheme = {"http": "ws", "https": "wss"}[scheme] if websocket else scheme
    return method, f"{scheme}://{host}{'' if port == default else ':' + port}{path}"


def backstop_tls() -> ssl.SSLContext:
    """The backstop's TLS: a self-signed certificate made once per process."""
    return _certificate()[0]


def backstop_spki() -> str:
    """The certificate's public key as Chromium's ``--ignore-certificate-errors-spki-list`` takes
    it (base64 of the SHA-256 of its SubjectPublicKeyInfo): the browser accepts it, and no other."""
    return _certificate()[1]


@functools.cache
def _certificate() -> tuple[ssl.SSLContext, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())  # an EC key, a day long: made in milliseconds
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sandbox backstop")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory() as folder:  # ssl loads a chain from files only
        chain = Path(folder) / "chain.pem"
        chain.write_bytes(
            certificate.public_bytes(serialization.Encoding.PEM)
            + key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        context.load_cert_chain(chain)
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return context, base64.b64encode(hashlib.sha256(spki).digest()).decode()


async def read_line(reader: asyncio.StreamReader) -> bytes:
    """A request line, within ``READ_BOUND_S``; one longer than ``MAX_LINE`` (a URL of kilobytes)
    is read whole and given as its method and the start of its URL, so that it is still reported."""
    async with asyncio.timeout(READ_BOUND_S):
        try:
            return await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as over:
            start = await reader.readexactly(over.consumed)
        while True:  # the rest of the line, read in pieces the reader can hold
            try:
                line = await reader.readuntil(b"\n")
                break
            except asyncio.LimitOverrunError as more:
                await reader.readexactly(more.consumed)
    whole = (start + line).rstrip()  # at most twice the limit: the reader buffers no more
    method, _, target = whole.partition(b" ")
    return method + b" " + target.split(b" ")[0] + b" " + whole.rsplit(b" ", 1)[-1]


def request_target(line: bytes) -> tuple[str, str]:
    """``CONNECT host:443 HTTP/1.1`` -> ("CONNECT", "host:443"); ``GET http://h/p HTTP/1.1`` ->
    ("GET", "http://h/p"); anything else -> ("?", its text, shortened)."""
    parts = line.decode("latin-1").strip().split(" ")
    if len(parts) == 3 and parts[2].startswith("HTTP/"):
        return parts[0][:16], parts[1][:2048]
    return "?", line.decode("latin-1", "replace").strip()[:200]
