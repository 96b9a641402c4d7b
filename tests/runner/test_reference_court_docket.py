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


@pytest.mark.parametrize(
    "old, new, reason",
    [
        # header["Decision Date"] was a KeyError: the attempt crashed without an answer
        (
            "Decision Date:",
            "Decided:",
            "the docket header has no 'Decision Date' row (it shows ['Case Numbers', 'Decided', 'Docketed', "
            "'Lower Ct', 'Title'])",
        ),
        # date(2022, 2, 30) was a ValueError: the attempt crashed without an answer
        ("<span>May 25, 2022\n", "<span>Feb 30, 2022\n", "'Feb 30, 2022' writes no calendar date"),
        # NOT_FOUND in a field the contract types as a date broke the contract for the whole answer
        (
            "<td>Argued. For",
            "<td>Heard. For",
            "the docket shows no 'Argued' row; the output contract allows only a date for dates.argued",
        ),
        (
            "Judgment issued. <br>",
            "Mandate issued. <br>",
            "the docket shows no 'JUDGMENT ISSUED' (after the decision) row; the output contract allows only "
            "a date for disposition.judgment_issued_date",
        ),
    ],
)
async def test_court_docket_without_a_date_it_needs_answers_a_benchmark_error(sandbox, tmp_path, old, new, reason):
    mirror = mirror_with_changes(tmp_path, "www.supremecourt.gov", {DOCKET: [(old, new)]})
    attempt = await run_solver(sandbox, court_docket.solve, "court-docket", mirror_roots=(mirror,))
    assert attempt.benchmark_error == reason
    assert [call.tool for call in attempt.trace.calls][-1] == "browser_close"
