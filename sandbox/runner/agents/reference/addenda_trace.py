"""Reference agent for ``addenda-trace`` (packs ``addenda-trace`` and ``addenda-trace-p6``):
reconcile a SAM.gov solicitation's versions, amendments, deadlines and attachments, and make
the monitoring decision the prompt defines at the task's as-of timestamp.

Scripted, no model: it visits the five supplied URLs (notice page first), reads the three
notice-data versions, the description and the attachment index from what the tools show,
and computes the timeline and monitoring values. NOT_STATED / NOT_FOUND are returned only
after the sources were searched for the item.

``read_sources`` browses; ``derive_versions`` / ``derive_deadlines`` / ``derive_description``
/ ``derive_documents`` / ``derive_monitoring`` decide from what was read (pure);
``assemble`` builds the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sandbox.runner.agents.reference._aria import Node
from sandbox.runner.agents.reference._reading import (
    DAY_MONTH_YEAR,
    MONTH_DAY_YEAR,
    MONTHS,
    NOT_FOUND,
    NOT_STATED,
    BenchmarkError,
    Browser,
    Citations,
    RunPlan,
    instant,
    iso_datetime_from_text,
    json_member_quote,
    local_date,
    read_json_object,
    read_run_plan,
    required,
    run_guarded,
    stated,
)
from sandbox.runner.agents.reference._sam import (
    SamUrls,
    as_of_from,
    attachment_files,
    award_amount,
    classify_urls,
    data2,
    description_paragraphs,
    lifecycle_at,
    open_notice,
    primary_naics,
    response_due,
    sentences,
    set_aside_category,
)
from sandbox.runner.task import AgentTask, Tools

WORKFLOW = "addenda-trace"
_AMENDMENT = re.compile(r"^AMENDMENT (\d{4})\b[^:]*:\s*(.*)$", re.I)
_CLOCK = r"\d{1,2}:\d{2} ?[AP]\.?M\.?"


def amendment_notes(paragraphs: list[str]) -> dict[str, str]:
    """{'0001': text, ...} from the description's ``AMENDMENT nnnn (date): ...`` paragraphs."""
    notes: dict[str, str] = {}
    for paragraph in paragraphs:
        match = _AMENDMENT.match(paragraph)
        if match:
            notes.setdefault(match.group(1), match.group(2))
    return dict(sorted(notes.items()))


def changed_project_areas(note: str) -> list[int]:
    match = re.search(
        r"project areas? ([\d,\s]+(?:,? and \d+)?) (?:has|have) been (?:changed|revised|modified)", note, re.I
    )
    return [int(n) for n in re.findall(r"\d+", match.group(1))] if match else []


def specific_scope_changes(note: str) -> str:
    """What an amendment says changed in the work itself (not dates or a republished SOW)."""
    said = [
        s
        for s in sentences(note)
        if re.search(r"\b(changed|revised|modified|added|deleted|removed|increased|decreased)\b", s, re.I)
        and not re.search(r"response date|due date|deadline|statement of work|\bSOW\b", s, re.I)
    ]
    return " ".join(said) if said else NOT_STATED


def window_count_deltas(note: str) -> str:
    said = [s for s in sentences(note) if re.search(r"\b\d+\s+(additional\s+)?windows?\b|\bwindow counts?\b", s, re.I)]
    return " ".join(said) if said else NOT_STATED


def stated_date(note: str) -> str:
    """The first date a note's site-visit sentences write ('29 June 2026', 'June 29, 2026'), as
    written; NOT_STATED when they write none."""
    for sentence in sentences(note):
        if not re.search(r"site visit", sentence, re.I):
            continue
        found = [m for pattern in (DAY_MONTH_YEAR, MONTH_DAY_YEAR) for m in pattern.finditer(sentence)]
        for match in sorted(found, key=lambda m: m.start()):
            month = match.group(2) if match.re is DAY_MONTH_YEAR else match.group(1)
            if month[:3].lower() in MONTHS:
                return match.group(0)
    return NOT_STATED


def find_paragraph(paragraphs: list[str], prefix: str) -> str | None:
    return next((p for p in paragraphs if p.upper().startswith(prefix)), None)


