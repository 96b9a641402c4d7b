"""Many agents in one batch, compared as the benchmark compares models: interleaved attempts,
the ranked table with 95% Wilson intervals, the agent x workflow matrix, the dispatch wait kept
out of the timing boundary; `sandbox compare` over earlier batches; `sandbox results` on the
folder given to --out; a `cmd:` agent runs where `sandbox run` was started."""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
import sys

import pytest
from PIL import Image

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.cli.commands.run import unpriced
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import AgentOptions, RecordMode
from sandbox.runner.batch import run_batch
from sandbox.runner.compare import comparison, format_comparison, wilson
from sandbox.runner.executors import BatchAgent
from sandbox.runner.folders import read_summary
from sandbox.runner.prices import Price, Prices
from tests.support.models import scripted_server
from tests.support.serve import served

ANSWER = "print('BENCHMARK_JSON_BEGIN'); print('{}'); print('BENCHMARK_JSON_END')"  # a wrong, empty answer
WRONG = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(ANSWER)}"
CASSETTE = FIXTURES_DIR / "cassettes" / "openai-bid-intake.yaml"


@pytest.mark.parametrize(
    ("passes", "n", "low", "high"),
    [(5, 5, 0.5655, 1.0), (0, 5, 0.0, 0.4345), (3, 5, 0.2307, 0.8824), (15, 30, 0.3315, 0.6685)],
)
def test_the_wilson_interval_matches_the_textbook_values(passes, n, low, high):
    got = wilson(passes, n)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_a_historical_pack_is_shown_with_the_pack_that_scores_it():
    attempt = {
        "agent": "a", "pack": "court-docket-p4", "qualified_pass": True, "error_free": True, "field_accuracy": 1.0,
        "elapsed_seconds": 1.0, "tool_calls": 5, "status": "completed",
    }  # fmt: skip
    comp = comparison([attempt, {**attempt, "pack": "bid-intake"}])
    assert comp["scored_as"] == {"court-docket-p4": "court-docket"}
    assert "note: court-docket-p4 is scored with court-docket" in format_comparison(comp)


def test_long_agent_names_stay_apart_in_the_tables():
    attempt = {
        "pack": "p", "qualified_pass": True, "error_free": True, "field_accuracy": 1.0,
        "elapsed_seconds": 1.0, "tool_calls": 5, "status": "completed",
    }  # fmt: skip
    names = [f"cmd:python my_agent.py --model gpt-x @ runs/20261205-{n}-cmd-python" for n in ("101500", "101700")]
    text = format_comparison(comparison([{**attempt, "agent": name} for name in names]))
    shown = [re.split(r"\s{2,}", line)[1] for line in text.splitlines() if line.startswith(("1 ", "2 "))]
    assert len(set(shown)) == 2 and all(len(label) <= 40 and label.endswith("-cmd-python") for label in shown)
    alike = [f"{'a' * 30}{n}{'b' * 30}" for n in (1, 2)]  # cut in the middle, the two would read the same
    text = format_comparison(comparison([{**attempt, "agent": name} for name in alike]))
    assert all(name in text for name in alike)


def test_compare_takes_a_historical_pack_and_its_reviewed_pack_for_one_workflow(tmp_path, capsys):
    """The benchmark's earlier models ran execution pack 4 of the docket, later ones pack 5; they
    are compared on that workflow, each scored by its reviewed pack."""
    for batch, pack in (("earlier", "court-docket-p4"), ("later", "court-docket")):
        attempts = [
            {
                "agent": "a", "pack": p, "qualified_pass": True, "error_free": True, "field_accuracy": 1.0,
                "elapsed_seconds": 1.0, "tool_calls": 5, "status": "completed",
                "directory": str(tmp_path / batch / f"a--{p}-1"),
            }
            for p in (pack, "bid-intake")
        ]  # fmt: skip
        (tmp_path / batch).mkdir()
        (tmp_path / batch / "summary.json").write_text(json.dumps({"summary": [], "attempts": attempts}))
    assert main(["compare", str(tmp_path / "earlier"), str(tmp_path / "later"), "--json"]) == 0
    captured = capsys.readouterr()
    assert "not every folder ran" not in captured.err, captured.err
    result = json.loads(captured.out)
    assert result["left_out"] == [] and result["scored_as"] == {"court-docket-p4": "court-docket"}
    assert result["matrix"]["a @ earlier"] == {
        "bid-intake": {"passes": 1, "attempts": 1},
        "court-docket": {"passes": 1, "attempts": 1},
    }


