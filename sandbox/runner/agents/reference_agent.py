"""The scripted reference agents, one per workflow (sandbox/runner/agents/reference/)."""

from __future__ import annotations

from sandbox.runner.task import AgentResult, AgentTask, Tools


class ReferenceAgent:
    name = "reference"

    async def run(self, task: AgentTask) -> AgentResult:
        from sandbox.runner.agents.reference import SOLVERS

        solver = SOLVERS.get(task.workflow)
        if solver is None:
            return AgentResult(output="", status="error", error=f"no reference agent for workflow {task.workflow!r}")
        tools = Tools(task.client)
        output = await solver(tools, task)
        return AgentResult(output=output, details={"tool_calls": tools.calls})
