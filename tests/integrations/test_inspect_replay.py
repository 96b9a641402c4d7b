"""An Inspect log recorded by Inspect itself replays here: Inspect's mock model plays the
recorded controlled-form reference attempt's tool calls through the sandbox's MCP server (plus
one click on a ref that does not exist, which the model gets back as a tool error, and one
snapshot whose argument Inspect refuses itself), and `sandbox replay` reads the log Inspect
wrote, re-issues every call the sandbox saw on the real browser and finds no divergence: results
as the MCP client read them, the error by its type; its re-score is the score Inspect's run got."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai.log import write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandbox import FIXTURES_DIR
from sandbox.integrations.inspect.tasks import controlled_form
from sandbox.runner.agents.replay import substitute
from sandbox.runner.recordings import INSPECT_CUT_OFF, INSPECT_ELAPSED, load_recording
from sandbox.runner.replay import replay
from toolserver.contract.trace import read_trace

RECORDED = FIXTURES_DIR / "attempts" / "reference" / "controlled-form"
MODEL = "mockllm/model"
SITE_KEY = "inspect-replay-key-0001"
WRONG_REF = {"ref": "e9999"}
NOT_AN_INT = {"max_chars": "lots"}  # Inspect refuses it before sending it (a "parsing" error)


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    """The log of one Inspect eval: the recorded calls, a click on a wrong ref after the first
    snapshot, then the recorded answer."""
    calls = read_trace(RECORDED / "trace.jsonl").calls
    recorded_key = calls[0].args["site_key"]
    outputs = [ModelOutput.for_tool_call(MODEL, c.tool, substitute(c.args, recorded_key, SITE_KEY)) for c in calls]
    outputs.insert(2, ModelOutput.for_tool_call(MODEL, "browser_click", WRONG_REF))
    outputs.insert(3, ModelOutput.for_tool_call(MODEL, "browser_snapshot", NOT_AN_INT))
    outputs.append(ModelOutput.from_content(MODEL, (RECORDED / "output.txt").read_text(encoding="utf-8")))
    for output in outputs:  # given usage: the mock model would otherwise count tokens with tiktoken's tables
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    trace_root = tmp_path_factory.mktemp("inspect-replay-traces")
    task = task_with(
        controlled_form(site_key=SITE_KEY, trace_root=str(trace_root)),
        model=get_model(MODEL, custom_outputs=outputs),
    )
    (log,) = inspect_eval([task], log_dir=str(tmp_path_factory.mktemp("inspect-replay-logs")), display="none")
    assert log.status == "success", log.error
    (score,) = log.samples[0].scores.values()
    return log, read_trace(score.metadata["trace"]), score


async def test_a_log_inspect_wrote_replays_without_divergence(sandbox, inspect_log):
    log, live_trace, live_score = inspect_log
    recording = load_recording(log.location)
    assert recording.kind == "Inspect log" and recording.pack == "controlled-form"
    assert recording.site_key == SITE_KEY and recording.sample == "controlled-form"
    refused = recording.calls[3]
    assert (refused.tool, refused.args, refused.ok, refused.sent) == ("browser_snapshot", NOT_AN_INT, False, False)
    sent = [c for c in recording.calls if c.sent]
    assert [(c.tool, c.args) for c in sent] == [(c.tool, c.args) for c in live_trace.calls]
    wrong = recording.calls[2]
    (live_error,) = [c.error for c in live_trace.calls if not c.ok]
    assert (wrong.args, wrong.ok, wrong.error_type) == (WRONG_REF, False, live_error.type)
    assert all(c.result is not None and c.whole for c in recording.calls if c.ok)  # MCP's text read in full

    report, _ = await replay(log.location, sandbox=sandbox)
    assert report.first_divergence is None, report.first_divergence
    assert report.compared == report.calls_replayed == len(live_trace.calls) and report.not_sent == 1
    # the re-score is the live score: every field right, and the wrong click one call too many
    assert report.rescore["field_accuracy"] == live_score.value["field_accuracy"] == 1.0
    assert "; ".join(report.rescore["reasons"]) == live_score.explanation == "gate(s) failed: tool_counts"


def test_replay_reads_the_time_and_the_answer_the_live_scorer_used(inspect_log, tmp_path):
    """Replay read the sample's whole time (the MCP server's start and scoring in it) and the last
    assistant text, where the live scorer had the agent's time it kept and no answer for a sample a
    limit stopped or whose last turn made tool calls: a re-score could pass what failed live."""
    log, _, _ = inspect_log
    kept = log.samples[0].metadata[INSPECT_ELAPSED]
    recording = load_recording(log.location)
    assert recording.elapsed_seconds == kept and kept < log.samples[0].total_time
    assert recording.output == (RECORDED / "output.txt").read_text(encoding="utf-8")
    cut = log.model_copy(deep=True)
    cut.samples[0].metadata[INSPECT_CUT_OFF] = "token limit (100)"
    write_eval_log(cut, tmp_path / "cut.eval")
    assert load_recording(tmp_path / "cut.eval").output == ""
    calling = log.model_copy(deep=True)
    calling.samples[0].output = ModelOutput.for_tool_call(MODEL, "browser_snapshot", {})
    write_eval_log(calling, tmp_path / "calling.eval")
    assert load_recording(tmp_path / "calling.eval").output == ""
