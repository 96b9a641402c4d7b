"""Shared fixtures: one warm sandbox (real Chromium) for the session, on the test site's mirror
built at start-up; a real aiohttp tool server on loopback; a canary server that must never
receive a request; a plain Chromium; and sandboxes with their own config. The helpers they use
live in ``tests/support/``."""

from __future__ import annotations

import functools

import pytest
import pytest_asyncio
from playwright.async_api import async_playwright

from sandbox import MIRRORS_DIR
from sandbox.evaluation.packs import pack_policy
from sandbox.runner.wiring import PackTasks
from tests.support.canary import Canary
from tests.support.chromium import PLAIN_ARGS
from tests.support.sandboxes import http_client, sandbox_with
from tests.support.site import build_test_mirror
from toolserver.api import Sandbox
from toolserver.browser.chromium import resolve_chromium
from toolserver.config import ServerConfig


@pytest_asyncio.fixture(scope="session")
async def canary() -> Canary:
    server = Canary()
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture(scope="session")
async def sandbox(tmp_path_factory, canary) -> Sandbox:
    root = build_test_mirror(tmp_path_factory.mktemp("mirror"), canary.url)
    config = ServerConfig(mirror_roots=(root, MIRRORS_DIR), fallback_provider=None)
    async with Sandbox(config, policies=pack_policy, tasks=PackTasks()) as sb:  # wired as the CLI wires it
        yield sb


@pytest_asyncio.fixture(scope="session")
async def client(sandbox):
    """A real aiohttp server on a loopback port, sharing the warm sandbox."""
    async with http_client(sandbox) as test_client:
        yield test_client


@pytest.fixture
def own_sandbox(sandbox):
    """A factory: ``async with own_sandbox(max_runs=2) as own:`` is a ``Sandbox`` with the shared
    config changed as given, its own runs, limits and registry (``registry=``), on the session's
    warm browser (``own_browser=True``: a Chromium of its own, for the fields the browser host
    reads, such as ``max_profiles``). ``tests.support.sandboxes.http_client(own)`` serves it."""
    return functools.partial(sandbox_with, sandbox)


@pytest_asyncio.fixture(scope="session")
async def browser():
    """One plain Chromium, started once: none of the sandbox's router or injected script, and
    loopback reachable (the mirror tests show a page renders from its mirror files alone; the
    trace viewer is served on loopback, which the sandbox's browser refuses). Each test opens its
    own context."""
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=resolve_chromium(None, None), headless=True, args=PLAIN_ARGS
        )
        yield chromium
        await chromium.close()


@pytest_asyncio.fixture
async def run(sandbox):
    run = sandbox.create_run()
    yield run
    await run.close()
