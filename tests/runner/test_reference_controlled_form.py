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


async def test_controlled_form_whose_session_start_fails_answers_the_benchmark_error(sandbox):
    """The runner prompt: "If that start fails, report the benchmark error and stop". The agent
    used to answer FORM_UNAVAILABLE_NOT_SUBMITTED instead."""
    attempt = await run_solver(sandbox, controlled_form.solve, "controlled-form", faults="session-refused")
    assert attempt.benchmark_error.startswith("browser_start_session: ")
    assert [call.tool for call in attempt.trace.calls] == ["browser_start_session"]


async def test_controlled_form_typing_that_fails_mid_form_reports_the_incomplete_state(sandbox, tmp_path):
    """The task: "report the actual incomplete state". A failed browser_type used to end the run
    with a bare benchmark error; now the filling stops and the final snapshot is reported. Here
    the page draws step 1 again after the Name is typed, so the Email's ref is stale."""
    mirror = mirror_with_changes(
        tmp_path,
        "sarah27h.github.io",
        {
            "simple-multi-step-form/static/js/form.js": [
                (
                    "state.values[event.target.id] = event.target.value;\n",
                    "state.values[event.target.id] = event.target.value;\n"
                    "    if (event.target.id === 'name') { render(); return; }\n",
                )
            ],
        },
    )
    attempt = await run_solver(sandbox, controlled_form.solve, "controlled-form", mirror_roots=(mirror,))
    tools = [call.tool for call in attempt.trace.calls]
    assert tools == ["browser_start_session", "browser_snapshot", "browser_type", "browser_type"] + [
        "browser_snapshot",
        "browser_close",
    ]
    assert attempt.trace.calls[3].error is not None
    record = attempt.record
    assert record["fields"]["name"] == "João Muñoz" and record["fields"]["email"] == ""
    workflow = record["workflow"]
    assert workflow["final_state"] == "INCOMPLETE_NOT_SUBMITTED"
    assert workflow["current_heading"] == "Enter User Details (Step 1 of 3)"
    assert (workflow["steps_reached"], workflow["final_submission_attempted"]) == (1, False)
    assert attempt.report.output_contract.ok, attempt.report.output_contract.errors
