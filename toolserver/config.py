"""Server configuration: one frozen object passed to ``Sandbox`` / the transports, holding
every limit and every wait the server uses (no timing literal lives elsewhere)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sandbox.core.paths import MIRRORS_DIR


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    mirror_roots: tuple[Path, ...] = field(default_factory=lambda: (MIRRORS_DIR,))
    trace_dir: Path | None = None          # None: traces kept in memory only (GET /runs/{id}/trace)
    chromium: str | None = None            # None: SANDBOX_CHROMIUM, Playwright's own, then Debian's
    fallback_provider: str | None = None   # e.g. "browserbase": emulate the service's fallback
    approvals: bool = False                # allow browser_close(close_all=true)
    policy: Literal["enforce", "observe"] = "enforce"
    block_state_changes: bool = False
    dialogs: Literal["dismiss", "accept"] = "dismiss"
    viewport: tuple[int, int] = (1280, 720)
    screenshot_dir: Path | None = None     # a viewport PNG after each call, in <dir>/<run id>/<seq>.png (None: off)
    screenshot_timeout_ms: int = 2000      # give up on one screenshot (recorded as ``screenshot_failed``)
    playwright_trace_dir: Path | None = None   # a Playwright trace per session in <dir>/<run id>/ (None: off)
    action_timeout_ms: int = 5000         # Playwright's bound on one action (click, fill, evaluate)
    navigation_timeout_ms: int = 15000    # Playwright's bound on one navigation
    # Settling: after an action, wait until the page has finished what the action started.
    settle_timeout_s: float = 5.0         # give up waiting (recorded as a ``settle_timeout`` event)
    settle_poll_s: float = 0.01           # how often the page's activity is looked at while waiting
    scripted_quiet_s: float = 0.1         # a page's fetch/XHR answers are rendered within this quiet spell
    action_quiet_s: float = 0.05          # after a click/Enter: time for a navigation or popup it starts to show
    popup_grace_s: float = 1.0            # a popup's first request was seen; its page appears within this
