"""The benchmarks and their page tell a failed run from a passing one: each goal's verdict is
printed, stored in the run's JSON and rendered; the page's latest figures are neither stale keys,
quick runs over full ones, nor unmarked older sections; the scale figures say what ran (agents
admitted at once), which memory figure is the goal's, and survive an unrecorded attempt."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from sandbox import PROJECT_ROOT
from sandbox.runner.attempt import AttemptOutcome

SCRIPTS = PROJECT_ROOT / "scripts"


def script(name: str, monkeypatch: pytest.MonkeyPatch):
    """A module of scripts/, loaded as running a script there loads it (scripts/ first on the path)."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def publish(folder: Path, name: str, section: str, results: dict, **record) -> None:
    base = {
        "section": section,
        "date": name[:10] + "T" + name[11:13] + ":" + name[13:15] + ":00+00:00",
        "commit": record.pop("commit", "a" * 40),
        "command": f"scripts/bench.py --only {section}",
        "quick": False,
        "note": "",
        "machine": {"cores": 2},
        "results": results,
    }
    (folder / f"{name}-{section}.json").write_text(json.dumps(base | record))


def ray_results(cold_ratio: float) -> dict:
    return {
        "ray_attempts": 12,
        "ray_think_s": 0.5,
        "ray_concurrency": 8,
        "ray_workers": 8,
        "ray_local_s": 10.0,
        "ray_cold_s": 10.0 * cold_ratio,
        "ray_cold_ratio": cold_ratio,
        "ray_warm_s": 9.0,
        "ray_warm_ratio": 0.9,
        "ray_same_verdicts": True,
    }


def scale_level(level: int, admitted: int, idle: float, peak: float, sessions: int) -> dict:
    figures = {
        "admitted": admitted,
        "attempts": level,
        "wall_s": 20.0,
        "attempts_per_min": 60.0,
        "errors": 0,
        "throughput_ratio": 1.1,
        "cpu_per_attempt_s": 1.3,
        "idle_pss_mb": idle,
        "peak_pss_mb": peak,
        "peak_sessions": sessions,
        "pss_sessions": sessions,
        "pss_per_session_mb": round((peak - idle) / sessions, 1),  # as runs before the fix stored it
    }
    return {f"scale_{level}_{name}": value for name, value in figures.items()}


def scale_results() -> dict:
    return {
        "scale_levels": [1, 256],
        "scale_think_s": 1.0,
        "scale_throughput_goal": 1.3,
        "scale_memory_goal_mb": 30.0,
        **scale_level(1, 1, idle=400.0, peak=450.0, sessions=1),
        # the bench process grew 100 MB between the levels: its idle tree holds it
        **scale_level(256, 48, idle=500.0, peak=1490.0, sessions=48),
    }


def latest_section(page: str, section: str) -> str:
    latest = page.split("## Latest figures", 1)[1].split("## Every published run", 1)[0]
    return next(part for part in latest.split("\n### ")[1:] if part.startswith(section + " "))


def test_a_run_that_missed_its_goal_is_marked_missed_and_one_that_met_it_met(tmp_path, monkeypatch):
    docs = script("docs_reference", monkeypatch)
    publish(tmp_path, "2026-12-06T1000", "ray", ray_results(cold_ratio=1.1))
    publish(tmp_path, "2026-12-06T1100", "ray", ray_results(cold_ratio=1.6))
    page = docs.render_benchmarks(tmp_path)
    latest = latest_section(page, "ray")
    assert "a cold Ray pool vs local | 16.0 s vs 10.0 s: **1.60×** | ≤ 1.25× | **missed** |" in latest
    assert "a warm Ray pool vs local | 9.0 s vs 10.0 s: **0.90×** | ≤ 1.10× | met |" in latest
    assert "the same verdicts locally and on both pools | yes | yes | met |" in latest
    runs = page.split("## Every published run", 1)[1].split("## Each run's figures", 1)[0]
    assert "| ray | **1 of 3 missed** |" in runs and "| ray | 3 of 3 met |" in runs