def test_ranking_is_passes_then_cost_then_time_and_unknown_cost_is_never_zero():
    def attempt(agent, ok, seconds, cost):
        return {
            "agent": agent, "pack": "p", "qualified_pass": ok, "error_free": ok, "field_accuracy": 1.0 if ok else 0.0,
            "elapsed_seconds": seconds, "tool_calls": 3, "status": "completed", "cost_usd": cost,
        }  # fmt: skip

    attempts = [
        attempt("cheap", True, 9.0, 0.01),
        attempt("dear", True, 1.0, 0.50),
        attempt("unpriced", True, 0.5, None),
        attempt("fast-fail", False, 0.1, 0.0),
    ]
    ranking = comparison(attempts)["ranking"]
    assert [r["agent"] for r in ranking] == ["cheap", "dear", "unpriced", "fast-fail"]
    assert ranking[2]["mean_cost_usd"] is None and ranking[0]["mean_cost_usd"] == 0.01
    # agents equal on passes, cost and time share a rank (they were ranked 1 and 2 by name)
    tied = comparison([attempt("b", True, 2.0, 0.1), attempt("a", True, 2.0, 0.1), attempt("c", True, 3.0, 0.1)])
    assert [(r["agent"], r["rank"]) for r in tied["ranking"]] == [("a", 1), ("b", 1), ("c", 3)]


def test_an_unknown_time_is_never_zero_seconds_in_the_median(tmp_path):
    """An agent whose every attempt's time is unknown (unfinished, unreadable) had a median of
    0.00 s, from those attempts' 0: it ranked first among equals as the fastest, and the tables
    and the leaderboard said 0.00."""
    from sandbox.runner.report import render_leaderboard

    def attempt(agent, status, seconds):
        return {
            "agent": agent, "pack": "p", "qualified_pass": False, "error_free": False, "field_accuracy": 0.0,
            "elapsed_seconds": seconds, "tool_calls": 0, "status": status, "cost_usd": None, "directory": "x",
        }  # fmt: skip

    attempts = [
        attempt("timed", "completed", 4.0),
        attempt("timed", "unreadable", 0.0),
        attempt("timed", "completed", 6.0),
        attempt("untimed", "unreadable", 0.0),
        attempt("untimed", "unfinished", 0.0),
    ]
    comp = comparison(attempts)
    assert [(r["agent"], r["median_seconds"]) for r in comp["ranking"]] == [("timed", 5.0), ("untimed", None)]
    text = format_comparison(comp)
    untimed = next(line for line in text.splitlines() if line.startswith("2 "))
    assert "0.000       unknown   unknown" in untimed  # field acc., median s, mean cost
    page = render_leaderboard(comp, attempts, tmp_path)
    assert "<td>0.000</td><td>unknown</td>" in page and "<td>0.000</td><td>5.00</td>" in page


def test_a_stopped_attempts_part_time_is_not_in_the_median(tmp_path):
    """A stopped attempt's time is only what it ran before its batch was stopped: it pulled the
    median (and the table's) down, an agent stopped early looking the fastest."""
    from sandbox.runner.batch import summarise
    from sandbox.runner.folders import AttemptFolder, outcome
    from tests.support.attempt_folders import scored_attempt

    for n, (status, seconds) in enumerate([("completed", 10.0), ("completed", 20.0), ("stopped", 0.5)], start=1):
        record = {"pack": "controlled-form", "agent": "a", "status": status, "elapsed_seconds": seconds}
        scored_attempt(tmp_path / f"controlled-form-{n}", json.dumps(record).encode())
    outcomes = [outcome(AttemptFolder.load(folder)) for folder in sorted(tmp_path.iterdir())]
    assert [o.elapsed_seconds for o in outcomes] == [10.0, 20.0, 0.5]  # its own time is shown
    (row,) = summarise(outcomes)
    (ranked,) = comparison([o.to_json() for o in outcomes])["ranking"]
    assert row["median_seconds"] == ranked["median_seconds"] == 15.0


