"""What a session's parts (its router, settling waits and page reports) need of the session that
owns them: its tabs, whether it has closed, and recording with the session filled in.

``Session`` is the one implementation; the parts name this protocol rather than the session, so
that the session module sits above them (no import cycle, not even for type checking).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from playwright.async_api import Page

    from toolserver.browser.tab import Tab
    from toolserver.contract.events import EventKind


class Owner(Protocol):
    @property
    def tabs(self) -> dict[str, Tab]: ...

    @property
    def closed(self) -> bool: ...

    @property
    def crashed(self) -> bool: ...  # its browser (or Playwright's driver) ended under it

    def tab_for_page(self, page: Page | None) -> Tab | None: ...

    def record_event(self, kind: EventKind, data: dict, *, tab: Tab | None = None) -> dict: ...

    def count_events(self, kind: EventKind, data: dict, count: int) -> None: ...

    def record_state_change(
        self, action: str, *, name: str, blocked: bool = False, detail: dict | None = None, tab: Tab | None = None
    ) -> dict: ...

    def record_policy_violation(self, url: str, *, origin: str, tab: Tab | None = None, **data: object) -> dict: ...
