"""The SEC EDGAR mirror: the filing index and Exhibit 10.1 carry the benchmark's facts.

Checks run on the committed mirror (``mirrors/www.sec.gov``) through ``MirrorStore``:
visible text (with and without separators between tags, whitespace normalised) holds every
expected value as a contiguous quote, the traps (termination fee, liability cap,
arbitration) are absent, cross-references resolve, the generator is deterministic and up to
date, and a real headless Chromium renders the exhibit many viewports tall with no request
leaving the mirror.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from playwright.async_api import Route

from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MANIFEST, MirrorStore

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MIRROR = PROJECT_ROOT / "mirrors" / "www.sec.gov"
GENERATOR = PROJECT_ROOT / "scripts" / "mirrors" / "build_sec.py"

INDEX_URL = "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/0001193125-14-305083-index.html"
EXHIBIT_URL = "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/d769262dex101.htm"
# What the index page loads: the EDGAR stylesheet and two chrome images (stand-ins, mirrored).
SUBRESOURCE_URLS = [
    "https://www.sec.gov/include/interactive.css",
    "https://www.sec.gov/images/sealTop.gif",
    "https://www.sec.gov/images/bannerTitle.gif",
]

VIEWPORT = {"width": 1280, "height": 720}

# Quotes an agent is expected to cite, each of which must be contiguous visible text.
EXHIBIT_QUOTES = [
    "Exhibit 10.1",
    "Rule 24b-2 of the Securities Exchange Act of 1934",
    "[***]",
    "PHASE I CO-DEVELOPMENT AGREEMENT",
    "entered into as of May 28, 2014 (the \u201cEffective Date\u201d)",
    "by and between Celldex Therapeutics, Inc., a Delaware corporation",
    "and Oncothyreon Inc., a Delaware corporation",
    "BACKGROUND",
    "CDX-1127 (varlilumab)",
    "ONT-10",
    "ARTICLE 1 DEFINITIONS",
    "1.1 \u201cAffiliate\u201d means",
    "1.2 \u201cApplicable Law\u201d means",
    "1.4 \u201cClaims\u201d means",
    "including reasonable attorneys\u2019 fees and costs of litigation",
    "1.7 \u201cCompletion of the Trial\u201d means",
    "1.8 \u201cConfidential Information\u201d shall have the meaning set forth in Section 7.1.",
    "7.1 Confidential Information.",
    "that a reasonable person would understand to be confidential",
    "even if it is not so marked or identified",
    "shall expire upon Completion of the Trial",
    "9.2 Termination for Cause.",
    "fails to cure such breach within ninety (90) days",
    "9.3 Termination for Convenience.",
    "upon thirty (30) days\u2019 prior written notice to the other Party",
    "Articles 4, 5, 7, 8, 9 and 10 shall survive",
    "8.1 Indemnification by Oncothyreon.",
    "(collectively, the \u201cCelldex Indemnitees\u201d)",
    "8.2 Indemnification by Celldex.",
    "(collectively, the \u201cOncothyreon Indemnitees\u201d)",
    "Claims arising from injuries to Trial subjects that are not solely caused by one Party or its "
    "product candidate shall be governed by Section 8.3",
    "8.3 Joint Indemnification.",
    "the Parties shall be jointly and severally liable",
    "IN NO EVENT SHALL EITHER PARTY BE LIABLE FOR ANY SPECIAL, INDIRECT, INCIDENTAL, CONSEQUENTIAL",
    "10.1 Governing Law.",
    "the laws of the State of Delaware",
    "10.5 Assignment.",
    "without the prior written consent of the other Party",
    "(a) to an Affiliate, or (b) to a successor to all or substantially all of the business",
    "in writing signed by all Parties hereto",
    "exclusive jurisdiction of the state and federal courts located in the State of Delaware",
    "IN WITNESS WHEREOF",
]
# Silence and absence traps: none of these may appear anywhere (compared case-insensitively).
EXHIBIT_ABSENT = [
    "arbitrat",
    "termination fee",
    "break fee",
    "breakup fee",
    "aggregate liability",
    "shall not exceed",
    "liability cap",
    "cap on liability",
    "maximum liability",
]
INDEX_QUOTES = [
    "Filing Detail",
    "Form 10-Q - Quarterly report [Sections 13 or 15(d)]",
    "SEC Accession No. 0001193125-14-305083",
    "Filing Date 2014-08-11",
    "Period of Report 2014-06-30",
    "Document Format Files",
    "Data Files",
    "d769262dex101.htm",
    "EX-10.1",
    "EX-101.INS",
    "Complete submission text file",
    "2601 FOURTH AVENUE",
    "SEATTLE WA 98121",
    "Oncothyreon Inc. (Filer)",
    "0001412067 (see all company filings)",
    "State of Incorp.: DE",
    "Fiscal Year End: 1231",
    "8731",
    "001-33882",
]


def normalise(text: str) -> str:
    return " ".join(text.split())


def visible_texts(body: bytes) -> list[str]:
    """The page's visible text two ways: tags joined with nothing, and with a space."""
    soup = BeautifulSoup(body, "html.parser")
    for hidden in soup(["head", "script", "style", "noscript"]):
        hidden.decompose()
    return [normalise(soup.get_text()), normalise(soup.get_text(" "))]


