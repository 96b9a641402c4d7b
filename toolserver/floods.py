"""Bounds on what a page can write into its run's trace: a page that floods refused requests
(thousands of fetches to hosts that are not mirrored), navigations (``history.pushState`` in a
loop), dialogs (``alert`` in a loop) or popups (each closing its opener), with no tool call in
flight, must not grow the trace, or a call's result, without bound. State changes are never
counted in place of their lines.

Per window, a window ending when a call line is written (or the run ends): a ``blocked_request``
line is written for the first ``max_identical_refusals`` refusals of one kind (same reason,
resource type and host) and for at most ``max_refusal_lines`` refusals in all; a ``navigation``
line for at most ``max_page_event_lines`` navigations, and as many ``policy_violation`` lines
(navigations refused) of each origin (the top frame's, a redirect's, a frame's: a page's frames
cannot spend the lines its top frame's visits are judged by), ``dialog``, ``tab_opened`` and
``tab_closed`` lines (of tabs their page closed: a tab the sandbox closes for a flood
(``request_flood``, ``byte_flood``, ``dialog_flood``, ``console_flood``) is always written),
``download`` and ``download_discarded`` lines (a page starting downloads without
end: past ``max_downloads`` each is cancelled, and its state change line still written).
Events beyond those are counted: the window's end writes one ``events_suppressed`` line per kind
with the count, and the call line that ends it says how many were left out (``suppressed_events``).

Every line is bounded too: a string longer than ``max_page_text_chars`` in an event's data or a
call's result (a 2 MB URL, a 50 MB title or dialog message; a snapshot is not cut) is cut, and
says how much was left out (``cut_text``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlsplit

# The kinds a page writes at most ``max_page_event_lines`` of in a window (each origin's, for
# policy_violation); a download's state change is always written.
PAGE_EVENT_KINDS = (
    "navigation",
    "policy_violation",
    "dialog",
    "tab_opened",
    "tab_closed",
    "download",
    "download_discarded",
)


def budgeted(kind: str, data: dict) -> bool:
    """Whether an event of ``kind`` spends the page's budget. The sandbox's own tab closures
    (``request_flood``, ``byte_flood``, ``dialog_flood``, ``console_flood``) are always written: a
    page's ``window.close()`` loop spends none of them.
    So is what became of a download that began within ``max_downloads`` (a cap passed, its session
    closed, its browser crashed, Chromium ended it: at most that many a run), so a download's end is written even when
    its beginning was counted; those cancelled past ``max_downloads`` (a flood) spend it."""
    if kind == "tab_closed":
        return data.get("reason") == "page"
    if kind == "download_discarded":
        return data.get("reason") == "max_downloads"
    return True


Key = tuple[str, str, str, str]  # reason, resource type, host, origin ("" for events that have none)


class EventBudget:
    """The lines one event kind (``kind``) may have in a window: ``per_kind`` of one kind of it
    (``kind_of``), ``total`` in all for each origin."""

    def __init__(self, kind: str, per_kind: int, total: int) -> None:
        self.kind, self.per_kind, self.total = kind, per_kind, total
        self.written: Counter[Key] = Counter()
        self.suppressed: Counter[Key] = Counter()

    def admit(self, data: dict) -> bool:
        """Whether this event gets its line (else it is counted)."""
        key = kind_of(data)
        of_origin = sum(n for written, n in self.written.items() if written[3] == key[3])
        if self.written[key] < self.per_kind and of_origin < self.total:
            self.written[key] += 1
            return True
        self.suppressed[key] += 1
        return False

    def count(self, data: dict, count: int) -> None:
        """``count`` events like ``data`` counted without lines (a page counted them itself)."""
        self.suppressed[kind_of(data)] += count

    def close_window(self) -> list[dict]:
        """The summaries of the window that ends (one per kind with suppressed events); the
        next window starts with a fresh budget."""
        summaries = [
            {"kind": self.kind, "reason": reason, "resource_type": resource_type, "host": host, "count": n}
            | ({"origin": origin} if origin else {})
            for (reason, resource_type, host, origin), n in self.suppressed.items()
        ]
        self.written.clear()
        self.suppressed.clear()
        return summaries


def kind_of(data: dict) -> Key:
    url = str(data.get("url", ""))
    host = urlsplit(url).hostname if "://" in url else url.rsplit(":", 1)[0]
    return str(data.get("reason", "")), str(data.get("resource_type", "")), host or "", str(data.get("origin", ""))


def cut_text(value: Any, limit: int, keep: str = "snapshot") -> Any:
    """``value`` with every string longer than ``limit`` cut to ``limit`` characters and a note of
    how many more there were; a string under the key ``keep`` is left whole. Returns ``value``
    itself when nothing is that long."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}… ({len(value) - limit} more characters)"
    if isinstance(value, dict):
        cut = {k: v if k == keep else cut_text(v, limit, keep) for k, v in value.items()}
        return value if all(cut[k] is v for k, v in value.items()) else cut
    if isinstance(value, list):
        items = [cut_text(v, limit, keep) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value