def parse_site_visit(paragraph: str | None) -> dict | None:
    if not paragraph:
        return None
    held = re.search(
        rf"held on (?P<date>.+?) at (?P<time>{_CLOCK}(?: [A-Z]{{2,4}})?) at (?P<location>.+?)\.\s+"
        r"(?=[^.]*\bregister\b)",
        paragraph,
    )
    register = re.search(r"[^.]*\bregister\b.*?\bby (?P<deadline>.+?)\.?$", paragraph)
    if not (held and register):
        return None
    return {
        "date": held.group("date"),
        "time": held.group("time"),
        "location": held.group("location"),
        "deadline": register.group("deadline"),
        "deadline_quote": register.group(0).strip().rstrip("."),
    }


def parse_questions_due(paragraph: str | None) -> tuple[str, str] | None:
    """(ISO due time, quote) of the ``QUESTIONS:`` paragraph."""
    match = re.search(rf"no later than (\d{{1,2}} [A-Za-z]+ \d{{4}}) at ({_CLOCK}) ([A-Z]{{2,4}})", paragraph or "")
    if not match:
        return None
    return iso_datetime_from_text(match.group(1), match.group(2), match.group(3)), match.group(0)


def acknowledgments(paragraphs: list[str]) -> tuple[list[str], str | None]:
    """(amendment numbers oldest first, quote) from the sentence asking to acknowledge them."""
    for paragraph in paragraphs:
        for sentence in sentences(paragraph):
            if re.search(r"\backnowledge\b", sentence, re.I):
                numbers = re.findall(r"\bAmendments? (\d{4})\b|\band (\d{4})\b", sentence, re.I)
                found = sorted({a or b for a, b in numbers})
                if found:
                    last = list(re.finditer(r"\d{4}", sentence))[-1]
                    return found, sentence[: last.end()]
    return [], None


def funds_statement(paragraphs: list[str]) -> tuple[bool, str] | None:
    for paragraph in paragraphs:
        for sentence in sentences(paragraph):
            match = re.search(r"\bfunds (?:are|is) (not )?(?:presently|currently) available\b", sentence, re.I)
            if match:
                return match.group(1) is None, sentence
    return None


# --- deriving from what was read ---------------------------------------------------------------


@dataclass(frozen=True)
class Versions:
    """The three notice-data versions in posting order: baseline, after Amendment 0001, current."""

    urls: tuple[str, str, str]
    data: tuple[dict, dict, dict]
    texts: dict[str, str]  # url -> JSON text as shown

    @property
    def baseline(self) -> dict:
        return self.data[0]

    @property
    def amended(self) -> dict:
        return self.data[1]

    @property
    def current(self) -> dict:
        return self.data[2]


def posted_at(version: dict) -> str:
    """A notice-data version's postedDate (the version order and the timeline need it)."""
    return required(version.get("postedDate"), "postedDate of a notice-data version")


def derive_versions(versions: dict[str, tuple[str, dict]]) -> Versions:
    ordered = sorted(versions, key=lambda u: instant(posted_at(versions[u][1])))
    if len(ordered) != 3:
        raise BenchmarkError(f"expected three notice-data versions, got {len(ordered)}")
    baseline, amended, current = ordered
    return Versions(
        (baseline, amended, current),
        (versions[baseline][1], versions[amended][1], versions[current][1]),
        {u: versions[u][0] for u in ordered},
    )


@dataclass(frozen=True)
class Deadlines:
    dues: list[str]  # each version's response deadline, oldest version first
    sequence: list[str]  # the distinct due dates in order
    extension_days: int


def derive_deadlines(versions: Versions) -> Deadlines:
    dues: list[str] = []
    for version in versions.data:
        due = response_due(version)
        if not due:
            raise BenchmarkError("a version lacks its response deadline")
        dues.append(due)
    sequence: list[str] = []
    for due in dues:
        day = local_date(due).isoformat()
        if not sequence or sequence[-1] != day:
            sequence.append(day)
    return Deadlines(dues, sequence, (local_date(dues[-1]) - local_date(dues[0])).days)


