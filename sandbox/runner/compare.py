"""The comparison of agents, as the benchmark compares models: one row per agent, ranked by
qualified passes (as a rate when the agents ran different numbers of attempts), then mean cost,
then median elapsed time; a 95 % Wilson score interval on each
pass rate (five repeats of six cases is a small sample), and a note wherever two neighbours'
intervals overlap; the agent x workflow matrix of qualified passes.

Built from attempt dicts (``AttemptOutcome.to_json()``, as ``summary.json`` keeps them), so the
same code serves ``sandbox run`` and ``sandbox compare`` over earlier batches.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from sandbox.evaluation.shown import shown
from sandbox.runner.attempt import median_seconds
from sandbox.runner.prices import DEFAULT_CREDITS_PER_DOLLAR, finite_number

MONEY_DECIMALS = 6  # a mean cost is ranked to the millionth of a dollar, and printed so (``dollars``)
Z95 = 1.959963984540054  # the normal quantile for a two-sided 95 % interval


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate ``passes / n``."""
    if n == 0:
        return 0.0, 1.0
    p = passes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def comparison(
    attempts: list[dict[str, Any]], credits_per_dollar: float = DEFAULT_CREDITS_PER_DOLLAR
) -> dict[str, Any]:
    """``{"ranking": [row, ...], "overlaps": [note, ...], "matrix": {agent: {pack: {passes, attempts}}},
    "credits_per_dollar"}``: mean cost in illustrative credits too, at that rate. The matrix is by
    workflow: a historical pack's attempts count under its reviewed pack, which scores them. An
    attempt whose agent is None (a damaged one whose batch does not say it) is in no row."""
    by_agent: dict[str, list[dict]] = defaultdict(list)
    replacements: dict[str, int] = defaultdict(int)
    for attempt in attempts:
        if attempt.get("selection") == "replaced":  # counted over the selected attempts only
            continue
        if attempt["agent"] is None:  # a damaged attempt naming no agent, nor its batch: in no row (said)
            continue
        by_agent[str(attempt["agent"])].append(attempt)
        replacements[str(attempt["agent"])] += attempt.get("selection") == "approved replacement"
    rows = [agent_row(agent, items) for agent, items in by_agent.items()]
    for row in rows:
        row["replacements"] = replacements[row["agent"]]
        cost = row["mean_cost_usd"]
        row["mean_credits"] = None if cost is None else round(cost * credits_per_dollar, 2)
    rows.sort(key=rank_key)
    for position, row in enumerate(rows):  # agents equal on every key share a rank (1, 1, 3)
        tied = position > 0 and rank_key(rows[position - 1])[:-1] == rank_key(row)[:-1]
        row["rank"] = rows[position - 1]["rank"] if tied else position + 1
    overlaps = unequal_counts(rows) + [
        f"{a['agent']} and {b['agent']}: their 95% intervals overlap, so the sample does not separate them"
        for a, b in zip(rows, rows[1:], strict=False)
        if a["interval"][0] <= b["interval"][1] and b["interval"][0] <= a["interval"][1]
    ]
    historical = scored_as({str(a["pack"]) for items in by_agent.values() for a in items})
    overlaps += versions_mixed(attempts) + faults_mixed(attempts) + unreplaced(attempts)
    matrix: dict[str, dict[str, dict[str, int]]] = {}  # by workflow: a historical pack's cell is its reviewed pack's
    for row in rows:
        cells: dict[str, dict[str, int]] = {}
        for attempt in by_agent[row["agent"]]:
            cell = cells.setdefault(workflow(str(attempt["pack"]), historical), {"passes": 0, "attempts": 0})
            cell["attempts"] += 1
            cell["passes"] += bool(attempt["qualified_pass"])
        matrix[row["agent"]] = dict(sorted(cells.items()))
    overlaps += workflows_differ(matrix)
    return {
        "ranking": rows,
        "overlaps": overlaps,
        "matrix": matrix,
        "scored_as": historical,
        "credits_per_dollar": credits_per_dollar,
    }


def credits_of(summary: dict[str, Any]) -> float:
    """The credits per dollar a batch priced at (its ``--prices`` file's), as its summary says."""
    stored = summary.get("comparison")
    rate = stored.get("credits_per_dollar") if isinstance(stored, dict) else None
    if finite_number(rate) and rate > 0:
        return float(rate)
    return DEFAULT_CREDITS_PER_DOLLAR


def scored_as(packs: set[str]) -> dict[str, str]:
    """The executed packs whose workflow's reviewed pack, which scores them, is another (the
    historical execution packs): pack -> scoring pack."""
    from sandbox.evaluation.packs import PackError, load_pack

    found = {}
    for pack in sorted(packs):
        try:
            scoring = load_pack(pack).card.scoring_pack
        except (PackError, OSError, ValueError):  # a batch of a pack this checkout no longer has, or no name
            continue
        if scoring != pack:
            found[pack] = scoring
    return found


def workflow(pack: str, historical: dict[str, str]) -> str:
    """The workflow an executed pack belongs to, named by its reviewed (scoring) pack."""
    return historical.get(pack, pack)


