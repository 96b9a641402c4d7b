"""A ``Sandbox`` with its own config for one test: the session's shared config with some
fields changed, its own runs, limits and registry, on the shared warm browser (or, for the
fields the browser host itself reads, on a Chromium of its own); and an HTTP test client for
any sandbox. Nothing is monkeypatched: the shared sandbox is never touched."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from toolserver.api import Sandbox
from toolserver.registry import ToolRegistry
from toolserver.transports.http import create_app
from toolserver.transports.serving import AppRunner

# Read by toolserver.browser.BrowserHost (when it is made, or for the whole browser), so a
# sandbox sharing another's host cannot have its own value. A run's own mirror: create_run(mirror_roots=...).
HOST_FIELDS = frozenset(
    {"chromium", "max_profiles", "max_profile_bytes", "max_renderer_memory_mb", "mirror_roots", "shutdown_timeout_s"}
)


@asynccontextmanager
async def sandbox_with(
    shared: Sandbox, *, registry: ToolRegistry | None = None, own_browser: bool = False, **changes
) -> AsyncIterator[Sandbox]:
    """A sandbox wired as ``shared`` (its pack policies and tasks) with ``changes`` to its config,
    on ``shared``'s warm browser unless ``own_browser``; its runs end when the block ends."""
    held = sorted(HOST_FIELDS & set(changes))
    if held and not own_browser:
        raise ValueError(
            f"{held} belong to the browser host, which this sandbox would share: pass own_browser=True "
            "(a Chromium of its own), or give a run its own mirror with create_run(mirror_roots=...)"
        )
    config = dataclasses.replace(shared.config, **changes)
    host = None if own_browser else shared.host
    async with Sandbox(config, policies=shared.policies, tasks=shared.tasks, registry=registry, host=host) as own:
        yield own


class ServedTestServer(TestServer):
    """aiohttp's test server on the runner ``sandbox serve`` uses (a request that is not readable
    HTTP is answered in JSON)."""

    async def _make_runner(self, **kwargs: Any) -> AppRunner:
        return AppRunner(self.app, **kwargs)


@asynccontextmanager
async def http_client(sandbox: Sandbox) -> AsyncIterator[TestClient]:
    """A real aiohttp server on a loopback port for ``sandbox`` (its config's HTTP limits and
    guards), served as ``sandbox serve`` serves it."""
    async with TestClient(ServedTestServer(create_app(sandbox=sandbox), host="127.0.0.1")) as client:
        yield client
