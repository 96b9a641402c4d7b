"""The tool error tree. One JSON shape for all of them: ``{"type": ..., "message": ...}``.

    ToolError                      recoverable: goes back to the agent as ok=false
    ├── InvalidArguments           wrong/missing/unknown argument (names the argument)
    ├── UnknownTool
    ├── NoSession / UnknownSession
    ├── NoTab / UnknownTab          the session has no open tab / no such tab
    ├── UnknownRef                 ref not in the tab's latest snapshot, or from an older document
    ├── PolicyViolation            URL outside the pack's allow-list, or a blocked state change
    ├── NotInMirror                URL has no mirrored response (the sandbox is offline)
    ├── ProviderUnavailable        provider other than "kernel" without the fallback option
    ├── ApprovalRequired           close_all without approvals enabled
    ├── BrowserActionFailed        Playwright refused the action (element not visible ...)
    ├── PageUnresponsive           the page did not answer within its bound (a script spinning)
    ├── BrowserCrashed             the browser died under this session; start a new one
    ├── TooManySessions            ``max_sessions_per_run`` open already; close one first
    └── ServerAtCapacity           the server is at a real limit (memory, descriptors, open sessions); retry later
    RequestError                   transport-level: refused before any tool runs; carries its HTTP status
                                   (UnknownRun is a call's result too: its run ended before or while it ran)
    ├── MalformedHttp, MalformedJson, InvalidBody, InvalidEncoding, UnknownPack, NoTask      400
    ├── Unauthorized 401, ForbiddenHost / ForbiddenOrigin / RunsGiven 403, UnknownRun 404
    ├── RequestTimeout 408, BodyTooLarge 413
    ├── UnsupportedMediaType / UnsupportedCharset 415
    ├── TooManyRuns                429
    ├── RunRefusedAtCapacity       429: the machine is at a real limit (memory, descriptors); retry later
    └── ClientGone                 499: the client left before its body arrived (nothing is sent)

Anything else raised by a handler is a server fault: logged with its traceback, recorded in
the trace as ``server_fault`` and answered as ``{"type": "server_fault"}``; the server stays up.
"""

from __future__ import annotations


