"""The scripted reference agents, one per workflow (sandbox/runner/agents/reference/)."""

from __future__ import annotations

from sandbox.runner.agents._kinds import AgentOptions, AgentSpecError, agent_kind
from sandbox.runner.task import AgentResult, AgentTask, Tools


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


@agent_kind("reference", usage="reference", needs_value=False)
def create(value: str, options: AgentOptions) -> ReferenceAgent:
    if value:
        raise AgentSpecError(f"the reference agent takes no value (got 'reference:{value}')")
    return ReferenceAgent()