def test_agents_with_different_numbers_of_attempts_are_ranked_by_pass_rate_with_a_note():
    def attempts(agent, passes, n):
        return [
            {
                "agent": agent, "pack": "p", "qualified_pass": i < passes, "error_free": i < passes,
                "field_accuracy": 1.0, "elapsed_seconds": 1.0, "tool_calls": 3, "status": "completed",
            }
            for i in range(n)
        ]  # fmt: skip

    comp = comparison(attempts("ten-of-thirty", 10, 30) + attempts("six-of-six", 6, 6))
    assert [r["agent"] for r in comp["ranking"]] == ["six-of-six", "ten-of-thirty"]
    assert comp["overlaps"][0].startswith("the agents ran different numbers of attempts (six-of-six 6, ten-of-thirty")

    # Equal rates go on to cost, as the notes and the docs say: the agent of more attempts came
    # first, its count of passes ranked before the cost.
    cheap = [a | {"cost_usd": 0.01} for a in attempts("cheap", 5, 10)]
    dear = [a | {"cost_usd": 0.02} for a in attempts("dear", 10, 20)]
    assert [r["agent"] for r in comparison(dear + cheap)["ranking"]] == ["cheap", "dear"]
    equal = comparison(attempts("a", 3, 5) + attempts("b", 4, 5))
    assert [r["agent"] for r in equal["ranking"]] == ["b", "a"] and "different numbers" not in str(equal["overlaps"])


def test_agents_that_ran_different_workflows_are_ranked_with_a_note():
    """Agents of folders gathered by hand, or of a stopped batch, that ran different workflows were
    ranked against each other with no note (with equal counts, nothing said they differed)."""

    def attempts(agent, pack, passes, n):
        return [
            {
                "agent": agent, "pack": pack, "qualified_pass": i < passes, "error_free": True,
                "field_accuracy": 1.0, "elapsed_seconds": 1.0, "tool_calls": 3, "status": "completed",
            }
            for i in range(n)
        ]  # fmt: skip

    comp = comparison(attempts("a", "bid-intake", 5, 5) + attempts("b", "sec-contract", 0, 5))
    assert [r["agent"] for r in comp["ranking"]] == ["a", "b"]
    assert comp["overlaps"] == [
        "the agents did not all run the same workflows (a none of sec-contract; b none of bid-intake): "
        "their rates are over different tasks"
    ]
    same = comparison(attempts("a", "bid-intake", 5, 5) + attempts("b", "bid-intake", 0, 5))
    assert not [note for note in same["overlaps"] if "workflows" in note], same["overlaps"]


async def test_three_agents_in_one_batch_are_interleaved_ranked_and_their_wait_is_not_timed(sandbox, tmp_path):
    agents = [
        BatchAgent("reference", AgentOptions()),
        BatchAgent(WRONG, AgentOptions(), label="wrong-answer"),
        BatchAgent("openai:scripted-browser-1", AgentOptions(cassette=CASSETTE, record_mode=RecordMode.NONE)),
    ]
    outcomes = await run_batch(
        [load_pack("bid-intake")], agents, repeats=1, concurrency=1, out=tmp_path, progress=False, sandbox=sandbox
    )
    batch = outcomes[0].directory.parent
    assert batch.name.endswith("-3-agents")
    assert sorted(p.name for p in batch.iterdir() if p.is_dir()) == [
        "openai-scripted-browser-1--bid-intake-1", "reference--bid-intake-1", "wrong-answer--bid-intake-1",
    ]  # fmt: skip
    summary = json.loads((batch / "summary.json").read_text())
    ranking = summary["comparison"]["ranking"]
    assert [r["agent"] for r in ranking][0] == "reference" and ranking[0]["qualified_passes"] == 1
    assert {r["agent"] for r in ranking} == {"reference", "wrong-answer", "openai:scripted-browser-1"}
    assert summary["comparison"]["matrix"]["wrong-answer"] == {"bid-intake": {"passes": 0, "attempts": 1}}
    # One at a time: the last attempt waited for the other two, and that wait is not its time.
    records = [json.loads((o.directory / "attempt.json").read_text()) for o in outcomes]
    last = max(records, key=lambda r: r["dispatch_wait_seconds"])
    others = sum(r["elapsed_seconds"] for r in records if r is not last)
    assert last["dispatch_wait_seconds"] >= 0.9 * others > 0
    assert last["elapsed_seconds"] < last["dispatch_wait_seconds"] + last["time_limit_seconds"]
    assert min(r["dispatch_wait_seconds"] for r in records) < 0.5


