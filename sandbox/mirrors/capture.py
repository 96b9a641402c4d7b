"""Mirror tooling: capture live pages into the mirror store, import HAR files, list entries.

Everything written goes through ``toolserver.contract.mirrors.write_entries`` with ``captured``
provenance, so a capture and a hand-made reconstruction share one store format and one ``check``.
Every entry is built and every target manifest read before the first write, and the files are
renamed into place together: a refused import or capture writes nothing.

Capture is the one place where the network is on: Chromium is launched without the
tool server's dead proxy (but still without background networking), and every response of
the visited pages is recorded. Playwright is imported only inside ``capture_pages``; the
rest of this module (header cleaning, HAR parsing, writing, listing) is pure.

The store keys entries by URL alone (no method), so for one URL a GET response wins over any
other method's, and otherwise the first response recorded wins; the reports say what was
left out and why.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import json
import mimetypes
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolserver.contract.mirrors import (
    MANIFEST,
    Manifest,
    MirrorEntry,
    Provenance,
    captured,
    default_body_path,
    new_entry,
    url_key,
    write_entries,
)
from toolserver.contract.policy import requested_form
from toolserver.contract.validation import fields_said

# Hop-by-hop headers describe one connection, not the resource; content-encoding and
# content-length describe the wire form (bodies are stored decoded); cookies are not mirrored.
DROPPED_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-encoding",
        "content-length",
        "set-cookie",
        "set-cookie2",
    }
)
FALLBACK_CONTENT_TYPE = "application/octet-stream"


class CaptureError(Exception):
    """An expected failure, reported without a traceback: an unreadable or malformed input
    file, a URL that cannot be captured, no Chromium, an invalid manifest in the target."""


@dataclass(frozen=True)
class RecordedResponse:
    """One response as it will be stored: headers already cleaned, body decoded."""

    url: str
    method: str
    status: int
    headers: dict[str, str]
    body: bytes
    provenance: Provenance

    @property
    def content_type(self) -> str:
        return (
            self.headers.get("content-type")
            or mimetypes.guess_type(urlsplit(self.url).path)[0]
            or FALLBACK_CONTENT_TYPE
        )


@dataclass
class StoreReport:
    """What a capture or import wrote (URLs per host folder) and what it left out."""

    into: Path
    written: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(urls) for urls in self.written.values())


# --- pure helpers ---------------------------------------------------------------------------


def clean_headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Lower-cased names, repeated headers joined with ", ", dropped and pseudo-headers removed."""
    cleaned: dict[str, str] = {}
    for name, value in pairs:
        name = name.strip().lower()
        if not name or name.startswith(":") or name in DROPPED_HEADERS:
            continue
        cleaned[name] = f"{cleaned[name]}, {value}" if name in cleaned else value
    return cleaned


def is_redirect(status: int, headers: dict[str, str]) -> bool:
    return 300 <= status < 400 and "location" in headers