@dataclass(frozen=True)
class Description:
    """What the descriptions say: amendments, acknowledgments, site visit, questions, funds."""

    notes: dict[str, str]  # amendment number -> note
    acknowledge: list[str]
    acknowledge_quote: str
    areas_0002: list[int]
    areas_quote: str | None
    site_visit: dict  # the baseline's, as parse_site_visit gives it
    revised_visit_date: str
    registration_year_conflict: bool
    questions: tuple[str, str]  # the baseline's (ISO due time, quote)
    revised_questions_due: str
    funds: tuple[bool, str]  # (available, quote)
    bonding: str


def derive_description(versions: Versions) -> Description:
    current_paragraphs = description_paragraphs(versions.current)
    baseline_paragraphs = description_paragraphs(versions.baseline)
    notes = amendment_notes(current_paragraphs)
    note_0002 = notes.get("0002", "")
    acknowledge, acknowledge_quote = acknowledgments(current_paragraphs)
    areas_quote = re.search(r"project areas? [^.]*?been (?:changed|revised|modified)\.?", note_0002, re.I)
    site_visit = parse_site_visit(find_paragraph(baseline_paragraphs, "SITE VISIT"))
    current_site_visit = parse_site_visit(find_paragraph(current_paragraphs, "SITE VISIT"))
    questions = parse_questions_due(find_paragraph(baseline_paragraphs, "QUESTIONS"))
    current_questions = parse_questions_due(find_paragraph(current_paragraphs, "QUESTIONS"))
    funds = funds_statement(current_paragraphs)
    if not (site_visit and questions and funds and acknowledge_quote):
        raise BenchmarkError("the description lacks the site visit, questions, funds or acknowledgment statement")
    if current_site_visit and current_site_visit["date"] != site_visit["date"]:
        revised_visit_date = current_site_visit["date"]
    else:  # a date an amendment note gives the site visit
        revised_visit_date = next((d for d in map(stated_date, notes.values()) if d != NOT_STATED), NOT_STATED)
    solicitation_year = instant(posted_at(versions.baseline)).year
    deadline_year = re.search(r"\b(\d{4})\b", site_visit["deadline"])
    all_text = " ".join(current_paragraphs + baseline_paragraphs + description_paragraphs(versions.amended))
    bonding = [s for s in sentences(all_text) if re.search(r"\bbond(s|ing)?\b", s, re.I)]
    return Description(
        notes=notes,
        acknowledge=acknowledge,
        acknowledge_quote=acknowledge_quote,
        areas_0002=changed_project_areas(note_0002),
        areas_quote=areas_quote.group(0) if areas_quote else None,
        site_visit=site_visit,
        revised_visit_date=revised_visit_date,
        registration_year_conflict=bool(deadline_year and int(deadline_year.group(1)) != solicitation_year),
        questions=questions,
        revised_questions_due=current_questions[0]
        if current_questions and current_questions[0] != questions[0]
        else NOT_STATED,
        funds=funds,
        bonding=" ".join(bonding) if bonding else NOT_STATED,
    )


@dataclass(frozen=True)
class Documents:
    files: list[dict]  # the index's current files, oldest first
    amendment_files: list[str]
    sow_files: list[str]
    sow_updated: dict[str, bool]  # amendment number -> its note says an updated SOW was published
    changed: bool  # an updated SOW, or a file posted after the baseline


def derive_documents(resources: dict, notes: dict[str, str], baseline: dict) -> Documents:
    files = sorted(attachment_files(resources), key=lambda a: instant(required(a.get("postedDate"), "file postedDate")))
    names = [required(f.get("name"), "attachment name") for f in files]
    sow_files = [n for n in names if re.search(r"STATEMENT OF WORK|\bSOW\b", n, re.I)]
    if not sow_files:
        raise BenchmarkError("the attachment index lists no statement of work")
    sow_updated = {n: bool(re.search(r"updated statement of work|updated SOW", t, re.I)) for n, t in notes.items()}
    changed = any(sow_updated.values()) or any(instant(f["postedDate"]) > instant(posted_at(baseline)) for f in files)
    return Documents(
        files,
        [n for n in names if re.search(r"\bAMENDMENT\b|\bSF 30\b", n, re.I)],
        sow_files,
        sow_updated,
        changed,
    )


