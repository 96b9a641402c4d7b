"""Reference agent for ``ecfr-regulation``: trace 28 CFR part 35 subpart H across the eCFR
point-in-time change (before view, after view, section version history).

Scripted, no model: it opens the three URLs the runner prompt allows, snapshots each, and
reads every value from those snapshots. Conventions the task text fixes (canonical labels,
NOT_STATED / NOT_FOUND) are applied only after looking for the item in the sources.

``read_sources`` browses; ``derive_view`` / ``derive_authority`` / ``derive_version_trace`` /
``derive_requirements`` read the snapshots (pure); ``assemble`` builds the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sandbox.runner.agents.reference._aria import Node
from sandbox.runner.agents.reference._reading import (
    NOT_FOUND,
    NOT_STATED,
    BenchmarkError,
    Browser,
    Citations,
    RunPlan,
    iso_date,
    json_member_quote,
    read_json_object,
    read_run_plan,
    required,
    run_guarded,
    seen_texts,
)
from sandbox.runner.task import AgentTask, Tools

WORKFLOW = "ecfr-regulation"
_LABEL = re.compile(r"^\((\w+)\)$")
_VIEW_DATE = re.compile(r"/enhanced/(\d{4}-\d{2}-\d{2})/")


@dataclass
class Paragraph:
    label: str | None  # "a", "1", ... (None for an unnumbered paragraph)
    heading: str | None  # the italic paragraph heading, as shown
    body: list[str]  # the plain text pieces after the label and heading

    @property
    def lettered(self) -> bool:
        return bool(self.label and self.label.isalpha())

    @property
    def numbered(self) -> bool:
        return bool(self.label and self.label.isdigit())

    def text(self) -> str:
        return " ".join(([self.heading] if self.heading else []) + self.body)


@dataclass
class Section:
    heading: str
    paragraphs: list[Paragraph] = field(default_factory=list)

    def text(self) -> str:
        return " ".join(p.text() for p in self.paragraphs)


@dataclass
class RegulatoryView:
    """One renderer view: the subpart heading, its source note, and its sections in order."""

    subpart_heading: str | None = None
    source_note: str | None = None
    sections: list[Section] = field(default_factory=list)


def _paragraph(node: Node) -> Paragraph:
    label = heading = None
    body: list[str] = []
    if node.text:
        body.append(node.text)
    for child in node.children:
        text = child.full_text()
        match = _LABEL.match(text) if child.role == "generic" else None
        if match and label is None and not body and heading is None:
            label = match.group(1)
        elif child.role == "emphasis" and heading is None and not body:
            heading = text
        elif text:
            body.append(text)
    return Paragraph(label, heading, body)


def derive_view(root: Node) -> RegulatoryView:
    view = RegulatoryView()
    current: Section | None = None
    for node in root.walk():
        name = node.name or ""
        if node.role == "heading" and name.startswith("Subpart") and view.subpart_heading is None:
            view.subpart_heading = name
        elif node.role == "heading" and name.startswith("§"):
            current = Section(heading=name)
            view.sections.append(current)
        elif node.role == "paragraph":
            if any(c.role == "strong" and c.full_text().startswith("Source") for c in node.children):
                view.source_note = node.full_text()
            elif current is not None:
                current.paragraphs.append(_paragraph(node))
    return view


def _section(view: RegulatoryView, number: str) -> Section:
    for section in view.sections:
        if re.match(rf"§\s*{re.escape(number)}\b", section.heading):
            return section
    raise BenchmarkError(f"section {number} is not in the after view")


def _covered_content(section: Section) -> list[tuple[str, str]]:
    """(label, quote) for each numbered item under the first lettered paragraph that opens a
    list: 'Web content that a public entity ...' -> 'web content'."""
    items: list[tuple[str, str]] = []
    in_list = False
    for paragraph in section.paragraphs:
        if paragraph.lettered:
            if in_list:
                break
            in_list = paragraph.text().rstrip().endswith(":")
        elif in_list and paragraph.numbered and paragraph.body:
            first = paragraph.body[0]
            noun = re.match(r"(.+?) (?:that|which)\b", first)
            if noun:
                items.append((noun.group(1).lower(), first.split(",")[0]))
    return items


def _compliance_dates(section: Section) -> dict[str, tuple[str, str]]:
    """{'large'|'small': (ISO date, quote)} from the paragraphs that set the dates."""
    dates: dict[str, tuple[str, str]] = {}
    for paragraph in section.paragraphs:
        match = re.search(r"Beginning ([A-Z][a-z]+\.? \d{1,2}, \d{4})", paragraph.text())
        if not match or not paragraph.heading:
            continue
        heading = paragraph.heading.lower()
        kind = (
            "small"
            if ("less than" in heading or "special district" in heading)
            else ("large" if "or more" in heading else None)
        )
        if kind and kind not in dates:
            dates[kind] = (iso_date(match.group(1)), match.group(0))
    return dates


def _silent_items(texts: str) -> dict[str, str]:
    """RIN, FR document number and testing frequency: the value if a source states it."""
    rin = re.search(r"\bRIN:?\s*(\d{4}-[A-Z]{2}\d{2})", texts)
    fr_doc = re.search(r"(?:FR Doc\.?|Document Number:?)\s*(\d{4}-\d{4,6})", texts)
    testing = None
    for sentence in re.split(r"(?<=[.;])\s+", texts):
        if re.search(r"\b(test(s|ed|ing)?|audit(s|ed|ing)?)\b", sentence, re.I) and re.search(
            r"\b(annual(ly)?|every \w+|each year|monthly|quarterly|biennial(ly)?|once a \w+)\b", sentence, re.I
        ):
            testing = sentence
            break
    return {
        "rin": rin.group(1) if rin else NOT_STATED,
        "federal_register_document_number": fr_doc.group(1) if fr_doc else NOT_STATED,
        "mandatory_testing_frequency": testing or NOT_STATED,
    }


@dataclass(frozen=True)
class Authority:
    """The after view's source note: FR citation, publication date, AG order."""

    citation: str  # "89 FR 31337"
    citation_quote: str  # as shown
    date_quote: str  # "Apr. 24, 2024"
    ag_order: str


