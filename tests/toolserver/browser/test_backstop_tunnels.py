"""What the backstop makes of a tunnel (``CONNECT``) by what is sent in it: plain HTTP (a
``ws://`` WebSocket), TLS begun late, or nothing at all."""

from __future__ import annotations

import asyncio
import ssl

from toolserver.browser.backstop import READ_BOUND_S, REFUSAL, Backstop


async def tunnel(port: int, target: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    return reader, writer


async def with_backstop(client) -> tuple[list[tuple[str, str]], list[str]]:
    reports: list[tuple[str, str]] = []
    idle: list[str] = []
    backstop = await Backstop(lambda method, url: reports.append((method, url))).start()
    backstop.idle = idle.append
    try:
        await client(int(backstop.url.rsplit(":", 1)[1]))
        await asyncio.sleep(0.1)
    finally:
        await backstop.close()
    return reports, idle


async def test_a_plain_websocket_handshake_in_a_tunnel_is_reported_with_its_url():
    # The backstop began TLS on it: the handshake failed, and only the bare CONNECT was reported.
    async def client(port: int) -> None:
        reader, writer = await tunnel(port, "shop.sandbox.example:80")
        writer.write(b"GET /socket?d=1 HTTP/1.1\r\nHost: shop.sandbox.example\r\nUpgrade: websocket\r\n\r\n")
        assert await reader.read() == REFUSAL
        writer.close()

    assert await with_backstop(client) == ([("GET", "ws://shop.sandbox.example/socket?d=1")], [])


async def test_a_tls_handshake_slower_than_the_read_bound_is_still_read():
    # A handshake over READ_BOUND_S (a loaded machine) made the request a bare CONNECT, and one to a
    # mirrored host was then dropped as Chromium's preconnect: a POST as the page unloads, lost.
    async def client(port: int) -> None:
        reader, writer = await tunnel(port, "shop.sandbox.example:443")
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = context.wrap_bio(incoming, outgoing, server_hostname="shop.sandbox.example")
        while True:  # the handshake: its client hello at once
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                writer.write(outgoing.read())
                incoming.write(await asyncio.wait_for(reader.read(65536), 5))
        await asyncio.sleep(READ_BOUND_S + 0.5)  # its end (the client's Finished, sent with the request) late
        tls.write(b"POST /order HTTP/1.1\r\nHost: shop.sandbox.example\r\nContent-Length: 0\r\n\r\n")
        writer.write(outgoing.read())
        reply = b""
        while not reply.endswith(REFUSAL):  # the answer, inside TLS
            try:
                reply += tls.read(65536)
            except ssl.SSLWantReadError:
                data = await asyncio.wait_for(reader.read(65536), 5)
                if not data:
                    break  # closed without an answer in TLS
                incoming.write(data)
        writer.close()

    assert await with_backstop(client) == ([("POST", "https://shop.sandbox.example/order")], [])


async def test_a_tunnel_with_nothing_in_it_is_idle_not_a_request():
    async def client(port: int) -> None:
        reader, writer = await tunnel(port, "shop.sandbox.example:443")
        await reader.read()  # the backstop closes it after READ_BOUND_S
        writer.close()

    assert await with_backstop(client) == ([], ["shop.sandbox.example:443"])
