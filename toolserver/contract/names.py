"""The benchmark's tool contract as static facts: tool names in contract order, and the
tools whose ``url`` argument the allow-list rule applies to.

The tool server builds its registry from its own tool modules; a test checks that the
registry and these facts agree. The gates use these facts on traces from any harness.
"""

from __future__ import annotations

TOOL_NAMES = (
    "list_tools",
    "browser_start_session",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_scroll",
    "browser_navigate",
    "browser_open_tab",
    "browser_switch_tab",
    "browser_close_tab",
    "browser_close",
)

URL_BEARING_TOOLS = ("browser_start_session", "browser_navigate", "browser_open_tab")