def derive_authority(note: str) -> Authority:
    fr_citation = re.search(r"(\d+)\s+FR\s+(\d+)", note)
    ag_order = re.search(r"AG Order No\.\s*[\w-]+", note)
    note_date = re.search(r"[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4}", note)
    if not (fr_citation and ag_order and note_date):
        raise BenchmarkError(f"cannot read the source note {note!r}")
    return Authority(
        f"{fr_citation.group(1)} FR {fr_citation.group(2)}", fr_citation.group(0), note_date.group(0), ag_order.group(0)
    )


@dataclass(frozen=True)
class VersionTrace:
    """The section the history is about, and its earliest substantive content version."""

    cfr_title: int
    part: str
    section: str
    first_version: str


def derive_version_trace(versions: dict) -> VersionTrace:
    """The section, part and title the version history gives, and its earliest substantive
    version of that section (the history must be about one section)."""
    entries = [v for v in versions.get("content_versions") or [] if v.get("type", "section") == "section"]
    sections = sorted({(v.get("title"), v.get("part"), v.get("identifier")) for v in entries}, key=str)
    if len(sections) != 1:
        raise BenchmarkError(f"the version history is not about one section: (title, part, section) {sections}")
    title, part, section_number = sections[0]
    title = required(title or (versions.get("meta") or {}).get("title"), "CFR title in the version history")
    if not title.isdigit():
        raise BenchmarkError(f"the version history's CFR title is {title!r}, not a number")
    substantive = sorted(
        required(v.get("date"), "date of a content version")
        for v in entries
        if v.get("substantive") and not v.get("removed")
    )
    if not substantive:
        raise BenchmarkError(f"no substantive content version of {section_number} in the version history")
    part = required(part, "CFR part in the version history")
    return VersionTrace(int(title), part, required(section_number, "section in the version history"), substantive[0])


@dataclass(frozen=True)
class Requirements:
    covered: list[tuple[str, str]]  # (label, quote)
    standard: str  # "WCAG 2.1"
    standard_quotes: tuple[str, ...]  # the "comply with ... WCAG" clause (if any), the standard
    levels: list[str]
    dates: dict[str, tuple[str, str]]  # 'large' / 'small' -> (ISO date, quote)
    exception_headings: list[str]


def derive_requirements(after: RegulatoryView, section_number: str) -> Requirements:
    """The requirements section (the one the history is about) and the exceptions section."""
    requirements = _section(after, section_number)
    covered = _covered_content(requirements)
    requirement_text = requirements.text()
    standard = re.search(r"WCAG \d+(?:\.\d+)*", requirement_text)
    standard_clause = re.search(r"comply with [^,;]*?WCAG \d+(?:\.\d+)*", requirement_text)
    dates = _compliance_dates(requirements)
    exceptions_section = next((s for s in after.sections if "Exceptions" in s.heading), None)
    if not (standard and covered and "large" in dates and "small" in dates and exceptions_section):
        raise BenchmarkError("the after view lacks the standard, covered content, compliance dates or exceptions")
    return Requirements(
        covered=covered,
        standard=standard.group(0),
        standard_quotes=(*([standard_clause.group(0)] if standard_clause else []), standard.group(0)),
        levels=list(dict.fromkeys(re.findall(r"\bLevel A{1,3}\b", requirement_text))),
        dates=dates,
        exception_headings=[p.heading for p in exceptions_section.paragraphs if p.lettered and p.heading],
    )


# --- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What the tools showed: the before and after views (snapshots) and the version history
    (JSON text), with the citations each allows."""

    before_url: str
    after_url: str
    versions_url: str
    before: Node
    after: Node
    versions_text: str
    versions: dict
    citations: Citations


def _view_date(url: str) -> str:
    """The date in a renderer view's URL (only called on URLs that have one)."""
    found = _VIEW_DATE.search(url)
    assert found is not None, url
    return found[1]


