"""openai-agents: ``Agent`` with ``mcp_servers=[MCPServerStdio | MCPServerStreamableHttp]``, the
model ``OpenAIChatCompletionsModel`` on the scripted loopback model server. Variant ``strict``:
``mcp_config={"convert_schemas_to_strict": True}``. The task comes from the MCP prompt ``task``
(``server.get_prompt``). Tracing is off (it would upload to OpenAI)."""

import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled  # noqa: E402
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp  # noqa: E402
from agents.strict_schema import ensure_strict_json_schema  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402


async def workflow(job: harness.Job) -> dict:
    set_tracing_disabled(True)
    if job.stdio:
        server = MCPServerStdio(params={"command": job.command, "args": job.args}, name=harness.SERVER)
    else:
        server = MCPServerStreamableHttp(params={"url": job.url}, name=harness.SERVER)
    client = AsyncOpenAI(base_url=job.model_url, api_key="local")
    async with server:
        prompt = harness.prompt_text((await server.get_prompt("task")).messages)
        agent = Agent(
            name="browser",
            instructions=harness.INSTRUCTIONS,
            model=OpenAIChatCompletionsModel(model=job.model, openai_client=client),
            mcp_servers=[server],
            mcp_config={"convert_schemas_to_strict": job.variant == "strict"},
        )
        result = await Runner.run(agent, prompt, max_turns=30)
    return {"final": result.final_output, "task_source": "mcp prompt"}


def schemas(published: dict) -> dict[str, str]:
    """``ensure_strict_json_schema`` (what ``convert_schemas_to_strict`` applies) on every MCP
    input schema: no optional property may become a required non-null one; and the
    ``openai-strict`` definitions must come out of it unchanged."""

    def converted(schema: dict) -> str | None:
        try:
            strict = ensure_strict_json_schema(copy.deepcopy(schema))
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        forced = harness.forced_values(schema, strict)
        return f"optional {forced} become required non-null" if forced else None

    checks = {
        "ensure_strict_json_schema(mcp)": harness.tally(
            {t["name"]: converted(t["inputSchema"]) for t in published["mcp"]}, "usable in strict mode"
        )
    }
    strict = published.get("openai-strict")
    if strict is None:
        checks["openai-strict"] = "absent: `sandbox tools --format openai-strict` failed"
    else:

        def unchanged(function: dict) -> str | None:
            if function.get("strict") is not True:
                return "no strict: true"
            same = ensure_strict_json_schema(copy.deepcopy(function["parameters"])) == function["parameters"]
            return None if same else "ensure_strict_json_schema changes it"

        checks["openai-strict"] = harness.tally(
            {t["function"]["name"]: unchanged(t["function"]) for t in strict}, "strict fixed points"
        )
    return checks


if __name__ == "__main__":
    harness.main(workflow, schemas)
