"""What a page tries past the router that the injected script refuses (WebTransport, service
workers registered through the prototype): refused in the page, and each try recorded as a
``blocked_request``, as the offline guarantee promises."""

from __future__ import annotations

import asyncio

import pytest_asyncio

from tests.support.hostile import HOSTILE, blocked_requests, build_hostile_mirror, hostile_run, start_hostile
from toolserver.run import Run


@pytest_asyncio.fixture(scope="module")
def hostile_root(tmp_path_factory):
    return build_hostile_mirror(tmp_path_factory.mktemp("hostile"))


class UdpCounter(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.packets = 0

    def datagram_received(self, data, addr) -> None:
        self.packets += 1


async def tries_written(run: Run, *who: str) -> str:
    """The page's text once it has written the outcome of each try (at most 5 s)."""
    for _ in range(50):
        reply = await run.call("browser_snapshot", {})
        assert reply["ok"], reply
        text = reply["result"]["snapshot"]
        if all(f"| {name} " in text for name in who):
            return text
        await asyncio.sleep(0.1)
    return text


async def test_webtransport_is_refused_in_the_page_and_each_try_is_a_blocked_request(sandbox, hostile_root):
    # Chromium failed it at the proxy (ERR_TUNNEL_CONNECTION_FAILED), and the trace said nothing.
    transport, listener = await asyncio.get_running_loop().create_datagram_endpoint(
        UdpCounter, local_addr=("127.0.0.1", 0)
    )
    port = transport.get_extra_info("sockname")[1]
    try:
        run = hostile_run(sandbox, hostile_root, "/webtransport")
        await start_hostile(run, f"/webtransport#{port}")
        text = await tries_written(run, "page", "frame")
        await run.close()
        assert listener.packets == 0
    finally:
        transport.close()
    assert "page threw NotAllowedError" in text and "frame threw NotAllowedError" in text, text
    url = f"https://127.0.0.1:{port}/wt"
    assert [(b["resource_type"], b["reason"], b["url"]) for b in blocked_requests(run)] == [
        ("webtransport", "webtransport", url)
    ] * 2


async def test_a_service_worker_registered_through_the_prototype_is_refused_and_recorded(sandbox, hostile_root):
    # navigator.serviceWorker's own register recorded the try; the prototype's (the page's, or an
    # iframe's) was Chromium's, which Playwright's blocking made resolve to undefined, unrecorded.
    run = hostile_run(sandbox, hostile_root, "/sw-prototype")
    await start_hostile(run, "/sw-prototype")
    text = await tries_written(run, "prototype", "frame", "instance")
    await run.close()
    for who in ("prototype", "frame", "instance"):
        assert f"{who} rejected SecurityError" in text, text
    refused = sorted((b["reason"], b["url"]) for b in blocked_requests(run))
    assert refused == [("service_worker", f"{HOSTILE}/sw-{who}.js") for who in ("frame", "instance", "prototype")], (
        refused
    )
