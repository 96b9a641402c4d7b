"""The JavaScript the sandbox puts into pages, read once at import from this package's ``.js``
files (package data): ``init.js``, the program injected into every document, and the
expressions the sandbox evaluates (``reports`` reads ``state.js``, ``browser_scroll`` ``scroll.js``).

Imports nothing from the sandbox or the tool server.
"""

from __future__ import annotations

import itertools
from importlib import resources

_FILES = resources.files(__name__.rpartition(".")[0])  # this package's folder

# init.js's reports start with this, then the session's report key and ":" (``console``).
REPORT_PREFIX = "__sandbox__"
_REPORT_KEY = "__REPORT_KEY__"  # in init.js; each session puts its own key there
_MAX_POPUPS = "__MAX_POPUPS__"  # in init.js; the session's tab cap


def read_js(name: str) -> str:
    """A ``.js`` file of this package, as it is."""
    return _FILES.joinpath(name).read_text(encoding="utf-8")


def read_expression(name: str) -> str:
    """A ``.js`` file holding one expression, without its leading ``//`` comment lines."""
    lines = read_js(name).splitlines()
    return "\n".join(itertools.dropwhile(lambda line: line.startswith("//"), lines)).strip()


# Injected into every document: reports what the page does (its state, typing, form submissions)
# as console messages, lets the sandbox veto submissions, and refuses WebRTC and service workers.
INIT_SCRIPT = read_js("init.js")


def init_script(
    report_key: str, *, block_state_changes: bool, screenshots: bool, max_popups: int = 20, max_text: int = 8192
) -> str:
    """``init.js`` for one session: its report key, its popup cap, its cap on page text and the run's switches."""
    return (
        INIT_SCRIPT.replace(_REPORT_KEY, report_key)
        .replace(_MAX_POPUPS, str(int(max_popups)))
        .replace("__MAX_PAGE_TEXT_CHARS__", str(int(max_text)))
        .replace("__BLOCK_STATE_CHANGES__", "true" if block_state_changes else "false")
        .replace("__SHOTS__", "true" if screenshots else "false")
    )
