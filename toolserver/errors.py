"""The tool error tree. One JSON shape for all of them: ``{"type": ..., "message": ...}``.

    ToolError                      recoverable: goes back to the agent as ok=false
    ├── InvalidArguments           wrong/missing/unknown argument (names the argument)
    ├── UnknownTool
    ├── NoSession / UnknownSession
    ├── UnknownTab
    ├── UnknownRef                 ref not in the tab's latest snapshot, or from an older document
    ├── PolicyViolation            URL outside the pack's allow-list, or a blocked state change
    ├── NotInMirror                URL has no mirrored response (the sandbox is offline)
    ├── ProviderUnavailable        provider other than "kernel" without the fallback option
    ├── ApprovalRequired           close_all without approvals enabled
    ├── BrowserActionFailed        Playwright refused the action (element not visible ...)
    ├── PageUnresponsive           the page did not answer within its bound (a script spinning)
    └── BrowserCrashed             the browser died under this session; start a new one
    UnknownRun                     transport-level: the run id does not exist (404)
    UnknownPack                    transport-level: POST /runs names a pack the server cannot resolve
    TooManyRuns                    transport-level: max_runs live runs already (429)
    NoTask                         transport-level: a task or an answer asked of a run without a pack

Anything else raised by a handler is a server fault: logged with its traceback, recorded in
the trace as ``server_fault`` and answered as ``{"type": "server_fault"}``; the server stays up.
"""

from __future__ import annotations


class ToolError(Exception):
    type = "tool_error"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_json(self) -> dict:
        out = {"type": self.type, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


class InvalidArguments(ToolError):
    """A missing, unknown or wrongly typed argument; the message names it. Nothing is coerced."""

    type = "invalid_arguments"


class UnknownTool(ToolError):
    """No tool by that name (the message lists the tools)."""

    type = "unknown_tool"


class NoSession(ToolError):
    """The run has no open session: call `browser_start_session` first."""

    type = "no_session"


class UnknownSession(ToolError):
    """`session_id` does not name a session of this run."""

    type = "unknown_session"


class UnknownTab(ToolError):
    """No such tab in the session (tabs are ids like `t2`)."""

    type = "unknown_tab"


class UnknownRef(ToolError):
    """The ref is not in the tab's latest snapshot, or comes from an earlier document: take a new snapshot."""

    type = "stale_ref"


class PolicyViolation(ToolError):
    """The URL is outside the pack's allowed URLs, or a state change was blocked; names the rule."""

    type = "policy_violation"


class NotInMirror(ToolError):
    """The URL has no mirrored response (the sandbox is offline); names the nearest mirrored URLs."""

    type = "not_in_mirror"


class ProviderUnavailable(ToolError):
    """A provider other than `"kernel"`, without `--fallback-provider`."""

    type = "provider_unavailable"


class ApprovalRequired(ToolError):
    """`browser_close(close_all=true)` without `--approvals`."""

    type = "approval_required"


class BrowserActionFailed(ToolError):
    """Playwright refused the action (an element not visible, not editable, ...)."""

    type = "browser_action_failed"


class PageUnresponsive(ToolError):
    """The page did not answer within its bound: close the tab or the session."""

    type = "page_unresponsive"


class BrowserCrashed(ToolError):
    """Chromium died under this session: start a new one."""

    type = "browser_crashed"


class UnknownRun(Exception):
    """Transport-level: the run id does not exist, or the run has ended (HTTP 404)."""

    type = "unknown_run"


class TooManyRuns(Exception):
    """Transport-level: the server already holds ``max_runs`` live runs (HTTP 429)."""

    type = "too_many_runs"


class UnknownPack(Exception):
    """Transport-level: a run was asked for a pack the server cannot resolve (one uniform message)."""

    type = "invalid_pack"


class NoTask(Exception):
    """Transport-level: ``/task`` or ``/answer`` for a run that has no pack (or a server without packs)."""

    type = "no_task"
