"""Reading helpers shared by all reference agents: the run plan in the prompt, the browser
calls, JSON shown as text in a tab, citations checked against what a tool showed, dates, and
the benchmark-error answer. Snapshot parsing is ``_aria``'s; the prompt's URLs, the
abstention tokens, ``BenchmarkError`` and the answer block are ``_task_text``'s (re-exported
here, so a solver imports its idiom from this one module).

Each solver has the same shape: ``read_sources`` only browses and keeps what the tools
returned; pure ``derive_*`` functions parse and decide from that; ``assemble`` builds the
output record; ``solve`` runs them under ``run_guarded``, which checks the record against the
task's output schema and answers with it, or with the benchmark error that stopped the run.

An agent only ever reads ``AgentTask`` text and tool results; nothing here touches the disk,
the packs, the mirrors or the browser directly. Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import contextlib
import json
import re
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from sandbox.runner.agents.reference import _task_text
from sandbox.runner.agents.reference._aria import Node, parse_snapshot
from sandbox.runner.agents.reference._task_text import NOT_FOUND, NOT_STATED, BenchmarkError  # noqa: F401 (re-exported)
from sandbox.runner.agents.reference._task_text import benchmark_output as answer
from sandbox.runner.task import AgentTask, ToolCallError, Tools


def benchmark_error_answer(error: BenchmarkError) -> str:
    return f"BENCHMARK_ERROR: {error}"


# --- the run plan (the runner prompt's mandatory lines) --------------------------------------


@dataclass(frozen=True)
class RunPlan:
    start_url: str
    allowed_urls: tuple[str, ...]
    min_snapshots: int

    def other_url(self) -> str:
        """The one allowed URL that is not the start URL."""
        others = [u for u in self.allowed_urls if u != self.start_url]
        if len(others) != 1:
            raise BenchmarkError(f"expected one allowed URL besides the start URL, found {others}")
        return others[0]


def read_run_plan(task: AgentTask) -> RunPlan:
    start, allowed = _task_text.start_url(task), _task_text.allowed_urls(task)
    snapshots = re.search(r"browser_snapshot: at least (\d+)", task.prompt)
    return RunPlan(
        start_url=start, allowed_urls=tuple(allowed), min_snapshots=int(snapshots.group(1)) if snapshots else 1
    )


# --- what the tools showed -------------------------------------------------------------------


def seen_texts(root: Node) -> list[str]:
    """Each node's own visible string: what a quote may be copied from."""
    return [n.own_text for n in root.walk() if n.own_text and not n.role.startswith("/")]


def json_document(result: dict) -> tuple[str, Any]:
    """(JSON text as shown, parsed value) of a snapshot of a tab showing a JSON document.

    The snapshot is either the document's text (format ``text``, after a ``- document (...)``
    line) or an aria snapshot holding the text as one quoted string."""
    text = result["snapshot"]
    if result.get("format") == "text":
        body = text.split("\n", 1)[1] if text.startswith("- document") and "\n" in text else text
        try:
            return body.strip(), json.loads(body)
        except json.JSONDecodeError as exc:
            raise BenchmarkError(f"{result.get('url')} does not show a JSON document ({exc})") from None
    for node in parse_snapshot(text).walk():
        shown = (node.own_text or "").strip()
        if shown[:1] in ("{", "["):
            try:
                return shown, json.loads(shown)
            except json.JSONDecodeError:
                continue
    raise BenchmarkError(f"{result.get('url')} does not show a JSON document")


async def read_json(browser: Browser, url: str, citations: Citations) -> tuple[str, Any]:
    """Open a URL that shows a JSON document: (JSON text as shown, parsed value); the text is
    what citations for that URL may quote."""
    await browser.navigate(url)
    result, _ = await browser.snapshot()
    text, value = json_document(result)
    citations.saw(url, [text])
    return text, value


async def read_json_object(browser: Browser, url: str, citations: Citations) -> tuple[str, dict]:
    """``read_json`` for a URL whose document must be one JSON object (a record, an index)."""
    text, value = await read_json(browser, url, citations)
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")
        raise BenchmarkError(f"{url} shows a JSON {kind}, not the object this task reads")
    return text, value


