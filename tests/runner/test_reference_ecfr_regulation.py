"""The eCFR regulation reference agent: an error-free qualified pass on the real pack, and
its answer follows the pages (a changed source note, exception heading and compliance date,
and a RIN that now appears, are read from the views rather than remembered)."""

from __future__ import annotations

from sandbox.runner.agents.reference import ecfr_regulation
from tests.support.mirrors import mirror_with_changes
from tests.support.reference import assert_error_free_pass, run_solver

AFTER_VIEW = "renderer/title-28_part-35_subpart-H_2024-06-24.html"


async def test_ecfr_regulation_reference_agent_passes(sandbox):
    attempt = await run_solver(sandbox, ecfr_regulation.solve, "ecfr-regulation")
    tools = [call.tool for call in attempt.trace.calls]
    assert tools.count("browser_snapshot") >= 3 and tools.count("browser_navigate") == 2
    assert tools[0] == "browser_start_session" and tools[-1] == "browser_close"
    assert_error_free_pass(attempt)


async def test_ecfr_regulation_answer_follows_the_views(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "www.ecfr.gov",
        {
            AFTER_VIEW: [
                (
                    ">89 FR 31337</a>, Apr. 24, 2024, unless otherwise noted.",
                    ">89 FR 31400</a>, Apr. 25, 2024, unless otherwise noted. RIN 1190-AA79.",
                ),
                ("Preexisting social media posts.</em>", "Preexisting social media content.</em>"),
                ("Beginning April 26, 2027,", "Beginning April 27, 2027,"),
            ]
        },
    )
    attempt = await run_solver(sandbox, ecfr_regulation.solve, "ecfr-regulation", mirror_roots=(mirror,))
    record = attempt.record
    assert record["authority"]["subpart_source_citation"] == "89 FR 31400"
    assert record["authority"]["publication_date"] == "2024-04-25"
    assert record["authority"]["rin"] == "1190-AA79"
    assert record["authority"]["federal_register_document_number"] == "NOT_STATED"
    assert record["exceptions"][-1] == "Preexisting social media content"
    assert record["requirements"]["small_or_special_district_compliance_date"] == "2027-04-27"
    assert record["requirements"]["large_entity_compliance_date"] == "2026-04-24"
    assert not attempt.report.qualified_pass
