"""``sandbox mirror check``: what is wrong in mirror roots, before a run finds it. Besides each
entry's own faults (a missing body, a hash that differs, an odd type, a provenance without its
basis), it reports what only the roots together show: a URL two manifests serve (the later root's
entry is the one served), a redirect chain that loops or is longer than Chromium follows, and a
manifest in a folder the loaders never read (they take ``<root>/manifest.json``, else
``<root>/<host>/manifest.json``, and nothing deeper).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import urljoin

from pydantic import ValidationError

from toolserver.contract.mirrors import MANIFEST, Manifest, MirrorEntry, read_body_file, url_key
from toolserver.contract.policy import url_problem
from toolserver.contract.validation import fields_said

MAX_REDIRECTS = 20  # Chromium's own limit, and the router's (toolserver.browser.router)

_SANE_TYPES = (
    "text/",
    "application/json",
    "application/javascript",
    "application/x-javascript",
    "application/pdf",
    "image/",
    "font/",
    "application/font",
    "application/octet-stream",
    "application/xml",
    "application/hal+json",
    "application/ld+json",
    "application/manifest+json",
    "application/wasm",
    "application/xhtml+xml",
)


def check(*roots: Path) -> list[str]:
    """Problems in the mirror roots: missing bodies, hash mismatches, odd types, escapes; a URL
    served by two manifests; a redirect loop or a chain of more than ``MAX_REDIRECTS``."""
    problems: list[str] = []
    served: dict[str, tuple[Path, MirrorEntry]] = {}  # every URL: the manifest whose entry is served
    bodies: set[Path] = set()  # a body file may be named manifest.json (the URL /manifest.json)
    for root in roots:
        root = Path(root)
        manifests = [root / MANIFEST] if (root / MANIFEST).exists() else sorted(root.glob(f"*/{MANIFEST}"))
        if not manifests:
            problems.append(f"{root}: no {MANIFEST} found")
        for manifest_path in manifests:
            try:
                manifest = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
            except Exception as exc:
                said = fields_said(exc, whole="(the file)") if isinstance(exc, ValidationError) else exc
                problems.append(f"{manifest_path}: invalid manifest: {said}")
                continue
            seen: set[str] = set()
            bodies.update(Path(os.path.abspath(manifest_path.parent / entry.body)) for entry in manifest.entries)
            for entry in manifest.entries:
                where = f"{manifest_path}: {entry.url}"
                if url_key(entry.url) in seen:
                    problems.append(f"{where}: duplicate URL")
                elif url_key(entry.url) in served:
                    problems.append(f"{where}: also in {served[url_key(entry.url)][0]}; this entry is the one served")
                seen.add(url_key(entry.url))
                served[url_key(entry.url)] = (manifest_path, entry)
                if "#" in entry.url:
                    problems.append(f"{where}: URL has a fragment (fragments are never requested)")
                elif problem := url_problem(entry.url):
                    problems.append(f"{where}: never requested as written: {problem}")
                try:  # read as the store reads it: a loop, a folder, a FIFO or an unreadable file is said, not raised
                    body = read_body_file(manifest_path.parent, entry.body)
                except FileNotFoundError:
                    problems.append(f"{where}: body file {entry.body} is missing")
                    continue
                except OSError as exc:
                    problems.append(f"{where}: body file {entry.body} cannot be read: {exc.strerror or exc}")
                    continue
                except ValueError as exc:
                    problems.append(f"{where}: {exc}")
                    continue
                actual = hashlib.sha256(body).hexdigest()
                if actual != entry.sha256:
                    problems.append(f"{where}: sha256 mismatch (manifest {entry.sha256[:12]}…, file {actual[:12]}…)")
                ctype = {k.lower(): v for k, v in entry.headers.items()}.get("content-type", "")
                if not ctype.startswith(_SANE_TYPES):
                    problems.append(f"{where}: unexpected content-type {ctype!r}")
                elif ctype.startswith("application/pdf") and not body[:1024].lstrip().startswith(b"%PDF"):
                    problems.append(f"{where}: content-type {ctype!r}, but the body is no PDF")
                if entry.provenance.kind == "reconstructed" and not (entry.provenance.basis or "").strip():
                    problems.append(f"{where}: reconstructed entry without a basis")
                if entry.provenance.kind == "captured" and not entry.provenance.captured_at:
                    problems.append(f"{where}: captured entry without captured_at")
    return problems + redirect_problems(served) + unread_manifests(roots, bodies)


def unread_manifests(roots: tuple[Path, ...], bodies: set[Path]) -> list[str]:
    """Each manifest under the roots that no loader reads (in a folder under a host folder, or more
    than one folder deep), unless it is an entry's body file."""
    problems: list[str] = []
    for root in map(Path, roots):
        host_folder = (root / MANIFEST).exists()
        for folder, folders, files in os.walk(root):  # links to folders are not followed: no loop
            folders.sort()
            path = Path(folder) / MANIFEST
            read = path == root / MANIFEST if host_folder else path.parent.parent == root
            if MANIFEST not in files or read or Path(os.path.abspath(path)) in bodies:
                continue
            if host_folder:
                why = f"{root} holds a {MANIFEST}, so it is read as one host folder and the folders under it are not"
            else:
                why = f"the loaders read {root}/<host>/{MANIFEST}, one folder below the root, and nothing deeper"
            problems.append(f"{path}: never read: {why}; move its folder to sit directly under a mirror root")
    return problems


def redirect_problems(served: dict[str, tuple[Path, MirrorEntry]]) -> list[str]:
    """Each redirect whose location is no URL; each redirect chain inside the mirror that loops or is
    longer than ``MAX_REDIRECTS``, said once, at its first entry."""
    problems: list[str] = []
    said: set[str] = set()
    for start, (manifest_path, entry) in served.items():
        location = _location(served[start])
        try:
            urljoin(start, location or "")
        except ValueError as exc:  # a bracketed host that is no IPv6 address: Chromium fails the navigation
            problems.append(f"{manifest_path}: {entry.url}: redirect location {location!r} is not a URL ({exc})")
    for start, (manifest_path, entry) in served.items():
        chain, url = [start], start
        while (location := _location(served.get(url))) is not None and len(chain) <= MAX_REDIRECTS:
            try:
                url = url_key(urljoin(url, location))
            except ValueError:  # said above
                break
            if url in chain:
                if not said & set(chain):
                    problems.append(f"{manifest_path}: {entry.url}: redirect loop: {' -> '.join([*chain, url])}")
                said.update(chain)
                break
            chain.append(url)
        else:
            if len(chain) > MAX_REDIRECTS and not said & set(chain):
                problems.append(f"{manifest_path}: {entry.url}: more than {MAX_REDIRECTS} redirects in a row")
                said.update(chain)
    return problems


def _location(served: tuple[Path, MirrorEntry] | None) -> str | None:
    if served is None or not 300 <= served[1].status < 400:
        return None
    return {k.lower(): v for k, v in served[1].headers.items()}.get("location")
