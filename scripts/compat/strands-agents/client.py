"""strands-agents: ``with MCPClient(...) as mcp: Agent(model, tools=mcp.list_tools_sync())``, with
``OpenAIModel`` on the scripted loopback model server (it streams). ``MCPClient(url=...)`` for
streamable HTTP, ``MCPClient(lambda: stdio_client(params))`` for stdio. The task comes from the
MCP prompt ``task`` (``get_prompt_sync``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from strands import Agent  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402
from strands.tools.mcp import MCPClient  # noqa: E402


async def workflow(job: harness.Job) -> dict:
    if job.stdio:
        params = StdioServerParameters(command=job.command, args=job.args)
        client = MCPClient(lambda: stdio_client(params))
    else:
        client = MCPClient(url=job.url)
    model = OpenAIModel(client_args={"base_url": job.model_url, "api_key": "local"}, model_id=job.model)
    with client:
        prompt = harness.prompt_text(client.get_prompt_sync("task", {}).messages)
        agent = Agent(
            model=model, tools=client.list_tools_sync(), system_prompt=harness.INSTRUCTIONS, callback_handler=None
        )
        result = await agent.invoke_async(prompt)
    return {"final": str(result), "task_source": "mcp prompt"}


def schemas(published: dict) -> dict[str, str]:
    """Strands hands an MCP input schema to its model providers as is (``MCPAgentTool.tool_spec``);
    its OpenAI provider's request must carry every tool."""
    from strands.types.tools import ToolSpec

    specs: list[ToolSpec] = [
        {"name": t["name"], "description": t["description"], "inputSchema": {"json": t["inputSchema"]}}
        for t in published["mcp"]
    ]
    model = OpenAIModel(client_args={"api_key": "local"}, model_id=harness.policy.MODEL)

    def formatted(spec: ToolSpec) -> str | None:
        try:
            request = model.format_request([{"role": "user", "content": [{"text": "x"}]}], [spec])
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        sent = request["tools"][0]["function"]["parameters"]
        return None if sent == spec["inputSchema"]["json"] else "the schema sent differs from the published one"

    return {
        "OpenAIModel.format_request(mcp)": harness.tally({s["name"]: formatted(s) for s in specs}, "sent as published")
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
