"""PDF text for PDF tabs. Headless Chromium downloads a PDF instead of showing it, so the
router serves a small viewer document in its place and the snapshot shows the text,
page by page, extracted here with pypdf.

The extraction (a parse, then every page's text) runs in a pool of its own threads, bounded by
``TEXT_TIMEOUT_S``: never on the event loop every run shares, and a PDF that takes long (big or
malformed) holds one of those threads, never the threads that read mirror bodies."""

from __future__ import annotations

import asyncio
import hashlib
import html
import io
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

from pypdf import PdfReader

TEXT_TIMEOUT_S = 20.0  # a PDF whose text takes longer is refused (a server_fault names it)
_EXTRACTING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pdf-text")


_counts = {"begun": 0, "ended": 0}  # extractions (cache misses), for ``extractions``
_counting = threading.Lock()


@lru_cache(maxsize=32)
def _extract(digest: str, data: bytes) -> tuple[str, ...]:
    with _counting:
        _counts["begun"] += 1
    try:
        reader = PdfReader(io.BytesIO(data))
        return tuple((page.extract_text() or "") for page in reader.pages)
    finally:
        with _counting:
            _counts["ended"] += 1


def extract_pages(data: bytes) -> list[str]:
    """Each page's text (a PDF seen before comes from a cache of 32). Blocks: see ``pages_of``."""
    return list(_extract(hashlib.sha256(data).hexdigest(), data))


async def pages_of(data: bytes, timeout: float = TEXT_TIMEOUT_S) -> list[str]:
    """``extract_pages`` off the event loop, within ``timeout`` seconds (else ``TimeoutError``)."""
    work = asyncio.get_running_loop().run_in_executor(_EXTRACTING, extract_pages, data)
    return await asyncio.wait_for(work, timeout)


def extractions() -> tuple[int, int]:
    """How many PDFs' extractions began, and how many ended, since start (cache hits aside)."""
    with _counting:
        return _counts["begun"], _counts["ended"]


def viewer_html(name: str, pages: list[str]) -> str:
    sections = "\n".join(
        f'<section aria-label="Page {n} of {len(pages)}"><h2>Page {n} of {len(pages)}</h2>'
        f'<pre style="white-space:pre-wrap;font:14px serif">{html.escape(text)}</pre></section>'
        for n, text in enumerate(pages, start=1)
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(name)}</title></head>"
        f"<body><main aria-label='PDF document {html.escape(name)}'>{sections}</main></body></html>"
    )


def snapshot_text(name: str, pages: list[str]) -> str:
    out = [f'- document "{name}" (PDF, {len(pages)} pages; text extracted page by page)']
    for n, text in enumerate(pages, start=1):
        out.append(f"--- Page {n} of {len(pages)} ---")
        out.append(text.rstrip())
    return "\n".join(out) + "\n"
