"""Live policy rules shared by the tool server (enforcement) and the gates (judgement).

The URL rule compares the URL exactly as the agent sent it: only the fragment may differ.
No decoding, lower-casing, dot-segment removal or query reordering happens here, so no
normalisation can turn a forbidden URL into an allowed one.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Literal, cast
from urllib.parse import quote, unquote, urlsplit

import idna

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
# In a host, once percent-decoded: what Chromium refuses (controls, "%" and these), and what it escapes.
_HOST_REFUSED = frozenset(map(chr, [*range(0x20), 0x7F])) | frozenset("%:<>[]^|#/?@\\")
_HOST_ESCAPED = {" ": "%20", "*": "%2A"}


def requested_form(url: str) -> str | None:
    """``url`` as Chromium would request it (scheme and host lower-cased, the host as the WHATWG URL
    standard reads it: UTS-46 punycode, an IPv4 address in any of its spellings written as four
    numbers; no default port, dot segments resolved, percent-encoded); None when no browser
    requests it at all."""
    try:
        parts = urlsplit(_authority_ended(url))
    except ValueError:  # an unclosed or invalid "[...]" host
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    try:
        host = browser_host(parts.hostname)
        port = parts.port
    except ValueError:  # a host or port no browser takes (UnicodeError is one)
        return None
    default = port in (None, _DEFAULT_PORTS[parts.scheme.lower()])
    canonical = f"{parts.scheme.lower()}://{host}{'' if default else f':{port}'}"
    canonical += quote(resolved(parts.path.replace("\\", "/") or "/"), safe=_PATH_SAFE)  # "\\" is "/" in a path
    before_fragment = url.split("#", 1)[0]
    if "?" in before_fragment:  # an empty query is kept as "?", as Chromium keeps it
        canonical += "?" + quote(parts.query, safe=_QUERY_SAFE)
    if "#" in url:
        canonical += "#" + quote(parts.fragment, safe=_FRAGMENT_SAFE)
    return canonical


def _authority_ended(url: str) -> str:
    """``url`` with its host ended by a "\\" as a browser ends it there (http and https take it for
    "/"): ``https://a.example\\@b.example/`` is a request to a.example, not a user name."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in _DEFAULT_PORTS:
        return url
    end = min((i for i in (rest.find(c) for c in "/?#\\") if i >= 0), default=len(rest))
    return url if rest[end : end + 1] != "\\" else f"{scheme}://{rest[:end]}/{rest[end + 1 :]}"


def browser_host(host: str) -> str:
    """``host`` (from ``urlsplit``: lower-cased, no brackets) as Chromium requests it: percent-decoded,
    mapped by UTS-46 (non-transitional: ß stays, as xn--...), an IPv4 address as four decimal
    numbers, an IPv6 one compressed, a space or ``*`` escaped. ValueError when a browser refuses
    it (a control, ``%``, ``|``, ``^`` and the like, as Chromium 156 refuses them)."""
    if ":" in host:
        return f"[{ipaddress.IPv6Address(host).compressed}]"
    host = unquote(host, errors="strict")
    if not host.isascii():
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        host = ".".join(
            label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
            for label in mapped.split(".")
        )
    if refused := sorted(_HOST_REFUSED.intersection(host)):
        raise ValueError(f"a host with {refused[0]!r} in it")
    address = _ipv4(host.lower())
    return address if address is not None else "".join(_HOST_ESCAPED.get(c, c) for c in host.lower())


def _ipv4(host: str) -> str | None:
    """The IPv4 address a host that ends in a number stands for (WHATWG: "0x7f.1" is 127.0.0.1,
    "10" is 0.0.0.10); None for a name; ValueError for a number that is no address ("1.2.3.4.5")."""
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    if _ipv4_number(labels[-1]) is None and not (labels[-1] and labels[-1].isdigit()):
        return None
    numbers = [_ipv4_number(label) for label in labels]
    if len(numbers) > 4 or any(n is None for n in numbers):
        raise ValueError(f"{host} ends in a number but is no IPv4 address")
    *leading, last = cast(list[int], numbers)
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        raise ValueError(f"{host} ends in a number but is no IPv4 address")
    value = sum(n << (8 * (3 - i)) for i, n in enumerate(leading)) + last
    return ".".join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def _ipv4_number(label: str) -> int | None:
    """A label as an IPv4 number: decimal, hex after 0x, octal after a leading 0; None if not one."""
    base = 10
    if label[:2].lower() == "0x":
        label, base = label[2:], 16
        if not label:
            return 0
    elif len(label) > 1 and label.startswith("0"):
        label, base = label[1:], 8
    if not label or not all(c in "0123456789abcdef"[:base] for c in label.lower()):
        return None
    return int(label, base)


def url_problem(url: str) -> str | None:
    """Why no browser request has ``url`` as written (then no allow-list or mirror entry of it is
    ever matched): the form Chromium would send instead. None when it is in that form."""
    canonical = requested_form(url)
    if canonical is None:
        try:
            parts = urlsplit(_authority_ended(url))
        except ValueError:  # "https://[zz/": a bracketed host that is no IPv6 address
            return "a host name that is not one"
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
