"""A session's JavaScript dialogs (``alert``, ``confirm``, ``prompt``, ``beforeunload``): each
is answered and recorded, and a tab whose pages open more than ``max_page_dialogs`` in one flood
window is closed (a ``tab_closed`` event, reason ``dialog_flood``), as the router closes a tab
flooding requests: each dialog is a round trip on the one driver every run shares, even with no
call running, and ``alert()`` in a loop would make one for as long as the page is open.

Imports Playwright, the flood count (``flooding``) and the types of its owner;
never the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from playwright.async_api import Dialog
from playwright.async_api import Error as PlaywrightError

from toolserver.browser.flooding import flooding

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.tab import Tab
    from toolserver.config import ServerConfig
    from toolserver.contract.policy import Policy


class Dialogs:
    """Answers the dialogs of one session's pages, and closes a tab that floods them."""

    def __init__(self, owner: Owner, config: ServerConfig, policy: Policy) -> None:
        self.owner, self.config, self.policy = owner, config, policy

    def on_dialog(self, tab: Tab, dialog: Dialog) -> None:
        if flooding(self.owner, self.config, tab, dialog=True):
            asyncio.ensure_future(self._answer(dialog, accept=False))  # its tab is being closed: unrecorded
            return
        asyncio.ensure_future(self._take(tab, dialog))

    async def _take(self, tab: Tab, dialog: Dialog) -> None:
        """Dismissed (or accepted, as configured; a state change). A ``beforeunload`` dialog is
        always accepted: leaving the page is what the navigation asked, and a page must not keep
        the agent on it; it is recorded like any dialog, not as a state change."""
        leaving = dialog.type == "beforeunload"
        accept = leaving or (self.config.dialogs == "accept" and not self.policy.block_state_changes)
        data = {
            "dialog_type": dialog.type,
            "message": dialog.message,
            "response": "accepted" if accept else "dismissed",
        }
        self.owner.record_event("dialog", data, tab=tab)
        if accept and dialog.type not in ("alert", "beforeunload"):
            self.owner.record_state_change("dialog_accepted", name=f"dialog:{dialog.type}", detail=data, tab=tab)
        await self._answer(dialog, accept)

    @staticmethod
    async def _answer(dialog: Dialog, accept: bool) -> None:
        with contextlib.suppress(PlaywrightError):  # the page may be gone already
            await (dialog.accept() if accept else dialog.dismiss())
