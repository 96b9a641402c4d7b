"""Reference agent for the court-docket workflow (packs ``court-docket`` and ``court-docket-p4``).

Reads the case header and the Proceedings and Orders rows from the Supreme Court docket,
then opens the slip opinion PDF (the only other allowed URL) in a new tab, whose snapshot is
the PDF's extracted text, and reads the author, the separate opinions and the syllabus
holding from it. Abstentions (panel vote, majority count, dissent) follow from searching
both sources. Evidence quotes are spans of the snapshot texts.

``read_sources`` browses; ``derive_docket`` / ``derive_decision`` / ``derive_opinion`` read
the snapshots (pure); ``assemble`` builds the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.runner.agents.reference._aria import Node, normalise_space
from sandbox.runner.agents.reference._reading import (
    NOT_FOUND,
    NOT_STATED,
    BenchmarkError,
    Browser,
    RunPlan,
    iso_date,
    read_run_plan,
    run_guarded,
)
from sandbox.runner.task import AgentTask, Tools

WORKFLOW = "court-docket"
_ROW_DATE = re.compile(r"[A-Z][a-z]{2} \d{1,2} \d{4}")
# A decision row announces the opinion or states the judgment in the docket's capitals
# ("Judgment VACATED and case REMANDED."); lower-case words in filings do not count.
_DECISION = re.compile(
    r"(?i:delivered the opinion|\bper curiam\b)|^Judgment (?!ISSUED)[A-Z]{4,}|"
    r"\b(?:AFFIRMED|REVERSED|VACATED|DISMISSED)\b"
)
_JUSTICE = r"[A-Z][A-Za-z'’\-]+"
_PAGE_SEPARATOR = re.compile(r"^--- Page \d+ of \d+ ---$", re.M)
DISPOSITIONS = (
    "AFFIRMED",
    "REVERSED",
    "REVERSED_AND_REMANDED",
    "VACATED",
    "VACATED_AND_REMANDED",
    "DISMISSED",
    "OTHER",
)


@dataclass(frozen=True)
class Proceeding:
    date: str  # ISO
    date_text: str  # as shown, e.g. "Apr 18 2023"
    description: str  # the row's own words, whitespace normalised (its trailing document links left out)


@dataclass(frozen=True)
class Docket:
    number: str
    number_text: str
    header: dict[str, str]
    proceedings: list[Proceeding]


def _is_link_group(node: Node) -> bool:
    """A link, or a group holding only links (a row's document links, e.g. "Main Document")."""
    if node.role == "link":
        return True
    return (
        node.role == "generic"
        and node.own_text is None
        and bool(node.children)
        and all(_is_link_group(child) for child in node.children)
    )


def _cell_text(cell: Node) -> str:
    """A cell's own words. The document links that close a Proceedings and Orders entry are
    not part of its description; a link inside the sentence (the decision row's "opinion")
    is, so only the trailing links are left out."""
    if cell.own_text is not None or not cell.children:
        return normalise_space(cell.own_text or "")
    children = list(cell.children)
    while children and _is_link_group(children[-1]):
        children.pop()
    return normalise_space(" ".join(child.full_text() for child in children))


def derive_docket(tree: Node) -> Docket:
    header: dict[str, str] = {}
    proceedings: list[Proceeding] = []
    number = number_text = None
    for row in tree.find_all("row"):
        cells = [c for c in row.children if c.role in ("cell", "gridcell")]
        texts = [_cell_text(c) for c in cells]
        if len(texts) == 1 and (found := re.fullmatch(r"No\. (\S+)", texts[0])):
            number, number_text = found.group(1), texts[0]
        elif len(texts) >= 2 and texts[0].endswith(":"):
            header.setdefault(texts[0].rstrip(":").strip(), texts[1])
        elif len(texts) >= 2 and _ROW_DATE.fullmatch(texts[0]):
            proceedings.append(Proceeding(iso_date(texts[0]), texts[0], texts[1]))
    if number is None or number_text is None or not proceedings:  # the two are set together
        raise BenchmarkError("the docket shows no 'No. ...' line or no dated Proceedings and Orders rows")
    return Docket(number, number_text, header, proceedings)


def _disposition(sentence: str) -> str:
    words = {
        w
        for w in ("affirmed", "reversed", "vacated", "remanded", "dismissed")
        if re.search(rf"\b{w}\b", sentence, re.I)
    }
    outcomes = words - {"remanded"}
    if len(outcomes) != 1:
        return "OTHER"
    (outcome,) = outcomes
    if "remanded" in words and outcome in ("reversed", "vacated"):
        return f"{outcome.upper()}_AND_REMANDED"
    return outcome.upper()


def _justice(surname: str) -> str:
    parts = re.split(r"(['’\-])", surname)
    return "Justice " + "".join(p[:1].upper() + p[1:].lower() if p.isalpha() else p for p in parts)


def _separate_opinions(text: str, kind: str) -> list[str]:
    """``Justice X (joined by Justice Y)`` for each ``X, J., filed a <kind> opinion, in which Y, J., joined``."""
    pattern = re.compile(
        rf"({_JUSTICE}), (?:C\. ?)?J\., filed an? (?:{kind} opinion|opinion {kind}[^,.]*)"
        rf"(?:, in which ((?:[^.]|C\. ?J\.)+?),? (?:C\. ?)?JJ?\.,? (?:join|joined))?"
    )
    out = []
    for found in pattern.finditer(text):
        entry = _justice(found.group(1))
        if found.group(2):
            joiners = [j for j in re.split(r",\s*(?:C\. ?J\.,\s*)?(?:and\s+)?|\s+and\s+", found.group(2)) if j.strip()]
            entry += " (joined by " + " and ".join(_justice(j.strip()) for j in joiners) + ")"
        if entry not in out:
            out.append(entry)
    return out


def _pdf_text(snapshot: str) -> str:
    """The PDF's text with page separators removed, line-break hyphenation undone and
    whitespace normalised."""
    text = _PAGE_SEPARATOR.sub("\n", snapshot)
    text = re.sub(r"(?<=[a-z])-[ \t]*\n\s*(?=[a-z])", "", text)
    return normalise_space(text)


def _panel_vote(*texts: str) -> str:
    for text in texts:
        for sentence in re.split(r"(?<=\.)\s+", text):
            if re.search(r"\bpanel\b|\bdivided\b", sentence, re.I):
                vote = re.search(r"\b(\d)[–-](\d)\b", sentence)
                if vote:
                    return vote.group(0)
    return NOT_STATED


def _majority_count(*texts: str) -> int | str:
    for text in texts:
        vote = re.search(
            r"\b(?:by a vote of|voted) (\d)[–-](\d)\b|"
            r"\b(\d)[–-](\d) (?:decision|vote|majority)\b",
            text,
        )
        if vote:
            return int(vote.group(1) or vote.group(3))
    return NOT_STATED


def _holding(text: str, prompt: str) -> str:
    held = re.search(r"\bHeld:\s*", text)
    if not held:
        raise BenchmarkError("the opinion's syllabus has no 'Held:' label")
    rest = text[held.end() :]
    stop = re.search(r"stop after `([^`]+)`", prompt)
    end = rest.find(stop.group(1)) + len(stop.group(1)) if stop and stop.group(1) in rest else -1
    if end < 0:  # no stop word given: the first sentence
        sentence = re.match(r".+?\.(?=\s|$)", rest)
        end = sentence.end() if sentence else len(rest)
    return rest[:end].strip()


@dataclass(frozen=True)
class Decision:
    """The decision row of the docket and what the rows around it say."""

    row: Proceeding
    disposition_sentence: str
    argued: Proceeding | None
    judgment: Proceeding | None
    events: list[Proceeding]  # the three rows before the decision
    event_quotes: list[str]
    opinion_line: str  # the row's "delivered the opinion ..." words (else the row)
    unanimous: bool


def derive_decision(docket: Docket) -> Decision:
    rows = docket.proceedings
    decision_index = next((i for i, r in enumerate(rows) if _DECISION.search(r.description)), None)
    if decision_index is None or decision_index < 3:
        raise BenchmarkError("the docket shows no decision row with three rows before it")
    decision = rows[decision_index]
    events = rows[decision_index - 3 : decision_index]
    descriptions = [e.description for e in events]
    opinion_line = re.search(r"(?:delivered|announced) the (?:opinion|judgment)[^.]*", decision.description)
    disposition = re.match(r".+?\.(?=\s|$)", decision.description)
    if disposition is None:
        raise BenchmarkError(f"the decision row {decision.description!r} has no first sentence")
    return Decision(
        row=decision,
        disposition_sentence=disposition.group(0),
        argued=next((r for r in rows if r.description.startswith("Argued")), None),
        judgment=next(
            (r for r in rows[decision_index + 1 :] if re.match(r"JUDGMENT ISSUED", r.description, re.I)), None
        ),
        events=events,
        event_quotes=[
            e.description if descriptions.count(e.description) == 1 else f"{e.date_text} {e.description}"
            for e in events
        ],
        opinion_line=opinion_line.group(0) if opinion_line else decision.description,
        unanimous=bool(re.search(r"\bunanimous\b", decision.description, re.I))
        and not re.search(r"dissent", decision.description, re.I),
    )


@dataclass(frozen=True)
class Opinion:
    author: str  # "Justice X"
    author_quote: str
    concurrences: list[str]
    dissents: list[str]
    holding: str


def derive_opinion(opinion_text: str, decision: Decision, prompt: str) -> Opinion:
    row = decision.row.description
    author = re.search(rf"({_JUSTICE}), (?:C\. ?)?J\., delivered the opinion[^.]*\.", opinion_text) or re.search(
        rf"JUSTICE ({_JUSTICE}) delivered the opinion[^.]*\.", opinion_text
    )
    if not author:
        raise BenchmarkError("the opinion names no author ('X, J., delivered the opinion')")
    return Opinion(
        author=_justice(author.group(1)),
        author_quote=author.group(0),
        concurrences=_separate_opinions(opinion_text, "concurring") or _separate_opinions(row, "concurring"),
        dissents=_separate_opinions(opinion_text, "dissenting") or _separate_opinions(row, "dissenting"),
        holding=_holding(opinion_text, prompt),
    )


# --- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What the tools showed: the docket page's snapshot and the opinion PDF's text."""

    docket_url: str
    opinion_url: str
    docket: Node
    opinion_text: str  # the PDF's text, page separators and line-break hyphens undone


async def read_sources(browser: Browser, plan: RunPlan) -> Sources:
    opinion_url = plan.other_url()
    await browser.start(plan)
    _, docket = await browser.snapshot()
    await browser.open_tab(opinion_url)
    opinion, _ = await browser.snapshot()
    if opinion.get("format") != "pdf_text":
        raise BenchmarkError(f"the opinion tab did not show PDF text (format {opinion.get('format')!r})")
    await browser.close()
    return Sources(plan.start_url, opinion_url, docket, _pdf_text(opinion["snapshot"]))


def _header_date(docket: Docket, label: str) -> str:
    """The ISO date of a header row; the contract types it as a date, so NOT_FOUND cannot stand in."""
    shown = docket.header.get(label)
    if shown is None:
        raise BenchmarkError(f"the docket header has no {label!r} row (it shows {sorted(docket.header)})")
    return iso_date(shown)


def _row_date(row: Proceeding | None, what: str, field: str) -> str:
    """The date of a Proceedings and Orders row the record needs as a date."""
    if row is None:
        raise BenchmarkError(f"the docket shows no {what} row; the output contract allows only a date for {field}")
    return row.date


def assemble(sources: Sources, docket: Docket, decision: Decision, opinion: Opinion) -> dict:
    docket_url, opinion_url = sources.docket_url, sources.opinion_url
    rows, row = docket.proceedings, decision.row
    header = docket.header
    lower_number = header.get("Case Numbers", NOT_FOUND).strip()
    if lower_number.startswith("(") and lower_number.endswith(")"):
        lower_number = lower_number[1:-1].strip()
    return {
        "case": {"name": header.get("Title", NOT_FOUND), "docket_number": docket.number},
        "lower_court": {
            "name": header.get("Lower Ct", NOT_FOUND),
            "case_number": lower_number,
            "decision_date": _header_date(docket, "Decision Date"),
            "panel_vote": _panel_vote(*(r.description for r in rows), sources.opinion_text),
        },
        "dates": {
            "docketed": _header_date(docket, "Docketed"),
            "argued": _row_date(decision.argued, "'Argued'", "dates.argued"),
            "decided": row.date,
        },
        "disposition": {
            "result": _disposition(decision.disposition_sentence),
            "judgment_issued_date": _row_date(
                decision.judgment, "'JUDGMENT ISSUED' (after the decision)", "disposition.judgment_issued_date"
            ),
        },
        "opinion": {
            "author": opinion.author,
            "unanimous": decision.unanimous,
            "majority_count": _majority_count(row.description, sources.opinion_text),
            "concurrences": opinion.concurrences,
            "dissent_author": "; ".join(re.sub(r" \(joined by .*\)$", "", d) for d in opinion.dissents) or NOT_FOUND,
        },
        "last_three_pre_disposition_events": [{"date": e.date, "description": e.description} for e in decision.events],
        "holding": opinion.holding,
        "official_urls": {"docket": docket_url, "opinion": opinion_url},
        "evidence": {
            "case.docket_number": {"url": docket_url, "quote": docket.number_text},
            "dates.decided": {"url": docket_url, "quote": row.date_text},
            "disposition.result": {"url": docket_url, "quote": decision.disposition_sentence},
            "opinion.author": {"url": opinion_url, "quote": opinion.author_quote},
            "opinion.unanimous": {"url": docket_url, "quote": decision.opinion_line},
            "last_three_pre_disposition_events": [{"url": docket_url, "quote": q} for q in decision.event_quotes],
            "holding": {"url": opinion_url, "quote": opinion.holding},
        },
    }


async def solve(tools: Tools, task: AgentTask) -> str:
    return await run_guarded(tools, task, _run)


async def _run(browser: Browser, task: AgentTask) -> dict:
    sources = await read_sources(browser, read_run_plan(task))
    docket = derive_docket(sources.docket)
    decision = derive_decision(docket)
    return assemble(sources, docket, decision, derive_opinion(sources.opinion_text, decision, task.prompt))
