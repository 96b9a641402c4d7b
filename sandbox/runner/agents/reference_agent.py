"""The scripted reference agents, one per workflow (sandbox/runner/agents/reference/)."""

from __future__ import annotations

from sandbox.runner.task import AgentResult, AgentTask, Tools

KIND = "reference"
USAGE = "reference"
NEEDS_VALUE = False


class ReferenceAgent:
    name = "reference"

    async def run(self, task: AgentTask) -> AgentResult:
        from sandbox.runner.agents.reference import solvers

        solver = solvers().get(task.workflow)
        if solver is None:
            return AgentResult(output="", status="error", error=f"no reference agent for workflow {task.workflow!r}")
        assert task.client is not None, "run_attempt always gives the agent a tool client"
        tools = Tools(task.client)
        output = await solver(tools, task)
        return AgentResult(output=output, details={"tool_calls": tools.calls})


def create(value: str, options) -> ReferenceAgent:
    if value:
        raise ValueError(f"the reference agent takes no value (got 'reference:{value}')")
    return ReferenceAgent()
