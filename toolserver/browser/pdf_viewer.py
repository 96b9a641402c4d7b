"""A PDF opened in a tab, answered with a viewer page that shows its text (the router's last
step for a main-frame document typed ``application/pdf``)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from playwright.async_api import Route

from toolserver import pdf
from toolserver.browser.tab import PdfDocument

if TYPE_CHECKING:
    from toolserver.browser.tab import Tab
    from toolserver.contract.mirrors import MirroredResponse


async def serve_pdf(route: Route, url: str, tab: Tab | None, mirrored: MirroredResponse) -> None:
    """Answer ``route`` (a navigation to ``url``) with a viewer page of the PDF's text; the tab
    keeps its pages (``pending_pdf``) for the snapshot."""
    name = urlsplit(url).path.rsplit("/", 1)[-1] or "document.pdf"
    try:
        pages = await pdf.pages_of(mirrored.body)  # off the event loop: a big PDF holds up no other run
    except TimeoutError:
        raise ValueError(f"mirror entry {mirrored.url}: its PDF text took over {pdf.TEXT_TIMEOUT_S:g} s") from None
    except Exception as exc:  # pypdf's own errors: the mirror's fault, said with its entry
        raise ValueError(f"mirror entry {mirrored.url} is typed a PDF but is none ({exc!r})") from exc
    if tab is not None:
        tab.pending_pdf = PdfDocument(url, name, pages)
    await route.fulfill(
        status=mirrored.status, content_type="text/html; charset=utf-8", body=pdf.viewer_html(name, pages)
    )