def test_the_command_line_gives_each_agent_its_options_and_compare_reads_batches(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(  # a relative path: found where `sandbox run` was started
        "import os, pathlib\n"
        "pathlib.Path(os.environ['SANDBOX_ATTEMPT_DIR'], 'seen.txt').write_text(os.getcwd())\n"
        "print('BENCHMARK_JSON_BEGIN'); print('{}'); print('BENCHMARK_JSON_END')\n"
    )
    args = ["run", "controlled-form", "--out", "out", "--no-progress", "--agent", "reference"]
    args += ["--agent", f"cmd:{shlex.quote(sys.executable)} agent.py", "--with", "label=relative"]
    assert main(args) == 1  # the cmd: agent's answer does not qualify
    printed = capsys.readouterr().out
    assert "rank  agent" in printed and "1     reference" in printed and "relative" in printed
    (batch,) = (tmp_path / "out").iterdir()
    assert (batch / "relative--controlled-form-1" / "seen.txt").read_text() == str(tmp_path)
    assert main(["results", "out"]) == 1  # the folder given to --out: its newest batch
    captured = capsys.readouterr()
    assert f"showing the newest, {batch.name}" in captured.err and "relative" in captured.out
    shutil.copytree(batch, tmp_path / "earlier")
    assert main(["compare", str(batch), str(tmp_path / "earlier"), "--json"]) == 1  # as results: one is not qualified
    rows = json.loads(capsys.readouterr().out)["ranking"]
    page = tmp_path / "boards" / "compare.html"
    assert main(["compare", str(batch), str(tmp_path / "earlier"), "--html", str(page)]) == 1
    hrefs = re.findall(r'href="([^"]+)"', page.read_text())
    assert len(hrefs) == 4 and all((page.parent / href).is_file() for href in hrefs), hrefs
    assert {r["agent"] for r in rows if r["agent"].startswith("reference")} == {
        f"reference @ {batch.name}",
        "reference @ earlier",
    }
    # A folder given twice counts once; a summary.json cut short is rebuilt from the attempt folders.
    (tmp_path / "earlier" / "summary.json").write_text('{"broken')
    capsys.readouterr()
    assert main(["compare", str(batch), str(tmp_path / "earlier"), "earlier", "--json"]) == 1
    captured = capsys.readouterr()
    assert "earlier is earlier again: its attempts are counted once" in captured.err
    assert "earlier/summary.json is unreadable (" in captured.err and "rebuilt from the attempt folders" in captured.err
    assert json.loads(captured.out)["ranking"] == rows
    assert main(["results", "earlier"]) == 1 and "rebuilt from the attempt folders" in capsys.readouterr().err
    assert main(["report", "earlier"]) == 0
    assert "rebuilt from the attempt folders" in (tmp_path / "earlier" / "report.html").read_text()
    # An attempt with no attempt.json yet (its batch still running, or killed): its own status and agent.
    (tmp_path / "earlier" / "summary.json").unlink()
    (tmp_path / "earlier" / "reference--controlled-form-1" / "attempt.json").unlink()
    capsys.readouterr()
    assert main(["results", "earlier", "--json"]) == 1
    captured = capsys.readouterr()
    said = "1 attempt(s) have no attempt.json: the batch is still running, was killed, or could not write them"
    assert said in captured.err
    unfinished = [a for a in json.loads(captured.out)["attempts"] if a["status"] == "unfinished"]
    assert [a["agent"] for a in unfinished] == ["reference"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--with", "label=x", "--agent", "reference"], "--with must follow the --agent"),
        (["--agent", "reference", "--with", "colour=red"], "use KEY=VALUE with KEY one of"),
        (["--agent", "reference", "--with", "label=a", "--with", "label=b"], "--with label given twice"),
    ],
)
def test_bad_agent_options_are_usage_errors(args, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "controlled-form", *args])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_two_agents_with_one_name_and_compare_on_nothing_are_refused(tmp_path, capsys):
    code = main(["run", "controlled-form", "--out", str(tmp_path), "--agent", "reference", "--agent", "reference"])
    assert code == 2 and "the same name" in capsys.readouterr().err
    labels = ["--agent", "reference", "--with", "label=x y", "--agent", "reference", "--with", "label=x/y"]
    code = main(["run", "controlled-form", "--out", str(tmp_path), *labels])
    assert code == 2 and "names that are one folder name ('x y', 'x/y' as x-y, x-y)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # refused before any folder
    assert main(["compare", str(tmp_path / "nothing-here")]) == 2