async def read_sources(browser: Browser, plan: RunPlan) -> Sources:
    renderer = sorted((u for u in plan.allowed_urls if _VIEW_DATE.search(u)), key=_view_date)
    versions_urls = [u for u in plan.allowed_urls if "/versioner/" in u]
    if len(renderer) != 2 or len(versions_urls) != 1:
        raise BenchmarkError(f"expected two renderer views and one versions URL, got {plan.allowed_urls}")
    before_url, after_url = renderer
    versions_url = versions_urls[0]
    citations = Citations()
    await browser.start(plan)
    if plan.start_url != before_url:
        await browser.navigate(before_url)
    _, before = await browser.snapshot()
    await browser.navigate(after_url)
    _, after = await browser.snapshot()
    citations.saw(before_url, seen_texts(before))
    citations.saw(after_url, seen_texts(after))
    versions_text, versions = await read_json_object(browser, versions_url, citations)
    for _ in range(plan.min_snapshots - 3):  # the gates ask for more snapshots than the three views
        await browser.snapshot()
    await browser.close()
    return Sources(before_url, after_url, versions_url, before, after, versions_text, versions, citations)


def assemble(
    sources: Sources,
    before: RegulatoryView,
    after: RegulatoryView,
    authority: Authority,
    trace: VersionTrace,
    requirements: Requirements,
    silent: dict[str, str],
) -> dict:
    before_url, after_url, versions_url, cite = (
        sources.before_url,
        sources.after_url,
        sources.versions_url,
        sources.citations.cite,
    )
    assert before.subpart_heading is not None and after.subpart_heading is not None, "_run checks both"
    before_sections = [s.heading for s in before.sections]
    after_headings = [s.heading for s in after.sections]
    dates = requirements.dates
    return {
        "authority": {
            "subpart_source_citation": authority.citation,
            "publication_date": iso_date(authority.date_quote),
            "ag_order_number": authority.ag_order,
            "rin": silent["rin"],
            "federal_register_document_number": silent["federal_register_document_number"],
        },
        "version_trace": {
            "cfr_title": trace.cfr_title,
            "cfr_part": trace.part,
            "section": trace.section,
            "comparison_before": _view_date(before_url),
            "comparison_after": _view_date(after_url),
            "effective_date": trace.first_version,
            "first_substantive_version": trace.first_version,
        },
        "codification": {
            "before_subpart_heading": before.subpart_heading,
            "before_sections": "; ".join(before_sections) if before_sections else NOT_FOUND,
            "after_subpart_heading": after.subpart_heading,
            "after_section_headings": after_headings,
        },
        "requirements": {
            "covered_content": [label for label, _ in requirements.covered],
            "standard": requirements.standard,
            "conformance_levels": requirements.levels,
            "large_entity_compliance_date": dates["large"][0],
            "small_or_special_district_compliance_date": dates["small"][0],
            "mandatory_testing_frequency": silent["mandatory_testing_frequency"],
        },
        "exceptions": [h.rstrip().rstrip(".") for h in requirements.exception_headings],
        "official_urls": {"before": before_url, "after": after_url, "versions": versions_url},
        "evidence": {
            "authority.subpart_source_citation": cite(after_url, authority.citation, authority.citation_quote),
            "authority.publication_date": cite(after_url, authority.date_quote),
            "authority.ag_order_number": cite(after_url, authority.ag_order),
            "version_trace.effective_date": cite(
                versions_url, json_member_quote(sources.versions_text, "date", trace.first_version)
            ),
            "codification.before_subpart_heading": cite(before_url, before.subpart_heading),
            "codification.after_subpart_heading": cite(after_url, after.subpart_heading),
            "codification.after_section_headings": [cite(after_url, h) for h in after_headings],
            "requirements.covered_content": [cite(after_url, quote) for _, quote in requirements.covered],
            "requirements.standard": cite(after_url, *requirements.standard_quotes),
            "requirements.large_entity_compliance_date": cite(after_url, dates["large"][1]),
            "requirements.small_or_special_district_compliance_date": cite(after_url, dates["small"][1]),
            "exceptions": [cite(after_url, h) for h in requirements.exception_headings],
        },
    }


async def solve(tools: Tools, task: AgentTask) -> str:
    return await run_guarded(tools, task, _run)


async def _run(browser: Browser, task: AgentTask) -> dict:
    sources = await read_sources(browser, read_run_plan(task))
    before, after = derive_view(sources.before), derive_view(sources.after)
    if not (before.subpart_heading and after.subpart_heading and after.source_note):
        raise BenchmarkError("a view lacks its subpart heading or the after view lacks its source note")
    trace = derive_version_trace(sources.versions)
    all_text = "\n".join(seen_texts(sources.before) + seen_texts(sources.after) + [sources.versions_text])
    return assemble(
        sources,
        before,
        after,
        derive_authority(after.source_note),
        trace,
        derive_requirements(after, trace.section),
        _silent_items(all_text),
    )
