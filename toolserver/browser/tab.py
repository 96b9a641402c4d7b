"""A tab: its page, which document it shows, its latest snapshot, the PDF it shows, and what the
sandbox knows of the page's activity. Plain state: the session and its parts (router, settling,
page reports) change it; the tools read it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from playwright.async_api import Page

REF_RE = re.compile(r"\[ref=([A-Za-z0-9_]+)\]")  # a ref in a snapshot's text


@dataclass
class Snapshot:
    """The tab's latest snapshot: its refs hold while the tab shows the same document."""

    id: str | None = None
    refs: frozenset[str] = frozenset()
    document: int = -1  # the tab's ``document`` when it was taken
    # The tab whose page closed it and made this one current since (not the agent's choice): a
    # ref then is not taken for this tab's, which may number other elements the same.
    after_close: str | None = None


@dataclass(frozen=True)
class PdfDocument:
    """A PDF the router answered with a viewer page: the tab shows its text, page by page."""

    url: str
    name: str
    pages: list[str]


@dataclass
class Activity:
    """What the sandbox knows of the page's activity (see init.js), for settling."""

    state: dict | None = None  # the current document's latest state report (None: not loaded yet)
    nav_requests: int = 0  # main-frame navigation requests the router answered or refused
    new_document_requested: bool = False  # the router served a main-frame document
    awaiting_commit: bool = False  # the router answered one with a document that has not committed yet
    served_url: str | None = None  # the main-frame document it answered last (a download, if Chromium downloads it)
    refresh_from: int | None = None  # the document refreshes at once (meta refresh 0): nav_requests then
    inputs: int = 0  # typing reports (trusted input events) of the tab's documents
    input_state: dict | None = None  # the latest one (a state report with the field's ``value``)


@dataclass
class Tab:
    id: str
    page: Page
    document: int = 0  # bumped on every main-frame navigation to a new document
    committed_url: str = "about:blank"
    closed: bool = False
    closing: bool = False  # a call is closing it (browser_close_tab): not its page
    close_reported: float = -1e9  # when its page last reported a window.close() Chromium will honour (init.js)
    crashed: bool = False  # its renderer ended (a page_crashed event): every later call on it fails at once
    questions: set[asyncio.Timeout] = field(default_factory=set)  # the bounds of the questions to it in flight
    snapshot: Snapshot = field(default_factory=Snapshot)
    pdf: PdfDocument | None = None  # the PDF the current document shows
    pending_pdf: PdfDocument | None = None  # the PDF of the document being loaded
    activity: Activity = field(default_factory=Activity)
    leaving: asyncio.Future | None = None  # the tab is being taken off a refused document (blob:, data:)
    window_since: float = 0.0  # the start of its flood window (``flooding``), and in that window:
    requests: int = 0  # the requests its pages made (counted by the router)
    bytes_served: int = 0  # the body bytes the router served them
    dialogs: int = 0  # the dialogs its pages opened
    console_messages: int = 0  # the console messages of its pages' workers that reached the server
    flooded: bool = False  # it made too many: it is being closed
    redirects: int = 0  # main-frame redirects followed in a row (the router refuses a loop)
    cdp: asyncio.Future | None = None  # its CDP session (``reports.evaluate``), made at the first question

    @property
    def url(self) -> str:
        return self.page.url

    def crash(self) -> None:
        """Its renderer ended: the questions to its page in flight (``reports.bounded``) end now,
        not at their bound, for Chromium never answers them."""
        self.crashed = True
        now = asyncio.get_running_loop().time()
        for bound in list(self.questions):
            if not bound.expired():  # one that fired already is leaving ``bounded`` (reschedule would raise)
                bound.reschedule(now)

    def summary(self, active: bool) -> dict:
        return {"tab": self.id, "url": self.page.url, "active": active}

    def commit(self, url: str) -> bool:
        """The main frame navigated to ``url`` (without its fragment): False when nothing
        changed (a same-document, fragment navigation: refs stay valid)."""
        activity = self.activity
        pending, self.pending_pdf = self.pending_pdf, None
        requested, activity.new_document_requested = activity.new_document_requested, False
        if url == self.committed_url and not requested:
            return False
        self.committed_url = url
        if requested:
            # A new document (the router served it): refs and the page's state reports start over.
            # Without one it is the same document under a new URL (history.pushState): refs stay valid.
            self.document += 1
            activity.state, activity.awaiting_commit, activity.refresh_from = None, False, None
            self.pdf = pending if pending is not None and pending.url.split("#", 1)[0] == url else None
        return True

    # --- the flat names the tools read (toolserver.tools); the groups above hold the values ---
    @property
    def state(self) -> dict | None:
        return self.activity.state

    @property
    def inputs(self) -> int:
        return self.activity.inputs

    @property
    def input_state(self) -> dict | None:
        return self.activity.input_state

    @property
    def pdf_pages(self) -> list[str] | None:
        return self.pdf.pages if self.pdf is not None else None

    @property
    def pdf_name(self) -> str | None:
        return self.pdf.name if self.pdf is not None else None

    @property
    def snapshot_id(self) -> str | None:
        return self.snapshot.id

    @property
    def snapshot_refs(self) -> frozenset[str]:
        return self.snapshot.refs

    @property
    def snapshot_document(self) -> int:
        return self.snapshot.document
