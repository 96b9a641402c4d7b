"""The Inspect AI integration, offline: Inspect's mock model plays back the tool calls of the
recorded bid-intake reference attempt (through the sandbox's MCP server, spawned per sample
as `sandbox mcp --pack bid-intake`) and then answers; the sandbox scorer qualifies the right
answer and fails a wrong one, and the metrics say so."""

from __future__ import annotations

import json

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandbox import FIXTURES_DIR
from sandbox.core.trace import read_trace
from sandbox.integrations.inspect.tasks import bid_intake
from sandbox.runner.agents.replay import substitute

RECORDED = FIXTURES_DIR / "attempts" / "reference" / "bid-intake"
SITE_KEY = "inspect-test-key-0001"
MODEL = "mockllm/model"


def scripted_model(answer: str):
    """The recorded reference attempt's tool calls, then ``answer`` (no language model)."""
    calls = read_trace(RECORDED / "trace.jsonl").calls
    recorded_key = calls[0].args["site_key"]
    outputs = [ModelOutput.for_tool_call(MODEL, call.tool, substitute(call.args, recorded_key, SITE_KEY))
               for call in calls]
    outputs.append(ModelOutput.from_content(MODEL, answer))
    for output in outputs:   # given usage: the mock model would otherwise count tokens with tiktoken's
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)   # downloaded tables
    return get_model(MODEL, custom_outputs=outputs)


def run_task(tmp_path, answer: str):
    (log,) = inspect_eval(bid_intake(site_key=SITE_KEY, trace_root=str(tmp_path)), model=scripted_model(answer),
                          log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples
    return log, sample.scores["sandbox_scorer"]


def test_the_reference_calls_and_answer_qualify_through_inspect(tmp_path):
    log, score = run_task(tmp_path, (RECORDED / "output.txt").read_text(encoding="utf-8"))
    assert score.value == {"qualified_pass": 1.0, "field_accuracy": 1.0, "critical_failures": 0.0}, score.explanation
    trace = read_trace(score.metadata["trace"])
    assert trace.header["transport"] == "mcp-stdio"
    assert [c.tool for c in trace.calls] == [c.tool for c in read_trace(RECORDED / "trace.jsonl").calls]
    metrics = {result.name: result.metrics["mean"].value for result in log.results.scores}
    assert metrics == {"qualified_pass": 1.0, "field_accuracy": 1.0, "critical_failures": 0.0}


def test_a_wrong_answer_fails_the_scorer(tmp_path):
    output = (RECORDED / "output.txt").read_text(encoding="utf-8")
    record = json.loads(output.split("BENCHMARK_JSON_BEGIN", 1)[1].split("BENCHMARK_JSON_END", 1)[0])
    record[0]["place"]["postal_code"] = "00000"
    wrong = "BENCHMARK_JSON_BEGIN\n" + json.dumps(record) + "\nBENCHMARK_JSON_END\n"
    _, score = run_task(tmp_path, wrong)
    assert score.value["field_accuracy"] < 1.0
    report = score.metadata["score_report"]
    assert [f["name"] for f in report["fields"] if not f["correct"]] == ["place.postal_code"]