_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def host_folder_name(url: str) -> str:
    """The folder under the capture root: the host, plus ``_<port>`` when the URL names one.
    Only a real host name or IP address makes a folder: ``..`` would write outside the
    store, ``.`` over its root manifest (which hides every other host)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
        host = ""
    if not (all(_HOST_LABEL.fullmatch(label) for label in host.split(".")) or _is_ip(host)):
        raise CaptureError(
            f"{url[:200]!r}: {host!r} is not a host name, so it cannot be a mirror folder; "
            "remove this entry (or fix its URL) and import again"
        )
    host = host.replace(":", "_")  # an IPv6 address as a folder name
    return f"{host}_{port}" if port else host


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def check_capturable(url: str) -> None:
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # a bracketed host that is no IPv6 address
        raise CaptureError(f"cannot capture {url!r}: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CaptureError(f"cannot capture {url!r}: give an absolute http(s) URL, e.g. https://www.example.com/page")


def choose_responses(responses: Iterable[RecordedResponse]) -> tuple[list[RecordedResponse], list[str]]:
    """One response per URL (fragment ignored): GET beats other methods, else the first wins; a
    response that cannot answer its URL (``unstorable``) is left out, and said."""
    chosen: dict[str, RecordedResponse] = {}
    notes: list[str] = []
    for response in responses:
        if refusal := unstorable(response):
            notes.append(f"{response.url}: {refusal}; not recorded")
            continue
        key = url_key(response.url)
        kept = chosen.get(key)
        if kept is None:
            chosen[key] = response
        elif kept.method != "GET" and response.method == "GET":
            notes.append(
                f"{response.url}: kept the GET response, not the earlier {kept.method} one (the store keys by URL only)"
            )
            chosen[key] = response
        elif kept.method == "GET" and response.method != "GET":
            notes.append(f"{response.url}: {response.method} response not recorded (a GET response answers this URL)")
        else:  # the same method again: the first is kept, and the later one said (it was dropped silently)
            notes.append(
                f"{response.url}: a later {response.method} response (status {response.status}) not recorded: "
                "the first one answers this URL"
            )
    for response in chosen.values():
        if response.method not in ("GET", "HEAD"):
            notes.append(
                f"{response.url}: recorded a {response.method} response; the mirror will answer "
                "every request for this URL with it"
            )
    return sorted(chosen.values(), key=lambda r: r.url), notes


_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._~%+=,@-]")
_MAX_STEM = 120


def unstorable(response: RecordedResponse) -> str | None:
    """Why a response cannot be the mirror's answer for its URL, or None. A 304 Not Modified has
    no body (the browser answered from its cache): stored, it would answer every request with
    nothing. A redirect whose location is no URL would fail every navigation to it."""
    if response.status == 304:
        return "a 304 Not Modified response has no body to mirror (record with the browser cache empty)"
    if is_redirect(response.status, response.headers):
        try:
            urljoin(response.url, response.headers["location"])
        except ValueError as exc:  # a bracketed host that is no IPv6 address
            return f"its redirect location {response.headers['location'][:200]!r} is not a URL ({exc})"
    return None


def body_path_for(url: str, content_type: str, taken: dict[str, set[str]]) -> str:
    """A readable body path (``default_body_path``) made safe as a file name and unique in
    its folder: ``taken`` maps body paths to the URL keys of the entries that keep using them.
    A path is reused only when no other entry keeps it (one body file may serve several
    entries, e.g. ``/`` and ``/index.html`` in a hand-made manifest)."""
    stem = _UNSAFE_NAME_CHARS.sub("_", default_body_path(url, content_type).removeprefix("bodies/"))
    if stem.startswith("."):
        stem = "_" + stem
    digest = hashlib.sha256(url_key(url).encode()).hexdigest()[:8]
    suffix = Path(stem).suffix if len(Path(stem).suffix) <= 10 else ""
    if len(stem) > _MAX_STEM:  # long paths or queries: keep file names well under 255 bytes
        stem = f"{stem[: _MAX_STEM - 20]}__h{digest}{suffix}"
    key, path = url_key(url), f"bodies/{stem}"
    others = 1
    while taken.get(path, set()) - {key}:  # "/" and "/index.html", http vs https, ...
        more = f"_{others}" if others > 1 else ""  # a hand-made manifest may use the __u name too
        path = f"bodies/{stem.removesuffix(suffix)}__u{digest}{more}{suffix}"
        others += 1
    return path


def manifest_paths(root: Path) -> list[Path]:
    """The manifests of a mirror root (``<root>/<host>/manifest.json``) or of one host folder."""
    root = Path(root)
    return [root / MANIFEST] if (root / MANIFEST).exists() else sorted(root.glob(f"*/{MANIFEST}"))


def manifest_problem(exc: Exception) -> str:
    """What is wrong with a manifest, in a line: each field and why (pydantic's own text adds a
    link and the input, over several lines), or the JSON error."""
    if isinstance(exc, ValidationError):
        return fields_said(exc, whole="(the file)")
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def read_manifest(manifest_path: Path) -> Manifest:
    try:
        return Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaptureError(f"{manifest_path}: invalid mirror manifest: {manifest_problem(exc)}") from exc


def list_entries(*roots: Path) -> list[tuple[Path, MirrorEntry]]:
    """Every entry of the roots with its manifest path, sorted by URL."""
    rows: list[tuple[Path, MirrorEntry]] = []
    for root in roots:
        if not Path(root).is_dir():
            raise CaptureError(f"{root}: no such mirror directory")
        for manifest_path in manifest_paths(root):
            rows.extend((manifest_path, entry) for entry in read_manifest(manifest_path).entries)
    return sorted(rows, key=lambda row: (row[1].url, str(row[0])))


def check_root(into: Path) -> None:
    """Refuse a host folder as the root to write into: the loaders read only ``<DIR>/manifest.json``
    there, so entries written into folders under it would never be served."""
    if (Path(into) / MANIFEST).exists():
        raise CaptureError(
            f"{into} holds a {MANIFEST}: it is a host folder, not a mirror root, and entries written into "
            f"folders under it would never be served; give the mirror root above it (e.g. {Path(into).parent}) "
            "as --into"
        )


def store_responses(
    into: Path, responses: Iterable[RecordedResponse], report: StoreReport | None = None
) -> StoreReport:
    """Write the chosen responses under ``into/<host>/`` and report what was written. Every target
    manifest is read and every entry built before the first write (``write_entries``), so a
    ``CaptureError`` means that nothing was written."""
    into = Path(into)
    check_root(into)
    report = report or StoreReport(into=into)
    chosen, notes = choose_responses(responses)
    taken_by_folder: dict[str, dict[str, set[str]]] = {}
    additions: dict[Path, list[tuple[MirrorEntry, bytes]]] = {}
    written: dict[str, list[str]] = {}
    folder_names = {response.url: host_folder_name(response.url) for response in chosen}  # all refused before a write
    replaced: dict[str, set[str]] = {}  # each folder: the URL keys whose entries this change replaces
    for response in chosen:
        replaced.setdefault(folder_names[response.url], set()).add(url_key(response.url))
    for response in chosen:
        folder_name = folder_names[response.url]
        folder = into / folder_name
        if not folder.resolve().is_relative_to(into.resolve()) or folder.resolve() == into.resolve():
            raise CaptureError(f"{response.url}: its folder {folder} is not inside {into}")
        taken = taken_by_folder.get(folder_name)
        if taken is None:
            existing = read_manifest(folder / MANIFEST).entries if (folder / MANIFEST).exists() else []
            taken = taken_by_folder[folder_name] = {}
            for kept in existing:  # a body file is free only once every entry using it is replaced
                if url_key(kept.url) not in replaced[folder_name]:
                    taken.setdefault(kept.body, set()).add(url_key(kept.url))
        content_type = response.content_type
        body_path = body_path_for(response.url, content_type, taken)
        headers = {k: v for k, v in response.headers.items() if k != "content-type"}
        body = b"" if is_redirect(response.status, response.headers) else response.body
        try:
            entry = new_entry(
                response.url,
                body,
                content_type,
                response.provenance,
                status=response.status,
                headers=headers,
                body_path=body_path,
            )
        except ValidationError as exc:
            said = fields_said(exc, whole="(the entry)")
            raise CaptureError(f"{response.url}: cannot be a mirror entry: {said}; nothing was written") from exc
        additions.setdefault(folder, []).append((entry, body))
        taken.setdefault(body_path, set()).add(url_key(response.url))
        written.setdefault(folder_name, []).append(response.url)
    try:
        write_entries(additions)
    except (OSError, ValueError) as exc:  # a full disk, a folder it may not write; a manifest changed meanwhile
        raise CaptureError(f"cannot write into {into}: {exc}; nothing was written") from exc
    report.warnings.extend(notes)
    for folder_name, urls in written.items():
        report.written.setdefault(folder_name, []).extend(urls)
    return report


# --- HAR import -----------------------------------------------------------------------------


class HarPart(BaseModel):
    """The fields of a HAR entry that an import reads, each of the type the HAR format gives it: a
    field of another type is named, not a traceback. Other fields (a HAR has many) are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class HarHeader(HarPart):
    name: str
    value: str


