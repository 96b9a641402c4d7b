"""The browser side: one warm Chromium per server, a context per session, tabs, profiles, and
the router that answers every request from the mirror store (or blocks it).

Nothing here reaches a network: every request is fulfilled from the mirror or refused; a dead
proxy in the launch flags catches anything that could escape interception.

One module per job, each importing only those listed after it: ``session`` (a context and its tabs,
``open_session``/``close_session``, and ``Recorder``, the run a session records through), ``host``
(the warm Chromium, profiles), ``driver`` (Playwright's driver, its temporary files), ``leftovers``
(temporary folders locked by their process, those of dead ones swept), ``console`` (the reports the
page sends), ``dialogs`` (answering dialogs, closing a tab that floods them), ``local_documents``
(documents a page makes itself, checked as they commit), ``router`` (answering requests),
``settling`` (the event-driven waits), ``reports`` (asking the page for its state report, bounded),
``owner`` (what those parts need of their session), ``tab`` (a tab's state), ``javascript`` (the
``.js`` files put into pages), ``chromium`` (which Chromium, with which flags, its renderers'
memory), ``call_log`` (what Playwright's call log says of a failed action). This module declares the
public names.

Imports only Playwright and the tool server's lower layers (config, errors, pdf, media,
contract): never the dispatcher, tools, API or transports, nor anything of ``sandbox``.
"""

from toolserver.browser.driver import DRIVER_NODE_FLAGS, start_playwright
from toolserver.browser.host import BrowserHost
from toolserver.browser.javascript import INIT_SCRIPT, REPORT_PREFIX
from toolserver.browser.lifecycle import close_session, closes_ended, open_session
from toolserver.browser.reports import (
    STATE_JS,
    STATE_NOW_JS,
    action_bound,
    bounded,
    first_line,
    read_state,
    safe_title,
)
from toolserver.browser.session import Recorder, Session
from toolserver.browser.settling import HTTP_URL, Marks
from toolserver.browser.tab import REF_RE, Tab
from toolserver.cdp import evaluate

__all__ = [
    "DRIVER_NODE_FLAGS",
    "HTTP_URL",
    "INIT_SCRIPT",
    "REF_RE",
    "REPORT_PREFIX",
    "STATE_JS",
    "STATE_NOW_JS",
    "BrowserHost",
    "Marks",
    "Recorder",
    "Session",
    "Tab",
    "action_bound",
    "bounded",
    "evaluate",
    "close_session",
    "closes_ended",
    "first_line",
    "open_session",
    "read_state",
    "safe_title",
    "start_playwright",
]
