"""Reference agent for ``bid-intake``: read one archived SAM.gov construction opportunity
(notice page, notice data, attachment index) and apply the prompt's frozen surrogate
qualification filter at its as-of timestamp.

Scripted, no model: every value comes from the three tool-shown sources; the filter (states,
NAICS codes, scopes, set-aside, as-of) is parsed from the prompt. Abstention tokens are used
only after the sources were searched for the item.

``read_sources`` browses; ``derive_scope`` / ``derive_qualification`` decide from what was
read (pure); ``assemble`` builds the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sandbox.runner.agents.reference._aria import Node
from sandbox.runner.agents.reference._reading import (
    NOT_FOUND,
    NOT_STATED,
    BenchmarkError,
    Browser,
    Citations,
    RunPlan,
    find_span,
    instant,
    json_member_quote,
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
    labelled_value,
    lifecycle_at,
    open_notice,
    primary_naics,
    response_due,
    secondary_naics,
    sentences,
    set_aside_category,
)
from sandbox.runner.task import AgentTask, Tools

WORKFLOW = "bid-intake"
CIVIL, BUILDING = "CIVIL_SITE_CONSTRUCTION", "COMMERCIAL_BUILDING_CONSTRUCTION"
# What a reader takes as civil/site or as commercial-building work in a scope description.
CIVIL_WORDS = (
    r"civil/site|\bsite ?work\b|\bgravel\b|\bgrad(e|ing)\b|\bpav(e|ing|ement)\b|\broads?\b|\bhighway|"
    r"\bbridges?\b|\bexcavat|\bearthwork|\bdrainage\b|\bculverts?\b|\bparking lot"
)
BUILDING_WORDS = (
    r"commercial[- ]building|\bbuilding construction\b|\bconstruct(ion of)? an? (new )?building|"
    r"\brenovat|\btenant improvement|\bbuilding addition"
)


def judge_work_type(paragraphs: list[str]) -> tuple[str, str | None]:
    """(work type, the sentence that decides it). An explicit statement wins over keywords."""
    all_sentences = [s for p in paragraphs for s in sentences(p)]
    for kind, explicit in ((CIVIL, r"civil/site"), (BUILDING, r"commercial[- ]building")):
        for sentence in all_sentences:
            if re.search(explicit, sentence, re.I):
                return kind, sentence
    civil = [s for s in all_sentences if re.search(CIVIL_WORDS, s, re.I)]
    building = [s for s in all_sentences if re.search(BUILDING_WORDS, s, re.I)]
    if civil or building:
        return (CIVIL, civil[0]) if len(civil) >= len(building) else (BUILDING, building[0])
    construction = [s for s in all_sentences if re.search(r"\bconstruct", s, re.I)]
    return ("OTHER", construction[0]) if construction else (NOT_STATED, None)


def surrogate_filter(prompt: str) -> dict:
    """The frozen filter as the prompt states it."""
    states = re.search(r"service states: ([^;\n]+);", prompt)
    naics = re.search(r"accepted primary NAICS codes: ([^;\n]+);", prompt)
    scope = re.search(r"accepted scope: ([^;\n]+);", prompt)
    set_aside = re.search(r"an? ([\w-]+) set-aside is acceptable", prompt)
    open_at = re.search(r"must still be open at `([^`]+)`", prompt)
    if not (states and naics and scope and set_aside):
        raise BenchmarkError("the prompt does not state the surrogate filter")
    scope_text = scope.group(1).lower()
    accepted_set_asides = {set_aside.group(1).upper().replace("-", "_")}
    # An unrestricted competition is open to any firm, so it never excludes the surrogate bidder.
    accepted_set_asides.add("UNRESTRICTED")
    return {
        "states": {s.strip().lower() for s in re.split(r",|\bor\b|\band\b", states.group(1)) if s.strip()},
        "naics": set(re.findall(r"\b\d{6}\b", naics.group(1))),
        "scopes": {
            kind for kind, word in ((BUILDING, "commercial-building"), (CIVIL, "civil/site")) if word in scope_text
        },
        "set_asides": accepted_set_asides,
        "open_at": open_at.group(1) if open_at else None,
    }


@dataclass(frozen=True)
class Scope:
    """What the description says about the work and its schedule."""

    work_type: str
    work_sentence: str | None  # the sentence that decides the work type
    begin_days: int
    begin_quote: str
    complete_days: int
    site_visit_date: str  # as stated, else NOT_STATED


def derive_scope(notice: dict) -> Scope:
    paragraphs = description_paragraphs(notice)
    description = " ".join(paragraphs)
    work_type, work_sentence = judge_work_type(paragraphs)
    begin = re.search(r"[^.]*?\bbegin\b[^.]*?within (\d+) calendar days after (?:award|receipt)", description)
    complete = re.search(r"\bcomplete\b[^.]*?within (\d+) calendar days", description)
    if not (response_due(notice) and begin and complete):
        raise BenchmarkError("the notice data lack the offers-due time or the performance periods")
    site_visit = next((s for s in sentences(description) if re.search(r"site visit", s, re.I)), None)
    site_visit_date = re.search(r"\b(\d{1,2} [A-Z][a-z]+ \d{4}|[A-Z][a-z]+\.? \d{1,2}, \d{4})\b", site_visit or "")
    return Scope(
        work_type,
        work_sentence,
        int(begin.group(1)),
        begin.group(0).strip(),
        int(complete.group(1)),
        site_visit_date.group(1) if site_visit_date else NOT_STATED,
    )


def derive_contact(notice: dict) -> dict:
    contact = next((c for c in data2(notice).get("pointOfContact") or [] if c.get("type") == "primary"), None)
    if contact is None:
        raise BenchmarkError("the notice data name no primary point of contact")
    return contact


def derive_qualification(notice: dict, work_type: str, rules: dict, as_of: datetime) -> dict:
    """The surrogate filter applied to the notice at the as-of time."""
    state = (data2(notice).get("placeOfPerformance") or {}).get("state") or {}
    geography_match = bool({(state.get("name") or "").lower(), (state.get("code") or "").lower()} & rules["states"])
    naics_match = primary_naics(notice) in rules["naics"]
    scope_match = work_type in rules["scopes"]
    set_aside_acceptable = set_aside_category(notice) in rules["set_asides"]
    status_open = False
    if lifecycle_at(notice, as_of) == "ACTIVE":
        due = response_due(notice)
        assert due is not None, "derive_scope requires the offers-due time"
        status_open = instant(due) > as_of
    relevant = geography_match and naics_match and scope_match and set_aside_acceptable
    return {
        "geography_match": geography_match,
        "naics_match": naics_match,
        "scope_match": scope_match,
        "set_aside_acceptable": set_aside_acceptable,
        "status_open": status_open,
        "verdict": "NOT_RELEVANT" if not relevant else ("ACTIONABLE_NOW" if status_open else "RELEVANT_BUT_CLOSED"),
    }


# --- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What the tools showed: the notice page (snapshot), the notice data and the attachment
    index (JSON texts and values), with the citations each allows."""

    urls: SamUrls
    notice_data_url: str
    page: Node
    data_text: str
    notice: dict
    index_text: str
    resources: dict
    citations: Citations


