"""``run_app`` binds its port after the app started (the browser's start takes seconds): its
``ready`` is called only once the port is bound, and a port taken meanwhile is ``CannotListen``
with the app stopped again, not a traceback after a "ready" line that was never true."""

from __future__ import annotations

import asyncio
import errno
import socket

import pytest
from aiohttp import web

from tests.support.serve import free_port
from toolserver.transports.serving import CannotListen, run_app


def app_noting(events: list[str], on_start=None) -> web.Application:
    app = web.Application()

    async def started(app: web.Application) -> None:
        if on_start is not None:
            on_start()
        events.append("started")

    async def cleaned(app: web.Application) -> None:
        events.append("cleaned")

    app.on_startup.append(started)
    app.on_cleanup.append(cleaned)
    return app


def test_ready_comes_once_the_port_is_bound():
    port, events = free_port(), []

    def ready() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=2):  # bound and listening now
            events.append("ready")
        raise web.GracefulExit  # stop serving

    try:
        run_app(app_noting(events), host="127.0.0.1", port=port, ready=ready)
    finally:
        asyncio.set_event_loop(None)
    assert events == ["started", "ready", "cleaned"]


def test_a_port_taken_while_the_app_starts_is_cannot_listen_and_the_app_stops():
    port, events = free_port(), []
    with socket.socket() as taker:

        def take() -> None:  # another process takes the port while the browser starts
            taker.bind(("127.0.0.1", port))
            taker.listen()

        with pytest.raises(CannotListen) as refused:
            try:
                run_app(app_noting(events, take), host="127.0.0.1", port=port, ready=lambda: events.append("ready"))
            finally:
                asyncio.set_event_loop(None)
    assert refused.value.errno == errno.EADDRINUSE and "in use" in refused.value.strerror
    assert events == ["started", "cleaned"]
