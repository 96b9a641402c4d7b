"""The bid-intake reference agent: an error-free qualified pass on the real pack, and its
answer follows the notice data (a notice reopened past the as-of time becomes ACTIONABLE_NOW;
changed performance days are read, not remembered)."""

from __future__ import annotations

from sandbox.runner.agents.reference import bid_intake
from tests.support.mirrors import mirror_with_changes
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
