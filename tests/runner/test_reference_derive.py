"""The reference solvers' pure derive steps and shared date helper, without a browser: each
decision is made from what a read step would hand over."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

import pytest

from sandbox import PROJECT_ROOT
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.reference import sec_contract
from sandbox.runner.agents.reference._aria import parse_snapshot
from sandbox.runner.agents.reference._reading import BenchmarkError, checked_answer, instant, iso_date, run_guarded
from sandbox.runner.agents.reference._sam import response_due
from sandbox.runner.agents.reference.addenda_trace import (
    Deadlines,
    Description,
    Documents,
    derive_deadlines,
    derive_monitoring,
    derive_versions,
)
from sandbox.runner.agents.reference.bid_intake import derive_qualification
from sandbox.runner.agents.reference.court_docket import Docket, Proceeding, derive_decision
from sandbox.runner.task import InProcessClient, Tools
from tests.support.reference import pack_task


@pytest.mark.parametrize(
    "text, iso",
    [
        ("Apr. 24, 2024", "2024-04-24"),
        ("Beginning April 26, 2027,", "2027-04-26"),
        ("Apr 18 2023", "2023-04-18"),
        ("August 25, 2022", "2022-08-25"),
    ],
)
def test_iso_date_reads_the_dates_the_pages_write(text, iso):
    assert iso_date(text) == iso


def test_iso_date_refuses_text_without_a_date():
    with pytest.raises(BenchmarkError):
        iso_date("no date here")


def _version(posted: str, due: str) -> dict:
    return {"postedDate": posted, "data2": {"solicitation": {"deadlines": {"response": due}}}}


def test_addenda_versions_are_ordered_by_posting_and_deadlines_counted():
    versions = derive_versions(
        {
            "current": ("{}", _version("2026-06-20T10:00:00-05:00", "2026-07-10T13:00:00-05:00")),
            "baseline": ("{}", _version("2026-06-01T10:00:00-05:00", "2026-06-29T13:00:00-05:00")),
            "amended": ("{}", _version("2026-06-10T10:00:00-05:00", "2026-07-06T13:00:00-05:00")),
        }
    )
    assert versions.urls == ("baseline", "amended", "current")
    deadlines = derive_deadlines(versions)
    assert deadlines.sequence == ["2026-06-29", "2026-07-06", "2026-07-10"]
    assert deadlines.extension_days == 11


def _monitoring(as_of: str, lifecycle: str = "ACTIVE") -> dict:
    deadlines = Deadlines(
        ["2026-06-29T13:00:00-05:00", "2026-07-06T13:00:00-05:00", "2026-07-10T13:00:00-05:00"],
        ["2026-06-29", "2026-07-06", "2026-07-10"],
        11,
    )
    description = Description(
        notes={},
        acknowledge=["0001"],
        acknowledge_quote="",
        areas_0002=[],
        areas_quote=None,
        site_visit={},
        revised_visit_date="",
        registration_year_conflict=False,
        questions=("", ""),
        revised_questions_due="",
        funds=(False, ""),
        bonding="",
    )
    documents = Documents(files=[], amendment_files=[], sow_files=[], sow_updated={}, changed=False)
    return derive_monitoring(lifecycle, deadlines, description, documents, datetime.fromisoformat(as_of))


def test_addenda_review_priority_follows_the_as_of_time():
    close = _monitoring("2026-07-08T09:00:00-05:00")
    assert close["change_categories"] == ["DEADLINE", "ACKNOWLEDGMENT"]
    assert close["review_priority"] == "URGENT_REVIEW" and close["deadline_extension_preserved_response_window"]
    assert _monitoring("2026-07-01T09:00:00-05:00")["review_priority"] == "NORMAL_REVIEW"
    assert _monitoring("2026-07-11T09:00:00-05:00")["review_priority"] == "NO_ACTION"
    assert _monitoring("2026-07-08T09:00:00-05:00", lifecycle="CANCELLED")["review_priority"] == "NO_ACTION"


def test_bid_intake_verdict_needs_every_filter_and_an_open_notice():
    notice = {
        "data2": {
            "placeOfPerformance": {"state": {"code": "MN", "name": "Minnesota"}},
            "naics": [{"type": "primary", "code": ["237310"]}],
            "solicitation": {"setAside": "SBA", "deadlines": {"response": "2026-06-22T13:00:00-05:00"}},
        }
    }
    rules = {
        "states": {"minnesota"},
        "naics": {"237310"},
        "scopes": {"CIVIL_SITE_CONSTRUCTION"},
        "set_asides": {"TOTAL_SMALL_BUSINESS", "UNRESTRICTED"},
    }
    before = datetime.fromisoformat("2026-06-01T00:00:00+00:00")
    after = datetime.fromisoformat("2026-07-01T00:00:00+00:00")
    assert derive_qualification(notice, "CIVIL_SITE_CONSTRUCTION", rules, before)["verdict"] == "ACTIONABLE_NOW"
    assert derive_qualification(notice, "CIVIL_SITE_CONSTRUCTION", rules, after)["verdict"] == "RELEVANT_BUT_CLOSED"
    other = derive_qualification(notice, "COMMERCIAL_BUILDING_CONSTRUCTION", rules, before)
    assert other["scope_match"] is False and other["verdict"] == "NOT_RELEVANT"


def test_court_decision_row_and_the_three_events_before_it():
    rows = [
        Proceeding(f"2023-0{m}-01", f"{name} 1 2023", text)
        for m, name, text in (
            (1, "Jan", "Petition GRANTED."),
            (2, "Feb", "Brief filed."),
            (3, "Mar", "Brief filed."),
            (4, "Apr", "Argued. For petitioner: A."),
            (6, "Jun", "Judgment VACATED and case REMANDED. Alito, J., delivered the opinion for a unanimous Court."),
            (7, "Jul", "JUDGMENT ISSUED."),
        )
    ]
    decision = derive_decision(Docket("22-1", "No. 22-1", {}, rows))
    assert decision.row is rows[4] and decision.events == rows[1:4]
    assert decision.event_quotes[:2] == ["Feb 1 2023 Brief filed.", "Mar 1 2023 Brief filed."]
    assert decision.disposition_sentence == "Judgment VACATED and case REMANDED."
    assert decision.unanimous and decision.argued is rows[3] and decision.judgment is rows[5]
    with pytest.raises(BenchmarkError):
        derive_decision(Docket("22-1", "No. 22-1", {}, rows[3:]))


def test_iso_date_refuses_a_date_no_calendar_has():
    """date(2023, 2, 30) was a ValueError that crashed the agent."""
    with pytest.raises(BenchmarkError, match="'Feb 30, 2023' writes no calendar date"):
        iso_date("Feb 30, 2023")


async def _guarded(pack_id: str, body) -> str:
    """``body`` run the way every solver runs; it calls no tool, so the client is never used."""
    return await run_guarded(Tools(InProcessClient(run=None)), pack_task(load_pack(pack_id)), body)


async def test_a_source_read_as_what_it_is_not_is_a_benchmark_error_saying_where():
    """A KeyError, TypeError, AttributeError or ValueError while reading used to propagate: the
    attempt was recorded crashed, without the benchmark-error answer or its tool-call count."""

    async def notice_data_as_an_array(browser, task):
        return {"due": response_due(["not", "an", "object"])}

    async def a_date_with_no_zone(browser, task):
        return {"at": instant("2026-07-08T00:00:00Z") < instant("2026-07-08T00:00:00")}

    said = await _guarded("bid-intake", notice_data_as_an_array)
    assert said.startswith(
        "BENCHMARK_ERROR: the sources are not as this agent reads them: AttributeError 'list' object has no "
        "attribute 'get' in _sam.py:"
    )
    assert said.endswith("(data2)")
    said = await _guarded("addenda-trace", a_date_with_no_zone)
    assert said.startswith("BENCHMARK_ERROR: the sources are not as this agent reads them: TypeError can't compare")


async def test_a_record_that_would_break_the_output_contract_is_a_benchmark_error_naming_the_field():
    pack = load_pack("controlled-form")
    record = json.loads(
        (PROJECT_ROOT / "fixtures" / "attempts" / "reference" / "controlled-form" / "output.txt")
        .read_text(encoding="utf-8")
        .split("BENCHMARK_JSON_BEGIN", 1)[1]
        .split("BENCHMARK_JSON_END", 1)[0]
    )[0]
    assert checked_answer(pack_task(pack), record).startswith("BENCHMARK_JSON_BEGIN")
    broken = {**record, "fields": {**record["fields"], "phone": None}, "target_url": "not a uri with spaces"}

    async def body(browser, task):
        return broken

    assert await _guarded("controlled-form", body) == (
        "BENCHMARK_ERROR: the answer would break the output contract: fields.phone: None is not of type "
        "'string'; target_url: 'not a uri with spaces' is not a 'uri'"
    )


def test_sec_contract_evidence_the_contract_asks_and_the_agent_does_not_read_is_a_benchmark_error():
    """``quotes[name]`` was a KeyError for an evidence field the agent does not read."""
    evidence = {"required": ["filing.accession_number", "agreement.fee"]}
    task = dataclasses.replace(
        pack_task(load_pack("sec-contract")), output_schema={"items": {"properties": {"evidence": evidence}}}
    )
    empty = parse_snapshot("")
    sources = sec_contract.Sources("https://www.sec.gov/index.htm", "https://www.sec.gov/ex10.htm", empty, empty)
    filing = sec_contract.FilingIndex("0000000000-26-000001", "8-K", "2026-01-02", "Filer Inc.", "EX-10.1")
    with pytest.raises(BenchmarkError, match=r"asks evidence for \['agreement.fee'\], which this agent does not read"):
        sec_contract.assemble(task, sources, filing, {})
