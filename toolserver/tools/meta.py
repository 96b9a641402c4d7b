"""list_tools: the contract, with each tool's JSON Schema."""

from __future__ import annotations

from toolserver.dispatch import CallContext
from toolserver.registry import ToolArgs, tool


class ListToolsArgs(ToolArgs):
    pass


@tool(
    "list_tools",
    args=ListToolsArgs,
    title="List tools",
    scope="run",
    side_effect="read_only",
    description="List the browser tools of this service with their argument schemas.",
)
async def list_tools(ctx: CallContext, args: ListToolsArgs) -> dict:
    return {"tools": ctx.run.tools()}


TOOLS = [list_tools]
