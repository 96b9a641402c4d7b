"""Reading helpers shared by the scripted reference agents: the run plan in the prompt, the
aria snapshot text, JSON shown as text in a tab, citations checked against what was seen,
dates, and the final answer block.

An agent only ever reads ``AgentTask`` text and tool results; nothing here touches the disk,
the packs, the mirrors or the browser directly. Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Iterator

from sandbox.runner.task import AgentTask, ToolCallError, Tools

ANSWER_BEGIN, ANSWER_END = "BENCHMARK_JSON_BEGIN", "BENCHMARK_JSON_END"
KERNEL = "kernel"


class BenchmarkError(Exception):
    """The run must stop (the runner prompt says: report the benchmark error and stop)."""


# --- the run plan (the runner prompt's mandatory lines) --------------------------------------

@dataclass(frozen=True)
class RunPlan:
    site_key: str
    start_url: str
    allowed_urls: tuple[str, ...]
    min_snapshots: int


def read_run_plan(task: AgentTask) -> RunPlan:
    prompt = task.prompt
    site_key = re.search(r'must pass site_key="([^"]+)" exactly', prompt)
    start_url = re.search(r'must pass url="([^"]+)" exactly', prompt)
    allowed = re.search(r"may use only these exact resource URLs: (.+?)\. A fragment-only", prompt, re.S)
    if not (start_url and allowed):
        raise BenchmarkError("the runner prompt does not state the start URL and the allowed URLs")
    snapshots = re.search(r"browser_snapshot: at least (\d+)", prompt)
    return RunPlan(site_key=site_key.group(1) if site_key else task.site_key, start_url=start_url.group(1),
                   allowed_urls=tuple(u.strip() for u in allowed.group(1).split(";") if u.strip()),
                   min_snapshots=int(snapshots.group(1)) if snapshots else 1)


async def start_session(tools: Tools, plan: RunPlan) -> dict:
    """The one browser_start_session of the run; a failure or a non-Kernel provider stops it."""
    try:
        result = await tools.call("browser_start_session", provider=KERNEL, site_key=plan.site_key,
                                  clear_cookies=False, url=plan.start_url)
    except ToolCallError as exc:
        raise BenchmarkError(f"browser_start_session failed: {exc}") from exc
    if result.get("provider") != KERNEL:
        raise BenchmarkError(f"the session provider is {result.get('provider')!r}, not {KERNEL!r}")
    return result


def benchmark_error_answer(error: BenchmarkError) -> str:
    return f"BENCHMARK_ERROR: {error}"


def answer(record: dict) -> str:
    return f"{ANSWER_BEGIN}\n{json.dumps([record], ensure_ascii=False, indent=2)}\n{ANSWER_END}"


# --- aria snapshot text ----------------------------------------------------------------------

@dataclass
class AriaNode:
    """One line of Playwright's aria snapshot: ``- role "name" [attr] [attr=v]: value``."""
    role: str
    name: str | None = None
    value: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    children: list["AriaNode"] = field(default_factory=list)

    def own_texts(self) -> list[str]:
        return [t for t in (self.name, self.value) if t]

    def text(self) -> str:
        """All text of the node and its descendants, joined by spaces."""
        return " ".join(self.own_texts() + [c.text() for c in self.children if c.text()])

    def walk(self) -> Iterator["AriaNode"]:
        yield self
        for child in self.children:
            yield from child.walk()

    def level(self) -> int | None:
        return int(self.attrs["level"]) if "level" in self.attrs else None


_LINE = re.compile(r"^(?P<indent> *)- (?P<body>.*)$")
_ATTR = re.compile(r"\s*\[([^\]=]+)(?:=([^\]]*))?\]")


def _yaml_scalar(text: str) -> str:
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    return text


