"""A tab that floods: more requests (``max_page_requests``), more body bytes
(``max_page_bytes``), more dialogs (``max_page_dialogs``) or more console messages of its
workers (``max_page_console_messages``) in a ``FLOOD_WINDOW_S`` window than any real page makes;
the router counts requests and bytes, ``dialogs`` the dialogs, ``console`` the messages. Each
request, each body (base64-encoded), each dialog and each message crosses the one driver and event
loop every run shares, so such a tab is closed (once, recorded as ``tab_closed``), and its
requests are refused, its dialogs dismissed and its messages dropped unrecorded until it is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.tab import Tab
    from toolserver.config import ServerConfig

FLOOD_WINDOW_S = 2.0  # a tab's requests, bytes, dialogs and messages are counted in windows this long


async def close_page(page: Page) -> None:
    """Close a page the router gave up on, without its ``beforeunload``; quietly if it is gone."""
    with contextlib.suppress(PlaywrightError):
        await page.close()


def flooding(
    owner: Owner,
    config: ServerConfig,
    tab: Tab | None,
    *,
    size: int | None = None,
    dialog: bool = False,
    console: bool = False,
) -> bool:
    """Whether the tab is flooding, counting one more request, a body of ``size`` bytes about to
    be served to it, one more dialog (``dialog``) or console message (``console``); the first
    time, the tab is closed."""
    if tab is None:
        return False
    now = time.monotonic()
    if now - tab.window_since >= FLOOD_WINDOW_S:
        tab.window_since, tab.requests, tab.bytes_served, tab.dialogs, tab.console_messages = now, 0, 0, 0, 0
    if dialog:
        tab.dialogs += 1
    elif console:
        tab.console_messages += 1
    elif size is None:
        tab.requests += 1
    else:
        tab.bytes_served += size
    if tab.flooded:
        return True
    for reason, counted, count, most in (
        ("byte_flood", "bytes", tab.bytes_served, config.max_page_bytes),
        ("request_flood", "requests", tab.requests, config.max_page_requests),
        ("dialog_flood", "dialogs", tab.dialogs, config.max_page_dialogs),
        ("console_flood", "messages", tab.console_messages, config.max_page_console_messages),
    ):
        if count > most:
            close_flooded(owner, tab, reason=reason, **{counted: count})
            return True
    return False


def close_flooded(owner: Owner, tab: Tab, **over: object) -> None:
    """Close a tab that floods (requests, bytes, dialogs): once, recorded as ``tab_closed`` with
    ``over`` (its reason and count) in the window."""
    if tab.flooded:
        return
    tab.flooded = True
    owner.record_event("tab_closed", {"tab": tab.id, "url": tab.page.url, **over, "seconds": FLOOD_WINDOW_S}, tab=tab)
    asyncio.ensure_future(close_page(tab.page))
