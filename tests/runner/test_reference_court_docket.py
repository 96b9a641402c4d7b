"""The court-docket reference agent: an error-free qualified pass on both packs (reviewed
pack 5 and historical pack 4), and its answers follow the docket page."""

from __future__ import annotations

import pytest

from sandbox.runner.agents.reference import court_docket
from tests.support.mirrors import mirror_with_changes
from tests.support.reference import assert_error_free_pass, run_solver

DOCKET = "docket/docketfiles/html/public/22-174.html"


@pytest.mark.parametrize("pack_id", ["court-docket", "court-docket-p4"])
async def test_court_docket_reference_agent_passes(sandbox, pack_id):
    attempt = await run_solver(sandbox, court_docket.solve, pack_id)
    urls = [call.args.get("url") for call in attempt.trace.calls if isinstance(call.args, dict)]
    assert "https://www.supremecourt.gov/opinions/22pdf/22-174_k536.pdf" in urls
    assert_error_free_pass(attempt)


async def test_court_docket_answers_follow_the_docket(sandbox, tmp_path):
    mirror = mirror_with_changes(
        tmp_path,
        "www.supremecourt.gov",
        {
            DOCKET: [
                ("Judgment VACATED and case REMANDED.", "Judgment AFFIRMED."),
                ("Letter filed.", "Letter of respondent filed."),
            ]
        },
    )
    attempt = await run_solver(sandbox, court_docket.solve, "court-docket", mirror_roots=(mirror,))
    record = attempt.record
    assert record["disposition"]["result"] == "AFFIRMED"
    assert record["evidence"]["disposition.result"]["quote"] == "Judgment AFFIRMED."
    assert record["last_three_pre_disposition_events"][0] == {
        "date": "2023-04-07",
        "description": "Letter of respondent filed. (Distributed)",
    }
    assert record["opinion"]["author"] == "Justice Alito"
