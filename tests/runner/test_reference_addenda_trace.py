"""The addenda-trace reference agent: an error-free qualified pass on both packs of the
workflow, and its answer follows the notice data (a later current deadline changes the
computed extension and review priority; changed areas and funds are read, not remembered)."""

from __future__ import annotations

import json

import pytest

from sandbox.runner.agents.reference import addenda_trace
from tests.support.mirrors import mirror_with_changes, mirror_with_edits
from tests.support.reference import assert_error_free_pass, run_solver

CURRENT_DATA = "api/opps/v2/addenda/dfc5bd2c65ae4a4bb910a395175a3343.json"


@pytest.mark.parametrize("pack_id", ["addenda-trace", "addenda-trace-p6"])
async def test_addenda_trace_reference_agent_passes(sandbox, pack_id):
    attempt = await run_solver(sandbox, addenda_trace.solve, pack_id)
    tools = [call.tool for call in attempt.trace.calls]
    assert tools[0] == "browser_start_session" and tools[-1] == "browser_close"
    assert tools.count("browser_navigate") == 4
    assert_error_free_pass(attempt)


async def test_addenda_trace_answer_follows_the_notice_data(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "sam.gov",
        {
            CURRENT_DATA: [
                ('"response": "2026-07-10T13:00:00-05:00"', '"response": "2026-07-14T13:00:00-05:00"'),
                ("Project areas 2, 5, 6, and 7 have been changed.", "Project areas 1 and 3 have been changed."),
                ("Funds are not presently available", "Funds are presently available"),
            ]
        },
    )
    attempt = await run_solver(sandbox, addenda_trace.solve, "addenda-trace", mirror_roots=(mirror,))
    record = attempt.record
    assert record["timeline"]["current_due_at"] == "2026-07-14T13:00:00-05:00"
    assert record["timeline"]["deadline_sequence"] == ["2026-06-29", "2026-07-06", "2026-07-14"]
    assert record["timeline"]["total_extension_calendar_days"] == 15
    assert record["scope_changes"]["amendment_0002_changed_project_areas"] == [1, 3]
    assert record["commercial"]["funds_currently_available"] is True
    assert record["monitoring"]["current_due_date_open"] is True
    assert record["monitoring"]["review_priority"] == "NORMAL_REVIEW"
    assert not attempt.report.qualified_pass


@pytest.mark.parametrize(
    "note, revised",
    [
        (" The site visit is moved to 25 JUNE 2026 at 9:00 AM CDT.", "25 JUNE 2026"),
        (" The site visit location has changed.", "NOT_STATED"),
    ],
)
async def test_addenda_revised_site_visit_date_is_the_date_a_note_gives(sandbox, tmp_path, note, revised):
    """An amendment note mentioning the site visit used to become the revised date whole."""
    areas = "Project areas 2, 5, 6, and 7 have been changed."
    mirror = mirror_with_changes(tmp_path, "sam.gov", {CURRENT_DATA: [(areas, areas + note)]})
    attempt = await run_solver(sandbox, addenda_trace.solve, "addenda-trace", mirror_roots=(mirror,))
    assert attempt.record["site_visit"]["revised_site_visit_date"] == revised


async def test_addenda_texts_the_current_version_lacks_are_not_found_and_the_answer_keeps_the_contract(
    sandbox, tmp_path
):
    """A null title and an empty place of performance were nulls that broke the output schema."""

    def without_title_and_place(text: str) -> str:
        notice = json.loads(text)
        notice["data2"] = {**notice["data2"], "title": None, "placeOfPerformance": {}}
        return json.dumps(notice)

    mirror = mirror_with_edits(tmp_path, "sam.gov", {CURRENT_DATA: without_title_and_place})
    attempt = await run_solver(sandbox, addenda_trace.solve, "addenda-trace", mirror_roots=(mirror,))
    record = attempt.record
    assert record["identity"]["title"] == "NOT_FOUND"
    assert record["place"] == {"city": "NOT_FOUND", "state": "NOT_FOUND", "postal_code": "NOT_FOUND"}
    assert attempt.report.output_contract.ok, attempt.report.output_contract.errors


async def test_addenda_version_without_its_posting_time_answers_a_benchmark_error(sandbox, tmp_path):
    """``versions[u][1]["postedDate"]`` was a KeyError: the attempt crashed without an answer."""

    def without_posted_date(text: str) -> str:
        return json.dumps({key: value for key, value in json.loads(text).items() if key != "postedDate"})

    mirror = mirror_with_edits(tmp_path, "sam.gov", {CURRENT_DATA: without_posted_date})
    attempt = await run_solver(sandbox, addenda_trace.solve, "addenda-trace", mirror_roots=(mirror,))
    assert attempt.benchmark_error == "the sources give no postedDate of a notice-data version as a text (found None)"
    assert [call.tool for call in attempt.trace.calls][-1] == "browser_close"