def test_the_page_takes_a_runs_own_verdicts_and_goals_when_its_json_has_them(tmp_path, monkeypatch):
    docs = script("docs_reference", monkeypatch)
    goals = {"ray_cold": {"value": 1.1, "goal": 1.05, "met": False}}
    publish(tmp_path, "2026-12-06T1000", "ray", ray_results(cold_ratio=1.1), goals=goals)
    latest = latest_section(docs.render_benchmarks(tmp_path), "ray")
    assert "a cold Ray pool vs local | 11.0 s vs 10.0 s: **1.10×** | ≤ 1.05× | **missed** |" in latest
    assert "a warm Ray pool vs local | 9.0 s vs 10.0 s: **0.90×** | ≤ 1.10× |  |" in latest  # no verdict: no mark


def test_latest_figures_drop_keys_no_bench_writes_and_mark_an_older_section(tmp_path, monkeypatch):
    docs = script("docs_reference", monkeypatch)
    old_mcp = {
        "form_round_sandbox_p50_ms": 187.0,
        "form_round_playwright_mcp_p50_ms": 742.0,
        "form_round_ratio": 0.25,
        "mcp_stdio_click_overhead_p50_ms": 2.6,
    }
    publish(tmp_path, "2026-12-04T1000", "mcp", old_mcp, commit="f" * 40)
    publish(tmp_path, "2026-12-06T1000", "ray", ray_results(cold_ratio=1.1), commit="b" * 40)
    page = docs.render_benchmarks(tmp_path)
    assert "0.25×" not in page and "≤ 0.5×" not in page
    assert latest_section(page, "mcp").startswith("mcp · 2026-12-04, `fffffff` · *older*")
    assert latest_section(page, "ray").startswith("ray · 2026-12-06, `bbbbbbb`\n")


def test_a_quick_run_never_replaces_a_full_one_and_a_dirty_tree_is_shown(tmp_path, monkeypatch):
    docs = script("docs_reference", monkeypatch)
    publish(tmp_path, "2026-12-06T1000", "ray", ray_results(cold_ratio=1.1), commit="c" * 40 + "+changes")
    publish(tmp_path, "2026-12-06T1100", "ray", ray_results(cold_ratio=1.6), quick=True)
    page = docs.render_benchmarks(tmp_path)
    latest = latest_section(page, "ray")
    assert latest.startswith("ray · 2026-12-06, `ccccccc` +changes") and "**1.10×**" in latest
    assert "| `ccccccc` +changes | ray |" in page and "| ray (quick) |" in page
    assert "### 2026-12-06 · ray · `aaaaaaa`, quick" in page


def test_a_scale_level_says_how_many_agents_ran_at_once_and_which_memory_figure_is_the_goals(tmp_path, monkeypatch):
    docs = script("docs_reference", monkeypatch)
    publish(tmp_path, "2026-12-06T1000", "scale", scale_results())
    latest = latest_section(docs.render_benchmarks(tmp_path), "scale")
    row = next(line for line in latest.splitlines() if line.startswith("| 256 agents"))
    assert row.startswith("| 256 agents, 48 at once, thinking 1 s a call, one server |")
    # the whole tree / sessions is the goal's figure (1490 / 48), beside the growth (990 / 48) and the
    # marginal over each level's own idle tree ((990 - 50) / 47), not over the smallest level's peak
    assert "**31.0 MB** PSS a session (whole tree; growth 20.6 MB, marginal 20.0 MB)" in row
    assert row.endswith("| **missed** (memory) |")