def _split_key(body: str) -> tuple[str, str | None]:
    """(key, value text or None) of one snapshot line body."""
    if body.startswith("'"):  # a key YAML had to quote as a whole
        i, out = 1, []
        while i < len(body):
            if body[i] == "'":
                if body[i + 1:i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                break
            out.append(body[i])
            i += 1
        rest = body[i + 1:]
        return "".join(out), (rest[1:].strip() or None) if rest.startswith(":") else None
    in_string = escaped = False
    for i, char in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == ":" and (i + 1 == len(body) or body[i + 1] == " "):
            return body[:i], body[i + 1:].strip() or None
    return body, None


def _parse_line(body: str) -> AriaNode | tuple[str, str]:
    key, value = _split_key(body)
    if key == "text":
        return AriaNode(role="text", value=_yaml_scalar(value or ""))
    if key.startswith("/"):
        return (key[1:], _yaml_scalar(value or ""))  # a property line such as /url
    role, _, rest = key.partition(" ")
    node = AriaNode(role=role)
    rest = rest.strip()
    if rest.startswith('"'):
        node.name, end = json.JSONDecoder().raw_decode(rest)
        rest = rest[end:]
    for attr in _ATTR.finditer(rest):
        node.attrs[attr.group(1).strip()] = attr.group(2) if attr.group(2) is not None else ""
    if value is not None:
        node.value = _yaml_scalar(value)
    return node


def parse_aria(snapshot: str) -> AriaNode:
    """The snapshot as a tree under a synthetic ``document`` root."""
    root = AriaNode(role="document")
    stack: list[tuple[int, AriaNode]] = [(-1, root)]
    for line in snapshot.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        indent = len(match.group("indent"))
        parsed = _parse_line(match.group("body"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if isinstance(parsed, tuple):
            if parsed[0] == "url":
                parent.url = parsed[1]
            continue
        parent.children.append(parsed)
        stack.append((indent, parsed))
    return root


def seen_texts(root: AriaNode) -> list[str]:
    """Each node's own visible strings: what a quote may be copied from."""
    return [t for node in root.walk() for t in node.own_texts()]


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
    return json_in_snapshot(parse_aria(text))


def json_in_snapshot(root: AriaNode) -> tuple[str, Any]:
    """(JSON text as shown, parsed value) from an aria snapshot of a JSON document."""
    for node in root.walk():
        for text in node.own_texts():
            stripped = text.strip()
            if stripped[:1] in "{[":
                try:
                    return stripped, json.loads(stripped)
                except json.JSONDecodeError:
                    continue
    raise BenchmarkError("the tab does not show a JSON document")


async def snapshot(tools: Tools) -> tuple[dict, AriaNode]:
    result = await tools.call("browser_snapshot")
    return result, parse_aria(result["snapshot"])


async def rendered_snapshot(tools: Tools, ready, attempts: int = 5) -> tuple[dict, AriaNode]:
    """Snapshot a script-rendered page, taking another snapshot while ``ready(root)`` is false."""
    result, root = await snapshot(tools)
    for _ in range(attempts - 1):
        if ready(root):
            break
        result, root = await snapshot(tools)
    if not ready(root):
        raise BenchmarkError(f"{result.get('url')} did not finish rendering")
    return result, root


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

MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
# US zone abbreviations as notices write them -> UTC offset.
ZONE_OFFSETS = {"EST": "-05:00", "EDT": "-04:00", "CST": "-06:00", "CDT": "-05:00", "MST": "-07:00",
                "MDT": "-06:00", "PST": "-08:00", "PDT": "-07:00", "AKST": "-09:00", "AKDT": "-08:00",
                "HST": "-10:00", "UTC": "+00:00", "GMT": "+00:00", "Z": "+00:00"}
MONTH_DAY_YEAR = re.compile(r"\b([A-Z][a-z]{2,8})\.? (\d{1,2}), (\d{4})\b")
DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2}) ([A-Za-z]{3,9}) (\d{4})\b")


def month_number(name: str) -> int:
    number = MONTHS.get(name[:3].lower())
    if number is None:
        raise ValueError(f"not a month name: {name!r}")
    return number


def iso_from_month_day_year(text: str) -> str:
    """'Apr. 24, 2024' / 'April 24, 2026' -> '2024-04-24' (the first such date in text)."""
    match = MONTH_DAY_YEAR.search(text)
    if not match:
        raise ValueError(f"no 'Month day, year' date in {text!r}")
    return date(int(match.group(3)), month_number(match.group(1)), int(match.group(2))).isoformat()


def iso_datetime_from_text(day_month_year: str, clock: str, zone: str) -> str:
    """'22 JUNE 2026', '1:00 PM', 'CDT' -> '2026-06-22T13:00:00-05:00'."""
    match = DAY_MONTH_YEAR.search(day_month_year)
    if not match:
        raise ValueError(f"no 'day month year' date in {day_month_year!r}")
    hour_minute = re.fullmatch(r"(\d{1,2}):(\d{2}) ?([AaPp])\.?[Mm]\.?", clock.strip())
    if not hour_minute:
        raise ValueError(f"not a 12-hour clock time: {clock!r}")
    hour = int(hour_minute.group(1)) % 12 + (12 if hour_minute.group(3).lower() == "p" else 0)
    offset = ZONE_OFFSETS[zone.upper()]
    day = date(int(match.group(3)), month_number(match.group(2)), int(match.group(1)))
    return f"{day.isoformat()}T{hour:02d}:{hour_minute.group(2)}:00{offset}"


def instant(iso: str) -> datetime:
    """An ISO 8601 timestamp with an offset (or Z) as an aware datetime."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def local_date(iso: str) -> date:
    """The calendar date written in a timestamp (in its own offset)."""
    return instant(iso).date()
