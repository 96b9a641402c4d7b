"""The ``data`` fields of each event kind (``toolserver.contract.events``): TypedDicts, so a
reader's ``event.data`` stays a plain dict; fields beyond the declared ones are kept.
Pure module: no Playwright, no aiohttp.
"""

from typing import Any, Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

KEEP_EXTRA = ConfigDict(extra="allow")


@with_config(KEEP_EXTRA)
class UrlData(TypedDict):
    url: str


@with_config(KEEP_EXTRA)
class RequestData(TypedDict):
    url: str
    method: str
    resource_type: str


@with_config(KEEP_EXTRA)
class RedirectData(RequestData):
    location: str


@with_config(KEEP_EXTRA)
class BlockedData(RequestData):
    reason: str


@with_config(KEEP_EXTRA)
class TabOpenedData(TypedDict):
    tab: str
    opener: str | None
    url: str


@with_config(KEEP_EXTRA)
class DialogData(TypedDict):
    dialog_type: str
    message: str
    response: Literal["accepted", "dismissed"]


@with_config(KEEP_EXTRA)
class DownloadData(TypedDict):
    url: str
    filename: str


@with_config(KEEP_EXTRA)
class DownloadDiscardedData(TypedDict):
    url: str
    bytes: int  # written when it was discarded
    kept_bytes: int
    max_download_bytes: int
    in_flight: NotRequired[bool]  # cancelled while it was written (else deleted once finished)
    # the cap it passed, its session closed, its browser crashed, or Chromium ended it (absent in traces written
    # before it was given)
    reason: NotRequired[Literal["max_download_bytes", "max_downloads", "session_closed", "browser_crashed", "failed"]]
    max_downloads: NotRequired[int]


@with_config(KEEP_EXTRA)
class ViolationData(TypedDict):
    url: str
    rule: str
    origin: str
    enforced: bool
    allowed_urls: list[str]


@with_config(KEEP_EXTRA)
class StateChangeData(TypedDict):
    action: str
    name: str
    allowed: bool
    blocked: bool
    detail: NotRequired[dict[str, Any]]  # the action's own facts (absent in hand-written traces)


@with_config(KEEP_EXTRA)
class SettleTimeoutData(TypedDict):
    waited_s: float
    waiting_for: str
    inflight_requests: int
    page_requests_pending: int | None
    ready_state: str | None


@with_config(KEEP_EXTRA)
class ErrorData(TypedDict):
    error: str


@with_config(KEEP_EXTRA)
class CrashData(TypedDict):
    session_id: str
    reason: NotRequired[str]


@with_config(KEEP_EXTRA)
class FaultData(TypedDict):
    error: str
    tool: NotRequired[str]
    traceback: NotRequired[str]
    where: NotRequired[str]
    url: NotRequired[str]


@with_config(KEEP_EXTRA)
class ScreenshotFailedData(TypedDict):
    file: str
    error: str


@with_config(KEEP_EXTRA)
class TraceFailedData(TypedDict):
    step: Literal["start", "stop"]
    error: str
    file: NotRequired[str]


@with_config(KEEP_EXTRA)
class SuppressedData(TypedDict):
    kind: str
    reason: str
    resource_type: str
    host: str
    count: int
    origin: NotRequired[str]


@with_config(KEEP_EXTRA)
class EvictedData(TypedDict):
    site_keys: list[str]
    max_profile_bytes: int


@with_config(KEEP_EXTRA)
class InjectedData(TypedDict):
    fault: str
    detail: str


@with_config(KEEP_EXTRA)
class TabClosedData(TypedDict):
    tab: str
    url: str
    reason: Literal["request_flood", "byte_flood", "dialog_flood", "console_flood", "page"]
    requests: NotRequired[int]  # request_flood: how many in ``seconds``
    bytes: NotRequired[int]  # byte_flood: body bytes served in ``seconds``
    dialogs: NotRequired[int]  # dialog_flood: how many in ``seconds``
    messages: NotRequired[int]  # console_flood: its workers' console messages in ``seconds``
    seconds: NotRequired[float]


@with_config(KEEP_EXTRA)
class UnreadableData(TypedDict):
    transport: str
    code: int
    error: str
    line: str


@with_config(KEEP_EXTRA)
class LateActionData(TypedDict):
    tool: str
    ref: str
