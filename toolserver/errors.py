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
    type = "invalid_arguments"


class UnknownTool(ToolError):
    type = "unknown_tool"


class NoSession(ToolError):
    type = "no_session"


class UnknownSession(ToolError):
    type = "unknown_session"


class UnknownTab(ToolError):
    type = "unknown_tab"


class UnknownRef(ToolError):
    type = "stale_ref"


class PolicyViolation(ToolError):
    type = "policy_violation"


class NotInMirror(ToolError):
    type = "not_in_mirror"


class ProviderUnavailable(ToolError):
    type = "provider_unavailable"


class ApprovalRequired(ToolError):
    type = "approval_required"


class BrowserActionFailed(ToolError):
    type = "browser_action_failed"


class PageUnresponsive(ToolError):
    type = "page_unresponsive"


class BrowserCrashed(ToolError):
    type = "browser_crashed"


class UnknownRun(Exception):
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
