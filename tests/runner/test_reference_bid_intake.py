"""The bid-intake reference agent: an error-free qualified pass on the real pack, and its
answer follows the notice data (a notice reopened past the as-of time becomes ACTIONABLE_NOW;
changed performance days are read, not remembered)."""

from __future__ import annotations

import json

import pytest

from sandbox.runner.agents.reference import bid_intake
from tests.support.mirrors import mirror_with_changes, mirror_with_edits
from tests.support.reference import assert_error_free_pass, run_solver

NOTICE_DATA = "api/opps/v2/bid-intake/9998b42f9e27421caa565fead7d8d416.json"
RESOURCES = "api/opps/v3/bid-intake/9998b42f9e27421caa565fead7d8d416.resources.json"


async def test_bid_intake_reference_agent_passes(sandbox):
    attempt = await run_solver(sandbox, bid_intake.solve, "bid-intake")
    tools = [call.tool for call in attempt.trace.calls]
    assert tools[0] == "browser_start_session" and tools[-1] == "browser_close"
    assert tools.count("browser_navigate") == 2
    assert_error_free_pass(attempt)


async def test_bid_intake_answer_follows_the_notice_data(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "sam.gov",
        {
            NOTICE_DATA: [
                ('"response": "2025-11-21T12:00:00-06:00"', '"response": "2026-09-01T12:00:00-05:00"'),
                ('"date": "2025-12-06"', '"date": "2026-09-16"'),
                ("begin work within 7 calendar days", "begin work within 5 calendar days"),
                ('"postedDate": "2025-11-15T02:57:52.270+00:00"', '"postedDate": "2026-08-15T02:57:52.270+00:00"'),
            ]
        },
    )
    attempt = await run_solver(sandbox, bid_intake.solve, "bid-intake", mirror_roots=(mirror,))
    record = attempt.record
    assert record["dates"]["offers_due_at"] == "2026-09-01T12:00:00-05:00"
    assert record["dates"]["published_at"] == "2026-08-15T02:57:52.270+00:00"
    assert record["dates"]["inactive_date"] == "2026-09-16"
    assert record["performance"]["begin_within_calendar_days_after_award"] == 5
    assert record["identity"]["lifecycle_status"] == "ACTIVE"
    assert record["qualification"]["status_open"] is True
    assert record["qualification"]["verdict"] == "ACTIONABLE_NOW"
    assert not attempt.report.qualified_pass


async def test_bid_intake_identity_contact_naics_and_attachments_follow_the_pages(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "sam.gov",
        {
            NOTICE_DATA: [
                ('"title": "Install Gravel Pad"', '"title": "Install Gravel Road"'),
                ('"fullName": "Shawn Jenkins"', '"fullName": "Dana Okafor"'),
                ('"email": "shawn.jenkins@example.com"', '"email": "dana.okafor@example.com"'),
                ('"237310"', '"237990"'),
            ],
            RESOURCES: [("WRR TX20250255 Hidalgo 20250314.pdf", "WRR TX20250999 Hidalgo 20250401.pdf")],
        },
    )
    attempt = await run_solver(sandbox, bid_intake.solve, "bid-intake", mirror_roots=(mirror,))
    record = attempt.record
    assert record["identity"]["title"] == "Install Gravel Road"
    assert record["contact"] == {"primary_name": "Dana Okafor", "primary_email": "dana.okafor@example.com"}
    assert record["classification"]["naics_code"] == "237990"
    assert record["qualification"]["naics_match"] is False  # the task's NAICS is 237310
    assert record["attachments"]["names"][-1] == "WRR TX20250999 Hidalgo 20250401.pdf"
    assert not attempt.report.qualified_pass


async def test_bid_intake_texts_the_notice_data_lack_are_not_found_and_the_answer_keeps_the_contract(sandbox, tmp_path):
    """An absent title, contact name and postal code were null, which broke the output schema for
    the whole answer; they are the prompts' NOT_FOUND."""
    mirror = mirror_with_changes(
        tmp_path,
        "sam.gov",
        {
            NOTICE_DATA: [
                ('"classificationCode": "Y1LB",', ""),
                ('"fullName": "Shawn Jenkins"', '"fullName": null'),
                ('"zip": "78596",', ""),
            ]
        },
    )
    attempt = await run_solver(sandbox, bid_intake.solve, "bid-intake", mirror_roots=(mirror,))
    record = attempt.record
    assert record["classification"]["psc_code"] == "NOT_FOUND"
    assert record["contact"] == {"primary_name": "NOT_FOUND", "primary_email": "shawn.jenkins@example.com"}
    assert record["place"]["postal_code"] == "NOT_FOUND"
    assert attempt.report.output_contract.ok, attempt.report.output_contract.errors


@pytest.mark.parametrize(
    "change, reason",
    [
        (
            ('"postedDate": "2025-11-15T02:57:52.270+00:00"', '"postedDate": null'),
            "the sources give no postedDate as a text (found None)",
        ),
        (('"date": "2025-12-06"', '"day": "2025-12-06"'), "the sources give no inactive (archive) date"),
        (('"email": "shawn.jenkins@example.com"', '"email": ""'), "the sources give no primary contact email"),
    ],
)
async def test_bid_intake_without_a_value_it_cannot_do_without_answers_a_benchmark_error(
    sandbox, tmp_path, change, reason
):
    """A date the contract types, or a value to cite, has no abstention token: its absence is
    a benchmark error naming it (it was null, and the answer broke the contract)."""
    mirror = mirror_with_changes(tmp_path, "sam.gov", {NOTICE_DATA: [change]})
    attempt = await run_solver(sandbox, bid_intake.solve, "bid-intake", mirror_roots=(mirror,))
    assert reason in attempt.benchmark_error
    assert [call.tool for call in attempt.trace.calls][-1] == "browser_close"


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda text: f"[{text}]", "shows a JSON array, not the object this task reads"),
        (
            lambda text: json.dumps({**json.loads(text), "data2": ["not", "an", "object"]}),
            "AttributeError 'list' object has no attribute 'get' in _sam.py",
        ),
        (
            lambda text: json.dumps({**json.loads(text), "description": [{"body": 7}]}),
            "TypeError sequence item 0: expected str instance, int found in _sam.py",
        ),
    ],
)
async def test_bid_intake_notice_data_of_another_shape_answers_a_benchmark_error(sandbox, tmp_path, edit, reason):
    """Well-formed JSON of an unexpected shape crashed the agent (the attempt was recorded
    ``crashed``, with no answer and no tool-call count); it is a benchmark error saying where."""
    mirror = mirror_with_edits(tmp_path, "sam.gov", {NOTICE_DATA: edit})
    attempt = await run_solver(sandbox, bid_intake.solve, "bid-intake", mirror_roots=(mirror,))
    assert reason in attempt.benchmark_error
    assert [call.tool for call in attempt.trace.calls][-1] == "browser_close"
