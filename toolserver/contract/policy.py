"""Live policy rules shared by the tool server (enforcement) and the gates (judgement).

The URL rule compares the URL exactly as the agent sent it: only the fragment may differ.
No decoding, lower-casing, dot-segment removal or query reordering happens here, so no
normalisation can turn a forbidden URL into an allowed one.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

PolicyMode = Literal["enforce", "observe"]
"""``enforce`` refuses calls outside the allow-list; ``observe`` only records them."""


class PolicyNotFound(LookupError):
    """A policy resolver was asked for a pack it does not know."""


def without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


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
