"""The Inspect AI integration, offline: Inspect's mock model plays back the tool calls of the
recorded bid-intake reference attempt (through the sandbox's MCP server, spawned per sample
as `sandbox mcp --pack bid-intake`) and then answers; the sandbox scorer qualifies the right
answer and fails a wrong one, and the metrics say so."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai._eval.loader import load_tasks  # what `inspect eval FILE@NAME` calls
from inspect_ai._util.registry import registry_info
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandbox import FIXTURES_DIR, PROJECT_ROOT
from sandbox.evaluation.packs import list_packs
from sandbox.integrations.inspect.tasks import bid_intake
from sandbox.runner.agents.replay import substitute
from toolserver.contract.trace import read_trace

RECORDED = FIXTURES_DIR / "attempts" / "reference" / "bid-intake"
MODEL = "mockllm/model"


def scripted_model(answer: str, site_key: str):
    """The recorded reference attempt's tool calls, then ``answer`` (no language model)."""
    calls = read_trace(RECORDED / "trace.jsonl").calls
    recorded_key = calls[0].args["site_key"]
    outputs = [
        ModelOutput.for_tool_call(MODEL, call.tool, substitute(call.args, recorded_key, site_key)) for call in calls
    ]
    outputs.append(ModelOutput.from_content(MODEL, answer))
    for output in outputs:  # given usage: the mock model would otherwise count tokens with tiktoken's
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # downloaded tables
    return get_model(MODEL, custom_outputs=outputs)


def wrong_answer() -> str:
    output = (RECORDED / "output.txt").read_text(encoding="utf-8")
    record = json.loads(output.split("BENCHMARK_JSON_BEGIN", 1)[1].split("BENCHMARK_JSON_END", 1)[0])
    record[0]["place"]["postal_code"] = "00000"
    return "BENCHMARK_JSON_BEGIN\n" + json.dumps(record) + "\nBENCHMARK_JSON_END\n"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> dict:
    """The right and a wrong answer as two tasks of one eval, which Inspect runs at once (each
    sample spawns its own MCP server); name -> (the task's log, its sample's score)."""
    answers = {"right": (RECORDED / "output.txt").read_text(encoding="utf-8"), "wrong": wrong_answer()}
    tasks = []
    for number, (name, answer) in enumerate(answers.items(), start=1):
        site_key = f"inspect-test-key-000{number}"
        trace_root = tmp_path_factory.mktemp(f"inspect-{name}")
        tasks.append(
            task_with(
                bid_intake(site_key=site_key, trace_root=str(trace_root)),
                model=scripted_model(answer, site_key),
                name=f"bid_intake_{name}",
            )
        )
    logs = inspect_eval(tasks, log_dir=str(tmp_path_factory.mktemp("inspect-logs")), display="none", max_tasks=2)
    results = {}
    for log in logs:
        assert log.status == "success", log.error
        (sample,) = log.samples
        results[log.eval.task.removeprefix("bid_intake_")] = (log, sample.scores["sandbox_scorer"])
    assert sorted(results) == sorted(answers)
    return results


def test_the_reference_calls_and_answer_qualify_through_inspect(evaluated):
    log, score = evaluated["right"]
    assert score.value == {"qualified_pass": 1.0, "field_accuracy": 1.0, "critical_failures": 0.0}, score.explanation
    trace = read_trace(score.metadata["trace"])
    assert trace.header["transport"] == "mcp-stdio"
    assert [c.tool for c in trace.calls] == [c.tool for c in read_trace(RECORDED / "trace.jsonl").calls]
    metrics = {result.name: result.metrics["mean"].value for result in log.results.scores}
    assert metrics == {"qualified_pass": 1.0, "field_accuracy": 1.0, "critical_failures": 0.0}


def test_a_wrong_answer_fails_the_scorer(evaluated):
    _, score = evaluated["wrong"]
    assert score.value["field_accuracy"] < 1.0
    report = score.metadata["score_report"]
    assert [f["name"] for f in report["fields"] if not f["correct"]] == ["place.postal_code"]


def test_every_pack_is_a_task_inspect_finds_by_name_in_the_file():
    """``inspect eval tasks.py@NAME`` for every pack (the one builder registers them all), and
    ``tasks.py@sandbox_pack -T pack=ID`` for any pack."""
    tasks_file = PROJECT_ROOT / "sandbox" / "integrations" / "inspect" / "tasks.py"
    for pack in list_packs():
        name = pack.id.replace("-", "_")
        (loaded,) = load_tasks([f"{tasks_file}@{name}"], {"site_key": "inspect-test-key-0009"})
        assert loaded.name == name and registry_info(loaded).name == name
        assert loaded.dataset[0].metadata == {"pack": pack.id, "site_key": "inspect-test-key-0009"}
    (any_pack,) = load_tasks([f"{tasks_file}@sandbox_pack"], {"pack": "sec-contract"})
    assert any_pack.name == "sec_contract" and any_pack.dataset[0].metadata["pack"] == "sec-contract"


def test_sandbox_pack_says_it_needs_a_pack_and_makes_its_trace_root(tmp_path):
    tasks_file = PROJECT_ROOT / "sandbox" / "integrations" / "inspect" / "tasks.py"
    with pytest.raises(Exception, match=r"sandbox_pack needs the pack: -T pack=ID"):  # was: a TypeError
        load_tasks([f"{tasks_file}@sandbox_pack"], {})
    root = tmp_path / "not" / "made" / "yet"  # each sample's trace folder was made in it: FileNotFoundError
    load_tasks([f"{tasks_file}@sandbox_pack"], {"pack": "bid-intake", "trace_root": str(root)})
    assert root.is_dir()


def test_the_scorer_times_the_agent_as_sandbox_run_does(evaluated):
    """The time gate was given the time since the solver began, the `sandbox mcp` process's start
    and its connection included, as a monotonic timestamp kept in the sample (from another process
    when a saved log is scored again)."""
    log, score = evaluated["right"]
    elapsed = score.metadata["elapsed_seconds"]
    (sample,) = log.samples
    assert sample.metadata["sandbox_elapsed_seconds"] == elapsed  # a duration, kept in the log
    assert "sandbox_started" not in sample.metadata
    trace = read_trace(score.metadata["trace"])
    assert 0 < elapsed < trace.end["t"]  # within the run's own time, the server's start left out
