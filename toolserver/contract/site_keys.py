"""Site keys: the never-issued profile keys a run's prompt gives its agent. One generator for the
tool server's runs (``Sandbox.issue_site_key``, ``sandbox-...``) and the runner's attempts
(``bench-...``). Pure module: no Playwright, no aiohttp."""

from __future__ import annotations

import secrets
from collections.abc import Container

ISSUED_SITE_KEYS: set[str] = set()  # every key issued in this process


def new_site_key(taken: Container[str] = (), prefix: str = "sandbox") -> str:
    """``<prefix>-`` and 16 random hex digits, never issued before in this process and not in
    ``taken`` (e.g. the profiles the server already holds)."""
    while True:
        key = f"{prefix}-{secrets.token_hex(8)}"
        if key not in ISSUED_SITE_KEYS and key not in taken:
            ISSUED_SITE_KEYS.add(key)
            return key
