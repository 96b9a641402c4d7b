"""pydantic-ai: ``Agent(FunctionModel(...), toolsets=[MCPToolset(...)])``. ``MCPToolset`` takes the
URL for streamable HTTP, or FastMCP's ``StdioTransport`` for stdio; the model is pydantic-ai's
own ``FunctionModel`` running the form policy in-process. The task comes from the MCP prompt
``task`` (``toolset.get_prompt``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.mcp import MCPToolset  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer  # noqa: E402

policy = harness.policy


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The form policy as a pydantic-ai model function: it reads the user prompt, the tool calls
    and what each returned (a ``ToolReturnPart``, or a ``RetryPromptPart`` for a tool error)."""
    prompt, calls, results = [], [], {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                prompt.append(part.content)
            elif isinstance(part, ToolCallPart):
                calls.append(part)
            elif isinstance(part, ToolReturnPart):
                results[part.tool_call_id] = part.model_response_str()
            elif isinstance(part, RetryPromptPart) and part.tool_call_id:
                results[part.tool_call_id] = part.model_response()
    turns = [policy.Turn(c.tool_name, c.args_as_dict(), results.get(c.tool_call_id, "")) for c in calls]
    step = policy.next_step("\n".join(prompt), turns)
    if "answer" in step:
        return ModelResponse(parts=[TextPart(step["answer"])])
    name, args = step["call"]
    offered = [tool.name for tool in info.function_tools]
    return ModelResponse(parts=[ToolCallPart(policy.offered_name(name, offered), args)])


async def workflow(job: harness.Job) -> dict:
    toolset = MCPToolset(StdioTransport(job.command, job.args) if job.stdio else job.url)
    async with toolset:
        prompt = harness.prompt_text((await toolset.get_prompt("task")).messages)
        agent = Agent(FunctionModel(scripted), instructions=harness.INSTRUCTIONS, toolsets=[toolset])
        result = await agent.run(prompt)
    return {"final": result.output, "task_source": "mcp prompt"}


def schemas(published: dict) -> dict[str, str]:
    """pydantic-ai's OpenAI profile: ``OpenAIJsonSchemaTransformer(strict=None)`` marks a schema
    strict-compatible or not (not: pydantic-ai sends it without ``strict``); with
    ``strict=True`` it converts, and no optional property may then be required non-null."""

    def compatible(schema: dict) -> str | None:
        transformer = OpenAIJsonSchemaTransformer(schema, strict=None)
        transformer.walk()
        return None if transformer.is_strict_compatible else "not strict-compatible"

    def converted(schema: dict) -> str | None:
        strict = OpenAIJsonSchemaTransformer(schema, strict=True).walk()
        forced = harness.forced_values(schema, strict)
        return f"optional {forced} become required non-null" if forced else None

    checks = {
        "strict-compatible(mcp)": harness.tally(
            {t["name"]: compatible(t["inputSchema"]) for t in published["mcp"]}, "strict-compatible"
        ),
        "strict=True(mcp)": harness.tally(
            {t["name"]: converted(t["inputSchema"]) for t in published["mcp"]}, "usable in strict mode"
        ),
    }
    if "openai-strict" in published:
        checks["strict-compatible(openai-strict)"] = harness.tally(
            {t["function"]["name"]: compatible(t["function"]["parameters"]) for t in published["openai-strict"]},
            "strict-compatible",
        )
    return checks


if __name__ == "__main__":
    harness.main(workflow, schemas)
