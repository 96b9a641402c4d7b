"""list_tools: the contract, with each tool's JSON Schema."""

from __future__ import annotations

from toolserver.registry import ToolArgs, tool
from toolserver.run import CallContext, ordered_tools


class ListToolsArgs(ToolArgs):
    pass


@tool("list_tools", args=ListToolsArgs, side_effect="read_only", needs_session=False,
      description="List the browser tools of this service with their argument schemas.")
async def list_tools(ctx: CallContext, args: ListToolsArgs) -> dict:
    return {"tools": [t.schema() for t in ordered_tools()]}