async def read_sources(browser: Browser, plan: RunPlan) -> Sources:
    urls = classify_urls(plan.allowed_urls)
    notice_data_url = urls.notice_data[0]
    citations = Citations()
    page = await open_notice(browser, plan, urls, citations)
    data_text, notice = await read_json_object(browser, notice_data_url, citations)
    index_text, resources = await read_json_object(browser, urls.attachment_index, citations)
    await browser.close()
    return Sources(urls, notice_data_url, page, data_text, notice, index_text, resources, citations)


def assemble(
    sources: Sources, as_of_text: str, lifecycle: str, scope: Scope, contact: dict, qualification: dict
) -> dict:
    notice, page, data_text, cite = sources.notice, sources.page, sources.data_text, sources.citations.cite
    urls, notice_data_url = sources.urls, sources.notice_data_url
    fields = data2(notice)
    # The values cited, and the dates the contract types, are needed; other texts may be NOT_FOUND.
    solicitation_number = required(fields.get("solicitationNumber"), "solicitation number")
    due = required(response_due(notice), "offers-due time")
    place = fields.get("placeOfPerformance") or {}
    state = place.get("state") or {}
    state_code = required(state.get("code"), "place-of-performance state code")
    naics = required(primary_naics(notice), "primary NAICS code")
    email = required(contact.get("email"), "primary contact email")
    names = [required(f.get("name"), "attachment name") for f in attachment_files(sources.resources)]
    amount = award_amount(notice)
    return {
        "identity": {
            "title": stated(fields.get("title"), "the title"),
            "solicitation_number": solicitation_number,
            "opportunity_id": stated(notice.get("id") or notice.get("opportunityId"), "the opportunity id"),
            "lifecycle_status": lifecycle,
        },
        "buyer": {
            "department": stated(labelled_value(page, "Department/Ind. Agency"), "the department"),
            "sub_tier": stated(labelled_value(page, "Sub-tier"), "the sub-tier"),
            "office": stated(labelled_value(page, "Office"), "the office"),
        },
        "dates": {
            "published_at": required(notice.get("postedDate"), "postedDate"),
            "offers_due_at": due,
            "inactive_date": required((fields.get("archive") or {}).get("date"), "inactive (archive) date"),
        },
        "classification": {
            "naics_code": naics,
            "secondary_naics_code": secondary_naics(notice) or NOT_FOUND,
            "psc_code": stated(fields.get("classificationCode"), "the PSC code"),
            "set_aside": set_aside_category(notice),
        },
        "place": {
            "city": stated((place.get("city") or {}).get("name"), "the city"),
            "state": state_code,
            "postal_code": stated(place.get("zip"), "the postal code"),
        },
        "scope": {
            "work_type": scope.work_type,
            "award_amount": amount if amount is not None else NOT_FOUND,
            "site_visit_date": scope.site_visit_date,
        },
        "performance": {
            "begin_within_calendar_days_after_award": scope.begin_days,
            "complete_within_calendar_days": scope.complete_days,
        },
        "attachments": {"count": len(names), "names": names},
        "contact": {"primary_name": stated(contact.get("fullName"), "the contact's name"), "primary_email": email},
        "qualification": {"as_of_at": as_of_text, **qualification},
        "official_urls": {
            "notice": urls.notice,
            "notice_data": notice_data_url,
            "attachment_index": urls.attachment_index,
        },
        "evidence": {
            "identity.solicitation_number": cite(
                notice_data_url, json_member_quote(data_text, "solicitationNumber", solicitation_number)
            ),
            "dates.offers_due_at": cite(notice_data_url, json_member_quote(data_text, "response", due)),
            "classification.naics_code": cite(notice_data_url, json_member_quote(data_text, "code", [naics])),
            "place.state": cite(
                notice_data_url,
                find_span(data_text, r'"state"\s*:\s*\{\s*"code"\s*:\s*' + re.escape(f'"{state_code}"')),
            ),
            **({"scope.work_type": cite(notice_data_url, scope.work_sentence)} if scope.work_sentence else {}),
            "performance.begin_within_calendar_days_after_award": cite(notice_data_url, scope.begin_quote),
            "contact.primary_email": cite(notice_data_url, json_member_quote(data_text, "email", email)),
            "attachments.names": [
                cite(urls.attachment_index, json_member_quote(sources.index_text, "name", n)) for n in names
            ],
        },
    }


async def solve(tools: Tools, task: AgentTask) -> str:
    return await run_guarded(tools, task, _run)


async def _run(browser: Browser, task: AgentTask) -> dict:
    sources = await read_sources(browser, read_run_plan(task))
    rules = surrogate_filter(task.prompt)
    as_of_text, as_of = as_of_from(task.input_text)
    if rules["open_at"] and instant(rules["open_at"]) != as_of:
        raise BenchmarkError(f"the prompt's as-of {rules['open_at']} differs from the input's {as_of_text}")
    notice = sources.notice
    scope = derive_scope(notice)
    return assemble(
        sources,
        as_of_text,
        lifecycle_at(notice, as_of),
        scope,
        derive_contact(notice),
        derive_qualification(notice, scope.work_type, rules, as_of),
    )
