"""replay:ATTEMPT_DIR — re-issues a recorded attempt's calls in order and gives back its output.

The recorded site key is replaced by this attempt's fresh key (the gates require the new one).
"""

from __future__ import annotations

from pathlib import Path

from sandbox.runner.agents._kinds import AgentOptions, agent_kind
from sandbox.runner.task import AgentResult, AgentTask
from toolserver.contract.trace import read_trace


def substitute(value, old: str | None, new: str):
    """``value`` with every string that is the recorded site key ``old`` made ``new`` (only whole
    values: a short key such as ``k`` is also a letter of other values)."""
    if old is None:
        return value
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, list):
        return [substitute(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, old, new) for k, v in value.items()}
    return value


class ReplayAgent:
    def __init__(self, directory: Path, given: Path | None = None) -> None:
        """``given``: the folder as the spec gave it, which names the agent (None: ``directory``)."""
        self.directory = Path(directory)
        self.name = f"replay:{given or self.directory}"

    async def run(self, task: AgentTask) -> AgentResult:
        trace = read_trace(self.directory / "trace.jsonl")
        old_key = (trace.header or {}).get("site_key")
        assert task.client is not None, "run_attempt always gives the agent a tool client"
        for call in trace.calls:
            await task.client.call_raw(call.tool, substitute(call.args, old_key, task.site_key))
        output_file = self.directory / "output.txt"
        output = output_file.read_text(encoding="utf-8") if output_file.exists() else ""
        return AgentResult(output=output, details={"replayed_calls": len(trace.calls)})


@agent_kind("replay", usage="replay:ATTEMPT_DIR", uses=("workdir",))
def create(attempt_dir: str, options: AgentOptions) -> ReplayAgent:
    directory = options.path(attempt_dir)  # the driver's working directory's, on a Ray worker too
    if not (directory / "trace.jsonl").is_file():  # refused before the batch, not as each attempt's crash
        raise ValueError(f"replay:{attempt_dir}: no trace.jsonl there; give an attempt folder")
    return ReplayAgent(directory, Path(attempt_dir))