class Browser:
    """The agent's browser calls, in the gates' terms: one start with the run plan's URL,
    URL-bearing navigations, snapshots, and one close (also when the agent stops early)."""

    def __init__(self, tools: Tools, task: AgentTask) -> None:
        self.tools, self.task = tools, task
        self.open = False

    async def start(self, plan: RunPlan) -> dict:
        """The one browser_start_session; a failure or a non-Kernel provider stops the run."""
        try:
            result = await _task_text.start_session(self.tools, self.task, plan.start_url)
        except ToolCallError as exc:
            raise BenchmarkError(f"browser_start_session: {exc}") from exc
        self.open = True
        return result

    async def navigate(self, url: str) -> dict:
        return await self.tools.call("browser_navigate", url=url)

    async def open_tab(self, url: str) -> dict:
        return await self.tools.call("browser_open_tab", url=url)

    async def scroll(self, direction: str) -> dict:
        return await self.tools.call("browser_scroll", direction=direction)

    async def type(self, ref: str, text: str) -> dict:
        return await self.tools.call("browser_type", ref=ref, text=text)

    async def click(self, ref: str) -> dict:
        return await self.tools.call("browser_click", ref=ref)

    async def snapshot(self) -> tuple[dict, Node]:
        result = await self.tools.call("browser_snapshot")
        return result, parse_snapshot(result["snapshot"])

    async def rendered_snapshot(self, ready: Callable[[Node], bool], attempts: int = 5) -> tuple[dict, Node]:
        """Snapshot a script-rendered page, again while ``ready(root)`` is false."""
        result, root = await self.snapshot()
        for _ in range(attempts - 1):
            if ready(root):
                break
            result, root = await self.snapshot()
        if not ready(root):
            raise BenchmarkError(f"{result.get('url')} did not finish rendering")
        return result, root

    async def close(self) -> None:
        """browser_close with no arguments (the gates forbid session_id and close_all)."""
        if self.open:
            self.open = False
            await self.tools.call("browser_close")


# What reading a well-formed but unexpected page raises: a missing key or index, a value of another
# type ("data2" a list, a date "Feb 30"), None where a string was. The run stops with the reason.
SOURCE_FAULTS = (LookupError, TypeError, AttributeError, ValueError)


def unexpected_source(exc: Exception) -> BenchmarkError:
    """A ``SOURCE_FAULTS`` exception as the benchmark error it stands for, naming where the agent
    was reading (the innermost frame in a reference agent module) and what it found."""
    here = Path(__file__).parent
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).parent == here]
    where = f" in {Path(frames[-1].filename).name}:{frames[-1].lineno} ({frames[-1].name})" if frames else ""
    return BenchmarkError(f"the sources are not as this agent reads them: {type(exc).__name__} {exc}{where}")


def checked_answer(task: AgentTask, record: dict) -> str:
    """The answer block for ``record``, once it is known to keep the task's output contract (the
    JSON Schema with its formats); a record that would break it is a benchmark error naming the
    fields, never an answer that fails the contract as a whole."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(task.output_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors([record]), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        said = "; ".join(
            f"{'.'.join(str(p) for p in list(e.absolute_path)[1:]) or 'the record'}: {e.message[:200]}"
            for e in errors[:3]
        )
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise BenchmarkError(f"the answer would break the output contract: {said}{more}")
    return answer(record)


async def run_guarded(tools: Tools, task: AgentTask, body: Callable[[Browser, AgentTask], Awaitable[dict]]) -> str:
    """Run an agent body and answer with the record it builds. If it must stop (a benchmark
    error, a failed tool call, a source it cannot read, a record that breaks the contract) the
    session it opened is released and the answer is the error; any other exception is a bug
    in the agent and propagates (after the release)."""
    browser = Browser(tools, task)
    try:
        return checked_answer(task, await body(browser, task))
    except BenchmarkError as error:
        await _release(browser)
        return benchmark_error_answer(error)
    except ToolCallError as error:
        await _release(browser)
        return benchmark_error_answer(BenchmarkError(str(error)))
    except SOURCE_FAULTS as exc:
        await _release(browser)
        return benchmark_error_answer(unexpected_source(exc))
    except Exception:
        await _release(browser)
        raise


async def _release(browser: Browser) -> None:
    # The trace records a failed close; the stop reason is what the caller reports.
    with contextlib.suppress(ToolCallError):
        await browser.close()


# --- values read from a source ------------------------------------------------------------------


def stated(value: Any, what: str) -> str:
    """A text value a source holds, else ``NOT_FOUND`` (absent, null or blank): the prompts' token
    for a concrete record value the complete sources do not hold. Another kind of value (a list
    where a name was) is no answer, but a benchmark error."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return NOT_FOUND
    if not isinstance(value, str):
        raise BenchmarkError(f"{what} is {value!r} in the source, not a text")
    return value


def required(value: Any, what: str) -> str:
    """A text value the task cannot do without (one to cite, a date the contract types): its
    absence stops the run with a benchmark error naming it."""
    if not isinstance(value, str) or not value.strip():
        raise BenchmarkError(f"the sources give no {what} as a text (found {value!r})")
    return value


# --- citations -------------------------------------------------------------------------------


def collapse(text: str) -> str:
    return " ".join(text.split())


