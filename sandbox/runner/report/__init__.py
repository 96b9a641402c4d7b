"""HTML reports of attempt and batch folders (Jinja2, self-contained: inline CSS, no script,
no request beyond the folder's own screenshots).

    write_reports(folder) -> [paths]   a batch folder: every attempt's report.html and the
                                       batch's; an attempt folder: its report.html
    write_attempt_report(folder, divergence=None, target=None, in_batch=None) -> path
    unreadable_pages(folder) -> [names]   the batch's attempt folders that cannot be entered (no page)
    NothingToReport                    the folder holds no attempt at all, or cannot be read

Presentation above evaluation: reads attempt folders (``sandbox.runner.folders``) and the
pack's rules; never scores or runs anything.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from sandbox import __version__
from sandbox.evaluation.shown import shown
from sandbox.runner.attempt import EVALUATION_ERROR, AttemptRecord, time_known
from sandbox.runner.batch import selected_attempts
from sandbox.runner.compare import comparison, credits_of
from sandbox.runner.files import folder_file, write_file
from sandbox.runner.folders import (
    AttemptFolder,
    attempt_paths,
    batch_attempts,
    closed_folder,
    is_attempt_folder,
    outcome,
    read_summary,
    unopened,
)
from sandbox.runner.report._board import board
from sandbox.runner.report._view import fields, href, timeline, transcript

REPORT_FILE = "report.html"
LINKED_FILES = (
    "score.txt",
    "output.txt",
    "trace.jsonl",
    "attempt.json",
    "score.json",
    "prompt.txt",
    "agent.stderr.txt",
    "agent.stdout.txt",
    "transcript.jsonl",
)
# each session's Playwright trace: playwright-trace.zip, then -2, -3... (toolserver.media)
PLAYWRIGHT_TRACES = re.compile(r"playwright-trace(?:-([2-9]|[1-9][0-9]+))?\.zip")


class NothingToReport(Exception):
    """The folder holds neither an attempt nor a batch of attempts, or cannot be listed or entered."""


def _shown(value: Any) -> Any:
    """Every value a page shows: a text's control and bidirectional characters written as escapes
    (an agent's stderr, answer or page title; HTML escaping leaves them raw), markup left whole."""
    return shown(value) if isinstance(value, str) and not isinstance(value, Markup) else value


_environment = Environment(
    loader=PackageLoader("sandbox.runner.report", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=_shown,
)


def _verdict(folder: AttemptFolder) -> tuple[str, str]:
    score = folder.score
    if score is None:  # folder.qualified is None
        return "NOT SCORED", "unknown"
    if score.get("status") == "error":
        return "EVALUATION ERROR: NOT JUDGED", "error"
    if folder.qualified:
        return "QUALIFIED PASS" + (" (error-free)" if score.get("error_free") else ""), "pass"
    return "NOT A QUALIFIED PASS", "fail"


def playwright_traces(path: Path) -> list[str]:
    """The attempt folder's Playwright traces, one per session, in the order they were saved."""
    try:
        names = os.listdir(path)
    except OSError:
        return []
    found = sorted((int(match.group(1) or 1), name) for name in names if (match := PLAYWRIGHT_TRACES.fullmatch(name)))
    return [name for _, name in found if folder_file(path, name)[0] is not None]


def render_attempt(
    folder: AttemptFolder, *, divergence: dict[str, Any] | None = None, root: str = "", in_batch: bool | None = None
) -> str:
    """The attempt's page; ``root``: the attempt folder's URL from where the page is (its files are
    linked through it), empty for a page in the folder; ``in_batch``: whether its folder is one of
    the batch whose page is in the folder above it (None: look)."""
    verdict, verdict_class = _verdict(folder)
    attempt: AttemptRecord | dict[str, Any] = folder.attempt or {}  # the template reads either
    title = f"{folder.pack or 'unknown pack'} — attempt {folder.name}"
    counted = outcome(folder)  # as `sandbox results` counts it
    problems = list(folder.problems)
    entries = transcript(folder, problems)
    traces = playwright_traces(folder.path)
    return _environment.get_template("attempt.html.j2").render(
        title=title,
        pack=folder.pack,
        attempt=attempt,
        score=folder.score,
        accuracy=counted.field_accuracy,
        accuracy_counted=folder.counted and not folder.lost_reply,
        verdict=verdict,
        verdict_class=verdict_class,
        reasons=folder.reasons() if folder.qualified is not True else [],
        evaluation_errors=(folder.score or {}).get("errors") or [],
        problems=problems,
        fields=fields(folder),
        calls=timeline(folder, divergence),
        call_count=len(folder.trace.calls) if folder.trace else 0,
        divergence=divergence,
        transcript=entries,
        files=[n for n in LINKED_FILES if folder_file(folder.path, n)[0] is not None] + traces,
        playwright_traces=traces,
        batch_link=_in_batch(folder.path) if in_batch is None else in_batch,
        folder_name=folder.name,
        folder_argument=shlex.quote(str(folder.path.resolve())),
        root=root,
        version=__version__,
    )


def _in_batch(path: Path) -> bool:
    """Whether the page in the folder above the attempt folder is its batch's: one linking to the
    attempt's page, not some other ``report.html`` a folder given alone happens to sit beside."""
    try:
        page = (path.parent / REPORT_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:  # none (a folder given alone, a batch never reported), or unreadable
        return False
    return f'href="{escape(href(path.name))}/report.html"' in page


def write_attempt_report(
    path: Path, *, divergence: dict[str, Any] | None = None, target: Path | None = None, in_batch: bool | None = None
) -> Path:
    """The attempt's page (``<attempt>/report.html`` unless ``target``, whose missing folders are
    made). Its links to the attempt's files are relative: from a ``target`` elsewhere, they go
    to the folder (the page and the folder move together, or the links break)."""
    folder = AttemptFolder.load(path)
    target = Path(target) if target is not None else folder.path / REPORT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    relative = Path(os.path.relpath(folder.path.resolve(), target.parent.resolve())).as_posix()
    root = "" if relative == "." else href(relative) + "/"
    write_file(target, render_attempt(folder, divergence=divergence, root=root, in_batch=in_batch))
    return target


def render_batch(
    batch_dir: Path, closed: frozenset[str] = frozenset(), unwritten: Mapping[str, str] | None = None
) -> str:
    """The batch's page; ``closed``: the names of the attempt folders that cannot be entered, which
    get no page (none is linked); ``unwritten``: the attempt folders whose page could not be written,
    and why (not linked either). An attempt whose folder is not in the batch folder (a summary.json
    listing one removed since) is not linked either."""
    batch_dir = Path(batch_dir)
    data = read_summary(batch_dir)
    unwritten = unwritten or {}

    def folder_link(attempt: dict[str, Any]) -> tuple[str | None, str | None]:
        name = Path(str(attempt["directory"])).name
        if name in closed:
            return None, "unreadable"
        if name in unwritten:
            return None, f"it could not be written: {unwritten[name]}"
        if not name or not (batch_dir / name).is_dir():
            return None, "its folder is not in the batch folder"
        return name, None

    attempts = [{**a, "name": Path(a["directory"]).name} for a in data["attempts"]]
    for attempt in attempts:
        where, attempt["no_page"] = folder_link(attempt)
        attempt["href"] = None if where is None else f"{href(where)}/report.html"
        attempt["raised"] = attempt["status"] == EVALUATION_ERROR
        attempt["time_known"] = time_known(str(attempt["status"]), attempt["elapsed_seconds"])
    counted = selected_attempts(attempts)
    passed = sum(a["qualified_pass"] for a in counted)
    comp = comparison(data["attempts"], credits_of(data))  # made anew: a summary's own may be edited or old
    several = len(comp["ranking"]) > 1
    return _environment.get_template("batch.html.j2").render(
        title=f"Batch {batch_dir.resolve().name}",
        board=board(comp, data["attempts"], folder_link) if several else None,
        rows=[{**row, "time_known": row["median_seconds"] is not None} for row in data["summary"]],
        problems=[data["note"]] if data.get("note") else [],
        attempts=attempts,
        passed=passed,
        counted=len(counted),
        replaced=len(attempts) - len(counted),
        all_passed=bool(counted) and passed == len(counted),
        version=__version__,
    )


def render_leaderboard(comp: dict[str, Any], attempts: list[dict[str, Any]], where: Path) -> str:
    """A page of the leaderboard alone (``sandbox compare --html``); attempt links relative to
    ``where``, to the pages of the attempt folders that are there, can be entered and hold one."""
    here = Path(where).resolve()

    def folder_link(attempt: dict[str, Any]) -> tuple[str | None, str | None]:
        path = Path(str(attempt["directory"]))
        if not path.is_dir():  # a summary.json listing a folder removed since keeps its old path
            return None, "its folder is not there"
        if closed_folder(path) is not None:
            return None, "unreadable"
        if not (path / REPORT_FILE).is_file():  # a batch never reported: a link would lead nowhere
            return None, f"no page: run `sandbox report {path.parent}`"
        return os.path.relpath(path.resolve(), here), None

    return _environment.get_template("leaderboard.html.j2").render(
        title="Comparison", board=board(comp, attempts, folder_link), version=__version__
    )


def write_reports(path: Path, unwritten: list[str] | None = None) -> list[Path]:
    """(Re)write the reports of a batch folder or an attempt folder; returns the batch's (or the
    attempt's) report first. An attempt folder of the batch that cannot be entered gets no page
    (the batch's says why, as ``unreadable_pages`` does); the others do. An attempt page that cannot
    be written (OSError) is not linked from the batch's, which says why, and is added to
    ``unwritten`` (``<folder>/: why``); the other pages are written all the same. The folder given,
    when it cannot be listed or entered, is ``NothingToReport`` (not a page that could not be written)."""
    path = Path(path)
    if path.is_dir() and (unlisted := closed_folder(path)) is not None:  # as a batch's: no page written into it
        raise NothingToReport(
            f"cannot list or enter {path} ({unlisted}): nothing to report, and no page can be written into it"
        )
    if is_attempt_folder(path):
        return [write_attempt_report(path)]
    folders = batch_attempts(path) if path.is_dir() else []
    if not folders:
        raise NothingToReport(
            f"{path} is neither an attempt folder (attempt.json, trace.jsonl, score.json or "
            f"output.txt) nor a batch folder holding attempt folders: nothing to report"
        )
    batch = path / REPORT_FILE
    closed = frozenset(folder.name for folder in folders if not folder.opened)
    write_file(batch, render_batch(path, closed))  # first: on a disk filling up, the page that matters most
    written, failed = [], {}
    for folder in folders:
        if not folder.opened:
            continue
        try:  # one page that cannot be written (or whose folder cannot be read) leaves the others whole
            written.append(write_attempt_report(folder.path, in_batch=True))
        except OSError as exc:
            failed[folder.name] = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    if unwritten is not None:
        unwritten.extend(f"{name}/: cannot write its page ({why})" for name, why in failed.items())
    if failed:  # again, linking only the pages that are there
        write_file(batch, render_batch(path, closed, failed))
    return [batch, *written]


def unreadable_pages(path: Path) -> list[str]:
    """What ``write_reports`` wrote no page for in a batch folder: each attempt folder that cannot be
    entered, with why."""
    path = Path(path)
    if is_attempt_folder(path) or not path.is_dir():
        return []
    return [f"{folder.name}/: {closed}" for folder in attempt_paths(path) if (closed := unopened(folder))]
