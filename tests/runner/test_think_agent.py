"""think:SECONDS:AGENT waits before each tool call and otherwise is the agent it wraps."""

from __future__ import annotations

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import make_agent
from sandbox.runner.attempt import run_attempt


async def test_thinking_reference_agent_waits_and_still_qualifies(sandbox, tmp_path):
    agent = make_agent("think:0.05:reference")
    assert agent.name == "think:0.05:reference"
    outcome = await run_attempt(sandbox, load_pack("controlled-form"), agent, tmp_path / "attempt")
    assert outcome.qualified_pass and outcome.agent == "think:0.05:reference"
    assert outcome.elapsed_seconds >= 0.05 * outcome.tool_calls  # it thought before every call


@pytest.mark.parametrize("spec", ["think:x:reference", "think:-1:reference", "think:0.5", "think:0.5:nobody"])
def test_bad_think_specs_are_refused(spec):
    with pytest.raises(ValueError, match="think|unknown agent"):
        make_agent(spec)
