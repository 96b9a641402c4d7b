"""Live policy rules shared by the tool server (enforcement) and the gates (judgement).

The URL rule compares the URL exactly as the agent sent it: only the fragment may differ.
No decoding, lower-casing, dot-segment removal or query reordering happens here, so no
normalisation can turn a forbidden URL into an allowed one.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote, urlsplit

PolicyMode = Literal["enforce", "observe"]
"""``enforce`` refuses calls outside the allow-list; ``observe`` only records them."""


class PolicyNotFound(LookupError):
    """A policy resolver was asked for a pack it does not know."""


def without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


# What each part of a URL keeps as Chromium sends it (seen on Chromium 156); it percent-encodes
# anything else (a space, a non-ASCII letter, and per part: ^ ` { | } in the path, ' in the query).
_PATH_SAFE = "-._~:/[]@!$&'()*+,;=%"
_QUERY_SAFE = "-._~:/?[]@!$&()*+,;=%^`{|}\\"
_FRAGMENT_SAFE = "-._~:/?#[]@!$&'()*+,;=%^{|}\\"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def requested_form(url: str) -> str | None:
    """``url`` as Chromium would request it (scheme and host lower-cased, punycode, no default
    port, dot segments resolved, percent-encoded); None when no browser requests it at all."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    try:  # a host of non-ASCII letters is asked for in punycode
        host = parts.hostname if parts.hostname.isascii() else parts.hostname.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    host = f"[{host}]" if ":" in host else host
    default = parts.port in (None, _DEFAULT_PORTS[parts.scheme.lower()])
    canonical = f"{parts.scheme.lower()}://{host}{'' if default else f':{parts.port}'}"
    canonical += quote(resolved(parts.path.replace("\\", "/") or "/"), safe=_PATH_SAFE)  # "\\" is "/" in a path
    before_fragment = url.split("#", 1)[0]
    if "?" in before_fragment:  # an empty query is kept as "?", as Chromium keeps it
        canonical += "?" + quote(parts.query, safe=_QUERY_SAFE)
    if "#" in url:
        canonical += "#" + quote(parts.fragment, safe=_FRAGMENT_SAFE)
    return canonical


def url_problem(url: str) -> str | None:
    """Why no browser request has ``url`` as written (then no allow-list or mirror entry of it is
    ever matched): the form Chromium would send instead. None when it is in that form."""
    canonical = requested_form(url)
    if canonical is None:
        parts = urlsplit(url)
        if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
            return "not an http(s) URL with a host"
        if parts.username or parts.password:
            return "a URL with a user name or password"
        return "a host name that is not one"
    return None if canonical == url else f"a browser requests it as {canonical}"


def resolved(path: str) -> str:
    """``path`` with its ``.`` and ``..`` segments resolved, as a browser resolves them (RFC 3986)."""
    segments: list[str] = []
    parts = path.split("/")
    for index, segment in enumerate(parts):
        last = index == len(parts) - 1
        dots = segment.lower().replace("%2e", ".")  # an escaped dot is a dot here too (WHATWG, Chromium)
        if dots == "..":
            if len(segments) > 1:
                segments.pop()
            if last:
                segments.append("")
        elif dots == ".":
            if last:
                segments.append("")
        else:
            segments.append(segment)
    return "/".join(segments) or "/"


def url_allowed(url: object, allowed_urls: list[str] | tuple[str, ...]) -> bool:
    """True when ``url`` equals a listed URL, ignoring only a fragment."""
    if not isinstance(url, str):
        return False
    return without_fragment(url) in {without_fragment(a) for a in allowed_urls}


@dataclass(frozen=True)
class Policy:
    """What a run enforces. ``allowed_urls=None`` means no allow-list (no pack)."""

    allowed_urls: tuple[str, ...] | None = None
    mode: PolicyMode = "enforce"
    block_state_changes: bool = False
    allowed_state_changes: frozenset[str] = field(default_factory=frozenset)
    pack: str | None = None

    @property
    def enforcing(self) -> bool:
        return self.mode == "enforce" and self.allowed_urls is not None

    def url_ok(self, url: object) -> bool:
        return self.allowed_urls is None or url_allowed(url, self.allowed_urls)

    def describe_allowed(self) -> str:
        if self.allowed_urls is None:
            return "no allow-list (run has no pack)"
        return "; ".join(self.allowed_urls)

    def state_change_allowed(self, name: str | None) -> bool:
        return bool(name) and name in self.allowed_state_changes
