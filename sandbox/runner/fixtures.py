"""Evidence fixtures derived from the mirrors: the text a citation's quote must be found in.

One rule per evidence source, decided by what the mirror holds at the source's URL:
- a ``derived_from`` PDF: the PDF bytes go to ``derived_from`` and its pypdf text (the same
  extraction the sandbox shows in a PDF tab) to ``path``;
- an HTML page cited as ``format: text`` (e.g. the SAM.gov notice page, rendered by script):
  the visible text of the page rendered in Chromium through the sandbox (``innerText``);
- anything else: the raw mirrored body (HTML is reduced to visible text by the scorer).

Uses the browser only for rendered pages (imports toolserver lazily).
"""

from __future__ import annotations

from pathlib import Path

from sandbox.evaluation.packs import Pack
from toolserver.contract.mirrors import MirrorStore


def _is_html(headers: dict[str, str]) -> bool:
    return {k.lower(): v for k, v in headers.items()}.get("content-type", "").startswith("text/html")


async def rendered_text(url: str, store_roots: tuple[Path, ...], sandbox=None) -> str:
    """The page's visible text, rendered through a sandbox run on exactly ``store_roots``
    (on ``sandbox``'s warm browser when given, else on a browser started for it)."""
    from sandbox.runner.wiring import app_sandbox

    if sandbox is None:
        async with app_sandbox() as own:
            return await rendered_text(url, store_roots, own)
    run = sandbox.create_run(mirror_roots=store_roots)
    try:
        reply = await run.call("browser_start_session", {"provider": "kernel", "url": url})
        if not reply["ok"]:
            raise RuntimeError(f"could not render {url}: {reply['error']}")
        text = await run.sessions[run.current_session_id].active_tab.page.inner_text("body")
    finally:
        await run.close()
    return text.rstrip("\n") + "\n"


async def expected_fixtures(
    pack: Pack, store: MirrorStore, store_roots: tuple[Path, ...], sandbox=None
) -> dict[str, bytes]:
    """Every fixture file of a pack (path relative to the pack folder) and its bytes."""
    from toolserver.pdf import extract_pages

    out: dict[str, bytes] = {}
    rendered: dict[str, str] = {}
    for name, source in sorted(pack.rules.evidence_sources.items()):
        mirrored = store.lookup(source.url)
        if mirrored is None:
            raise LookupError(f"{pack.id}: evidence source {name!r} cites {source.url}, which is not mirrored")
        if source.derived_from:
            out[source.derived_from] = mirrored.body
            out[source.path] = "\n".join(extract_pages(mirrored.body)).encode()
        elif source.format == "text" and _is_html(mirrored.headers):
            if source.url not in rendered:
                rendered[source.url] = await rendered_text(source.url, store_roots, sandbox)
            out[source.path] = rendered[source.url].encode()
        else:
            out[source.path] = mirrored.body
    return out