def derive_monitoring(
    lifecycle: str, deadlines: Deadlines, description: Description, documents: Documents, as_of: datetime
) -> dict:
    """The monitoring decision the prompt defines, at the as-of time."""
    dues, sequence = deadlines.dues, deadlines.sequence
    prior_due_passed = instant(dues[-2]) <= as_of
    current_open = lifecycle == "ACTIVE" and instant(dues[-1]) > as_of
    scope_stated = bool(description.areas_0002) or any(
        specific_scope_changes(t) != NOT_STATED for t in description.notes.values()
    )
    categories = [
        name
        for name, present in (
            ("DEADLINE", len(sequence) > 1),
            ("SCOPE", scope_stated),
            ("DOCUMENTS", documents.changed),
            ("ACKNOWLEDGMENT", bool(description.acknowledge)),
        )
        if present
    ]
    days_left = (local_date(dues[-1]) - as_of.date()).days
    if current_open and days_left <= 3 and ("DEADLINE" in categories or "SCOPE" in categories):
        priority = "URGENT_REVIEW"
    elif current_open and categories:
        priority = "NORMAL_REVIEW"
    else:
        priority = "NO_ACTION"
    return {
        "prior_due_date_passed": prior_due_passed,
        "current_due_date_open": current_open,
        # The extension kept the response window open past an earlier, now-passed deadline.
        "deadline_extension_preserved_response_window": current_open and prior_due_passed and len(sequence) > 1,
        "change_categories": categories,
        "review_priority": priority,
    }


