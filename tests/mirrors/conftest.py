"""One plain Chromium for the mirror tests, started once: none of the sandbox's flags, router or
injected script. Each test opens its own context (fresh storage) and answers every request from
the mirror files itself, so a page shown to render here renders from its mirror alone."""

from __future__ import annotations

import pytest_asyncio
from playwright.async_api import async_playwright

from sandbox.core.chromium import resolve_chromium

PLAIN_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest_asyncio.fixture(scope="package")
async def browser():
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=resolve_chromium(None, None), headless=True,
                                                    args=PLAIN_ARGS)
        yield chromium
        await chromium.close()
