"""The leaderboard of a batch of several agents: the comparison's grid of qualified passes per
agent and workflow (each cell linking to its attempts), and a chart of each agent's pass rate
with its 95 % interval, drawn as inline SVG here (no script, nothing fetched)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

from markupsafe import Markup

from sandbox.evaluation.shown import shown
from sandbox.runner.attempt import in_median
from sandbox.runner.compare import agent_labels, dollars, workflow
from sandbox.runner.report._view import href

BAR_W, ROW_H, LABEL_W = 420, 26, 220
LABEL_CHARS = 30  # an agent's name in a chart: cut in the middle beyond this, unless two would read alike


# Where an attempt's folder is, relative to the page, to link its page; or None and why it has no
# link (its folder is not there, or cannot be entered: no page was written into it).
FolderLink = Callable[[dict[str, Any]], tuple[str | None, str | None]]


def board(comparison: dict[str, Any], attempts: list[dict[str, Any]], link: FolderLink) -> dict[str, Any]:
    """What the page shows: the ranking, the grid (rows of cells with their links, from ``link``, and
    a colour from the pass rate), the workflows, and the chart; the notes say which attempts have
    no link, and why."""
    packs = sorted({pack for cells in comparison["matrix"].values() for pack in cells})
    historical = comparison.get("scored_as", {})
    # a cell's attempts (by workflow, the selected ones): each one's folder name and link
    folders: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    unlinked: list[str] = []
    for attempt in attempts:
        if attempt.get("selection") == "replaced" or attempt["agent"] is None:  # in no cell, or in no row
            continue
        where, why = link(attempt)
        name = Path(str(attempt["directory"])).name
        if where is None:
            unlinked.append(f"{name} ({why})")
        key = (str(attempt["agent"]), workflow(str(attempt["pack"]), historical))
        folders.setdefault(key, []).append((name, where))
    grid = []
    for row in comparison["ranking"]:
        cells = comparison["matrix"][row["agent"]]
        grid.append(
            {
                "agent": row["agent"],
                "cells": [
                    cell(cells.get(pack), sorted(folders.get((row["agent"], pack), []), key=lambda found: found[0]))
                    for pack in packs
                ],
            }
        )
    ranking = comparison["ranking"]
    names = agent_labels([row["agent"] for row in ranking], width=LABEL_CHARS)
    return {
        "ranking": [
            {**row, "cost": None if row["mean_cost_usd"] is None else dollars(row["mean_cost_usd"])} for row in ranking
        ],  # fmt: skip
        "packs": packs,
        "grid": grid,
        "chart": chart(ranking, names),
        "time_chart": spread(
            ranking, names, attempts, "elapsed_seconds", "Elapsed time per attempt", "{:.1f} s".format
        ),
        "cost_chart": spread(ranking, names, attempts, "cost_usd", "Cost per attempt", dollars),
        "scored_as": historical,
        "notes": comparison.get("overlaps", [])
        + ([f"no page to link for {len(unlinked)} attempt(s): {', '.join(sorted(unlinked))}"] if unlinked else []),
    }


def cell(counts: dict[str, int] | None, folders: list[tuple[str, str | None]]) -> dict[str, Any]:
    """A grid cell: its count, colour and the attempts it counts (``folders``: each one's name and
    where its folder is from the page; None: no link)."""
    if not counts:
        return {"text": "-", "colour": "#ffffff", "links": []}
    rate = counts["passes"] / counts["attempts"]
    # red (0) to green (1) through pale yellow, light enough for dark text
    red, green = (255, int(170 + 85 * rate * 2)) if rate < 0.5 else (int(255 - 150 * (rate - 0.5) * 2), 255)
    return {
        "text": f"{counts['passes']}/{counts['attempts']}",
        "colour": f"#{red:02x}{green:02x}b0",
        "links": [
            {"name": name, "href": None if where is None else f"{href(where)}/report.html"} for name, where in folders
        ],
    }


def spread(
    ranking: list[dict[str, Any]],
    names: dict[str, str],
    attempts: list[dict[str, Any]],
    key: str,
    title: str,
    fmt: Callable[[float], str],
) -> Markup:
    """One row per agent: a dot per selected attempt at its ``key`` value, a tick at the median.
    Empty when no attempt has the value (no prices: no cost chart)."""
    values = {row["agent"]: sorted(known(attempts, row["agent"], key)) for row in ranking}
    top = max((v for found in values.values() for v in found), default=0.0)
    if top <= 0:
        return Markup("")
    right = LABEL_W + BAR_W
    axis = 8 + len(ranking) * ROW_H
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{right + 90}" height="{axis + 22}" '
        f'aria-label="{escape(title)}, per agent">'
    ]
    for index, row in enumerate(ranking):
        y, found = 8 + index * ROW_H, values[row["agent"]]
        name = escape(shown(names[row["agent"]], inline=True))
        parts.append(f'<text x="{LABEL_W - 8}" y="{y + 14}" text-anchor="end" font-size="12">{name}</text>')
        parts += [
            f'<circle cx="{LABEL_W + BAR_W * v / top:.1f}" cy="{y + 10}" r="4" fill="#4a78a8" opacity="0.7"/>'
            for v in found
        ]
        if found:
            middle = statistics.median(found)
            x = LABEL_W + BAR_W * middle / top
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y + 2}" y2="{y + 18}" stroke="#1b1b1b" stroke-width="2"/>'
            )
            parts.append(f'<text x="{right + 6}" y="{y + 14}" font-size="12">median {escape(fmt(middle))}</text>')
    parts += [
        f'<line x1="{LABEL_W}" x2="{right}" y1="{axis}" y2="{axis}" stroke="#999"/>',
        f'<text x="{LABEL_W}" y="{axis + 14}" font-size="11">0</text>',
        f'<text x="{right}" y="{axis + 14}" font-size="11" text-anchor="end">{escape(fmt(top))}</text>',
        "</svg>",
    ]
    return Markup("".join(parts))


def known(attempts: list[dict[str, Any]], agent: str, key: str) -> list[float]:
    """The agent's selected attempts' ``key`` values, where they have one (an unfinished, unreadable or
    stopped attempt's time is none, as in the table's median)."""
    return [
        float(a[key])
        for a in attempts
        if a["agent"] == agent
        and a.get("selection") != "replaced"
        and a.get(key) is not None
        and (key != "elapsed_seconds" or in_median(str(a["status"]), a[key]))
    ]


def chart(ranking: list[dict[str, Any]], names: dict[str, str]) -> Markup:
    """One bar per agent: its pass rate, and a line for its 95 % interval."""
    height = ROW_H * len(ranking) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{LABEL_W + BAR_W + 60}" height="{height}" '
        f'aria-label="Pass rate with its 95% interval, per agent">'
    ]
    for index, row in enumerate(ranking):
        y = 8 + index * ROW_H
        low, high = row["interval"]
        rate = row["pass_rate"]
        label = escape(shown(names[row["agent"]], inline=True))
        parts += [
            f'<text x="{LABEL_W - 8}" y="{y + 14}" text-anchor="end" font-size="12">{label}</text>',
            f'<rect x="{LABEL_W}" y="{y + 3}" width="{BAR_W * rate:.1f}" height="14" fill="#6a9f5b"/>',
            f'<line x1="{LABEL_W + BAR_W * low:.1f}" x2="{LABEL_W + BAR_W * high:.1f}" y1="{y + 10}" y2="{y + 10}" '
            'stroke="#1b1b1b" stroke-width="2"/>',
            f'<text x="{LABEL_W + BAR_W + 6}" y="{y + 14}" font-size="12">{rate:.0%}</text>',
        ]
    axis = 8 + len(ranking) * ROW_H
    parts += [
        f'<line x1="{LABEL_W}" x2="{LABEL_W + BAR_W}" y1="{axis}" y2="{axis}" stroke="#999"/>',
        f'<text x="{LABEL_W}" y="{axis + 14}" font-size="11">0%</text>',
        f'<text x="{LABEL_W + BAR_W}" y="{axis + 14}" font-size="11" text-anchor="end">100%</text>',
        "</svg>",
    ]
    return Markup("".join(parts))
