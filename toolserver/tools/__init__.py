"""Tool groups, one module each; each lists its tools in ``TOOLS``.

``ALL_TOOLS`` is the one ordered list of the contract (as Playwright MCP concatenates its
per-group lists): adding a tool to a group is one edit in that group's module.
"""

from __future__ import annotations

from toolserver.registry import ToolRegistry
from toolserver.tools import input, meta, navigate, session, snapshot, tabs

ALL_TOOLS = [*meta.TOOLS, *session.TOOLS, *snapshot.TOOLS, *input.TOOLS, *navigate.TOOLS, *tabs.TOOLS]


def default_registry() -> ToolRegistry:
    return ToolRegistry(ALL_TOOLS)