PRICES = """
credits_per_dollar = 1000
[models."scripted-browser-1"]
input = 2.0
cached_input = 1.0
output = 8.0
"""


async def test_costs_are_tokens_times_prices_and_unknown_without_them(sandbox, tmp_path, capsys):
    prices_file = tmp_path / "prices.toml"
    prices_file.write_text(PRICES)
    usage = {"model": "priced-elsewhere", "input_tokens": 1000, "cached_input_tokens": 500, "output_tokens": 100}
    write = f"import json, os; json.dump({usage!r}, open(os.environ['SANDBOX_ATTEMPT_DIR'] + '/usage.json', 'w'))"
    reporter = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(write)}"
    agents = [
        BatchAgent("openai:scripted-browser-1", AgentOptions(cassette=CASSETTE, record_mode=RecordMode.NONE)),
        BatchAgent(reporter, AgentOptions(), label="reports-usage"),
        BatchAgent("reference", AgentOptions()),
    ]
    outcomes = await run_batch(
        [load_pack("bid-intake")],
        agents,
        out=tmp_path,
        progress=False,
        sandbox=sandbox,
        prices=Prices.load(prices_file),
    )
    by_agent = {o.agent: o for o in outcomes}
    model = by_agent["openai:scripted-browser-1"]
    expected = (model.token_usage["prompt_tokens"] * 2.0 + model.token_usage["completion_tokens"] * 8.0) / 1e6
    assert model.cost_usd == pytest.approx(expected, abs=1e-6) and expected > 0
    record = json.loads((model.directory / "attempt.json").read_text())
    assert record["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert by_agent["reports-usage"].cost_usd is None  # its model is not in the prices file: unknown, not 0
    assert by_agent["reports-usage"].token_usage == {k: v for k, v in usage.items() if k != "model"}
    assert by_agent["reference"].cost_usd is None
    summary = json.loads((outcomes[0].directory.parent / "summary.json").read_text())["comparison"]
    row = next(r for r in summary["ranking"] if r["agent"] == "openai:scripted-browser-1")
    assert row["mean_credits"] == pytest.approx(round(expected * 1000, 2))
    assert unpriced(agents, outcomes, Prices.load(prices_file)) == [
        "the prices file has no price for model 'priced-elsewhere' (reports-usage): its cost is unknown"
    ]
    # named as its attempts name it (the spec as typed was a name no row of the results has)
    assert unpriced([BatchAgent("think:0.50:openai:m1", AgentOptions())], [], Prices.load(prices_file)) == [
        "the prices file has no price for model 'm1' (think:0.5:openai:m1): its cost is unknown"
    ]
    capsys.readouterr()
    assert main(["compare", str(outcomes[0].directory.parent), "--json"]) == 1  # at the batch's own rate
    again = next(r for r in json.loads(capsys.readouterr().out)["ranking"] if r["agent"] == row["agent"])
    assert again["mean_credits"] == row["mean_credits"]
    (outcomes[0].directory.parent / "summary.json").unlink()  # rebuilt from the folders: the costs too
    rebuilt = {a["agent"]: a["cost_usd"] for a in read_summary(outcomes[0].directory.parent)["attempts"]}
    assert rebuilt == {o.agent: o.cost_usd for o in outcomes}


async def test_an_endpoint_reporting_more_cached_than_prompt_tokens_costs_unknown(sandbox, tmp_path):
    """An endpoint that reported more cached tokens than prompt tokens gave a negative cost, and
    attempt.json (a cost of at least 0) could not be written after score.json: the attempt was
    recorded as not run, its answer lost. Its cost is unknown, and the attempt says why."""
    from aiohttp import web

    @web.middleware
    async def overcounted(request: web.Request, handler):
        response = await handler(request)
        if request.path != "/v1/chat/completions" or response.status != 200:
            return response
        body = json.loads(response.body)
        usage = body["usage"]
        body["usage"] = {**usage, "prompt_tokens_details": {"cached_tokens": usage["prompt_tokens"] * 10}}
        return web.json_response(body)

    app = scripted_server().create_app()
    app.middlewares.append(overcounted)
    runner, url = await served(app)
    try:
        (attempt,) = await run_batch(
            [load_pack("bid-intake")],
            "openai:scripted-browser-1",
            out=tmp_path,
            progress=False,
            sandbox=sandbox,
            options=AgentOptions(base_url=f"{url}/v1"),
            prices=Prices(
                {"scripted-browser-1": Price(input=2.0, cached_input=1.0, output=8.0, cache_write_input=2.0)}
            ),
        )
    finally:
        await runner.cleanup()
    record = json.loads((attempt.directory / "attempt.json").read_text())
    score = json.loads((attempt.directory / "score.json").read_text())
    assert record["status"] == attempt.status == "completed", attempt.reason  # as it ended, not "crashed" unrun
    assert attempt.field_accuracy == score["field_accuracy"] and record["qualified_pass"] == score["qualified_pass"]
    assert attempt.cost_usd is None and record["cost_usd"] is None
    assert record["agent_details"]["usage_problem"].endswith("(more cached than sent): the cost is unknown")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x]\ninput = 1\n", "needs numbers input and output"),
        ("[models.x]\ninput = 1\noutput = -2\n", "a price that is negative, nan or inf"),
        ("[models.x]\ninput = nan\noutput = 2\n", "a price that is negative, nan or inf"),
        ("[models.x]\ninput = 1\noutput = inf\n", "a price that is negative, nan or inf"),
        ("credits_per_dollar = 0\n", "credits_per_dollar must be a positive number"),
        ("credits_per_dollar = inf\n", "credits_per_dollar must be a positive number"),
        ("[models\n", "prices file"),
        ("models = 3\n", "models is 3, not a table"),
        ("models = [1]\n", "models is [1], not a table"),
        ("[models]\nx = 1\n", "[models.'x'] is 1, not a table"),
        ("[models.x]\ninput = true\noutput = 1\n", "[models.'x'] input is True, not a number"),
        ('[models.x]\ninput = 1\noutput = "2.5"\n', "[models.'x'] output is '2.5', not a number"),
        ("[models.x]\ninput = 1\noutput = 2\ncached_input = [1]\n", "[models.'x'] cached_input is [1], not a number"),
        ("[models.x]\ninput = 1\noutput = 2\ncache_input = 1\n", "[models.'x'] has unknown key(s) 'cache_input'"),
        ("credit_per_dollar = 1000\n", "unknown key(s) 'credit_per_dollar'"),
        ("credits_per_dollar = true\n", "credits_per_dollar must be a positive number, not True"),
    ],
)
def test_a_bad_prices_file_is_a_usage_error_naming_what_is_wrong(tmp_path, capsys, text, message):
    prices_file = tmp_path / "prices.toml"
    prices_file.write_text(text)
    assert main(["run", "controlled-form", "--agent", "reference", "--prices", str(prices_file)]) == 2
    assert message in capsys.readouterr().err


