"""mcp-use: ``MCPAgent(llm=ChatOpenAI(...), client=MCPClient.from_dict(config))``, with LangChain's
``ChatOpenAI`` on the scripted loopback model server. The task comes from the MCP prompt ``task``
on the client's session (``session.get_prompt``), which the agent then reuses. Telemetry off
(``MCP_USE_ANONYMIZED_TELEMETRY=false``, set by the runner)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from mcp_use import MCPAgent, MCPClient  # noqa: E402


async def workflow(job: harness.Job) -> dict:
    server = {"command": job.command, "args": job.args} if job.stdio else {"url": job.url}
    client = MCPClient.from_dict({"mcpServers": {harness.SERVER: server}})
    try:
        session = await client.create_session(harness.SERVER)
        prompt = harness.prompt_text((await session.get_prompt("task")).messages)
        llm = ChatOpenAI(model=job.model, base_url=job.model_url, api_key="local")
        agent = MCPAgent(llm=llm, client=client, max_steps=30, system_prompt=harness.INSTRUCTIONS)
        final = await agent.run(prompt)
    finally:
        await client.close_all_sessions()
    return {"final": str(final), "task_source": "mcp prompt"}


def schemas(published: dict) -> dict[str, str]:
    """mcp-use turns each MCP input schema into a pydantic model for its LangChain tools
    (``jsonschema_to_pydantic``); the OpenAI tool LangChain builds from it must keep the optional
    properties optional."""
    from jsonschema_pydantic import jsonschema_to_pydantic
    from langchain_core.utils.function_calling import convert_to_openai_tool

    def built(tool: dict) -> str | None:
        try:
            model = jsonschema_to_pydantic(tool["inputSchema"])
            shown = convert_to_openai_tool(model)["function"]["parameters"]
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        optional = set(tool["inputSchema"].get("properties", {})) - set(tool["inputSchema"].get("required", []))
        forced = sorted(optional & set(shown.get("required", [])))
        return f"optional {forced} become required" if forced else None

    return {
        "jsonschema_to_pydantic(mcp)": harness.tally(
            {t["name"]: built(t) for t in published["mcp"]}, "built, optional kept optional"
        )
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
