"""Agents. Each agent is ``async run(task: AgentTask) -> AgentResult``; see sandbox.runner.task."""