@pytest.fixture(scope="module")
def store() -> MirrorStore:
    return MirrorStore.load(MIRROR)


@pytest.fixture(scope="module")
def exhibit(store: MirrorStore) -> bytes:
    response = store.lookup(EXHIBIT_URL)
    assert response is not None, f"{EXHIBIT_URL} is not mirrored; run {GENERATOR.name}"
    return response.body


@pytest.fixture(scope="module")
def index(store: MirrorStore) -> bytes:
    response = store.lookup(INDEX_URL)
    assert response is not None, f"{INDEX_URL} is not mirrored; run {GENERATOR.name}"
    return response.body


def paragraph_starting(body: bytes, prefix: str) -> str:
    soup = BeautifulSoup(body, "html.parser")
    found = [normalise(p.get_text()) for p in soup.find_all("p") if normalise(p.get_text()).startswith(prefix)]
    assert len(found) == 1, f"expected one paragraph starting {prefix!r}, found {len(found)}"
    return found[0]


def test_mirror_is_consistent_and_marked_as_reconstruction(store: MirrorStore) -> None:
    assert check(MIRROR) == []
    assert store.urls() == sorted([INDEX_URL, EXHIBIT_URL, *SUBRESOURCE_URLS])
    for url in (INDEX_URL, EXHIBIT_URL):
        provenance = store.lookup(url).entry.provenance
        assert provenance.kind == "reconstructed"
        assert "Reconstruction" in provenance.basis and "Invented" in provenance.basis
    for url in SUBRESOURCE_URLS:
        provenance = store.lookup(url).entry.provenance
        assert provenance.kind == "reconstructed" and "Stand-in" in provenance.basis


@pytest.mark.parametrize("quote", EXHIBIT_QUOTES)
def test_exhibit_quote_is_contiguous_visible_text(exhibit: bytes, quote: str) -> None:
    for text in visible_texts(exhibit):
        assert normalise(quote) in text


@pytest.mark.parametrize("quote", INDEX_QUOTES)
def test_index_quote_is_contiguous_visible_text(index: bytes, quote: str) -> None:
    for text in visible_texts(index):
        assert normalise(quote) in text


def test_exhibit_has_no_traps_or_split_words(exhibit: bytes) -> None:
    raw = exhibit.decode("ascii")  # 2014 EDGAR exhibits are ASCII with character references
    for text in visible_texts(exhibit):
        lowered = text.lower()
        for phrase in EXHIBIT_ABSENT:
            assert phrase not in lowered, f"trap phrase {phrase!r} present"
    assert "\u00ad" not in visible_texts(exhibit)[0] and "&shy;" not in raw and "&#173;" not in raw


