"""What Playwright's call log says of an action that failed: whether it had acted, and why it
waited (the log follows the error's first line: one line a step, the element's checks among them)."""

from __future__ import annotations

import re

from playwright.async_api import TimeoutError as PlaywrightTimeout

# What the log says before the action touches the page: waiting for the element, finding it, and
# waiting for the page's first answer about it (or that answer being yes).
BEFORE_ACTING = (
    "waiting for locator(",
    "locator resolved to ",
    "fill(",
    "attempting click action",
    "attempting fill action",
    "waiting for element to be visible, enabled and ",
    "element is visible, enabled and ",
    "scrolling into view if needed",
    "done scrolling",
)
# Why an element kept an action waiting, as the log says it, and what an agent can do about it.
WAITED_BECAUSE = (
    ("intercepts pointer events", "Another element covers it (a dialog, banner or overlay): dismiss that first."),
    ("element is not visible", "It is not visible: show it first (its menu, section or tab), or use a visible one."),
    ("element is not enabled", "It is disabled: the page enables it once something else is done."),
    ("element is not editable", "It is read-only."),
    ("element is not stable", "It keeps moving (an animation)."),
    ("element is outside of the viewport", "It is outside the page: scroll to it (browser_scroll)."),
)
REPEATED = re.compile(r"^\d+ × ")  # a step the log folded: "2 × waiting for element ..."
SAID_AT_MOST = 200  # characters of the log's line (an element's markup, the page's) kept in a message


def log_lines(exc: BaseException) -> list[str] | None:
    """The call log's lines, without their indents and dashes; None when the error has no log."""
    _, marked, log = str(exc).partition("Call log:")
    if not marked:
        return None
    return [REPEATED.sub("", line.strip().removeprefix("- ")) for line in log.splitlines() if line.strip()]


def never_acted(exc: BaseException) -> bool:
    """Whether an action's timeout came before it touched the page: every line of its call log is
    one said before acting. Any other line (the element found hidden or covered, a retry, the
    click performed, a navigation awaited, a log in words this does not know) says no."""
    lines = log_lines(exc) if isinstance(exc, PlaywrightTimeout) else None
    return bool(lines) and all(line.startswith(BEFORE_ACTING) for line in lines or ())


def action_failure(exc: BaseException) -> str:
    """The error's first line and, for a timeout, the last reason its log gives for the wait with
    what to do (an element covered, hidden, disabled), which the first line does not say."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else "browser error"
    lines = log_lines(exc) if isinstance(exc, PlaywrightTimeout) else None
    for line in reversed(lines or ()):
        for said, advice in WAITED_BECAUSE:
            if said in line:
                shown = line if len(line) <= SAID_AT_MOST else line[: SAID_AT_MOST - 1] + "…"
                return f"{first.rstrip('.')}: {shown}. {advice}"
    return first
