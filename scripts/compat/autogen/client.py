"""autogen (autogen-agentchat + autogen-ext): an ``AssistantAgent`` with
``OpenAIChatCompletionClient`` on the scripted loopback model server. Variant ``McpWorkbench``:
``async with McpWorkbench(params)`` as the agent's workbench, the task from the MCP prompt
``task`` (``workbench.get_prompt``). Variant ``mcp_server_tools``: the documented
``await mcp_server_tools(params)`` as the agent's tools; each tool call opens a new MCP session,
so the connection names a run (``&name=`` over HTTP, ``sandbox mcp --attach ... --name`` over
stdio) that every session joins, and the task comes from the HTTP API (the runner's prompt file)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from autogen_ext.tools.mcp import McpWorkbench, StdioServerParams, StreamableHttpServerParams, mcp_server_tools  # noqa: E402

MODEL_INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}


async def workflow(job: harness.Job) -> dict:
    params = (
        StdioServerParams(command=job.command, args=job.args) if job.stdio else StreamableHttpServerParams(url=job.url)
    )
    model = OpenAIChatCompletionClient(model=job.model, base_url=job.model_url, api_key="local", model_info=MODEL_INFO)
    options = {"system_message": harness.INSTRUCTIONS, "max_tool_iterations": 40}
    try:
        if job.variant == "mcp_server_tools":
            tools = await mcp_server_tools(params)
            agent = AssistantAgent("browser", model_client=model, tools=tools, **options)
            result = await agent.run(task=job.prompt())
            return {"final": result.messages[-1].to_text(), "task_source": "HTTP API (GET /runs/{id}/task)"}
        async with McpWorkbench(params) as workbench:
            prompt = harness.prompt_text((await workbench.get_prompt("task")).messages)
            agent = AssistantAgent("browser", model_client=model, workbench=workbench, **options)
            result = await agent.run(task=prompt)
            return {"final": result.messages[-1].to_text(), "task_source": "mcp prompt"}
    finally:
        await model.close()


def schemas(published: dict) -> dict[str, str]:
    """The OpenAI tool autogen's model client builds from each MCP tool (``convert_tools``, as
    the workbench lists them): optional properties must stay optional."""
    from autogen_core.tools import ToolSchema
    from autogen_ext.models.openai._openai_client import convert_tools

    def converted(tool: dict) -> str | None:
        schema = ToolSchema(name=tool["name"], description=tool["description"], parameters=tool["inputSchema"])
        try:
            shown = convert_tools([schema])[0]["function"]["parameters"]
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        optional = set(tool["inputSchema"].get("properties", {})) - set(tool["inputSchema"].get("required", []))
        forced = sorted(optional & set(shown.get("required", [])))
        return f"optional {forced} become required" if forced else None

    return {"convert_tools(mcp)": harness.tally({t["name"]: converted(t) for t in published["mcp"]}, "converted")}


if __name__ == "__main__":
    harness.main(workflow, schemas)
