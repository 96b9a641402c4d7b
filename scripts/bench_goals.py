"""Every benchmark goal in one place, and whether a run met it. ``bench.py`` prints the verdicts
(PASS/FAIL) and stores them in the run's JSON (``"goals"``); the benchmarks page
(``docs_reference.py``) renders them, and computes them here for runs published before runs
carried them. A goal a run's results name (``workflow_stdio_goal``, ``ops_click.goal``, ...) is
the goal it was measured against; otherwise today's goal below.

Pure: reads a results dict, imports nothing of the project (the docs generator imports it).
"""

from __future__ import annotations

from typing import Any

OPS_GOALS = {"click": 1.5, "type": 1.5, "navigate": 1.15, "snapshot": 1.10, "start": 1.15}  # ratio to Playwright
WORKFLOW_GOALS = {"stdio": 1.20, "http": 1.15}  # the form's round, p50, against raw Playwright's
WORKFLOW_PLAYWRIGHT_MCP_GOAL = 0.30  # MCP stdio against Playwright MCP
RAY_COLD_GOAL = 1.25  # a cold Ray pool's wall time, at most this times the local batch's
RAY_WARM_GOAL = 1.10  # a warm pool's
SCALE_THROUGHPUT_GOAL = 1.3  # a scale level's wall time against its bound
SCALE_MEMORY_GOAL_MB = 30.0  # the whole process tree's PSS / open sessions
MCP_CLICK_OVERHEAD_GOAL_MS = 5.0
THINK_LOCAL_GOAL = 0.3  # thinking agents at concurrency 8 against serial
THINK_RAY_OVERHEAD_GOAL = 0.15  # a local Ray against local with its own browser start
SCREENSHOT_OVERHEAD_GOAL = 0.15  # --screenshots all against nothing kept
CPU_RATIO_GOAL = 1.2  # CPU per reference attempt against a plain Playwright script
ALL_SECTION_GOALS = {  # the figures only the whole bench (no --only) measures
    "start_ratio": 1.15,
    "snapshot_ratio": 1.10,
    "server_overhead_p50_ms": 5.0,
    "scoring_240_s": 0.5,
    "six_reference_s": 30.0,
    "concurrency_ratio": 0.6,
    "six_all_passed": True,
    "batch_all_passed": True,
}


def judged(value: Any, goal: Any) -> dict[str, Any]:
    """One goal's verdict: a flag must equal its goal, a number be at most it; no value (nothing
    was measured) misses it."""
    if value is None:
        met = False
    elif isinstance(goal, bool):
        met = value is goal
    else:
        met = value <= goal
    return {"value": value, "goal": goal, "met": met}


def tree_pss_per_session_mb(results: dict[str, Any], level: int) -> float | None:
    """A scale level's memory figure as the goal defines it: the whole process tree's PSS (Python,
    the Node driver, every Chromium) when the most sessions were open / those sessions. Runs before
    it was stored carry the reading and the count it is computed from."""
    prefix = f"scale_{level}_"
    if prefix + "pss_tree_per_session_mb" in results:
        return results[prefix + "pss_tree_per_session_mb"]
    sessions, peak = results.get(prefix + "pss_sessions"), results.get(prefix + "peak_pss_mb")
    return round(peak / sessions, 1) if sessions and peak is not None else None


def goals_of(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each goal the results measured: {name: {"value", "goal", "met"}}."""
    out: dict[str, dict[str, Any]] = {}
    for op, default in OPS_GOALS.items():
        row = results.get(f"ops_{op}")
        if isinstance(row, dict):
            out[f"ops_{op}"] = judged(row["ratio"], row.get("goal", default))
    for side, default in (*WORKFLOW_GOALS.items(), ("playwright_mcp", WORKFLOW_PLAYWRIGHT_MCP_GOAL)):
        if f"workflow_{side}_ratio" in results:
            goal = results.get(f"workflow_{side}_goal", default)
            out[f"workflow_{side}"] = judged(results[f"workflow_{side}_ratio"], goal)
    for pool, default in (("cold", RAY_COLD_GOAL), ("warm", RAY_WARM_GOAL)):
        if f"ray_{pool}_ratio" in results:
            out[f"ray_{pool}"] = judged(results[f"ray_{pool}_ratio"], results.get(f"ray_{pool}_goal", default))
    if "ray_same_verdicts" in results:
        out["ray_same_verdicts"] = judged(results["ray_same_verdicts"], True)
    if "ray_failed_attempts" in results:
        out["ray_failed_attempts"] = judged(results["ray_failed_attempts"], 0)
    for level in results.get("scale_levels", ()):
        prefix = f"scale_{level}_"
        if prefix + "failure" in results:  # the level raised: nothing measured
            out[prefix + "errors"] = judged(None, 0)
        if prefix + "errors" not in results:
            continue
        out[prefix + "errors"] = judged(results[prefix + "errors"], 0)
        throughput_goal = results.get("scale_throughput_goal", SCALE_THROUGHPUT_GOAL)
        out[prefix + "throughput"] = judged(results[prefix + "throughput_ratio"], throughput_goal)
        memory_goal = results.get("scale_memory_goal_mb", SCALE_MEMORY_GOAL_MB)
        out[prefix + "memory"] = judged(tree_pss_per_session_mb(results, level), memory_goal)
    for transport in ("stdio", "http"):
        key = f"mcp_{transport}_click_overhead_p50_ms"
        if key in results:
            out[f"mcp_{transport}_click_overhead"] = judged(results[key], MCP_CLICK_OVERHEAD_GOAL_MS)
    if "think_local_ratio" in results:
        out["think_local"] = judged(results["think_local_ratio"], THINK_LOCAL_GOAL)
        out["think_ray_overhead_cold"] = judged(results["think_ray_overhead_cold"], THINK_RAY_OVERHEAD_GOAL)
        out["think_same_verdicts"] = judged(results["think_same_verdicts"], True)
    if "overhead_all" in results:
        out["screenshot_overhead"] = judged(results["overhead_all"], SCREENSHOT_OVERHEAD_GOAL)
    for pack, row in sorted(results.items()):
        if isinstance(row, dict) and "sandbox_cpu_s" in row:
            out[f"cpu_{pack}"] = judged(row["ratio"], CPU_RATIO_GOAL)
    for key, goal in ALL_SECTION_GOALS.items():
        if key in results:
            out[key] = judged(results[key], goal)
    return out


def shown(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def verdict_lines(goals: dict[str, dict[str, Any]]) -> list[str]:
    """One line a goal, PASS or FAIL first, as the bench prints them."""
    relation = {True: "=", False: "<="}
    return [
        f"{'PASS' if row['met'] else 'FAIL'} {name}: {shown(row['value'])} "
        f"(goal {relation[isinstance(row['goal'], bool)]} {shown(row['goal'])})"
        for name, row in goals.items()
    ]
