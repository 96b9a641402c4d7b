"""smolagents: ``ToolCallingAgent(tools=MCPClient(params).get_tools(), model=...)``, with
``MCPClient`` in its default mode (mcpadapt, ``structured_output`` not given: a tool's result is
its first content block). The model is a smolagents ``Model`` subclass running the form policy on
the messages the agent gives it (its "Calling tools:" and "Observation:" / "Error:" messages).
``MCPClient`` reads no MCP prompts, so the task comes from the HTTP API (the runner's prompt file)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from smolagents import MCPClient, Model, ToolCallingAgent  # noqa: E402
from smolagents.models import (  # noqa: E402
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    get_tool_json_schema,
)

policy = harness.policy


def text(message: ChatMessage) -> str:
    content = message.content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class ScriptedModel(Model):
    """The form policy as a smolagents model: one tool call per step, the answer through
    ``final_answer``. Each step leaves one "Observation:" or "Error:" message; the model pairs
    them with the calls it made (a call smolagents refuses before running it leaves no "Calling
    tools:" message, only its error). Every input smolagents marks required (not ``nullable``)
    is sent (``get_tool_json_schema``: what smolagents shows a model), as a model shown that
    schema must."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted-form-1")
        self.issued: list[tuple[str, dict]] = []

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        prompt = "\n".join(text(m) for m in messages if m.role == MessageRole.USER)
        results = [text(m) for m in messages if m.role == MessageRole.TOOL_RESPONSE]
        turns = [policy.Turn(name, args, result) for (name, args), result in zip(self.issued, results, strict=False)]
        step = policy.next_step(prompt, turns)
        if "answer" in step:
            name, args = "final_answer", {"answer": step["answer"]}
        else:
            name, args = step["call"]
            tools = {tool.name: tool for tool in tools_to_call_from or []}
            name = policy.offered_name(name, list(tools))
            if name in tools:  # the schema smolagents shows a model for this tool
                args = policy.completed(args, get_tool_json_schema(tools[name])["function"]["parameters"])
            self.issued.append((name, args))
        call = ChatMessageToolCall(
            id=f"call_{len(turns)}", type="function", function=ChatMessageToolCallFunction(name=name, arguments=args)
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


async def workflow(job: harness.Job) -> dict:
    if job.stdio:
        params = StdioServerParameters(command=job.command, args=job.args)
    else:
        params = {"url": job.url, "transport": "streamable-http"}
    with MCPClient(params) as tools:
        agent = ToolCallingAgent(
            tools=tools,
            model=ScriptedModel(),
            max_steps=30,
            verbosity_level=int(__import__("os").environ.get("SMOL_VERBOSE", "0")),
        )
        final = agent.run(job.prompt())
    return {"final": str(final), "task_source": "HTTP API (GET /runs/{id}/task)"}


def schemas(published: dict) -> dict[str, str]:
    """How mcpadapt turns each MCP input schema into smolagents ``inputs``, and whether smolagents
    accepts the tool it builds (``Tool.validate_arguments``). An optional property with no default
    must come out ``nullable``: else smolagents makes it required, and refuses the null the model
    is shown it may send (mcpadapt types an ``anyOf`` property as a string)."""
    from mcpadapt.smolagents_adapter import SmolAgentsAdapter

    try:
        import mcp_types as types
    except ImportError:
        import mcp.types as types

    adapter = SmolAgentsAdapter(structured_output=False)

    def adapted(tool: dict) -> str | None:
        mcp_tool = types.Tool(name=tool["name"], description=tool["description"], inputSchema=tool["inputSchema"])
        try:
            built = adapter.adapt(lambda args: None, mcp_tool)
            built.validate_arguments()
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        properties = tool["inputSchema"].get("properties", {})
        optional = set(properties) - set(tool["inputSchema"].get("required", []))
        no_default = sorted(p for p in optional if properties[p].get("default") is None)
        required = [p for p in no_default if not built.inputs.get(p, {}).get("nullable")]
        retyped = [f"{p}: {built.inputs[p]['type']}" for p in required if "anyOf" in properties[p]]
        if required:
            return f"optional {required} required by smolagents" + (f" (typed {retyped})" if retyped else "")
        return None

    return {
        "mcpadapt -> smolagents Tool(mcp)": harness.tally(
            {t["name"]: adapted(t) for t in published["mcp"]}, "accepted, optional kept optional"
        )
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
