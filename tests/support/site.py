"""The test sites under ``fixtures/sites/<host>/``, written into a temporary mirror; and the
test site itself (``SITE``, ``build_test_mirror``).

A site is a ``site.json`` (its origin, provenance, placeholders and entries) beside the files
its entries name. Each entry's body is its file, byte for byte, with ``{{NAME}}`` placeholders
filled in (in its headers too), or a PDF made from ``pdf_pages``, or empty (a redirect); every
entry goes into the mirror through ``toolserver.contract.mirrors.write_entry``."""

from __future__ import annotations

import io
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

from sandbox import FIXTURES_DIR
from toolserver.contract.mirrors import reconstructed, write_entry

SITES_DIR = FIXTURES_DIR / "sites"
SITE = "https://test.sandbox.example"
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


class SiteEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str  # the URL's path and query, after the site's origin
    content_type: str
    file: str | None = None  # the body, relative to the site's folder
    pdf_pages: tuple[str, ...] | None = None  # the body: a PDF with one page per text
    status: int = 200
    headers: dict[str, str] = {}  # beyond content-type
    note: str | None = None  # what the page is for

    @model_validator(mode="after")
    def one_body(self) -> SiteEntry:
        if self.file is not None and self.pdf_pages is not None:
            raise ValueError(f"{self.path}: give the body as a file or as pdf_pages, not both")
        return self


class Site(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    origin: str
    provenance: str  # the basis of every entry's ``reconstructed`` provenance
    placeholders: dict[str, str] = {}  # NAME -> what the builder fills in for {{NAME}}
    entries: tuple[SiteEntry, ...]


def make_pdf(pages: list[str] | tuple[str, ...]) -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter, invariant=1)
    for text in pages:
        y = 720
        for line in text.splitlines():
            pdf.drawString(72, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def write_site(host: str, root: Path, **values: str) -> Path:
    """Write ``fixtures/sites/<host>/`` into ``root/<host>/`` as a mirror, ``values`` filling the
    placeholders its site.json declares. Returns the host's mirror folder."""
    source = SITES_DIR / host
    site = Site.model_validate_json((source / "site.json").read_text(encoding="utf-8"))
    if set(values) != set(site.placeholders):
        raise ValueError(
            f"{host}/site.json declares the placeholders {sorted(site.placeholders)}; "
            f"values were given for {sorted(values)}"
        )

    def fill(text: str, where: str) -> str:
        def value(found: re.Match) -> str:
            if found.group(1) not in values:
                raise ValueError(
                    f"{host}/{where}: {found.group(0)} is not declared in site.json "
                    f"(declared: {sorted(site.placeholders)})"
                )
            return values[found.group(1)]

        return PLACEHOLDER.sub(value, text)

    listed = {entry.file for entry in site.entries if entry.file is not None}
    present = {path.relative_to(source).as_posix() for path in source.rglob("*") if path.is_file()} - {"site.json"}
    if listed != present:
        raise ValueError(
            f"{host}/site.json and its folder disagree: files no entry names {sorted(present - listed)}, "
            f"named files that are missing {sorted(listed - present)}"
        )
    folder = root / host
    provenance = reconstructed(site.provenance)
    for entry in site.entries:
        if entry.pdf_pages is not None:
            body = make_pdf(entry.pdf_pages)
        elif entry.file is not None:
            body = fill((source / entry.file).read_bytes().decode("utf-8"), entry.file).encode("utf-8")
        else:
            body = b""
        headers = {name: fill(text, f"site.json {entry.path}") for name, text in entry.headers.items()}
        write_entry(
            folder,
            site.origin + entry.path,
            body,
            entry.content_type,
            provenance,
            status=entry.status,
            headers=headers or None,
        )
    return folder


def build_test_mirror(root: Path, canary: str) -> Path:
    """The test site in ``root`` (a mirror root), its pages reaching out to ``canary``."""
    write_site("test.sandbox.example", root, CANARY=canary, CANARY_WS=canary.replace("http", "ws"))
    return root
