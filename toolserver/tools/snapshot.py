"""browser_snapshot: the page as an accessibility snapshot with element refs (or PDF text)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import Field

from toolserver import pdf
from toolserver.browser import REF_RE, Tab, evaluate
from toolserver.browser.tab import Snapshot
from toolserver.errors import PageUnresponsive
from toolserver.registry import LENIENT_INT, ToolArgs, tool
from toolserver.response import Response
from toolserver.run import CallContext, TabContext
from toolserver.tools._common import ask_page, settle

HTML_TYPES = ("text/html", "application/xhtml+xml", "image/svg+xml")
# The page's type and title, and (screenshots kept) what the tab's picture needs to know
# (toolserver.media), in one round trip: from init.js, or read plainly where it did not run. An
# expression: see state.js.
_INFO_JS = (
    "(window.__sandboxInfo ? window.__sandboxInfo() : {content_type: document.contentType, title: document.title})"
)


class SnapshotArgs(ToolArgs):
    max_chars: Annotated[int, Field(ge=200), LENIENT_INT] | None = Field(
        None,
        description="Return at most this many characters; a cut snapshot ends with a note, within them, of how "
        "much was left out (the default returns the whole page).",
    )


@tool(
    "browser_snapshot",
    args=SnapshotArgs,
    title="Page snapshot",
    side_effect="read_only",
    page_effect="reads",
    description="Capture the current tab as an accessibility snapshot with [ref=eN] element refs "
    "(use the refs with browser_click / browser_type). A PDF tab shows its text page by page; "
    "a JSON or plain-text document shows its text.",
)
async def browser_snapshot(ctx: TabContext, args: SnapshotArgs, response: Response) -> None:
    tab = ctx.tab
    # A page still busy (loading, or handling what it fetched) is settled first; then the page's
    # type and title and the accessibility snapshot are read at once (one round trip each, in
    # parallel). No accessibility snapshot of a document its state report calls JSON or text:
    # one that would be sent whole and thrown away (the snapshot is its text).
    if tab.leaving is not None:  # taken off a refused document first: its text is never read
        await asyncio.wait([tab.leaving], timeout=ctx.run.config.action_timeout_ms / 1000)
        tab.leaving = None
    if not ctx.session.idle(tab):
        await settle(ctx, tab)
    asks: list = [ask_page(ctx, tab, evaluate(tab, _INFO_JS), "reading the page")]
    if tab.pdf_pages is None and (tab.state or {}).get("type", HTML_TYPES[0]) in HTML_TYPES:
        asks.append(tab.page.aria_snapshot(mode="ai"))
    answers = await asyncio.gather(*asks, return_exceptions=True)
    if len(answers) > 1 and isinstance(answers[1], PlaywrightTimeout) and not isinstance(answers[0], BaseException):
        answers[1] = await asked_again(ctx, tab)
    # A hung page fails both at once: report it as unresponsive, not as a snapshot timeout.
    for failure in sorted(
        (r for r in answers if isinstance(r, BaseException)), key=lambda r: not isinstance(r, PageUnresponsive)
    ):
        raise failure
    info: dict = answers[0]  # type: ignore[assignment]  # no exception left among the answers
    aria: str | None = answers[1] if len(answers) > 1 else None  # type: ignore[assignment]
    content_type = info["content_type"]
    if ctx.run.screenshot_dir is not None:
        ctx.paint = info.get("paint")
    refs: frozenset[str]
    if tab.pdf_pages is not None:
        kind = "pdf_text"
        text, refs = pdf.snapshot_text(tab.pdf_name or "document.pdf", tab.pdf_pages), frozenset()
    elif content_type not in HTML_TYPES:
        # JSON or plain text shown by the browser as text: give the text itself, unescaped
        # (an accessibility snapshot would render it as one quoted, escaped string).
        kind = "text"
        text, refs = f"- document ({content_type}; shown as text)\n" + await tab.page.inner_text("body"), frozenset()
    else:
        kind = "aria"
        text = aria if aria is not None else await tab.page.aria_snapshot(mode="ai")
        refs = frozenset(REF_RE.findall(text))
    tab.snapshot = Snapshot(ctx.run.next_snapshot_id(), refs, tab.document)
    response.add(snapshot_id=tab.snapshot_id).page(tab, info["title"]).tabs().add(format=kind)
    if tab.pdf_pages is not None:
        response.add(pdf_pages=len(tab.pdf_pages))
    if args.max_chars is not None and len(text) > args.max_chars:
        text = cut(text, args.max_chars)
        response.add(truncated=True)
    response.add(snapshot=text)


async def asked_again(ctx: CallContext, tab: Tab) -> str:
    """The accessibility snapshot once more, with twice the action timeout, after one that outlasted
    the timeout on a page that answered the snapshot's other question: a machine busy with many
    sessions (the first snapshot of a page is the slowest: Playwright's script is compiled in it).
    A snapshot only reads, so asking again changes nothing; the second question waits for the
    first's work in the page, then reads at once."""
    return await tab.page.aria_snapshot(mode="ai", timeout=2 * ctx.run.config.action_timeout_ms)


def cut(text: str, budget: int) -> str:
    """The start of ``text`` and a note of how much was left out, together ``budget`` characters
    at most (the note is made room for as it would be with the total twice, its longest)."""
    total = len(text)
    note = f"\n[... truncated: {total} of {total} characters not shown]\n"  # the longest it can be
    shown = budget - len(note)
    return text[:shown] + f"\n[... truncated: {total - shown} of {total} characters not shown]\n"


TOOLS = [browser_snapshot]
