"""Bounds on what a page can write into its run's trace: a page that floods refused requests
(thousands of fetches to hosts that are not mirrored), navigations (``history.pushState`` in a
loop) or dialogs (``alert`` in a loop), with no tool call in flight, must not grow the trace, or a
call's result, without bound. State changes are never counted in place of their lines.

Per window, a window ending when a call line is written (or the run ends): a ``blocked_request``
line is written for the first ``max_identical_refusals`` refusals of one kind (same reason,
resource type and host) and for at most ``max_refusal_lines`` refusals in all; a ``navigation``
line for at most ``max_page_event_lines`` navigations, and a ``dialog`` line for as many dialogs.
Events beyond those are counted: the window's end writes one ``events_suppressed`` line per kind
with the count, and the call line that ends it says how many were left out (``suppressed_events``).
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit


class EventBudget:
    """The lines one event kind (``kind``) may have in a window: ``per_kind`` of one kind of it
    (``kind_of``), ``total`` in all."""

    def __init__(self, kind: str, per_kind: int, total: int) -> None:
        self.kind, self.per_kind, self.total = kind, per_kind, total
        self.written: Counter[tuple[str, str, str]] = Counter()
        self.suppressed: Counter[tuple[str, str, str]] = Counter()

    def admit(self, data: dict) -> bool:
        """Whether this event gets its line (else it is counted)."""
        key = kind_of(data)
        if self.written[key] < self.per_kind and sum(self.written.values()) < self.total:
            self.written[key] += 1
            return True
        self.suppressed[key] += 1
        return False

    def close_window(self) -> list[dict]:
        """The summaries of the window that ends (one per kind with suppressed events); the
        next window starts with a fresh budget."""
        summaries = [
            {"kind": self.kind, "reason": reason, "resource_type": resource_type, "host": host, "count": n}
            for (reason, resource_type, host), n in self.suppressed.items()
        ]
        self.written.clear()
        self.suppressed.clear()
        return summaries


def kind_of(data: dict) -> tuple[str, str, str]:
    url = str(data.get("url", ""))
    host = urlsplit(url).hostname if "://" in url else url.rsplit(":", 1)[0]
    return str(data.get("reason", "")), str(data.get("resource_type", "")), host or ""
