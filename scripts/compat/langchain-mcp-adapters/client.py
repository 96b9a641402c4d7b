"""langchain-mcp-adapters: ``MultiServerMCPClient`` tools in LangChain's ``create_agent``, with
``ChatOpenAI`` on the scripted loopback model server. Variant ``session``: the tools and the task
prompt from one explicit ``client.session("sandbox")``. Variant ``get_tools``: the documented
``await client.get_tools()`` and ``client.get_prompt(...)``, which open a new MCP session for
every call, so the connection names a run (``&name=`` over HTTP, ``sandbox mcp --attach ...
--name`` over stdio) that every session joins."""

import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langchain_mcp_adapters.prompts import load_mcp_prompt  # noqa: E402
from langchain_mcp_adapters.tools import load_mcp_tools  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402


def connection(job: harness.Job) -> dict:
    if job.stdio:
        return {"transport": "stdio", "command": job.command, "args": job.args}
    return {"transport": "streamable_http", "url": job.url}


async def workflow(job: harness.Job) -> dict:
    client = MultiServerMCPClient({harness.SERVER: connection(job)})
    model = ChatOpenAI(model=job.model, base_url=job.model_url, api_key="local")
    if job.variant == "get_tools":
        tools = await client.get_tools()
        prompt = harness.prompt_text(await client.get_prompt(harness.SERVER, "task"))
        return await run_agent(model, tools, prompt)
    async with client.session(harness.SERVER) as session:
        tools = await load_mcp_tools(session)
        prompt = harness.prompt_text(await load_mcp_prompt(session, "task"))
        return await run_agent(model, tools, prompt)


async def run_agent(model, tools, prompt: str) -> dict:
    agent = create_agent(model, tools, system_prompt=harness.INSTRUCTIONS)
    state = await agent.ainvoke({"messages": [{"role": "user", "content": prompt}]}, {"recursion_limit": 60})
    return {"final": state["messages"][-1].text, "task_source": "mcp prompt"}


def schemas(published: dict) -> dict[str, str]:
    """LangChain's ``convert_to_openai_tool(..., strict=True)`` on every MCP tool (as
    ``load_mcp_tools`` builds them: the input schema as ``args_schema``)."""

    def converted(tool: dict) -> str | None:
        mcp_like = {"name": tool["name"], "description": tool["description"], "parameters": tool["inputSchema"]}
        try:
            strict = convert_to_openai_tool(copy.deepcopy(mcp_like), strict=True)["function"]["parameters"]
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        forced = harness.forced_values(tool["inputSchema"], strict)
        return f"optional {forced} become required non-null" if forced else None

    return {
        "convert_to_openai_tool(strict=True)": harness.tally(
            {t["name"]: converted(t) for t in published["mcp"]}, "usable in strict mode"
        )
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