class HarContent(HarPart):
    size: float | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    text: str | None = None
    encoding: str | None = None
    file: str | None = Field(default=None, alias="_file", description="Playwright's attached body file.")


class HarRequest(HarPart):
    url: str
    method: str = "GET"


class HarResponse(HarPart):
    status: int
    headers: list[HarHeader] = Field(default_factory=list)
    content: HarContent | None = None
    redirect_url: str | None = Field(default=None, alias="redirectURL")


class HarEntry(HarPart):
    started: str | None = Field(default=None, alias="startedDateTime")
    request: HarRequest
    response: HarResponse


def _har_body(
    where: str, entry_url: str, status: int, headers: dict[str, str], content: HarContent, har_folder: Path
) -> tuple[bytes | None, str | None]:
    """The response body of a HAR entry (None when the HAR does not hold it) and a warning when its
    text could not be written in its declared charset: it is then stored as UTF-8, and
    ``headers``' content-type says so. ``where``: the entry (``FILE: log.entries[i]``) for a refusal."""
    if is_redirect(status, headers):
        return b"", None
    if content.text is not None:
        if content.encoding == "base64":
            try:
                return base64.b64decode(content.text, validate=True), None
            except ValueError as exc:
                raise CaptureError(f"{entry_url}: content.text is not valid base64: {exc}") from exc
        if content.encoding:
            raise CaptureError(f"{entry_url}: unknown content.encoding {content.encoding!r} (expected base64)")
        content_type = headers.get("content-type") or ""
        charset = _charset(content_type)
        try:
            return content.text.encode(charset), None
        except (LookupError, ValueError) as exc:  # no such codec, a character it lacks, idna's own UnicodeError
            said = str(exc).splitlines()[0][:160] or type(exc).__name__
        if content_type:
            headers["content-type"] = _CHARSET.sub(r"\g<1>utf-8", content_type)
        return content.text.encode("utf-8"), (
            f"{entry_url}: its text cannot be written in charset {charset!r} ({said}); stored as UTF-8, "
            "and its content-type now says charset=utf-8"
        )
    if content.file:  # Playwright's record_har_content="attach": a file next to the HAR
        try:
            path = (har_folder / content.file).resolve()
            if path.is_relative_to(har_folder.resolve()) and path.is_file():
                return path.read_bytes(), None
        except (OSError, RuntimeError, ValueError) as exc:  # unreadable; a link loop (3.11); a NUL byte
            said = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise CaptureError(
                f"{where}.response.content._file: cannot read {content.file!r} ({said}); "
                "make it readable or remove the entry; nothing was written"
            ) from exc
        return None, None
    if content.size == 0:
        return b"", None
    return None, None


