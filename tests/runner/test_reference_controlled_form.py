"""The controlled-form reference agent: an error-free qualified pass on the real pack, and
its verdict follows the page (a renamed confirm button is no longer a verified screen)."""

from __future__ import annotations

from sandbox.runner.agents.reference import controlled_form
from tests.support.mirrors import mirror_with_changes
from tests.support.reference import assert_error_free_pass, run_solver


async def test_controlled_form_reference_agent_passes(sandbox):
    attempt = await run_solver(sandbox, controlled_form.solve, "controlled-form")
    tools = [call.tool for call in attempt.trace.calls]
    assert tools.count("browser_click") == 2 and "browser_navigate" not in tools
    assert tools[-2:] == ["browser_snapshot", "browser_close"]
    assert_error_free_pass(attempt)


async def test_controlled_form_verdict_follows_the_page(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "sarah27h.github.io",
        {
            "simple-multi-step-form/static/js/form.js": [("button('Confirm & Next'", "button('Submit order'")],
        },
    )
    attempt = await run_solver(sandbox, controlled_form.solve, "controlled-form", mirror_roots=(mirror,))
    workflow = attempt.record["workflow"]
    assert workflow["current_heading"] == "Confirm (Step 3 of 3)"
    assert workflow["summary_matches_input"] is True
    assert workflow["visible_primary_action"] == "Submit order"
    assert workflow["final_state"] == "INCOMPLETE_NOT_SUBMITTED"
    assert workflow["final_submission_attempted"] is False
    assert not attempt.report.qualified_pass
