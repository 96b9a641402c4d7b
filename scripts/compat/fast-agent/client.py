"""fast-agent: ``@fast.agent(servers=["sandbox"])`` and ``async with fast.run()``, configured by a
``fastagent.config.yaml`` (written into the working directory, as a user keeps one): the MCP
server, and the ``generic`` (OpenAI-compatible) provider on the scripted loopback model server.
The agent runs the MCP prompt ``task`` itself (``agent.apply_prompt("task")``). Telemetry and
logging off (``otel.enabled: false``, ``isolated=True``)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from fast_agent import FastAgent  # noqa: E402


def config(job: harness.Job) -> dict:
    if job.stdio:
        server = {"transport": "stdio", "command": job.command, "args": job.args}
    else:
        server = {"transport": "http", "url": job.url}
    return {
        "default_model": f"generic.{job.model}",
        "generic": {"api_key": "local", "base_url": job.model_url},
        "logger": {"type": "none", "progress_display": False, "show_chat": False, "show_tools": False},
        "otel": {"enabled": False},
        "mcp": {"servers": {harness.SERVER: server}},
    }


async def workflow(job: harness.Job) -> dict:
    path = Path("fastagent.config.yaml")
    path.write_text(json.dumps(config(job), indent=2))  # JSON is YAML
    fast = FastAgent("compat", config_path=str(path), parse_cli_args=False, quiet=True, isolated=True)

    @fast.agent(name="browser", instruction=harness.INSTRUCTIONS, servers=[harness.SERVER])
    async def browser() -> None:
        pass

    async with fast.run() as app:
        final = await app.browser.apply_prompt("task")
    return {"final": final, "task_source": "mcp prompt (apply_prompt)"}


def schemas(published: dict) -> dict[str, str]:
    """fast-agent's OpenAI providers pass each MCP input schema through
    ``sanitize_tool_input_schema`` (defaults dropped, types inferred from them): optional
    properties must stay optional."""
    from fast_agent.llm.provider.openai.schema_sanitizer import sanitize_tool_input_schema

    def sanitized(schema: dict) -> str | None:
        try:
            shown = sanitize_tool_input_schema(schema)
        except Exception as exc:  # noqa: BLE001  (reported per tool)
            return harness.exception_line(exc)
        optional = set(schema.get("properties", {})) - set(schema.get("required", []))
        forced = sorted(optional & set(shown.get("required", [])))
        return f"optional {forced} become required" if forced else None

    return {
        "sanitize_tool_input_schema(mcp)": harness.tally(
            {t["name"]: sanitized(t["inputSchema"]) for t in published["mcp"]}, "sanitized, optional kept optional"
        )
    }


if __name__ == "__main__":
    harness.main(workflow, schemas)
