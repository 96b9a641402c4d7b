"""The router tells a closed target from a fault without Playwright's private error class."""

from __future__ import annotations

import pytest
from playwright.async_api import Error as PlaywrightError

from toolserver.browser.router import target_closed


async def test_a_closed_target_is_recognised_and_nothing_else(browser):
    context = await browser.new_context()
    page = await context.new_page()
    await context.close()
    with pytest.raises(PlaywrightError) as failed:
        await page.title()
    assert target_closed(failed.value)
    assert not target_closed(PlaywrightError("Timeout 30000ms exceeded."))
    assert not target_closed(ValueError("Target page, context or browser has been closed"))