def test_exhibit_structure(exhibit: bytes) -> None:
    text = visible_texts(exhibit)[0]
    # Ten articles, in order.
    positions = [text.index(f"ARTICLE {n} ") for n in range(1, 11)]
    assert positions == sorted(positions)
    assert "ARTICLE 11" not in text
    # Recital order: Celldex first.
    opening = paragraph_starting(exhibit, "This Phase I Co-Development Agreement")
    assert opening.index("Celldex Therapeutics, Inc.") < opening.index("Oncothyreon Inc.")
    # Defined-term pointer and its destination.
    assert paragraph_starting(exhibit, "1.8 ").endswith("shall have the meaning set forth in Section 7.1.")
    assert "reasonable person" in paragraph_starting(exhibit, "7.1 ")
    assert "reasonable attorneys\u2019 fees" in paragraph_starting(exhibit, "1.4 ")
    assert "Completion of the Trial" in paragraph_starting(exhibit, "9.1 ")
    # Reciprocal indemnities each point non-sole injuries to the joint section.
    for number, group in (("8.1 ", "Celldex Indemnitees"), ("8.2 ", "Oncothyreon Indemnitees")):
        section = paragraph_starting(exhibit, number)
        assert f"\u201c{group}\u201d" in section and "governed by Section 8.3" in section
    assert "jointly and severally liable" in paragraph_starting(exhibit, "8.3 ")
    assert "ninety (90) days" in paragraph_starting(exhibit, "9.2 ")
    assert "thirty (30) days\u2019 prior written notice" in paragraph_starting(exhibit, "9.3 ")
    assert paragraph_starting(exhibit, "9.5 ").startswith("9.5 Survival. Articles 4, 5, 7, 8, 9 and 10 shall survive")
    assert "State of Delaware" in paragraph_starting(exhibit, "10.1 ")
    assert "prior written consent of the other Party" in paragraph_starting(exhibit, "10.5 ")
    assert "in writing signed by all Parties hereto" in paragraph_starting(exhibit, "10.6 ")


def test_exhibit_cross_references_resolve(exhibit: bytes) -> None:
    text = visible_texts(exhibit)[0]
    paragraphs = [normalise(p.get_text()) for p in BeautifulSoup(exhibit, "html.parser").find_all("p")]
    sections = {match.group(1) for p in paragraphs if (match := re.match(r"(\d{1,2}\.\d{1,2}) ", p))}
    referenced = set(re.findall(r"Sections? (\d{1,2}\.\d{1,2})", text))
    referenced |= set(re.findall(r"Sections \d{1,2}\.\d{1,2}(?:, \d{1,2}\.\d{1,2})*,? and (\d{1,2}\.\d{1,2})", text))
    assert {"1.4", "1.8", "7.1", "8.1", "8.2", "8.3", "9.2", "9.3", "10.5"} <= sections
    assert referenced - sections == set()


def test_exhibit_is_full_length(exhibit: bytes) -> None:
    assert 60_000 <= len(exhibit) <= 125_000
    assert len(visible_texts(exhibit)[0].split()) >= 11_500