_CHARSET = re.compile(r"(charset=)[\"']?[\w.:-]+[\"']?", re.IGNORECASE)


def _charset(content_type: str) -> str:
    found = _CHARSET.search(content_type)
    return found.group(0).removeprefix(found.group(1)).strip("\"'") if found else "utf-8"


def _lone_surrogate(entry: HarEntry) -> str | None:
    """The first field of the entry that holds a lone surrogate (a JSON ``\\ud800`` escape without
    its pair: no text a file, a URL or a manifest can hold), said with where it is; or None."""
    stack: list[tuple[str, object]] = [("", entry.model_dump(by_alias=True, exclude_none=True))]
    while stack:
        at, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{at}.{key}".lstrip("."), item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{at}.{index}", item) for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{at}: holds a lone surrogate ({value[exc.start]!a} at character {exc.start})"
    return None


def read_har(path: Path) -> tuple[list[RecordedResponse], list[str]]:
    """The responses of a HAR file (e.g. Playwright's ``record_har_path`` with embedded
    content) and warnings for entries that cannot be recorded."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaptureError(f"cannot read HAR file {path}: {exc}") from exc
    try:
        har = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        said = exc if isinstance(exc, json.JSONDecodeError) else "nested too deep to read"
        raise CaptureError(
            f"{path} is not JSON ({said}); give a HAR file, e.g. one recorded with Playwright's record_har_path"
        ) from exc
    entries = har.get("log", {}).get("entries") if isinstance(har, dict) and isinstance(har.get("log"), dict) else None
    if not isinstance(entries, list):
        raise CaptureError(f"{path} is JSON but not a HAR file: it has no log.entries list")
    responses: list[RecordedResponse] = []
    warnings: list[str] = []
    for index, raw in enumerate(entries):
        try:
            entry = HarEntry.model_validate(raw)
        except ValidationError as exc:
            said = fields_said(exc, whole="(the entry)")
            raise CaptureError(f"{path}: log.entries[{index}] is not a HAR entry: {said}; nothing was written") from exc
        if surrogate := _lone_surrogate(entry):
            raise CaptureError(
                f"{path}: log.entries[{index}].{surrogate}, which no file can hold; fix or remove the entry; "
                "nothing was written"
            )
        request, response = entry.request, entry.response
        url, method, status = request.url.split("#", 1)[0], request.method.upper(), response.status
        if status > 0 and not 100 <= status <= 599:
            raise CaptureError(
                f"{path}: log.entries[{index}].response.status: {status} is not an HTTP status (100 to 599); "
                "nothing was written"
            )
        raw_headers = [(header.name, header.value) for header in response.headers]
        content = response.content or HarContent()
        try:
            scheme = urlsplit(url).scheme
        except ValueError as exc:  # a bracketed host that is no IPv6 address
            warnings.append(f"{url[:80]}: not a URL ({exc}); not recorded")
            continue
        if scheme not in ("http", "https"):
            if scheme != "data":
                warnings.append(f"{url[:80]}: {scheme}: URL not recorded")
            continue
        requested = requested_form(url)
        if requested is None:  # a user name and password are not repeated in the warning
            shown = re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#]*@", r"\1…@", url)[:80]  # to the last @
            warnings.append(f"{shown}: no browser requests this URL (it names a user, or no host); not recorded")
            continue
        if requested != url:  # a hand-edited HAR: store the URL a browser asks for, or it never matches
            warnings.append(f"{url}: recorded as {requested}, the form a browser requests")
            url = requested
        if status <= 0:  # a request that never got a response (blocked, aborted)
            warnings.append(f"{url}: no response in the HAR (status {status}); not recorded")
            continue
        headers = clean_headers(raw_headers)
        if 300 <= status < 400 and "location" not in headers and response.redirect_url:
            headers["location"] = response.redirect_url
        if "content-type" not in headers and content.mime_type and content.mime_type != "x-unknown":
            headers["content-type"] = content.mime_type
        body, fallback = _har_body(f"{path}: log.entries[{index}]", url, status, headers, content, path.parent)
        if fallback:
            warnings.append(fallback)
        if body is None:
            warnings.append(
                f"{url}: the HAR holds no response body for it (record with content embedded); not recorded"
            )
            continue
        try:
            when = datetime.fromisoformat(str(entry.started).replace("Z", "+00:00"))
        except ValueError:
            warnings.append(f"{url}: startedDateTime {entry.started!r} is not an ISO time; not recorded")
            continue
        responses.append(RecordedResponse(url, method, status, headers, body, captured(when)))
    return responses, warnings


def import_har(path: Path, into: Path) -> StoreReport:
    check_root(into)
    responses, warnings = read_har(path)
    report = StoreReport(into=Path(into), warnings=warnings)
    return store_responses(into, responses, report)


# --- live capture (Playwright) --------------------------------------------------------------


def capture_launch_args() -> list[str]:
    """The tool server's Chromium flags without its dead proxy and its resolver that resolves no
    name: capture needs the network, but background networking (updates, sync, pings) stays off."""
    from toolserver.browser.chromium import chromium_launch_args

    offline = ("--proxy-server", "--proxy-bypass-list", "--host-resolver-rules")
    return [arg for arg in chromium_launch_args() if not arg.startswith(offline)]


async def capture_pages(
    urls: list[str], *, wait_ms: int = 1000, chromium: str | None = None, timeout_ms: int = 30000
) -> tuple[list[RecordedResponse], StoreReport]:
    """Visit each URL in one fresh context; wait for load, network idle and ``wait_ms``;
    return every http(s) response the pages received (redirects with an empty body)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import Response, async_playwright

    from toolserver.browser.chromium import resolve_chromium

    for url in urls:
        check_capturable(url)
    report = StoreReport(into=Path("."))
    skipped_schemes: dict[str, int] = {}

    async def record(response: Response) -> RecordedResponse | None:
        try:
            method = response.request.method
            headers = clean_headers((h["name"], h["value"]) for h in await response.headers_array())
            body = b"" if is_redirect(response.status, headers) else await response.body()
        except PlaywrightError as exc:
            report.warnings.append(
                f"{response.url}: response body unavailable ({str(exc).splitlines()[0]}); not recorded"
            )
            return None
        return RecordedResponse(response.url, method, response.status, headers, body, captured())

    pending: dict[asyncio.Future, str] = {}  # each body being read: its URL

    def on_response(response: Response) -> None:
        scheme = urlsplit(response.url).scheme
        if scheme in ("http", "https"):
            pending[asyncio.ensure_future(record(response))] = response.url
        else:
            skipped_schemes[scheme] = skipped_schemes.get(scheme, 0) + 1

    async def drain() -> None:
        """Responses keep arriving while bodies are read: wait until no new one came in, for at most
        ``timeout_ms`` (a body that never ends would hold the capture for ever); a body still unread
        then is left out, and said."""
        loop = asyncio.get_running_loop()
        done, end = 0, loop.time() + timeout_ms / 1000
        while done < len(pending):
            done = len(pending)
            _, unfinished = await asyncio.wait(list(pending), timeout=max(end - loop.time(), 0))
            for future in sorted(unfinished, key=pending.__getitem__):
                future.cancel()
                report.warnings.append(
                    f"{pending[future]}: response body not complete after {timeout_ms} ms; not recorded"
                )
            if unfinished:
                break

    async with async_playwright() as playwright:
        try:
            default = playwright.chromium.executable_path
        except Exception:
            default = None
        try:
            executable = resolve_chromium(chromium, default)
        except RuntimeError as exc:
            raise CaptureError(str(exc)) from exc
        browser = await playwright.chromium.launch(
            executable_path=executable, headless=True, args=capture_launch_args()
        )
        try:
            # Service workers would answer requests from their own caches: capture the network.
            context = await browser.new_context(service_workers="block")
            context.on("response", on_response)
            for url in urls:
                page = await context.new_page()
                try:
                    await page.goto(url, wait_until="load", timeout=timeout_ms)
                    try:
                        await page.wait_for_load_state("networkidle", timeout=timeout_ms)
                    except PlaywrightError:
                        report.warnings.append(
                            f"{url}: network not idle after {timeout_ms} ms; recorded what had arrived"
                        )
                    if wait_ms:
                        await page.wait_for_timeout(wait_ms)
                except PlaywrightError as exc:
                    report.failures.append(f"{url}: did not load ({str(exc).splitlines()[0]})")
                await drain()
                await page.close()
            await context.close()
        finally:
            await browser.close()
    for scheme, count in sorted(skipped_schemes.items()):
        report.warnings.append(f"skipped {count} {scheme}: response(s) (not http/https)")
    kept = (future.result() for future in pending if future.done() and not future.cancelled())
    return [r for r in kept if r is not None], report


def capture(urls: list[str], into: Path, *, wait_ms: int = 1000, chromium: str | None = None) -> StoreReport:
    """Capture the URLs into ``into/<host>/`` (see ``capture_pages``)."""
    check_root(into)  # before the browser starts
    responses, report = asyncio.run(capture_pages(urls, wait_ms=wait_ms, chromium=chromium))
    report.into = Path(into)
    return store_responses(into, responses, report)