def agent_row(agent: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(items)
    passes = sum(bool(a["qualified_pass"]) for a in items)
    low, high = wilson(passes, n)
    known = [float(a["cost_usd"]) for a in items if a.get("cost_usd") is not None]
    statuses: dict[str, int] = defaultdict(int)
    for a in items:
        statuses[str(a["status"])] += 1
    return {
        "agent": agent,
        "attempts": n,
        "qualified_passes": passes,
        "pass_rate": round(passes / n, 4),
        "interval": [round(low, 4), round(high, 4)],
        "error_free_passes": sum(bool(a["error_free"]) for a in items),
        "mean_field_accuracy": round(statistics.fmean(float(a["field_accuracy"]) for a in items), 4),
        "median_seconds": median_seconds([(str(a["status"]), a.get("elapsed_seconds")) for a in items]),
        # over every attempt, failures included; unknown if any attempt's cost is (never zero)
        "mean_cost_usd": round(statistics.fmean(known), MONEY_DECIMALS) if len(known) == n else None,
        "mean_tool_calls": mean_calls([a["tool_calls"] for a in items]),
        "statuses": dict(sorted(statuses.items())),
    }


def mean_calls(counts: list[int | None]) -> float | None:
    """The mean tool calls of attempts, over those whose count is known (a damaged folder with no
    record and no trace has none, never 0); None when none is."""
    known = [int(count) for count in counts if count is not None]
    return round(statistics.fmean(known), 1) if known else None


def rank_key(row: dict[str, Any]) -> tuple:
    """The qualified-pass rate (higher first: with the same number of attempts each, as in the
    benchmark, the count of passes), then mean cost (less first; unknown last), then median time
    (less first; unknown last). Equal rates of unequal counts (10 of 20, 5 of 10) go on to cost."""
    cost, seconds = row["mean_cost_usd"], row["median_seconds"]
    rate = row["qualified_passes"] / row["attempts"]
    return (-rate, cost is None, cost or 0.0, seconds is None, seconds or 0.0, row["agent"])


def workflows_differ(matrix: dict[str, dict[str, Any]]) -> list[str]:
    """A note when the agents did not all run the same workflows (folders gathered by hand, a
    stopped batch): their rates are then over different tasks."""
    every = {pack for cells in matrix.values() for pack in cells}
    missing = {agent: sorted(every - set(cells)) for agent, cells in matrix.items()}
    if not any(missing.values()):
        return []
    said = "; ".join(f"{agent} none of {', '.join(packs)}" for agent, packs in missing.items() if packs)
    return [f"the agents did not all run the same workflows ({said}): their rates are over different tasks"]


def unequal_counts(rows: list[dict[str, Any]]) -> list[str]:
    """A note when the agents ran different numbers of attempts: passes are then ranked as rates."""
    if len({row["attempts"] for row in rows}) < 2:
        return []
    counts = ", ".join(f"{row['agent']} {row['attempts']}" for row in rows)
    return [f"the agents ran different numbers of attempts ({counts}): ranked by qualified-pass rate"]


def versions_mixed(attempts: list[dict[str, Any]]) -> list[str]:
    """A note per executed pack whose attempts ran on more than one version of it (its scoring
    files' checksum differs: an edited copy), and one when the attempts read more than one set of
    mirrors (the checksum covers every mirrored site, so which workflow's pages differ is not
    known): their results do not compare. An attempt whose record says no checksum is left out."""
    packs: dict[str, set[str]] = defaultdict(set)
    for attempt in attempts:
        if attempt.get("pack_checksum"):
            packs[str(attempt["pack"])].add(str(attempt["pack_checksum"]))
    notes = [
        f"{pack}: its attempts ran on {len(found)} versions of the pack (checksums "
        f"{', '.join(sorted(c[:12] for c in found))}), so they were not scored alike; compare one version's batches"
        for pack, found in sorted(packs.items())
        if len(found) > 1
    ]
    mirrors = {str(attempt["mirror_checksum"]) for attempt in attempts if attempt.get("mirror_checksum")}
    if len(mirrors) > 1:
        sums = ", ".join(sorted(c[:12] for c in mirrors))
        notes.append(
            f"the attempts read {len(mirrors)} sets of mirrors (checksums {sums}: other --mirrors, or an entry edited "
            "or added), so a workflow's pages may have differed; compare batches run on one set"
        )
    return notes


def faults_mixed(attempts: list[dict[str, Any]]) -> list[str]:
    """A note when the attempts ran under different injected faults (``--faults``), or some under
    none: each agent's row then shows the faults it was given as much as the agent. An attempt
    whose faults are not known (``null``: recorded before attempts said, or never run) is left out."""
    plans: dict[str, set[str]] = defaultdict(set)
    for attempt in attempts:
        if attempt.get("faults") is not None and attempt["agent"] is not None:
            plans[str(attempt["agent"])].add(str(attempt["faults"]) or "none")
    if len({plan for found in plans.values() for plan in found}) < 2:
        return []
    said = "; ".join(f"{agent}: {', '.join(sorted(found))}" for agent, found in sorted(plans.items()))
    return [f"the attempts ran under different injected faults ({said}), so they did not meet the same failures"]


def unreplaced(attempts: list[dict[str, Any]]) -> list[str]:
    """A note when attempts the infrastructure interrupted were not replaced: they count as failures
    (an approved replacement interrupted too, the last of its re-runs, is one of them)."""
    left = [a for a in attempts if a.get("interruption") and a.get("selection", "selected") != "replaced"]
    if not left:
        return []
    last = sum(a.get("selection") == "approved replacement" for a in left)
    rerun = f"; {last} of them the last re-run of its attempt, so a larger N runs more" if last else ""
    failed = sum(not a.get("qualified_pass") for a in left)  # an interrupted pass is one too
    return [
        f"{len(left)} attempt(s) were interrupted by the infrastructure and not replaced (first: "
        f"{left[0]['interruption'][:120]}); {failed} of them count as failures here, where the benchmark ran "
        f"approved replacements (`sandbox run --replace-interrupted N`{rerun})"
    ]


def format_comparison(comp: dict[str, Any]) -> str:
    header = [
        "rank",
        "agent",
        "qualified",
        "95% interval",
        "error-free",
        "field acc.",
        "median s",
        "mean cost",
        "calls",
        "replaced",
        "statuses",
    ]
    lines = []
    label = agent_labels([r["agent"] for r in comp["ranking"]] + list(comp["matrix"]))
    for r in comp["ranking"]:
        n = r["attempts"]
        cost = "unknown" if r["mean_cost_usd"] is None else f"{dollars(r['mean_cost_usd'])} ({r['mean_credits']:g} cr)"
        lines.append(
            [
                str(r["rank"]),
                label[r["agent"]],
                f"{r['qualified_passes']}/{n}",
                f"{r['interval'][0]:.2f}-{r['interval'][1]:.2f}",
                f"{r['error_free_passes']}/{n}",
                f"{r['mean_field_accuracy']:.3f}",
                "unknown" if r["median_seconds"] is None else f"{r['median_seconds']:.2f}",
                cost,
                "unknown" if r["mean_tool_calls"] is None else f"{r['mean_tool_calls']:.1f}",
                str(r.get("replacements", 0)),
                ", ".join(f"{k} {v}" for k, v in r["statuses"].items()),
            ]
        )
    out = [table(header, lines)]
    packs = sorted({pack for cells in comp["matrix"].values() for pack in cells})
    grid = [[label[agent], *(cell_text(cells.get(pack)) for pack in packs)] for agent, cells in comp["matrix"].items()]
    out += ["", "qualified passes per workflow:", table(["agent", *packs], grid)]
    out += [
        f"note: {pack} is scored with {scoring}, its workflow's reviewed pack"
        for pack, scoring in comp.get("scored_as", {}).items()
    ]
    out += [f"note: {shown(note, inline=True)}" for note in comp["overlaps"]]
    replaced = sum(r.get("replacements", 0) for r in comp["ranking"])
    if replaced:
        out.append(
            f"note: {replaced} interrupted attempt(s) were replaced by an approved re-run; the counts are over "
            "the selected attempts (summary.json keeps both, with why)"
        )
    return "\n".join(out)


def dollars(amount: float) -> str:
    """``$0.0123``: the cost to the millionth of a dollar the comparison ranks mean costs on (it rounds
    them to six decimals), with at least four decimals and no zero after the last digit that
    counts (``$0.01231``, ``$0.000123``, ``$1.5000``), so that two costs the ranking tells apart
    never print alike. A cost under a millionth (never one the ranking holds) shows two
    significant digits, never ``$0.0000``."""
    if not math.isfinite(amount) or amount <= 0:  # no cost written gives these: shown as they are, never raised on
        return f"${amount:.4f}"
    digits = MONEY_DECIMALS if amount >= 10**-MONEY_DECIMALS else 1 - math.floor(math.log10(amount))
    whole, _, decimals = f"{amount:.{digits}f}".partition(".")
    return f"${whole}.{decimals.rstrip('0').ljust(4, '0')}"


def agent_labels(names: list[str], width: int = 40) -> dict[str, str]:
    """Each agent's name for the tables: as it is, or cut in the middle to ``width`` (the end, where
    ``compare`` names the batch, is kept); whole when cutting would make two names alike."""
    half = width // 2
    cut = {name: name if len(name) <= width else f"{name[: half - 1]}…{name[-half:]}" for name in names}
    return cut if len(set(cut.values())) == len(cut) else {name: name for name in names}


def cell_text(cell: dict[str, int] | None) -> str:
    return "-" if cell is None else f"{cell['passes']}/{cell['attempts']}"


def table(header: list[str], lines: list[list[str]]) -> str:
    """Columns aligned; each cell on one line, with the characters a terminal acts on escaped (an
    agent's name comes from attempt.json, which a batch folder from elsewhere may hold)."""
    header = [shown(str(x), inline=True) for x in header]  # a pack's name (summary.json's) heads the grid
    lines = [[shown(str(x), inline=True) for x in line] for line in lines]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    rule = fmt.format(*("-" * w for w in widths))
    return "\n".join([fmt.format(*header), rule, *(fmt.format(*line) for line in lines)])