SPLIT_WORDS_JS = """
cells => cells.flatMap(cell => {
  const split = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      if (new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1) split.push(match[0]);
    }
  }
  return split;
})
"""


async def words_split_across_lines(page, selector: str) -> list[str]:
    return await page.eval_on_selector_all(selector, SPLIT_WORDS_JS)


async def test_the_batch_page_of_several_agents_is_a_leaderboard_that_needs_nothing_else(sandbox, browser, tmp_path):
    agents = [BatchAgent("reference", AgentOptions()), BatchAgent(WRONG, AgentOptions(), label="wrong-answer")]
    outcomes = await run_batch([load_pack("controlled-form")], agents, out=tmp_path, progress=False, sandbox=sandbox)
    batch = outcomes[0].directory.parent
    from sandbox.runner.report import write_reports

    (page_file, *_) = write_reports(batch)
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    await page.goto(page_file.as_uri())
    assert all(url.startswith("file://") for url in requests), requests  # nothing fetched from anywhere
    board = await page.get_by_role("table", name="Leaderboard").aria_snapshot()
    assert board.index("reference") < board.index("wrong-answer")  # ranked
    hrefs = await page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
    assert hrefs and all((batch / href).is_file() for href in hrefs), hrefs
    assert await page.locator("svg[aria-label^='Pass rate']").count() == 1
    times = page.locator("svg[aria-label^='Elapsed time per attempt']")
    assert await times.count() == 1 and await times.locator("circle").count() == 2  # one dot per attempt
    assert await page.locator("svg[aria-label^='Cost per attempt']").count() == 0  # no prices: no cost chart
    assert await words_split_across_lines(page, "th") == []  # at 1280 px no header breaks inside a word
    shot = Image.open(io.BytesIO(await page.screenshot())).convert("RGB")
    assert len(shot.getcolors(maxcolors=1 << 16) or range(1 << 16)) > 20  # a rendered page, not a blank one
    await context.close()


