"""Bounds on what a page can write into its run's trace: a page that floods refused requests
(thousands of fetches to hosts that are not mirrored, with no tool call in flight) must not grow
the trace without bound.

A ``blocked_request`` line is written for the first ``max_identical_refusals`` refusals of one
kind (same reason, resource type and host) and for at most ``max_refusal_lines`` refusals in
all, per window; a window ends when a call line is written (or the run ends). Refusals beyond
those are counted: the window's end writes one ``events_suppressed`` line per kind with the
count, and the call line that ends it says how many were left out (``suppressed_events``).
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit


class RefusalBudget:
    def __init__(self, per_kind: int, total: int) -> None:
        self.per_kind, self.total = per_kind, total
        self.written: Counter[tuple[str, str, str]] = Counter()
        self.suppressed: Counter[tuple[str, str, str]] = Counter()

    def admit(self, data: dict) -> bool:
        """Whether this refusal gets its line (else it is counted)."""
        key = kind_of(data)
        if self.written[key] < self.per_kind and sum(self.written.values()) < self.total:
            self.written[key] += 1
            return True
        self.suppressed[key] += 1
        return False

    def close_window(self) -> list[dict]:
        """The summaries of the window that ends (one per kind with suppressed refusals); the
        next window starts with a fresh budget."""
        summaries = [
            {"kind": "blocked_request", "reason": reason, "resource_type": resource_type, "host": host, "count": n}
            for (reason, resource_type, host), n in self.suppressed.items()
        ]
        self.written.clear()
        self.suppressed.clear()
        return summaries


def kind_of(data: dict) -> tuple[str, str, str]:
    url = str(data.get("url", ""))
    host = urlsplit(url).hostname if "://" in url else url.rsplit(":", 1)[0]
    return str(data.get("reason", "")), str(data.get("resource_type", "")), host or ""
