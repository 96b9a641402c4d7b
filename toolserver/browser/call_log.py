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
LOG_TAIL = 12  # the call log's last lines a failed action's details keep: where its time went


def log_lines(exc: BaseException, folds: bool = False) -> list[str] | None:
    """The call log's lines, without their indents and dashes (and, unless ``folds``, the count
    of a step the log folded); None when the error has no log."""
    _, marked, log = str(exc).partition("Call log:")
    if not marked:
        return None
    lines = [line.strip().removeprefix("- ") for line in log.splitlines() if line.strip()]
    return lines if folds else [REPEATED.sub("", line) for line in lines]


def shown(line: str) -> str:
    return line if len(line) <= SAID_AT_MOST else line[: SAID_AT_MOST - 1] + "…"


def log_details(exc: BaseException) -> dict:
    """A failed action's details: its call log's last ``LOG_TAIL`` lines (``call_log``), each cut
    at ``SAID_AT_MOST``; none when the error has no log."""
    lines = log_lines(exc, folds=True)
    return {"call_log": [shown(line) for line in lines[-LOG_TAIL:]]} if lines else {}


def never_acted(exc: BaseException) -> bool:
    """Whether an action's timeout came before it touched the page: every line of its call log is
    one said before acting. Any other line (the element found hidden or covered, a retry, the
    click performed, a navigation awaited, a log in words this does not know) says no."""
    lines = log_lines(exc) if isinstance(exc, PlaywrightTimeout) else None
    return bool(lines) and all(line.startswith(BEFORE_ACTING) for line in lines or ())


def click_sent(lines: list[str]) -> str | None:
    """How far a click's last try got before its timeout: ``done`` (Playwright saw it done, then
    waited for what it started), ``sent`` (its mouse events were sent; the page had not confirmed
    them), or None (not sent, or no click)."""
    tries = [i for i, line in enumerate(lines) if line.startswith(("attempting click action", "retrying click action"))]
    last = lines[tries[-1] :] if tries else lines
    if any(line.startswith("click action done") for line in last):
        return "done"
    return "sent" if any(line.startswith("performing click action") for line in last) else None


# What a click whose timeout came after it was sent may have done: an agent that clicks again
# would click twice (a form's Next, a step skipped). Seen at 256 agents on 2 cores. A click that
# acted (done, or counted by its page: ``click_arrived``) is no error: browser_click succeeds.
CLICK_SENT = (
    "the click was sent to the page, which had not confirmed it when the time ran out (a busy machine, "
    "or a page slow to answer), so it may have acted. Take a snapshot before clicking again."
)


def action_failure(exc: BaseException) -> str:
    """The error's first line and, for a timeout, what its log says: a click sent to the page,
    which may have acted (``CLICK_SENT``), or the last reason it gives for the wait with what to do
    (an element covered, hidden, disabled), which the first line does not say."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else "browser error"
    lines = log_lines(exc) if isinstance(exc, PlaywrightTimeout) else None
    if lines and click_sent(lines) == "sent":
        return f"{first.rstrip('.')}: {CLICK_SENT}"
    for line in reversed(lines or ()):
        for said, advice in WAITED_BECAUSE:
            if said in line:
                return f"{first.rstrip('.')}: {shown(line)}. {advice}"
    return first
