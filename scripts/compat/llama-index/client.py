"""llama-index: ``McpToolSpec(BasicMCPClient(...)).to_tool_list_async()`` in a ``FunctionAgent``,
with ``OpenAILike`` on the scripted loopback model server (it streams). ``BasicMCPClient`` opens
a new MCP session for every call, so the connection names a run (``&name=`` over HTTP,
``sandbox mcp --attach ... --name`` over stdio) that every session joins. The task comes from the
MCP prompt ``task`` (``client.get_prompt``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec  # noqa: E402


async def workflow(job: harness.Job) -> dict:
    client = BasicMCPClient(job.command, args=job.args) if job.stdio else BasicMCPClient(job.url)
    tools = await McpToolSpec(client=client).to_tool_list_async()
    prompt = harness.prompt_text(await client.get_prompt("task"))
    llm = OpenAILike(
        model=job.model,
        api_base=job.model_url,
        api_key="local",
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=128000,
    )
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt=harness.INSTRUCTIONS)
    response = await agent.run(user_msg=prompt, max_iterations=40)
    return {"final": str(response), "task_source": "mcp prompt"}


def schemas(published: dict) -> dict[str, str]:
    """``McpToolSpec`` builds a pydantic model from each MCP input schema
    (``McpToolSpec.create_model_from_json_schema``); the OpenAI tool it then shows a model must
    keep the optional properties optional."""
    from llama_index.core.tools import FunctionTool

    spec = McpToolSpec(client=BasicMCPClient("http://127.0.0.1:9/mcp"))  # never connects: conversion only

    def built(tool: dict) -> str | None:
        try:
            model = spec.create_model_from_json_schema(tool["inputSchema"], model_name=f"{tool['name']}_Schema")
            shown = FunctionTool.from_defaults(
                fn=lambda **kwargs: None, name=tool["name"], description=tool["description"], fn_schema=model
            ).metadata.to_openai_tool()["function"]["parameters"]
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        optional = set(tool["inputSchema"].get("properties", {})) - set(tool["inputSchema"].get("required", []))
        forced = sorted(optional & set(shown.get("required", [])))
        return f"optional {forced} become required" if forced else None

    return {
        "create_model_from_json_schema(mcp)": harness.tally(
            {t["name"]: built(t) for t in published["mcp"]}, "built, optional kept optional"
        )
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