class ToolError(Exception):
    type = "tool_error"
    status = 200  # over HTTP a tool error is a result of the call (ok=false), not a failed request

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_json(self) -> dict:
        out: dict[str, object] = {"type": self.type, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


class InvalidArguments(ToolError):
    """A missing, unknown or wrongly typed argument; the message names it. Nothing is coerced
    but two forms agent frameworks send: ``null`` for an optional argument (not given) and an
    integer as a string of digits (``"200"``) or as a number with no fraction (``200.0``)."""

    type = "invalid_arguments"


class UnknownTool(ToolError):
    """No tool by that name (the message lists the tools)."""

    type = "unknown_tool"
    status = 404


class NoSession(ToolError):
    """The run has no open session: call `browser_start_session` first; or its session was closed
    (`browser_close`, whose call the message names), and the run's session is over."""

    type = "no_session"


class NoTab(ToolError):
    """The session is open but has no open tab (its last was closed, or closed itself): open one
    with `browser_open_tab`; the session stays, so `browser_start_session` is not called again."""

    type = "no_tab"


class UnknownSession(ToolError):
    """`session_id` does not name a session of this run."""

    type = "unknown_session"


class UnknownTab(ToolError):
    """No such tab in the session (tabs are ids like `t2`), or no longer: the tab is closed (by a
    call, or by its own page: a `tab_closed` event). The message lists the open tabs."""

    type = "unknown_tab"


class TooManyTabs(ToolError):
    """The session holds `max_tabs_per_session` tabs already: close one (`browser_close_tab`) first."""

    type = "too_many_tabs"


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
    """A provider other than `"kernel"`, without `--fallback-provider`; or Chromium could not start."""

    type = "provider_unavailable"


class ApprovalRequired(ToolError):
    """`browser_close(close_all=true)` without `--approvals`."""

    type = "approval_required"


class BrowserActionFailed(ToolError):
    """Playwright refused the action; a timeout says why (covered, hidden, disabled) or that a click
    may have acted. `details.call_log`: the last lines of Playwright's call log, where the time went."""

    type = "browser_action_failed"


class PageUnresponsive(ToolError):
    """The page (or, starting a session, the browser) did not answer within its bound: close the tab
    or the session, or try again later."""

    type = "page_unresponsive"


class BrowserCrashed(ToolError):
    """Chromium died under this session: start a new one."""

    type = "browser_crashed"


class PageCrashed(ToolError):
    """The tab's page crashed, during this call or before it (its renderer ended, out of memory or
    otherwise; a `page_crashed` event): close the tab (`browser_close_tab`) and open another."""

    type = "page_crashed"


class TooManySessions(ToolError):
    """The run has `max_sessions_per_run` open sessions already: close one with `browser_close`."""

    type = "too_many_sessions"


class ServerAtCapacity(ToolError):
    """The server is at a real limit (available memory, file descriptors, tasks, `max_open_sessions`):
    no session was started. The message and `details` name the limit, the measured figure and the
    threshold; start the session again later (`toolserver.capacity`)."""

    type = "server_at_capacity"


class RequestError(Exception):
    """Transport-level: a request refused before any tool runs. Its ``type`` goes in the one
    JSON error shape, its ``status`` is the HTTP status (as ``aiohttp.web_exceptions`` carry
    theirs); ``raw`` is the body as it arrived, kept in the trace when the request was a call."""

    type = "bad_request"
    status = 400
    # What it means as a tool call's result (``ok: false``, ``isError``; over HTTP with ``status``),
    # for the one a call itself can end with; empty: it only ever refuses a request.
    call_result = ""

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.message, self.raw = message, raw

    def to_json(self) -> dict:
        return {"type": self.type, "message": self.message}


class MalformedHttp(RequestError):
    """The request is not readable HTTP (a malformed request line or header, a line over 8190
    bytes, a malformed chunked body, or the extra bytes of a body longer than its Content-Length,
    read as a next request): answered by the server before any route, as a JSON-RPC error too
    (id null: the path is unknown, so `/mcp` clients read it), and the connection is closed. A
    chunked body found malformed while a route reads it is answered by that route, also closing."""

    type = "malformed_http"


class MalformedJson(RequestError):
    """The body is not JSON, is nested deeper than `max_json_depth`, has an object that gives one
    key twice (which value was meant cannot be known), or an integer of more than 4,300 digits."""

    type = "malformed_json"


class InvalidBody(RequestError):
    """A body of the wrong shape for its route (`POST /runs`, `/answer`): the message names the field
    and the shape to send. (A tool call's arguments are the tool's `invalid_arguments`.)"""

    type = "invalid_arguments"


class InvalidEncoding(RequestError):
    """The body is not valid UTF-8."""

    type = "invalid_encoding"


class UnknownPack(RequestError):
    """`POST /runs` names a pack the server cannot resolve (pack ids only, never paths; one uniform message)."""

    type = "invalid_pack"


class InvalidRunName(RequestError):
    """A run name that is not 1 to 64 letters, digits, '.', '_' or '-'."""

    type = "invalid_run_name"


class RunsGiven(RequestError):
    """A batch's server (`sandbox run`) neither lists nor makes runs (`GET /runs`, `POST /runs`, `/mcp`
    without `?run=`): each agent uses the run it was given (`SANDBOX_RUN_ID`, `SANDBOX_MCP_URL`)."""

    type = "runs_given"
    status = 403


class RunNameTaken(RequestError):
    """A run name in use by a live run of another pack."""

    type = "run_name_taken"
    status = 409


class AlreadyAnswered(RequestError):
    """`/answer` for a run answered already with another output: one answer per run (the same
    output gets the same report again)."""

    type = "already_answered"
    status = 409


class NoTask(RequestError):
    """`/task` or `/answer` for a run that has no pack (or a server without packs)."""

    type = "no_task"


class Unauthorized(RequestError):
    """A token is set and the request lacks `Authorization: Bearer <token>`."""

    type = "unauthorized"
    status = 401


class ForbiddenHost(RequestError):
    """The Host is not a loopback name nor in `allowed_hosts` (DNS rebinding)."""

    type = "forbidden_host"
    status = 403


class ForbiddenOrigin(RequestError):
    """The request comes from a web page (a foreign or `null` Origin)."""

    type = "forbidden_origin"
    status = 403


class UnknownRun(RequestError):
    """The run id does not exist, or the run has ended (and been forgotten)."""

    type = "unknown_run"
    status = 404
    call_result = (
        "The call's run has ended, before the call ran or while it ran (its sessions are closed; the message "
        "names the error that ended the call, if any): nothing more can be done in it, start a new run."
    )

    @classmethod
    def ended(cls, run_id: str, served: bool = True) -> UnknownRun:
        """A request for a run that has ended: the same words on every transport (``served``: over HTTP)."""
        where = f"at GET /runs/{run_id}/trace" if served else "in its trace file"
        said = f"run {run_id} has ended: nothing more can be done in it, start a new run"
        return cls(f"{said} (its trace stays readable {where})")


class RequestTimeout(RequestError):
    """The body did not arrive within `request_body_timeout_s`."""

    type = "request_timeout"
    status = 408


class BodyTooLarge(RequestError):
    """The body is larger than `max_body_bytes`."""

    type = "body_too_large"
    status = 413


class UnsupportedMediaType(RequestError):
    """A POST whose Content-Type is not `application/json`."""

    type = "unsupported_media_type"
    status = 415


class UnsupportedCharset(RequestError):
    """A body declared in a charset other than UTF-8."""

    type = "unsupported_charset"
    status = 415


class TooManyRuns(RequestError):
    """`max_runs` live runs already: end one first."""

    type = "too_many_runs"
    status = 429


class RunRefusedAtCapacity(RequestError):
    """The machine is at a real limit (memory, descriptors): no run made; the message names it; retry later."""

    type = "server_at_capacity"
    status = 429


class ClientGone(RequestError):
    """The client closed the connection before its body arrived: nothing is sent (499, as nginx logs it)."""

    type = "client_gone"
    status = 499


class ChromiumUnavailable(RuntimeError):
    """No Chromium to run, or the one found does not start: the server cannot serve at all (not a
    tool's error: the command that starts the server says so and exits)."""
