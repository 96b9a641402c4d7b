"""The Inspect task's edges, offline with Inspect's mock model: the environment the `sandbox mcp`
server of a sample gets, a relative trace root, a pack given by its folder's path, and a sample
cut off by an Inspect limit (scored as no answer, as `sandbox run` scores a time-out)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai._eval.loader import load_tasks  # what `inspect eval FILE@NAME` calls
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandbox import FIXTURES_DIR, PROJECT_ROOT
from sandbox.integrations.inspect import sandbox_task
from sandbox.runner.agents.replay import substitute
from toolserver.contract.trace import read_trace

TASKS_FILE = PROJECT_ROOT / "sandbox" / "integrations" / "inspect" / "tasks.py"
MODEL = "mockllm/model"
KEY = "inspect-test-key-0042"


def recorded(pack: str) -> tuple[list[ModelOutput], str]:
    """The recorded reference attempt's tool calls of ``pack`` as mock outputs, and its answer."""
    folder = FIXTURES_DIR / "attempts" / "reference" / pack
    calls = read_trace(folder / "trace.jsonl").calls
    recorded_key = calls[0].args["site_key"]
    outputs = [ModelOutput.for_tool_call(MODEL, c.tool, substitute(c.args, recorded_key, KEY)) for c in calls]
    return outputs, (folder / "output.txt").read_text(encoding="utf-8")


def scripted(outputs: list[ModelOutput] | Iterator[ModelOutput]):
    def counted() -> Iterator[ModelOutput]:
        for output in outputs:  # given usage: the mock model would otherwise count tokens with tiktoken's
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # downloaded tables
            yield output

    return get_model(MODEL, custom_outputs=counted())


def evaluated(task, tmp_path, **limits):
    (log,) = inspect_eval(task, log_dir=str(tmp_path / "logs"), display="none", **limits)
    (sample,) = log.samples
    return log, sample


def test_the_mcp_server_of_a_sample_gets_the_callers_environment(tmp_path, monkeypatch):
    """The MCP SDK gives a server only HOME, LOGNAME, PATH, SHELL, TERM and USER: the documented
    SANDBOX_CHROMIUM (and PLAYWRIGHT_*, TMPDIR, LANG) never reached it."""
    missing = tmp_path / "no-chromium-here"
    monkeypatch.setenv("SANDBOX_CHROMIUM", str(missing))
    outputs, answer = recorded("controlled-form")
    task = task_with(sandbox_task("controlled-form", site_key=KEY, trace_root=str(tmp_path / "traces")),
                     model=scripted([outputs[0], ModelOutput.from_content(MODEL, answer)]))  # fmt: skip
    _, sample = evaluated(task, tmp_path)
    said = json.dumps([message.model_dump(mode="json") for message in sample.messages if message.role == "tool"])
    said += sample.error.message if sample.error else ""
    assert f"SANDBOX_CHROMIUM is {missing}" in said, said[:2000]


def test_a_relative_trace_root_is_in_the_folder_inspect_runs_in(tmp_path, monkeypatch):
    """Inspect calls the task function inside the tasks file's folder: the trace root was made in
    the package's source tree, and each sample (run in the caller's folder) failed to make its
    trace folder in a ./traces that did not exist there."""
    monkeypatch.chdir(tmp_path)
    in_source = TASKS_FILE.parent / "traces"
    assert not in_source.exists()
    try:
        (loaded,) = load_tasks([f"{TASKS_FILE}@controlled_form"], {"trace_root": "traces", "site_key": KEY})
        _, answer = recorded("controlled-form")
        log, sample = evaluated(task_with(loaded, model=scripted([ModelOutput.from_content(MODEL, answer)])), tmp_path)
        assert log.status == "success" and sample.error is None, sample.error
        assert not in_source.exists()
        trace = sample.scores["sandbox_scorer"].metadata["trace"]
        assert trace.startswith(str(tmp_path / "traces") + "/"), trace
    finally:
        shutil.rmtree(in_source, ignore_errors=True)


def test_a_pack_given_by_its_folder_is_the_one_the_server_and_scorer_load(tmp_path, monkeypatch):
    """The solver gave `sandbox mcp` the pack's id, and the scorer loaded it by id: a pack outside
    packs/ failed every sample. A relative path is refused, said (Inspect reads it from the
    tasks file's folder)."""
    folder = tmp_path / "my-form"
    shutil.copytree(PROJECT_ROOT / "packs" / "controlled-form", folder)
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, "pack_id": "my-form", "scoring_pack": "my-form"}))
    outputs, answer = recorded("controlled-form")
    task = task_with(sandbox_task(str(folder), site_key=KEY, trace_root=str(tmp_path / "traces")),
                     model=scripted([*outputs, ModelOutput.from_content(MODEL, answer)]))  # fmt: skip
    log, sample = evaluated(task, tmp_path)
    assert log.status == "success" and sample.error is None, sample.error
    score = sample.scores["sandbox_scorer"]
    assert score.value["qualified_pass"] == 1.0, score.explanation
    assert score.metadata["score_report"]["pack"] == "my-form"
    assert read_trace(score.metadata["trace"]).header["pack"] == "my-form"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception, match=r"pack './my-form' is a relative path.*absolute path"):
        load_tasks([f"{TASKS_FILE}@sandbox_pack"], {"pack": "./my-form"})


def test_a_sample_cut_off_by_a_limit_is_scored_as_no_answer(tmp_path):
    """Inspect scores a sample's last output even when a limit cut it off: a turn that made
    tool calls, its text taken as the answer (here the right one: a qualified pass)."""
    outputs, answer = recorded("controlled-form")
    last = ModelOutput.for_tool_call(MODEL, "browser_snapshot", {}, content=answer)
    task = task_with(sandbox_task("controlled-form", site_key=KEY, trace_root=str(tmp_path / "traces")),
                     model=scripted([*outputs, last, ModelOutput.from_content(MODEL, "late")]))  # fmt: skip
    _, sample = evaluated(task, tmp_path, token_limit=2 * (len(outputs) + 1))
    assert sample.limit is not None and sample.limit.type == "token", sample.limit
    score = sample.scores["sandbox_scorer"]
    assert score.value["qualified_pass"] == 0.0 and score.answer == "", score.answer[:200]
    assert score.explanation.startswith("no answer: the sample hit an Inspect token limit"), score.explanation


def test_a_time_limit_is_the_time_gates_and_the_answer_is_none(tmp_path):
    """The time limit cancels the solver: the agent's time was measured from the server's
    connection, under the limit; it is now the sample's (at least the limit)."""

    def snapshots() -> Iterator[ModelOutput]:
        outputs, _ = recorded("controlled-form")
        yield outputs[0]
        while True:
            yield ModelOutput.for_tool_call(MODEL, "browser_snapshot", {})

    task = task_with(sandbox_task("controlled-form", site_key=KEY, trace_root=str(tmp_path / "traces")),
                     model=scripted(snapshots()), time_limit=8)  # fmt: skip
    _, sample = evaluated(task, tmp_path)
    assert sample.limit is not None and sample.limit.type == "time", sample.limit
    score = sample.scores["sandbox_scorer"]
    assert score.explanation.startswith("no answer: the sample hit an Inspect time limit (8 s)"), score.explanation
    assert score.metadata["elapsed_seconds"] >= 8 and sample.metadata["sandbox_elapsed_seconds"] >= 8