def test_cached_input_tokens_are_read_from_the_sdks_usage_and_priced_apart():
    from anthropic.types import Usage as AnthropicUsage
    from openai.types import CompletionUsage

    from sandbox.runner.agents._model import add_usage
    from sandbox.runner.prices import Price, tokens

    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    turn = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    openai_usage = CompletionUsage.model_validate({**turn, "prompt_tokens_details": {"cached_tokens": 40}})
    total = add_usage(add_usage(None, openai_usage, keys), openai_usage, keys)  # two turns
    assert total == {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220, "cached_tokens": 80}
    assert tokens(total) == (120, 80, 0, 20)  # OpenAI counts the cached ones inside the prompt tokens
    anthropic = {"input_tokens": 50, "output_tokens": 5, "cache_read_input_tokens": 30}
    anthropic_usage = AnthropicUsage.model_validate(anthropic | {"cache_creation_input_tokens": 7000})
    anthropic_total = add_usage(None, anthropic_usage, ("input_tokens", "output_tokens"))
    assert tokens(anthropic_total) == (50, 30, 7000, 5)  # the cache writes were dropped: priced at nothing
    prices = Prices({"m": Price(input=2.0, cached_input=1.0, output=8.0, cache_write_input=2.5)})
    assert prices.cost("m", total) == pytest.approx((120 * 2.0 + 80 * 1.0 + 20 * 8.0) / 1e6)
    assert prices.cost("m", anthropic_total) == pytest.approx((50 * 2.0 + 30 * 1.0 + 7000 * 2.5 + 5 * 8.0) / 1e6)
    assert add_usage(None, CompletionUsage.model_validate(turn), keys) == turn  # none cached: no key added


async def test_an_attempt_that_times_out_carries_the_tokens_it_used(sandbox, tmp_path):
    """A model or cmd: agent stopped at its time limit had no tokens and no cost: its agent's mean
    cost was unknown, and ranked it after every agent whose cost was known."""
    prices_file = tmp_path / "prices.toml"
    prices_file.write_text(PRICES)
    usage = {"model": "scripted-browser-1", "input_tokens": 1000, "output_tokens": 100}
    write = f"import json, os; json.dump({usage!r}, open(os.environ['SANDBOX_ATTEMPT_DIR'] + '/usage.json', 'w'))"
    reporter = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(write)}; sleep 60"
    agents = [  # the model thinks 1.5 s before each tool call: its second turn ends past the 2 s limit
        BatchAgent("think:1.5:openai:scripted-browser-1", AgentOptions(cassette=CASSETTE, record_mode=RecordMode.NONE)),
        BatchAgent(reporter, AgentOptions(), label="reports-then-hangs"),
    ]
    outcomes = await run_batch(
        [load_pack("bid-intake")], agents, out=tmp_path / "runs", progress=False, sandbox=sandbox,
        prices=Prices.load(prices_file), time_limit=2,
    )  # fmt: skip
    for outcome in outcomes:
        record = json.loads((outcome.directory / "attempt.json").read_text())
        assert record["status"] == outcome.status == "timeout", record
        assert record["token_usage"] and record["cost_usd"] > 0 and outcome.cost_usd == record["cost_usd"], record
    assert all(row["mean_cost_usd"] for row in comparison([o.to_json() for o in outcomes])["ranking"])