# --- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What the tools showed: the notice page (snapshot), each notice-data version and the
    attachment index (JSON texts and values), with the citations each allows."""

    urls: SamUrls
    page: Node
    versions: dict[str, tuple[str, dict]]  # url -> (JSON text, notice data), in run-plan order
    index_text: str
    resources: dict
    citations: Citations


async def read_sources(browser: Browser, plan: RunPlan) -> Sources:
    urls = classify_urls(plan.allowed_urls)
    citations = Citations()
    page = await open_notice(browser, plan, urls, citations)
    versions = {url: await read_json_object(browser, url, citations) for url in urls.notice_data}
    index_text, resources = await read_json_object(browser, urls.attachment_index, citations)
    await browser.close()
    return Sources(urls, page, versions, index_text, resources, citations)


def assemble(
    sources: Sources,
    as_of_text: str,
    lifecycle: str,
    versions: Versions,
    deadlines: Deadlines,
    description: Description,
    documents: Documents,
    monitoring: dict,
) -> dict:
    urls, cite = sources.urls, sources.citations.cite
    baseline_url, amendment_url, current_url = versions.urls
    baseline, amended, current = versions.data
    texts, dues, notes = versions.texts, deadlines.dues, description.notes
    fields = data2(current)
    solicitation_number = required(fields.get("solicitationNumber"), "solicitation number")  # cited
    place = fields.get("placeOfPerformance") or {}
    state = place.get("state") or {}
    site_visit, questions, sow_files = description.site_visit, description.questions, documents.sow_files
    amount = award_amount(current)

    def version_id(version: dict) -> str:
        return stated(version.get("id") or version.get("opportunityId"), "a version id")

    return {
        "identity": {
            "title": stated(fields.get("title"), "the title"),
            "solicitation_number": solicitation_number,
            "current_version_id": version_id(current),
            "lifecycle_status": lifecycle,
        },
        "classification": {
            "naics_code": stated(primary_naics(current), "the primary NAICS code"),
            "set_aside": set_aside_category(current),
        },
        "place": {
            "city": stated((place.get("city") or {}).get("name"), "the city"),
            "state": stated(state.get("code") or state.get("name"), "the state"),
            "postal_code": stated(place.get("zip"), "the postal code"),
        },
        "timeline": {
            "baseline_version_id": version_id(baseline),
            "baseline_posted_at": posted_at(baseline),
            "baseline_due_at": dues[0],
            "amendment_0001_version_id": version_id(amended),
            "amendment_0001_posted_at": posted_at(amended),
            "after_amendment_0001_due_at": dues[1],
            "current_posted_at": posted_at(current),
            "current_due_at": dues[2],
            "deadline_sequence": deadlines.sequence,
            "deadline_changes_count": len(deadlines.sequence) - 1,
            "total_extension_calendar_days": deadlines.extension_days,
            "amendments_requiring_acknowledgment": description.acknowledge,
        },
        "scope_changes": {
            "amendment_0001_updated_sow_published": documents.sow_updated.get("0001", False),
            "amendment_0001_specific_scope_changes": specific_scope_changes(notes.get("0001", "")),
            "amendment_0002_changed_project_areas": description.areas_0002,
            "amendment_0002_exact_window_count_deltas": window_count_deltas(notes.get("0002", "")),
            "amendment_0002_updated_sow_published": documents.sow_updated.get("0002", False),
        },
        "site_visit": {
            "scheduled_date_as_stated": site_visit["date"],
            "scheduled_time_as_stated": site_visit["time"],
            "location": site_visit["location"],
            "registration_deadline_as_stated": site_visit["deadline"],
            "registration_year_conflict": description.registration_year_conflict,
            "revised_site_visit_date": description.revised_visit_date,
        },
        "questions": {"original_due_at": questions[0], "revised_due_at": description.revised_questions_due},
        "document_control": {
            "attachment_count": len(documents.files),
            "amendment_filenames": documents.amendment_files,
            "sow_filenames": sow_files,
            "latest_sow_filename": sow_files[-1],
        },
        "commercial": {
            "award_amount": amount if amount is not None else NOT_FOUND,
            "bonding_requirement": description.bonding,
            "funds_currently_available": description.funds[0],
        },
        "monitoring": {"as_of_at": as_of_text, **monitoring},
        "official_urls": {
            "notice": urls.notice,
            "current_notice_data": current_url,
            "baseline_version": baseline_url,
            "after_amendment_0001_version": amendment_url,
            "attachment_index": urls.attachment_index,
        },
        "evidence": {
            "identity.solicitation_number": cite(
                current_url,
                json_member_quote(texts[current_url], "solicitationNumber", solicitation_number),
            ),
            "timeline.baseline_due_at": cite(baseline_url, json_member_quote(texts[baseline_url], "response", dues[0])),
            "timeline.after_amendment_0001_due_at": cite(
                amendment_url, json_member_quote(texts[amendment_url], "response", dues[1])
            ),
            "timeline.current_due_at": cite(current_url, json_member_quote(texts[current_url], "response", dues[2])),
            "timeline.amendments_requiring_acknowledgment": cite(current_url, description.acknowledge_quote),
            "scope_changes.amendment_0002_changed_project_areas": cite(
                current_url, *([description.areas_quote] if description.areas_quote else [])
            ),
            "site_visit.registration_deadline_as_stated": cite(baseline_url, site_visit["deadline_quote"]),
            "questions.original_due_at": cite(baseline_url, questions[1]),
            "document_control.latest_sow_filename": cite(
                urls.attachment_index, json_member_quote(sources.index_text, "name", sow_files[-1])
            ),
            "commercial.funds_currently_available": cite(urls.notice, description.funds[1]),
        },
    }


async def solve(tools: Tools, task: AgentTask) -> str:
    return await run_guarded(tools, task, _run)


async def _run(browser: Browser, task: AgentTask) -> dict:
    sources = await read_sources(browser, read_run_plan(task))
    versions = derive_versions(sources.versions)
    as_of_text, as_of = as_of_from(task.input_text)
    deadlines = derive_deadlines(versions)
    description = derive_description(versions)
    documents = derive_documents(sources.resources, description.notes, versions.baseline)
    lifecycle = lifecycle_at(versions.current, as_of)
    monitoring = derive_monitoring(lifecycle, deadlines, description, documents, as_of)
    return assemble(sources, as_of_text, lifecycle, versions, deadlines, description, documents, monitoring)
