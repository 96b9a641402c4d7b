"""The SEC contract reference agent: an error-free qualified pass on the real pack, and its
answers follow the exhibit text (a changed cure period, an added arbitration clause)."""

from __future__ import annotations

from sandbox.runner.agents.reference import sec_contract
from sandbox.runner.agents.reference.sec_contract import NOT_STATED, Agreement, _liability_cap
from tests.support.mirrors import mirror_with_changes
from tests.support.reference import assert_error_free_pass, run_solver

EXHIBIT = "Archives/edgar/data/1412067/000119312514305083/d769262dex101.htm"


async def test_sec_contract_reference_agent_passes(sandbox):
    attempt = await run_solver(sandbox, sec_contract.solve, "sec-contract")
    tools = [call.tool for call in attempt.trace.calls]
    assert tools.count("browser_scroll") >= 1 and tools.count("browser_snapshot") >= 2
    assert_error_free_pass(attempt)


async def test_sec_contract_answers_follow_the_exhibit(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "www.sec.gov",
        {
            EXHIBIT: [
                (
                    "fails to cure such breach within ninety (90) days",
                    "fails to cure such breach within sixty (60) days",
                ),
                (
                    "Each Party irrevocably submits",
                    "Any such dispute shall be finally settled by binding arbitration in "
                    "Wilmington, Delaware. Each Party irrevocably submits",
                ),
            ]
        },
    )
    attempt = await run_solver(sandbox, sec_contract.solve, "sec-contract", mirror_roots=(mirror,))
    record = attempt.record
    assert record["termination"]["breach_cure_days"] == 60
    assert (
        record["evidence"]["termination.breach_cure_days"]["quote"]
        == "fails to cure such breach within sixty (60) days"
    )
    assert "binding arbitration" in record["miscellaneous"]["arbitration_clause"]
    assert record["termination"]["convenience_notice_days"] == 30


def test_liability_cap_search_tells_a_cap_from_an_exclusion():
    exclusion = Agreement(
        [
            "8.5 Limitation of Liability.",
            "IN NO EVENT SHALL EITHER PARTY BE LIABLE FOR ANY INDIRECT OR CONSEQUENTIAL DAMAGES.",
        ]
    )
    assert _liability_cap(exclusion) == NOT_STATED
    cap = Agreement(
        [
            "8.7 Cap. Each Party's aggregate liability under this Agreement shall not exceed "
            "five million dollars ($5,000,000)."
        ]
    )
    assert "shall not exceed" in _liability_cap(cap)
