"""PDF text for PDF tabs. Headless Chromium downloads a PDF instead of showing it, so the
router serves a small viewer document in its place and the snapshot shows the text,
page by page, extracted here with pypdf."""

from __future__ import annotations

import hashlib
import html
import io
from functools import lru_cache

from pypdf import PdfReader


@lru_cache(maxsize=32)
def _extract(digest: str, data: bytes) -> tuple[str, ...]:
    reader = PdfReader(io.BytesIO(data))
    return tuple((page.extract_text() or "") for page in reader.pages)


def extract_pages(data: bytes) -> list[str]:
    return list(_extract(hashlib.sha256(data).hexdigest(), data))


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