class Citations:
    """Quotes are taken only from text a tool showed for that URL, and checked before use."""

    def __init__(self) -> None:
        self._seen: dict[str, list[str]] = {}

    def saw(self, url: str, texts: list[str]) -> None:
        self._seen.setdefault(url, []).extend(collapse(t) for t in texts)

    def cite(self, url: str, *quotes: str) -> dict:
        """The first candidate quote found inside one text the URL showed."""
        for quote in quotes:
            needle = collapse(quote)
            if needle and any(needle in text for text in self._seen.get(url, [])):
                return {"url": url, "quote": needle}
        raise BenchmarkError(f"none of the quotes {list(quotes)!r} appears in what {url} showed")


def json_member_quote(json_text: str, key: str, value: Any) -> str:
    """The literal ``"key": value`` span of a JSON text (any whitespace between tokens)."""
    if isinstance(value, list):
        inner = r"\s*,\s*".join(re.escape(json.dumps(v, ensure_ascii=False)) for v in value)
        pattern = rf'"{re.escape(key)}"\s*:\s*\[\s*{inner}\s*\]'
    else:
        pattern = rf'"{re.escape(key)}"\s*:\s*{re.escape(json.dumps(value, ensure_ascii=False))}'
    match = re.search(pattern, json_text)
    if not match:
        raise BenchmarkError(f"no literal {key!r} member with value {value!r} in the JSON text")
    return match.group(0)


def find_span(text: str, pattern: str, flags: int = 0) -> str:
    """The literal span of ``text`` a regular expression matches (to quote it)."""
    match = re.search(pattern, text, flags)
    if not match:
        raise BenchmarkError(f"no span matching {pattern!r} in the source text")
    return match.group(0)


# --- dates -----------------------------------------------------------------------------------

MONTHS = {
    m: i
    for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)
}
# US zone abbreviations as notices write them -> UTC offset.
ZONE_OFFSETS = {
    "EST": "-05:00",
    "EDT": "-04:00",
    "CST": "-06:00",
    "CDT": "-05:00",
    "MST": "-07:00",
    "MDT": "-06:00",
    "PST": "-08:00",
    "PDT": "-07:00",
    "AKST": "-09:00",
    "AKDT": "-08:00",
    "HST": "-10:00",
    "UTC": "+00:00",
    "GMT": "+00:00",
    "Z": "+00:00",
}
MONTH_DAY_YEAR = re.compile(r"\b([A-Z][a-z]{2,8})\.? (\d{1,2}),? (\d{4})\b")
DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2}) ([A-Za-z]{3,9}) (\d{4})\b")


def month_number(name: str) -> int:
    number = MONTHS.get(name[:3].lower())
    if number is None:
        raise BenchmarkError(f"not a month name: {name!r}")
    return number


def iso_date(text: str) -> str:
    """'Apr. 24, 2024' / 'April 24, 2026' / 'Apr 18 2023' -> ISO 'YYYY-MM-DD' (the first
    such date in text)."""
    match = MONTH_DAY_YEAR.search(text)
    if not match:
        raise BenchmarkError(f"no 'Month day, year' date in {text!r}")
    return calendar_date(int(match.group(3)), month_number(match.group(1)), int(match.group(2)), text).isoformat()


def calendar_date(year: int, month: int, day: int, text: str) -> date:
    """The date, or a benchmark error naming the text that wrote an impossible one ('Feb 30, 2023')."""
    try:
        return date(year, month, day)
    except ValueError:
        raise BenchmarkError(f"{text!r} writes no calendar date") from None


def iso_datetime_from_text(day_month_year: str, clock: str, zone: str) -> str:
    """'22 JUNE 2026', '1:00 PM', 'CDT' -> '2026-06-22T13:00:00-05:00'."""
    match = DAY_MONTH_YEAR.search(day_month_year)
    if not match:
        raise BenchmarkError(f"no 'day month year' date in {day_month_year!r}")
    hour_minute = re.fullmatch(r"(\d{1,2}):(\d{2}) ?([AaPp])\.?[Mm]\.?", clock.strip())
    if not hour_minute:
        raise BenchmarkError(f"not a 12-hour clock time: {clock!r}")
    hour = int(hour_minute.group(1)) % 12 + (12 if hour_minute.group(3).lower() == "p" else 0)
    offset = ZONE_OFFSETS.get(zone.upper())
    if offset is None:
        raise BenchmarkError(f"unknown time zone abbreviation {zone!r}")
    day = calendar_date(int(match.group(3)), month_number(match.group(2)), int(match.group(1)), day_month_year)
    return f"{day.isoformat()}T{hour:02d}:{hour_minute.group(2)}:00{offset}"


def instant(iso: str) -> datetime:
    """An ISO 8601 timestamp with an offset (or Z) as an aware datetime."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def local_date(iso: str) -> date:
    """The calendar date written in a timestamp (in its own offset)."""
    return instant(iso).date()
