"""The mirror store: exact URLs mapped to recorded responses (a manifest plus body files).

Layout: ``mirrors/<host>/manifest.json`` lists entries; each entry's ``body`` is a path
relative to that folder. Lookups use the URL exactly as requested, minus its fragment:
scheme, host, path and query must match byte for byte (no decoding, no reordering).

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mimetypes
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from difflib import get_close_matches
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from toolserver.contract.bodies import BodyCache
from toolserver.contract.validation import fields_said

MANIFEST = "manifest.json"


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["reconstructed", "captured"]
    basis: str | None = Field(default=None, description="What a reconstruction is built from.")
    captured_at: str | None = Field(default=None, description="ISO time of a capture.")


def http_status(status: int) -> int:
    if not 100 <= status <= 599:
        raise ValueError(f"{status} is not an HTTP status (100 to 599)")
    return status


class MirrorEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    url: str
    status: Annotated[int, AfterValidator(http_status)] = 200
    headers: dict[str, str] = Field(default_factory=dict)
    body: str = Field(description="Body file, relative to the manifest's folder.")
    sha256: str
    provenance: Provenance


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entries: list[MirrorEntry] = Field(default_factory=list)


@dataclass(frozen=True)
class MirroredResponse:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    entry: MirrorEntry


def url_key(url: str) -> str:
    """The lookup key: the URL exactly as given, without its fragment."""
    return url.split("#", 1)[0]


def safe_body_path(folder: Path, body: str) -> Path:
    """The body file, symbolic links resolved; a ``ValueError`` for one outside ``folder`` or a
    link loop (which ``resolve`` raises as a ``RuntimeError`` in Python 3.11)."""
    try:
        path, inside = (folder / body).resolve(), folder.resolve()
    except (RuntimeError, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "a loop of symbolic links"
        raise ValueError(f"body path {body!r} in mirror folder {folder} cannot be resolved: {why}") from None
    if not path.is_relative_to(inside):
        raise ValueError(f"body path {body!r} escapes its mirror folder {folder}")
    return path


def read_body_file(folder: Path, body: str) -> bytes:
    """The bytes of a manifest entry's body file, a regular file inside ``folder`` (blocking: see
    ``MirrorStore.lookup``). ``ValueError``: a path that escapes, a link loop, not a regular file."""
    with open(safe_body_path(folder, body), "rb", opener=_open_regular) as handle:
        return handle.read()


FILE_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _open_regular(path: str, flags: int) -> int:
    """Open without blocking (a FIFO would wait for a writer) and refuse anything but a regular file."""
    fd = os.open(path, flags | os.O_NONBLOCK)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((said for test, said in FILE_KINDS if test(mode)), "something else")
        raise ValueError(f"mirror body {path} is {kind}, not a regular file; mirror bodies must be plain files")
    os.set_blocking(fd, True)
    return fd


class MirrorStore:
    """All entries of one or more mirror roots, keyed by exact URL (fragment removed). Bodies
    read once are kept in memory (``bodies``), keyed by their file and the SHA-256 their manifest
    entry declares."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Path, MirrorEntry]] = {}
        self._hosts: frozenset[str] | None = None
        self.bodies = BodyCache()

    @classmethod
    def load(cls, *roots: Path) -> MirrorStore:
        store = cls()
        for root in roots:
            root = Path(root)
            manifests = [root / MANIFEST] if (root / MANIFEST).exists() else sorted(root.glob(f"*/{MANIFEST}"))
            for manifest_path in manifests:
                store.add_manifest(manifest_path)
        return store

    def add_manifest(self, manifest_path: Path) -> None:
        try:
            manifest = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
        except Exception as exc:  # pydantic or JSON error: name the file, and the fields, in one line
            said = fields_said(exc, whole="(the file)") if isinstance(exc, ValidationError) else exc
            raise ValueError(f"{manifest_path}: invalid mirror manifest: {said}") from exc
        for entry in manifest.entries:
            self._entries[url_key(entry.url)] = (manifest_path.parent, entry)
        self._hosts = None

    def __len__(self) -> int:
        return len(self._entries)

    def urls(self) -> list[str]:
        return sorted(self._entries)

    def hosts(self) -> frozenset[str]:
        """The host names of every mirrored URL."""
        if self._hosts is None:
            self._hosts = frozenset(urlsplit(url).hostname or "" for url in self._entries)
        return self._hosts

    def has(self, url: str) -> bool:
        """Whether the URL is mirrored (reads no body)."""
        return url_key(url) in self._entries

    def entry(self, url: str) -> MirrorEntry | None:
        """The URL's manifest entry (status, headers; reads no body)."""
        found = self._entries.get(url_key(url))
        return found[1] if found else None

    def lookup(self, url: str) -> MirroredResponse | None:
        """The mirrored response, body read from disk (blocking: async callers use a thread, or
        ``cached`` first). Only a regular file is read: a FIFO or device would block the reader for ever."""
        found = self._entries.get(url_key(url))
        if found is None:
            return None
        folder, entry = found
        key = (folder, entry.body, entry.sha256)
        body = self.bodies.get(key)
        if body is None:
            try:
                body = read_body_file(folder, entry.body)
            except OSError as exc:  # the mirror's own fault: said with the entry and its file
                said = f"mirror entry {entry.url}: body file {folder / entry.body}: {exc.strerror or exc}"
                raise OSError(exc.errno, said) from exc
            # Hashed once per read from disk (then served from memory): an edited body is refused, not served.
            if (actual := hashlib.sha256(body).hexdigest()) != entry.sha256:
                raise ValueError(
                    f"mirror entry {entry.url}: body file {folder / entry.body} has sha256 {actual[:12]}…, but its "
                    f"manifest says {entry.sha256[:12]}…: the file changed after it was recorded; record the page "
                    "again or fix the manifest (`sandbox mirror check` lists every such entry)"
                )
            self.bodies.keep(key, body)
        return MirroredResponse(entry.url, entry.status, dict(entry.headers), body, entry)

    def cached(self, url: str) -> MirroredResponse | None:
        """The mirrored response if its body is in memory (never touches the disk), else None."""
        found = self._entries.get(url_key(url))
        if found is None:
            return None
        folder, entry = found
        body = self.bodies.get((folder, entry.body, entry.sha256))
        if body is None:
            return None
        return MirroredResponse(entry.url, entry.status, dict(entry.headers), body, entry)

    def nearest(self, url: str, n: int = 3) -> list[str]:
        return get_close_matches(url_key(url), list(self._entries), n=n, cutoff=0.5)

    def checksum(self) -> str:
        """One hash over every served entry, whole (URL, status, headers, body file, its sha256,
        provenance) in canonical JSON: stamps traces and scores, and tells a replay the mirrors differ."""
        digest = hashlib.sha256()
        for key in sorted(self._entries):
            entry = self._entries[key][1].model_dump(mode="json")
            digest.update(json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        return digest.hexdigest()[:16]


def default_body_path(url: str, content_type: str) -> str:
    """A readable body file name for a URL: its path, plus a short hash of the query."""
    parts = urlsplit(url)
    path = parts.path.strip("/")
    path = f"{path}/index" if path and parts.path.endswith("/") else (path or "index")
    stem = path.replace("/", "__")
    if parts.query:
        stem += "__q" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
    if "." not in stem.rsplit("__", 1)[-1]:
        ext = mimetypes.guess_extension(content_type.split(";")[0].strip()) or ".bin"
        stem += ext
    return f"bodies/{stem}"


def new_entry(
    url: str,
    body: bytes,
    content_type: str,
    provenance: Provenance,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    body_path: str | None = None,
) -> MirrorEntry:
    """The manifest entry of a body, nothing written (``ValidationError``: a status out of 100..599)."""
    headers = {"content-type": content_type, **(headers or {})}
    body_path, sha256 = body_path or default_body_path(url, content_type), hashlib.sha256(body).hexdigest()
    return MirrorEntry(url=url, status=status, headers=headers, body=body_path, sha256=sha256, provenance=provenance)


def write_entry(
    folder: Path, url: str, body: bytes, content_type: str, provenance: Provenance, **kw: Any
) -> MirrorEntry:
    """Write a body file and add (or replace) its entry in ``folder/manifest.json`` (``new_entry``'s
    keywords: ``status``, ``headers``, ``body_path``)."""
    entry = new_entry(url, body, content_type, provenance, **kw)
    write_entries({Path(folder): [(entry, body)]})
    return entry


def write_entries(additions: dict[Path, list[tuple[MirrorEntry, bytes]]]) -> None:
    """Add (or replace) entries and their bodies in host folders as one change. Every manifest is
    read and every body path checked first (``ValueError``); then each body and manifest is written
    to a temporary file beside it, and only once all are written are they renamed into place: a
    failure (``OSError``: a full disk, a folder it may not write) leaves every folder as it was."""
    files: dict[Path, bytes] = {}
    for folder, added in additions.items():
        manifest_path = Path(folder) / MANIFEST
        exists = manifest_path.exists()
        old = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8")) if exists else Manifest()
        replaced = {url_key(entry.url) for entry, _ in added}
        entries = [entry for entry in old.entries if url_key(entry.url) not in replaced]
        for entry, body in added:
            files[safe_body_path(Path(folder), entry.body)] = body
        manifest = Manifest(entries=sorted([*entries, *(entry for entry, _ in added)], key=lambda e: e.url))
        dumped = json.dumps(manifest.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False)
        files[manifest_path] = (dumped + "\n").encode()  # after its folder's bodies
    made: list[Path] = []  # folders made here, removed again if the change fails
    temporaries: dict[Path, Path] = {}
    try:
        for path, data in files.items():
            made.extend(reversed([p for p in (path.parent, *path.parent.parents) if not p.exists()]))
            path.parent.mkdir(parents=True, exist_ok=True)
            temporaries[path] = path.with_name(f".{path.name}.{os.getpid()}.partial")
            temporaries[path].write_bytes(data)
        for path, temporary in temporaries.items():
            os.replace(temporary, path)
        made.clear()
    finally:
        for temporary in temporaries.values():
            temporary.unlink(missing_ok=True)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()


def remove_entries(folder: Path) -> None:
    """Delete the body files a folder's manifest lists (and only those), then the manifest:
    generators call this first so that a rebuild leaves no stale entry or body behind."""
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    if not manifest_path.exists():
        return
    manifest = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
    for entry in manifest.entries:
        body = (folder / entry.body).resolve()
        if body.is_relative_to(folder.resolve()) and body.is_file():
            body.unlink()
    manifest_path.unlink()


def captured(now: datetime | None = None) -> Provenance:
    return Provenance(kind="captured", captured_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"))


def reconstructed(basis: str) -> Provenance:
    return Provenance(kind="reconstructed", basis=basis)


@dataclass(frozen=True)
class HostProvenance:
    """What one host folder's entries are: captured URLs, and reconstructed URLs grouped by the
    basis each reconstruction states (in manifest order)."""

    host: str
    captured: tuple[str, ...]
    reconstructed: tuple[tuple[str, tuple[str, ...]], ...]  # (basis, URLs)


def provenance_by_host(*roots: Path) -> list[HostProvenance]:
    """Per host folder under the roots: which entries are captured, which reconstructed and
    from what basis. Unreadable manifests are skipped (``check`` reports them)."""
    summaries: list[HostProvenance] = []
    for root in roots:
        root = Path(root)
        manifests = [root / MANIFEST] if (root / MANIFEST).exists() else sorted(root.glob(f"*/{MANIFEST}"))
        for manifest_path in manifests:
            try:
                manifest = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
            except Exception:
                continue
            captured = tuple(e.url for e in manifest.entries if e.provenance.kind == "captured")
            bases: dict[str, list[str]] = {}
            for entry in manifest.entries:
                if entry.provenance.kind == "reconstructed":
                    bases.setdefault(entry.provenance.basis or "", []).append(entry.url)
            summaries.append(
                HostProvenance(
                    manifest_path.parent.name, captured, tuple((basis, tuple(urls)) for basis, urls in bases.items())
                )
            )
    return summaries