def test_each_goal_is_printed_pass_or_fail_saved_with_its_verdict_and_a_miss_exits_1(tmp_path, monkeypatch, capsys):
    bench = script("bench", monkeypatch)
    args = argparse.Namespace(json=tmp_path / "run.json", publish=False, quick=True, note="")
    assert bench.finish(args, "ray", ray_results(cold_ratio=1.6) | {"ray_failed_attempts": 0}) == 1
    printed = capsys.readouterr().out
    assert "FAIL ray_cold: 1.6 (goal <= 1.25)" in printed and "PASS ray_warm: 0.9 (goal <= 1.1)" in printed
    assert "PASS ray_same_verdicts: True (goal = True)" in printed
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["passed"] is False
    assert saved["goals"]["ray_cold"] == {"value": 1.6, "goal": 1.25, "met": False}
    assert saved["goals"]["ray_failed_attempts"] == {"value": 0, "goal": 0, "met": True}
    assert bench.finish(args, "ray", ray_results(cold_ratio=1.1)) == 0


def test_the_machine_records_the_cores_the_server_counts_beside_the_machines(monkeypatch):
    from toolserver.capacity import cores

    machine = script("bench", monkeypatch).machine()
    assert machine["usable_cores"] == cores()
    assert machine["cores"] >= machine["usable_cores"]


def outcome(folder: Path, tool_calls: int | None, passed: bool = True) -> AttemptOutcome:
    return AttemptOutcome(
        "controlled-form", "think:1:reference", folder, "completed", 1.0, passed, passed, 1.0, tool_calls, None
    )


def test_an_unrecorded_attempt_is_a_scale_error_not_a_crash(tmp_path, monkeypatch):
    scale = script("bench_scale", monkeypatch)
    outcomes = [outcome(tmp_path / "a", 11), outcome(tmp_path / "b", None), outcome(tmp_path / "c", 9)]
    assert scale.think_bound_seconds(outcomes, admitted=2, think=1.0) == 2 * 11 * 1.0
    assert [o.directory.name for o in scale.failed_attempts(outcomes)] == ["b"]
    assert scale.think_bound_seconds([outcomes[1]], admitted=2, think=1.0) == 0


def test_the_marginal_memory_leaves_out_the_bench_processs_own_growth(monkeypatch):
    scale = script("bench_scale", monkeypatch)
    assert scale.marginal_mb(scale_results(), 256, 1) == 20.0  # ((1490 - 500) - (450 - 400)) / 47


def test_the_pss_is_read_again_once_the_peak_has_settled_and_on_a_schedule_while_it_holds(monkeypatch):
    scale = script("bench_scale", monkeypatch)
    schedule = scale.ReadSchedule()
    reads = []
    for tick in range(0, 160):  # 40 s, counted every 0.25 s: the count reaches 48 at 5 s and holds
        now = tick * 0.25
        if schedule.due(min(48, 1 + tick), now):
            reads.append(now)
            schedule.done(now, cost=0.3)  # a read of a big tree: the budget alone allows one every 6 s
    at_peak = [now for now in reads if now >= 47 * 0.25]
    assert 47 * 0.25 + scale.SETTLE_S in at_peak  # once the sessions are at rest, whatever the budget
    assert len(at_peak) >= 6 and max(b - a for a, b in zip(at_peak, at_peak[1:], strict=False)) <= 6.0


def test_a_scale_level_that_raised_is_a_missed_goal_and_the_levels_before_it_are_still_shown(tmp_path, monkeypatch):
    goals = script("bench_goals", monkeypatch)
    results = scale_results() | {"scale_levels": [1, 256, 512], "scale_512_failure": "TypeError('boom')"}
    assert goals.goals_of(results)["scale_512_errors"] == {"value": None, "goal": 0, "met": False}
    docs = script("docs_reference", monkeypatch)
    publish(tmp_path, "2026-12-06T1000", "scale", results)
    latest = latest_section(docs.render_benchmarks(tmp_path), "scale")
    assert "| 512 agents at once thinking 1 s a call, one server | **failed**: TypeError('boom') |" in latest
    assert "| 256 agents, 48 at once, thinking 1 s a call" in latest
