"""list_tools: the contract, with each tool's JSON Schema."""

from __future__ import annotations

from toolserver.registry import ToolArgs, tool
from toolserver.response import Response
from toolserver.run import CallContext


class ListToolsArgs(ToolArgs):
    pass


@tool(
    "list_tools",
    args=ListToolsArgs,
    title="List tools",
    scope="run",
    side_effect="read_only",
    page_effect="none",
    description="List the browser tools of this service with their argument schemas.",
)
async def list_tools(ctx: CallContext, args: ListToolsArgs, response: Response) -> None:
    response.add(tools=ctx.run.tools())


TOOLS = [list_tools]
