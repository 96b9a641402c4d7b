"""Site keys: the never-issued profile keys a run's prompt gives its agent. One generator for the
tool server's runs (``Sandbox.issue_site_key``, ``sandbox-...``) and the runner's attempts
(``bench-...``), and one rule for every key given (``check_site_key``). Pure module: no
Playwright, no aiohttp."""

from __future__ import annotations

import json
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


def check_site_key(key: str) -> str:
    """``key`` if it can be a site key, else a ``ValueError`` saying why. A site key is written into
    a pack's prompt between quotes, and named by a session to keep a profile: one rule for the
    run's key (``POST /runs``, a pack's prompt) and ``browser_start_session``'s, so a key one of
    them takes the other takes too. (An empty key named no profile: the tool took it as none.)"""
    if not key or any(c in '"\\' or c.isspace() or not c.isprintable() for c in key):  # no NUL, ESC, bidi override
        raise ValueError(
            f"a site key is a non-empty string of printable characters without quotes, backslashes or white space "
            f"(a task's prompt gives it between quotes), got {json.dumps(key)}: pass the site key the task gives, "
            "or leave it out"
        )
    return key
