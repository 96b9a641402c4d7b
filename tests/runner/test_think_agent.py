"""think:SECONDS:AGENT waits before each tool call and otherwise is the agent it wraps."""

from __future__ import annotations

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions, AgentSpecError, make_agent
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


@pytest.mark.parametrize("seconds", ["nan", "inf", "-inf", "NaN", "Infinity"])
def test_a_think_delay_that_is_no_finite_number_is_refused(seconds):
    """float() reads these: nan passed the old ``delay < 0`` check, inf too, and every call then
    waited until the pack's time limit."""
    with pytest.raises(AgentSpecError, match="use think:SECONDS:AGENT with SECONDS >= 0"):
        make_agent(f"think:{seconds}:reference")


def test_think_takes_the_options_its_inner_agent_takes(tmp_path):
    options = AgentOptions(base_url="http://127.0.0.1:1/v1", cassette=tmp_path / "c.yaml")
    agent = make_agent("think:0.5:openai:some-model", options)
    assert agent.name == "think:0.5:openai:some-model"
    assert agent.inner.options == options  # handed on to the model agent
    with pytest.raises(AgentSpecError, match="--cassette is for model agents .*; reference does not use it"):
        make_agent("think:0.5:reference", AgentOptions(cassette=tmp_path / "c.yaml"))


def test_think_takes_them_on_the_command_line_too(tmp_path, capsys):
    from sandbox.cli import main

    # the options pass the check; the unreachable endpoint is the think agent's own preflight (its inner agent's)
    code = main(
        ["run", "bid-intake", "--agent", "think:0.1:openai:m", "--base-url", "http://127.0.0.1:9/v1"]
        + ["--out", str(tmp_path), "--no-progress"]
    )
    assert code == 2
    assert "cannot reach the model endpoint http://127.0.0.1:9/v1" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_bad_think_spec_beside_another_agent_gets_the_think_usage(tmp_path, capsys):
    """With several agents, the options each takes were looked up first: "unknown agent ''"."""
    from sandbox.cli import main

    code = main(["run", "bid-intake", "--agent", "think:1", "--agent", "reference", "--out", str(tmp_path)])
    assert code == 2
    assert "think agent: use think:SECONDS:AGENT with SECONDS >= 0, got 'think:1'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("spec", ["think:0.5:cmd:python3 agent.py", "think:0.5:think:0.1:cmd:./agent"])
def test_think_refuses_a_cmd_agent_it_could_not_slow(spec):
    """A cmd: agent calls the HTTP tool server itself: think:SECONDS:cmd:... was accepted and
    added no delay."""
    with pytest.raises(AgentSpecError, match="a cmd: agent calls the tool server itself, so think cannot slow it"):
        make_agent(spec)


def test_think_around_a_cmd_agent_is_refused_on_the_command_line(tmp_path, capsys):
    from sandbox.cli import main

    code = main(["run", "bid-intake", "--agent", "think:0.5:cmd:true", "--out", str(tmp_path), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "think agent: a cmd: agent calls the tool server itself, so think cannot slow it; make the command " in err
    assert "got 'think:0.5:cmd:true'" in err
    assert list(tmp_path.iterdir()) == []
