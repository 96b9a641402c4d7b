"""The backstop proxy on its own (``toolserver.browser.backstop``): what reaches it through a
tunnel is reported with its method and URL, however quickly the client speaks."""

from __future__ import annotations

import asyncio
import ssl

from toolserver.browser.backstop import REFUSAL, Backstop


async def post_through_tunnel(port: int) -> bytes:
    """CONNECT, then TLS the moment the proxy answers (as Chromium does: its first bytes can be
    on their way before the proxy has turned to TLS), then a POST inside."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"CONNECT shop.sandbox.example:443 HTTP/1.1\r\nHost: shop.sandbox.example:443\r\n\r\n")
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="shop.sandbox.example")
    while True:  # the handshake, its first bytes written at once
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            writer.write(outgoing.read())
            data = await asyncio.wait_for(reader.read(65536), 5)
            assert data, "the proxy closed the tunnel in the middle of the handshake"
            incoming.write(data)
    tls.write(b"POST /order HTTP/1.1\r\nHost: shop.sandbox.example\r\nContent-Length: 0\r\n\r\n")
    writer.write(outgoing.read())
    reply = b""
    while True:  # the answer, until the proxy ends TLS
        try:
            chunk = tls.read(65536)
        except ssl.SSLWantReadError:
            data = await asyncio.wait_for(reader.read(65536), 5)
            assert data, "the proxy closed the tunnel without ending TLS"
            incoming.write(data)
            continue
        if not chunk:
            break
        reply += chunk
    writer.close()
    return reply


async def test_a_request_sent_the_moment_the_tunnel_opens_is_reported():
    # The first bytes of TLS reached the proxy before it had turned the connection to TLS: its
    # plain reader kept them, the handshake never ended, and after 2 s the request was a bare
    # CONNECT (a page's POST as it unloaded was lost, now and then, on a busy machine).
    reports: list[tuple[str, str]] = []
    backstop = await Backstop(lambda method, url: reports.append((method, url))).start()
    port = int(backstop.url.rsplit(":", 1)[1])
    try:
        for _ in range(5):
            assert await post_through_tunnel(port) == REFUSAL
    finally:
        await backstop.close()
    assert reports == [("POST", "https://shop.sandbox.example/order")] * 5