def test_index_structure(index: bytes) -> None:
    soup = BeautifulSoup(index, "html.parser")
    assert soup.title.get_text() == "EDGAR Filing Documents for 0001193125-14-305083"
    assert normalise(soup.select_one("#PageTitle").get_text()) == "Filing Detail"
    assert normalise(soup.select_one("#formDiv #formHeader #formName").get_text()).startswith(
        "Form 10-Q - Quarterly report [Sections 13 or 15(d)]"
    )
    assert normalise(soup.select_one("#secNum").get_text()) == "SEC Accession No. 0001193125-14-305083"
    pairs = {
        normalise(head.get_text()): normalise(head.find_next_sibling(class_="info").get_text())
        for head in soup.select(".formGrouping .infoHead")
    }
    assert pairs == {
        "Filing Date": "2014-08-11",
        "Accepted": pairs["Accepted"],
        "Documents": "12",
        "Period of Report": "2014-06-30",
    }
    tables = {table["summary"]: table for table in soup.select("table.tableFile")}
    assert list(tables) == ["Document Format Files", "Data Files"]
    rows = [
        [normalise(td.get_text()) for td in tr.find_all("td")]
        for tr in tables["Document Format Files"].find_all("tr")[1:]
    ]
    exhibit_rows = [row for row in rows if row[3] == "EX-10.1"]
    assert exhibit_rows and exhibit_rows[0][2] == "d769262dex101.htm"
    link = tables["Document Format Files"].find("a", string="d769262dex101.htm")
    assert "https://www.sec.gov" + link["href"] == EXHIBIT_URL
    assert rows[0][3] == "10-Q" and rows[-1][1] == "Complete submission text file"
    data_types = [normalise(tr.find_all("td")[3].get_text()) for tr in tables["Data Files"].find_all("tr")[1:]]
    assert data_types[0] == "EX-101.INS"
    mailers = [normalise(m.get_text()) for m in soup.select("#filerDiv .mailer")]
    assert all("2601 FOURTH AVENUE SUITE 500 SEATTLE WA 98121" in m for m in mailers) and len(mailers) == 2
    assert normalise(soup.select_one(".companyInfo .companyName").get_text()).startswith(
        "Oncothyreon Inc. (Filer) CIK: 0001412067"
    )
    ident = normalise(soup.select_one(".companyInfo .identInfo").get_text())
    for fact in ("IRS No.:", "State of Incorp.: DE", "Fiscal Year End: 1231", "File No.: 001-33882", "SIC: 8731"):
        assert fact in ident
    # No subresource may leave the mirror: every image and style sheet the page loads is mirrored.
    store = MirrorStore.load(MIRROR)
    assert not soup.find_all("script")
    loaded = [img["src"] for img in soup.find_all("img")] + [
        link["href"] for link in soup.find_all("link") if not link["href"].startswith("data:")
    ]
    assert sorted("https://www.sec.gov" + path for path in loaded) == sorted(SUBRESOURCE_URLS)
    assert all(store.lookup("https://www.sec.gov" + path) is not None for path in loaded)


def test_generator_is_deterministic_and_committed_mirror_is_current(tmp_path: Path) -> None:
    outputs = []
    for run in ("first", "second"):
        out = tmp_path / run
        subprocess.run(
            [sys.executable, str(GENERATOR), "--out", str(out)], cwd=PROJECT_ROOT, check=True, capture_output=True
        )
        outputs.append(out)
    for folder in outputs[1:] + [MIRROR]:
        assert (folder / MANIFEST).read_bytes() == (outputs[0] / MANIFEST).read_bytes()
        files = sorted(p.relative_to(outputs[0]) for p in outputs[0].rglob("*") if p.is_file())
        for relative in files:
            assert (folder / relative).read_bytes() == (outputs[0] / relative).read_bytes(), relative


async def test_chromium_renders_exhibit_many_viewports_tall(store: MirrorStore, browser) -> None:
    aborted: list[str] = []
    failed: list[str] = []

    async def answer_from_mirror(route: Route) -> None:
        response = store.lookup(route.request.url)
        if response is None:
            aborted.append(route.request.url)
            await route.abort()
            return
        await route.fulfill(status=response.status, headers=response.headers, body=response.body)

    page = await browser.new_page(viewport=VIEWPORT)
    try:
        page.on("requestfailed", lambda request: failed.append(request.url))
        await page.route("**/*", answer_from_mirror)

        await page.goto(INDEX_URL, wait_until="load")
        index_text = normalise(await page.evaluate("document.body.innerText"))
        assert "SEC Accession No. 0001193125-14-305083" in index_text
        await page.click("text=d769262dex101.htm")  # a plain link into the mirror
        await page.wait_for_url(EXHIBIT_URL)

        await page.wait_for_load_state("load")
        height = await page.evaluate("document.body.scrollHeight")
        assert height > 8 * VIEWPORT["height"], height
        exhibit_text = normalise(await page.evaluate("document.body.innerText"))
        for quote in (
            "entered into as of May 28, 2014 (the \u201cEffective Date\u201d)",
            "Articles 4, 5, 7, 8, 9 and 10 shall survive",
            "in writing signed by all Parties hereto",
            "shall be governed by Section 8.3",
        ):
            assert quote in exhibit_text
    finally:
        await page.context.close()
    assert aborted == [] and failed == [], (aborted, failed)
