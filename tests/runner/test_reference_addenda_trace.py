"""The addenda-trace reference agent: an error-free qualified pass on both packs of the
workflow, and its answer follows the notice data (a later current deadline changes the
computed extension and review priority; changed areas and funds are read, not remembered)."""

from __future__ import annotations

import pytest

from sandbox.runner.agents.reference import addenda_trace
from tests.support.mirrors import mirror_with_changes
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
