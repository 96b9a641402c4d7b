"""The trace's ``event`` lines: one model per kind, told apart by ``kind``.

Every event has the same frame (``seq``, ``t``, ``wall``, ``session_id``, ``tab``) and a
``data`` object of the kind's own fields. ``data`` stays a plain dict for readers
(``event.data["url"]``), checked against the kind's ``Data`` (a TypedDict); fields beyond
the declared ones are kept. The trace
reference is generated from these classes: a kind's docstring is its meaning.
Pure module: no Playwright, no aiohttp.
"""

import builtins
import functools
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from toolserver.contract.event_data import (
    BlockedData,
    CrashData,
    DialogData,
    DownloadData,
    DownloadDiscardedData,
    ErrorData,
    EvictedData,
    FaultData,
    InjectedData,
    LateActionData,
    RedirectData,
    ScreenshotFailedData,
    SettleTimeoutData,
    StateChangeData,
    SuppressedData,
    TabClosedData,
    TabOpenedData,
    TraceFailedData,
    UnreadableData,
    UrlData,
    ViolationData,
)


class EventBase(BaseModel):
    """Something that happened in the browser, written the moment it happens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["event"] = "event"
    kind: str = Field(description="What happened: one of the event kinds below.")
    seq: int | None = Field(default=None, description="The tool call during which it happened (null between calls).")
    t: float = Field(description="Seconds since the run started (monotonic clock).")
    wall: str = Field(description="When it happened (ISO-8601 UTC).")
    session_id: str | None = Field(default=None, description="The browser session it happened in.")
    tab: str | None = Field(default=None, description='The tab it happened in (`"t1"`, `"t2"`, ...).')
    data: dict[str, Any] = Field(default_factory=dict, description="The kind's own fields (URL, reason, ...).")
    escaped: list[str] | None = Field(default=None, description="Where text that is not valid Unicode was escaped.")
    Data: ClassVar[builtins.type | None] = None  # the kind's own fields, a TypedDict: ``data`` is checked against it

    @field_validator("data")
    @classmethod
    def _kind_fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data if cls.Data is None else data_adapter(cls.Data).validate_python(data)


# --- one model per kind --------------------------------------------------------------------
class Navigation(EventBase):
    """a document committed in a tab (`url`)"""

    kind: Literal["navigation"] = "navigation"
    Data: ClassVar[builtins.type] = UrlData


class Redirect(EventBase):
    """the router followed a mirrored redirect (`url`, `location`)"""

    kind: Literal["redirect"] = "redirect"
    Data: ClassVar[builtins.type] = RedirectData


class BlockedRequest(EventBase):
    """a request the mirror could not answer or the sandbox refused (`url`, `reason`,
    `resource_type`; WebSockets, service workers, WebRTC and WebTransport included), in the tab
    whose page made it (a dedicated worker's too, and the icon its `<link rel=icon>` names); with
    no tab when Playwright names no page: a request that escaped interception
    (`escaped_interception`: the backstop sees a connection, not a page; Chromium's own request
    for a popup window's `/favicon.ico` is one), a WebSocket, a popup's first navigation (made
    before its page exists), a popup over the tab cap whose opener had closed"""

    kind: Literal["blocked_request"] = "blocked_request"
    Data: ClassVar[builtins.type] = BlockedData


class TabOpened(EventBase):
    """a page opened a tab (`window.open`, a link with a target; a tool's tab is not one): `tab`,
    its `url`, and `opener`, the tab whose page opened it (with `noopener` too: Playwright knows
    it), or null when that page had closed before the new one was made. Written as the tab opens,
    before its navigations, the first of which is its first document (other than `about:blank`)"""

    kind: Literal["tab_opened"] = "tab_opened"
    Data: ClassVar[builtins.type] = TabOpenedData


class DialogShown(EventBase):
    """a JavaScript dialog appeared and was dismissed or accepted"""

    kind: Literal["dialog"] = "dialog"
    Data: ClassVar[builtins.type] = DialogData


class DownloadStarted(EventBase):
    """the page started a download (`url`, `filename`)"""

    kind: Literal["download"] = "download"
    Data: ClassVar[builtins.type] = DownloadData


class DownloadDiscarded(EventBase):
    """a download was deleted once finished, or cancelled while it was written (`in_flight`), with
    what it had written removed (`bytes`: how many); `reason`: over the per-run byte cap
    (`max_download_bytes`), beyond the run's `max_downloads` (cancelled as it began), or cut off
    by its session's close (`session_closed`) or by its browser's crash (`browser_crashed`: Chromium or
    Playwright's driver ended while it was written), or ended by Chromium itself (`failed`: a full disk,
    say), with what it wrote removed. Said once per download, before the run's end line
    (those past `max_downloads` within the page-event bounds, `max_page_event_lines`)"""

    kind: Literal["download_discarded"] = "download_discarded"
    Data: ClassVar[builtins.type] = DownloadDiscardedData


class PolicyViolation(EventBase):
    """a URL outside the allow-list was asked for; `origin` says by what: `tool_call`, `page` (the
    top frame: a link, a script, a popup), `redirect` (the top frame's), `frame` (a frame in the
    page, navigating or redirected); names the rule and the allowed URLs"""

    kind: Literal["policy_violation"] = "policy_violation"
    Data: ClassVar[builtins.type] = ViolationData


class StateChange(EventBase):
    """a state-changing action (non-GET request, form submission, Enter, a marked control,
    a download, an accepted dialog); `blocked` when prevented"""

    kind: Literal["state_change"] = "state_change"
    Data: ClassVar[builtins.type] = StateChangeData


class SettleTimeout(EventBase):
    """the page was still busy when the wait after an action ran out"""

    kind: Literal["settle_timeout"] = "settle_timeout"
    Data: ClassVar[builtins.type] = SettleTimeoutData


class FinalStateUnchecked(EventBase):
    """a final-state marker could not be checked after an action"""

    kind: Literal["final_state_unchecked"] = "final_state_unchecked"
    Data: ClassVar[builtins.type] = ErrorData


class LateAction(EventBase):
    """a click or typing its call had already sent took effect although the call failed
    (`tool`, `ref`; `seq` is the failed call's): most often its element, gone when the call
    checked the ref, came back before the action timed out"""

    kind: Literal["late_action"] = "late_action"
    Data: ClassVar[builtins.type] = LateActionData


class BrowserCrashed(EventBase):
    """Chromium died under the session, or (`reason` `unresponsive`) the server stopped while
    Chromium answered nothing, and left the session unclosed"""

    kind: Literal["browser_crashed"] = "browser_crashed"
    Data: ClassVar[builtins.type] = CrashData


class PageCrashed(EventBase):
    """a tab's page crashed: its renderer ended (out of memory, a page Chromium could not lay out);
    the tab's later calls get `page_crashed` until it is closed"""

    kind: Literal["page_crashed"] = "page_crashed"
    Data: ClassVar[builtins.type] = UrlData


class ServerFault(EventBase):
    """an unexpected exception inside the sandbox (logged with its traceback); the server stays up"""

    kind: Literal["server_fault"] = "server_fault"
    Data: ClassVar[builtins.type] = FaultData


class ScreenshotFailed(EventBase):
    """a screenshot could not be taken or written (the call is unaffected)"""

    kind: Literal["screenshot_failed"] = "screenshot_failed"
    Data: ClassVar[builtins.type] = ScreenshotFailedData


class PlaywrightTraceFailed(EventBase):
    """a Playwright trace could not be started or saved (the call is unaffected)"""

    kind: Literal["playwright_trace_failed"] = "playwright_trace_failed"
    Data: ClassVar[builtins.type] = TraceFailedData


class EventsSuppressed(EventBase):
    """a page's refused requests, navigations, dialogs, popups or downloads beyond the per-window bounds, counted and
    not written one by one (`kind`, `reason`, `resource_type`, `host`, `count`; for refused
    navigations, the `origin` of `policy_violation`, each origin with lines of its own): see
    `max_identical_refusals` and `max_page_event_lines`"""

    kind: Literal["events_suppressed"] = "events_suppressed"
    Data: ClassVar[builtins.type] = SuppressedData


class ProfilesEvicted(EventBase):
    """kept profiles were forgotten to stay within `max_profiles` / `max_profile_bytes` (`site_keys`,
    least recently used first; the session's own key when its profile alone is over the cap), as a
    session opened or closed"""

    kind: Literal["profiles_evicted"] = "profiles_evicted"
    Data: ClassVar[builtins.type] = EvictedData


class FaultInjected(EventBase):
    """a fault the run was given to have (`--faults`): `fault` names it, `detail` says what it did;
    run selection counts the attempt as interrupted, not failed"""

    kind: Literal["fault_injected"] = "fault_injected"
    Data: ClassVar[builtins.type] = InjectedData


class TabClosed(EventBase):
    """a tab closed without a call closing it: the sandbox closed it (`reason` `request_flood`:
    its pages made more than `max_page_requests` requests in `seconds`, which would stall every
    run on the server; `byte_flood`: it was served more than `max_page_bytes` body bytes in
    `seconds`; `dialog_flood`: more than `max_page_dialogs` dialogs in `seconds`; `console_flood`:
    its workers wrote more than `max_page_console_messages` console messages in `seconds`), or its page did
    (`page`: its own `window.close()`, or another page's `close()` of a window it opened)"""

    kind: Literal["tab_closed"] = "tab_closed"
    Data: ClassVar[builtins.type] = TabClosedData


class UnreadableMessage(EventBase):
    """a message of the MCP client's refused unread, answered with the JSON-RPC error (`code`,
    `error`); no tool ran. Over stdio (`transport` `mcp-stdio`): a line not UTF-8, not JSON or too
    long. Over HTTP (`mcp-http`): a body not JSON, too large, nested deeper than `max_json_depth`
    or not sent in time. On both: JSON that is no JSON-RPC message (an array: a batch), an object
    that gives one key twice, a request whose `id` is not a string or an integer, a string with a
    lone surrogate, a `tools/call` with no tool name, a request whose `id` is that of a request of
    the connection still running. `line`: its start (200 characters). It belongs to no call (`seq`
    null), also when a call is running."""

    kind: Literal["unreadable_message"] = "unreadable_message"
    Data: ClassVar[builtins.type] = UnreadableData


EVENT_MODELS: tuple[type[EventBase], ...] = (
    Navigation,
    Redirect,
    BlockedRequest,
    TabOpened,
    DialogShown,
    DownloadStarted,
    DownloadDiscarded,
    PolicyViolation,
    StateChange,
    SettleTimeout,
    FinalStateUnchecked,
    LateAction,
    BrowserCrashed,
    PageCrashed,
    ServerFault,
    ScreenshotFailed,
    PlaywrightTraceFailed,
    EventsSuppressed,
    ProfilesEvicted,
    FaultInjected,
    TabClosed,
    UnreadableMessage,
)
EventRecord = Annotated[
    Navigation
    | Redirect
    | BlockedRequest
    | TabOpened
    | DialogShown
    | DownloadStarted
    | DownloadDiscarded
    | PolicyViolation
    | StateChange
    | SettleTimeout
    | FinalStateUnchecked
    | LateAction
    | BrowserCrashed
    | PageCrashed
    | ServerFault
    | ScreenshotFailed
    | PlaywrightTraceFailed
    | EventsSuppressed
    | ProfilesEvicted
    | FaultInjected
    | TabClosed
    | UnreadableMessage,
    Field(discriminator="kind"),
]
EventKind = Literal[
    "navigation",
    "redirect",
    "blocked_request",
    "tab_opened",
    "dialog",
    "download",
    "download_discarded",
    "policy_violation",
    "state_change",
    "settle_timeout",
    "final_state_unchecked",
    "late_action",
    "browser_crashed",
    "page_crashed",
    "server_fault",
    "screenshot_failed",
    "playwright_trace_failed",
    "events_suppressed",
    "profiles_evicted",
    "fault_injected",
    "tab_closed",
    "unreadable_message",
]
EVENTS: TypeAdapter[EventRecord] = TypeAdapter(EventRecord)

# Every event kind with what it means (the model's docstring): the trace reference's table.
EVENT_KINDS: dict[str, str] = {
    model.model_fields["kind"].default: " ".join((model.__doc__ or "").split()) for model in EVENT_MODELS
}
assert list(EVENT_KINDS) == list(get_args(EventKind)), "EventKind lists the models' kinds, in order"


@functools.cache
def data_adapter(data: type) -> TypeAdapter[Any]:
    return TypeAdapter(data)


def event_of(data: dict[str, Any]) -> EventRecord:
    """The model of an event line (or of the fields to write one); pydantic's error if the
    kind is unknown or its own fields are missing or of the wrong type."""
    return EVENTS.validate_python(data)
