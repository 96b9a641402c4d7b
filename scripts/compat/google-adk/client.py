"""google-adk: ``LlmAgent(tools=[McpToolset(connection_params=StdioConnectionParams |
StreamableHTTPConnectionParams)])`` run by an ``InMemoryRunner``. The model is a ``BaseLlm``
subclass running the form policy on the request's contents (function calls and function
responses). ``McpToolset`` reads no MCP prompts, so the task comes from the HTTP API (the
runner's prompt file)."""

import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams, StreamableHTTPConnectionParams  # noqa: E402
from google.genai import types  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

policy = harness.policy


class ScriptedLlm(BaseLlm):
    """The form policy as an ADK model: it reads the user text, its own function calls and the
    function responses ADK sends back."""

    model: str = policy.MODEL

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator:
        prompt, calls, responses = [], [], []
        for content in llm_request.contents:
            for part in content.parts or []:
                if part.text and content.role == "user":
                    prompt.append(part.text)
                if part.function_call:
                    calls.append(part.function_call)
                if part.function_response:
                    responses.append(part.function_response)
        by_id = {r.id: r for r in responses if r.id}
        turns = []
        for index, call in enumerate(calls):
            response = by_id.get(call.id) if call.id else None
            response = response or (responses[index] if index < len(responses) else None)
            result = json.dumps(response.response, ensure_ascii=False, default=str) if response else ""
            turns.append(policy.Turn(call.name, dict(call.args or {}), result))
        step = policy.next_step("\n".join(prompt), turns)
        if "answer" in step:
            part = types.Part(text=step["answer"])
        else:
            name, args = step["call"]
            part = types.Part(
                function_call=types.FunctionCall(
                    name=policy.offered_name(name, list(llm_request.tools_dict)), args=args
                )
            )
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


async def workflow(job: harness.Job) -> dict:
    if job.stdio:
        params = StdioConnectionParams(server_params=StdioServerParameters(command=job.command, args=job.args))
    else:
        params = StreamableHTTPConnectionParams(url=job.url)
    toolset = McpToolset(connection_params=params)
    agent = LlmAgent(name="browser", model=ScriptedLlm(), instruction=harness.INSTRUCTIONS, tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="compat")
    session = await runner.session_service.create_session(app_name="compat", user_id="user")
    final = ""
    try:
        message = types.Content(role="user", parts=[types.Part(text=job.prompt())])
        async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(part.text or "" for part in event.content.parts)
    finally:
        await toolset.close()
        await runner.close()
    return {"final": final, "task_source": "HTTP API (GET /runs/{id}/task)"}


def schemas(published: dict) -> dict[str, str]:
    """The two conversions ADK applies to an MCP input schema: ``_to_gemini_schema`` (its
    default) and google-genai's ``Schema.from_json_schema``; optional properties must stay
    optional."""
    from google.adk.tools._gemini_schema_util import _to_gemini_schema

    def gemini(schema: dict) -> str | None:
        try:
            converted = _to_gemini_schema(schema)
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        required = set(converted.required or [])
        optional = set(schema.get("properties", {})) - set(schema.get("required", []))
        return f"optional {sorted(optional & required)} become required" if optional & required else None

    def genai(schema: dict) -> str | None:
        try:
            types.Schema.from_json_schema(json_schema=types.JSONSchema(**schema), api_option="GEMINI_API")
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        return None

    def genai_mcp(tool: dict) -> str | None:  # google-genai's own MCP tools (a session given to generate_content)
        from google.genai._mcp_utils import mcp_to_gemini_tool
        from mcp.types import Tool

        try:
            mcp_to_gemini_tool(Tool.model_validate(tool))
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        return None

    tools = published["mcp"]
    return {
        "_to_gemini_schema(mcp)": harness.tally({t["name"]: gemini(t["inputSchema"]) for t in tools}, "converted"),
        "Schema.from_json_schema(mcp)": harness.tally({t["name"]: genai(t["inputSchema"]) for t in tools}, "converted"),
        "google-genai mcp_to_gemini_tool(mcp)": harness.tally({t["name"]: genai_mcp(t) for t in tools}, "converted"),
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
