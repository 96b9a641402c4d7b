"""Inspect AI integration (the optional ``[inspect]`` extra): every pack as an Inspect task.

    inspect eval sandbox/integrations/inspect/tasks.py@bid_intake --model openai/...

Each sample is one attempt: the pack's prompt (with a fresh site key) is the input; the
model gets the sandbox's browser tools through the sandbox's own MCP server (``sandbox mcp
--pack PACK``, stdio, one server per sample: its own browser, its own trace); the scorer runs
the sandbox's scorer and gates on that trace and the model's final output, and reports the
qualified pass, field accuracy and critical failures as Inspect metrics.
"""

from sandbox.integrations.inspect._task import sandbox_agent, sandbox_scorer, sandbox_task

__all__ = ["sandbox_agent", "sandbox_scorer", "sandbox_task"]
