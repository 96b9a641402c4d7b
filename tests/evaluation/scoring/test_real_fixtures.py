"""Natural answers against the committed evidence fixtures (generated from the mirrors):
quotes a careful agent would copy from the pages are accepted, near misses are not.
A pack whose fixtures are missing fails here, naming the script that makes them."""

from __future__ import annotations

import copy

import pytest

from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring import score_attempt
from sandbox.evaluation.scoring.synthetic import SITE_KEY, attempt_output, conforming_trace

DOCKET = "https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html"
OPINION = "https://www.supremecourt.gov/opinions/22pdf/22-174_k536.pdf"
NOTICE = "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view"
NOTICE_DATA = "https://sam.gov/api/prod/opps/v2/opportunities/9998b42f9e27421caa565fead7d8d416?latest=true"
RESOURCES = "https://sam.gov/api/prod/opps/v3/opportunities/9998b42f9e27421caa565fead7d8d416/resources"


def pack_with_fixtures(pack_id: str):
    pack = load_pack(pack_id)
    assert not pack.missing_fixtures(), f"{pack_id}: generate the fixtures with scripts/make_fixtures.py"
    return pack


def answer(pack, evidence: dict) -> dict:
    record = copy.deepcopy(pack.expected[0])
    record["evidence"] = evidence
    return record


def score(pack, record):
    return score_attempt(pack, attempt_output(record), conforming_trace(pack).trace(), 300, site_key=SITE_KEY)


def cite(url: str, quote: str) -> dict:
    return {"url": url, "quote": quote}


DOCKET_EVIDENCE = {
    "case.docket_number": cite(DOCKET, "No. 22-174"),
    "dates.decided": cite(DOCKET, "Jun 29 2023"),
    "disposition.result": cite(DOCKET, "Judgment VACATED and case REMANDED."),
    "opinion.author": cite(OPINION, "ALITO, J., delivered the opinion for a unanimous Court."),
    "opinion.unanimous": cite(DOCKET, "Alito, J., delivered the opinion for a unanimous Court."),
    "last_three_pre_disposition_events": [
        cite(DOCKET, "Letter filed. (Distributed)"),
        cite(DOCKET, "Reply of petitioner Gerald E. Groff filed. (Distributed)"),
        cite(
            DOCKET,
            "Argued. For petitioner: Aaron Streett, Houston, Tex. For respondent: Elizabeth B. Prelogar, "
            "Solicitor General, Department of Justice, Washington, D. C.",
        ),
    ],
    "holding": cite(
        OPINION,
        "Title VII requires an employer that denies a religious accommodation to show that "
        "the burden of granting an accommodation would result in substantial increased costs "
        "in relation to the conduct of its particular business.",
    ),
}


def test_court_docket_natural_answer_is_error_free():
    pack = pack_with_fixtures("court-docket")
    report = score(pack, answer(pack, DOCKET_EVIDENCE))
    assert report.error_free, (report.reasons, report.evidence.failures)


@pytest.mark.parametrize(
    "field, citation",
    [
        ("holding", cite(OPINION, "Title VII requires an employer to show undue hardship")),  # paraphrase
        ("holding", cite(DOCKET, "Title VII requires an employer")),  # wrong source
        ("opinion.author", cite(OPINION.replace("https", "http"), "ALITO, J., delivered the opinion")),
        ("dates.decided", cite(DOCKET, "June 29, 2023")),  # not the docket's form
    ],
)
def test_court_docket_near_misses(field, citation):
    pack = pack_with_fixtures("court-docket")
    report = score(pack, answer(pack, {**DOCKET_EVIDENCE, field: citation}))
    assert not report.qualified_pass and [f.field for f in report.evidence.failures] == [field]


BID_EVIDENCE = {
    "identity.solicitation_number": cite(NOTICE, "Notice ID 70Z03126RALAM2004"),
    "dates.offers_due_at": cite(NOTICE_DATA, '"response": "2025-11-21T12:00:00-06:00"'),
    "classification.naics_code": cite(NOTICE, "237310 - Highway, Street, and Bridge Construction"),
    "place.state": cite(NOTICE, "Weslaco, TX 78596"),
    "scope.work_type": cite(NOTICE, "This is civil/site construction work."),
    "performance.begin_within_calendar_days_after_award": cite(NOTICE, "begin work within 7 calendar days after award"),
    "contact.primary_email": cite(NOTICE_DATA, '"email": "shawn.jenkins@example.com"'),
    "attachments.names": [
        cite(RESOURCES, name)
        for name in (
            "70Z03126RALAM2004.pdf",
            "Final Design Specifications_Gravel Pad_RV01.pdf",
            "Final Design Drawings_Gravel Pad_RV01.pdf",
            "WRR TX20250255 Hidalgo 20250314.pdf",
        )
    ],
}


def test_bid_intake_natural_answer_is_error_free():
    pack = pack_with_fixtures("bid-intake")
    report = score(pack, answer(pack, BID_EVIDENCE))
    assert report.error_free, (report.reasons, report.evidence.failures)


@pytest.mark.parametrize(
    "field, entry",
    [
        ("contact.primary_email", cite(NOTICE, "shawn.jenkins@example.com")),  # only the notice data is accepted
        ("identity.solicitation_number", cite(NOTICE.replace("/view", "/view/"), "70Z03126RALAM2004")),
        ("identity.solicitation_number", cite(NOTICE_DATA.replace("?latest=true", ""), "70Z03126RALAM2004")),
        ("attachments.names", BID_EVIDENCE["attachments.names"][:3]),  # four distinct citations required
        ("attachments.names", BID_EVIDENCE["attachments.names"][:3] + [cite(RESOURCES, "70Z03126RALAM2004.pdf")]),
    ],
)
def test_bid_intake_near_misses(field, entry):
    pack = pack_with_fixtures("bid-intake")
    report = score(pack, answer(pack, {**BID_EVIDENCE, field: entry}))
    assert not report.qualified_pass and [f.field for f in report.evidence.failures] == [field]
