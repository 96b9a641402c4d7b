"""The eCFR regulation reference agent: an error-free qualified pass on the real pack, and
its answer follows the pages (a changed source note, exception heading and compliance date,
and a RIN that now appears, are read from the views rather than remembered)."""

from __future__ import annotations

from sandbox.runner.agents.reference import ecfr_regulation
from tests.support.mirrors import mirror_with_changes, mirror_with_edits
from tests.support.reference import assert_error_free_pass, run_solver

AFTER_VIEW = "renderer/title-28_part-35_subpart-H_2024-06-24.html"
VERSIONS = "versioner/title-28_part-35_section-35.200.json"


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


async def test_ecfr_title_part_and_section_are_read_from_the_version_history(sandbox, tmp_path):
    """They were parsed from the versions URL the prompt supplies, not from what the tool showed."""

    def in_title_29_part_36(text: str) -> str:
        return text.replace('"title": "28"', '"title": "29"').replace('"part": "35"', '"part": "36"')

    mirror = mirror_with_edits(tmp_path, "www.ecfr.gov", {VERSIONS: in_title_29_part_36})
    attempt = await run_solver(sandbox, ecfr_regulation.solve, "ecfr-regulation", mirror_roots=(mirror,))
    trace = attempt.record["version_trace"]
    assert (trace["cfr_title"], trace["cfr_part"], trace["section"]) == (29, "36", "35.200")


async def test_ecfr_version_history_that_is_no_json_object_answers_a_benchmark_error(sandbox, tmp_path):
    """``versions.get`` on a JSON array was an AttributeError: the attempt crashed without an answer."""
    mirror = mirror_with_edits(tmp_path, "www.ecfr.gov", {VERSIONS: lambda text: f"[{text}]"})
    attempt = await run_solver(sandbox, ecfr_regulation.solve, "ecfr-regulation", mirror_roots=(mirror,))
    assert attempt.benchmark_error == (
        "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35&section=35.200 shows a JSON array, "
        "not the object this task reads"
    )
