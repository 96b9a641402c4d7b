"""The reference solvers' pure derive steps and shared date helper, without a browser: each
decision is made from what a read step would hand over."""

from __future__ import annotations

from datetime import datetime

import pytest

from sandbox.runner.agents.reference._reading import BenchmarkError, iso_date
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
