"""The supremecourt.gov mirror serves what the "Court docket" task needs, and nothing it must not.

Checks the docket page (docket info, the proceedings in order, the three rows before the
decision row, the attorneys) and the generated slip-opinion PDF (pages, running heads, the
holding with line-end hyphenation, authorship) against the benchmark's expected record and
its traps; loads the docket in a real headless Chromium answered only from the mirror store;
and rebuilds the mirror twice to prove the generator is deterministic and the committed
mirror current.
"""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader

from tests.support.calls import ref_of, snapshot
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MirrorStore
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MIRROR = PROJECT_ROOT / "mirrors" / "www.supremecourt.gov"
GENERATOR = PROJECT_ROOT / "scripts" / "mirrors" / "build_court.py"
PDF_SCRIPT = PROJECT_ROOT / "scripts" / "make_opinion_pdf.py"

DOCKET = "https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html"
OPINION = "https://www.supremecourt.gov/opinions/22pdf/22-174_k536.pdf"
STYLESHEET = "https://www.supremecourt.gov/docket/docketfiles/html/styles/WebDocket.css"

CASE_NAME = "Gerald E. Groff, Petitioner v. Louis DeJoy, Postmaster General"
LAST_THREE_BEFORE_DECISION = [
    (date(2023, 4, 7), "Letter filed. (Distributed)"),
    (date(2023, 4, 7), "Reply of petitioner Gerald E. Groff filed. (Distributed)"),
    (
        date(2023, 4, 18),
        "Argued. For petitioner: Aaron Streett, Houston, Tex. For respondent: "
        "Elizabeth B. Prelogar, Solicitor General, Department of Justice, Washington, D. C.",
    ),
]
DECISION = (
    date(2023, 6, 29),
    "Judgment VACATED and case REMANDED. Alito, J., delivered the opinion for a "
    "unanimous Court. Sotomayor, J., filed a concurring opinion, in which Jackson, J., joined.",
)
JUDGMENT_ISSUED = (date(2023, 7, 31), "Judgment issued.")
HOLDING = (
    "Title VII requires an employer that denies a religious accommodation to show that the burden of "
    "granting an accommodation would result in substantial increased costs in relation to the conduct "
    "of its particular business."
)
AUTHORSHIP = (
    "ALITO, J., delivered the opinion for a unanimous Court. SOTOMAYOR, J., filed a concurring "
    "opinion, in which JACKSON, J., joined."
)
# Absence/silence traps: no dissent, no panel vote, no vote count or majority count anywhere.
TRAPS = {
    "dissent": re.compile(r"dissent", re.IGNORECASE),
    "panel": re.compile(r"\bpanel\b", re.IGNORECASE),
    "majority": re.compile(r"majority", re.IGNORECASE),
    "vote count": re.compile(r"(?<![\d/])\d\s*[–—-]\s*\d(?![\d/])|\bvote", re.IGNORECASE),
}


def normalised(text: str) -> str:
    return " ".join(text.split())


def dehyphenated(text: str) -> str:
    """Join words split with a hyphen at a line end (the evidence rule's normalisation)."""
    return re.sub(r"(?<=\w)-[ \t]*\n\s*(?=\w)", "", text)


def traps_in(text: str) -> dict[str, list[str]]:
    return {name: pattern.findall(text) for name, pattern in TRAPS.items() if pattern.search(text)}


@pytest.fixture(scope="module")
def store() -> MirrorStore:
    return MirrorStore.load(MIRROR)


@pytest.fixture(scope="module")
def docket(store: MirrorStore) -> BeautifulSoup:
    return BeautifulSoup(store.lookup(DOCKET).body.decode("utf-8"), "html.parser")


@pytest.fixture(scope="module")
def pages(store: MirrorStore) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(store.lookup(OPINION).body)).pages]


def proceedings(soup: BeautifulSoup) -> list[tuple[date, str]]:
    """(date, description) per table.ProceedingItem, document link labels left out."""
    rows = []
    for item in soup.select("#proceedings table.ProceedingItem"):
        cells = item.find_all("td")
        assert len(cells) == 2 and "ProceedingDate" in cells[0]["class"]
        description = cells[1].__copy__()
        for links in description.select("span.documentlinks"):
            links.decompose()
        rows.append(
            (datetime.strptime(cells[0].get_text(strip=True), "%b %d %Y").date(), normalised(description.get_text(" ")))
        )
    return rows


# ---------------------------------------------------------------- the mirror


def test_mirror_is_consistent_and_serves_the_docket_its_stylesheet_and_the_opinion(store: MirrorStore) -> None:
    assert check(MIRROR) == []
    assert store.urls() == sorted([DOCKET, STYLESHEET, OPINION])
    assert store.lookup(STYLESHEET).headers["content-type"] == "text/css"
    docket, opinion = store.lookup(DOCKET), store.lookup(OPINION)
    assert docket.status == opinion.status == 200
    assert docket.headers["content-type"] == "text/html; charset=utf-8"
    assert opinion.headers["content-type"] == "application/pdf"
    assert opinion.body.startswith(b"%PDF-")
    for response in (docket, opinion, store.lookup(STYLESHEET)):
        assert response.entry.provenance.kind == "reconstructed"
    assert "scripts/make_opinion_pdf.py" in opinion.entry.provenance.basis


# ---------------------------------------------------------------- docket page


def test_docket_info_has_the_case_facts(docket: BeautifulSoup) -> None:
    assert docket.title.string == "Docket for 22-174 "
    metas = {m["name"]: m["content"] for m in docket.select("meta[name]")}
    assert {k: metas.get(k) for k in ("Term", "CaseNumber", "CaseType", "Petitioner", "Respondent", "Docketed")} == {
        "Term": "2022",
        "CaseNumber": "00174",
        "CaseType": "Paid",
        "Petitioner": "Gerald E. Groff, Petitioner",
        "Respondent": "Louis DeJoy, Postmaster General",
        "Docketed": "August 25, 2022",
    }
    assert docket.select_one("#docketwrappers > #docketwrapper table#docketinfo") is not None

    info: dict[str, str] = {}
    for row in docket.select("table#docketinfo tr"):
        cells = row.find_all("td")
        if len(cells) == 2:
            info[normalised(cells[0].get_text())] = normalised(cells[1].get_text(" "))
    assert normalised(docket.select_one("table#docketinfo td.InfoTitle").get_text()) == "No. 22-174"
    assert normalised(docket.select_one("table#docketinfo span.title").get_text(" ")) == CASE_NAME
    assert info["Docketed:"] == "August 25, 2022"
    assert info["Lower Ct:"] == "United States Court of Appeals for the Third Circuit"
    assert info["Case Numbers:"] == "(21-1900)"
    assert info["Decision Date:"] == "May 25, 2022"
    # The lower-court labels are indented with non-breaking spaces, as on the real pages.
    assert [c.get_text() for c in docket.select("table#docketinfo td > span") if "Case Numbers" in c.get_text()] == [
        "\xa0\xa0\xa0Case Numbers:"
    ]
    # The Questions Presented link is absolute (a relative one resolved to a wrong path).
    assert docket.find("a", string="Questions Presented")["href"] == "https://www.supremecourt.gov/qp/22-00174qp.pdf"


def test_page_actions_above_the_docket(docket: BeautifulSoup) -> None:
    """Print and Notify Me icons and the search box sit above table#docketinfo, as on real pages."""
    wrapper = docket.select_one("#docketwrapper")
    actions = wrapper.find("table")
    assert actions is not None and actions.find_next_sibling("table")["id"] == "docketinfo"
    assert actions.find("img", alt="Print").find_parent("a")["onclick"] == "window.print();"
    assert (
        actions.find("img", alt="Notify Me").find_parent("a")["href"]
        == "https://file.supremecourt.gov/casenotification?caseNumber=22-174"
    )
    form = actions.select_one("form#SearchWithin")
    assert (form["action"], form["method"]) == ("https://www.supremecourt.gov/Docket/SearchCase.aspx", "get")
    assert "Search documents in this case:" in form.get_text()
    assert form.select_one('input[name="Case"]')["value"] == "22-174" and form.select_one('input[name="SearchTerm"]')
    assert all(img["src"].startswith("data:") for img in docket.find_all("img")), "the page must request nothing else"


def test_proceedings_are_cards_with_one_documentlinks_span_each(docket: BeautifulSoup, store: MirrorStore) -> None:
    section = docket.select_one("div#proceedings")
    assert normalised(section.select_one(":scope > div.coloredheader").get_text()) == "Proceedings and Orders"
    assert section.find("th") is None, "the real page has no separate 'Date' column header"
    cards = section.select(":scope > div.card")
    assert cards and len(cards) == len(section.select("table.ProceedingItem"))
    for card in cards:
        tables = card.find_all("table", recursive=False)
        assert len(tables) == 1 and "ProceedingItem" in tables[0]["class"]
        description = card.find_all("td")[1]
        assert len(description.select("span.documentlinks")) == 1
        assert description.select_one("br + span.documentlinks") is not None
        assert all("documentanchor" in a["class"] for a in description.select("span.documentlinks a"))
    raw = store.lookup(DOCKET).body.decode("utf-8")
    # Two spaces before a new sentence inside an entry, as on real pages.
    assert "Letter filed.  (Distributed)" in raw and "Houston, Tex.  For respondent:" in raw
    assert "Judgment VACATED and case REMANDED.  Alito, J., delivered the" in raw
    decision = next(c for c in cards if "Judgment VACATED" in c.get_text())
    link = decision.find_all("td")[1].find("a", string="opinion")
    assert link is not None and link["href"] == OPINION and link.find_parent("span", class_="documentlinks") is None
    last = cards[-1].find_all("td")[1]
    assert normalised(last.get_text(" ")).startswith("Judgment issued.")
    assert [a.get_text() for a in last.select("span.documentlinks a")] == ["Main Document"]


def test_proceedings_run_in_order_from_petition_to_judgment(docket: BeautifulSoup) -> None:
    header = docket.select_one("#proceedings")
    assert "Proceedings and Orders" in header.get_text()
    rows = proceedings(docket)
    dates = [when for when, _ in rows]
    assert dates == sorted(dates), "proceedings must be in date order"
    assert rows[0][0].strftime("%Y-%m") == "2022-07" and rows[0][1].startswith(
        "Petition for a writ of certiorari filed."
    )
    assert (date(2023, 1, 13), "Petition GRANTED.") in rows
    assert rows[-2:] == [DECISION, JUDGMENT_ISSUED]

    decision_rows = [i for i, (_, text) in enumerate(rows) if text.startswith("Judgment VACATED")]
    assert decision_rows == [len(rows) - 2]
    assert rows[decision_rows[0] - 3 : decision_rows[0]] == LAST_THREE_BEFORE_DECISION


def test_row_descriptions_are_quotable_from_the_page_text(docket: BeautifulSoup) -> None:
    text = normalised(docket.get_text(" "))
    for _, description in [*LAST_THREE_BEFORE_DECISION, DECISION, JUDGMENT_ISSUED]:
        assert description in text
    for quote in ("22-174", "Jun 29 2023", "unanimous Court", "Judgment VACATED and case REMANDED"):
        assert quote in text


def test_attorneys(docket: BeautifulSoup) -> None:
    contacts = docket.select_one("div#Contacts")
    assert normalised(contacts.select_one(":scope > div.coloredheader").get_text()) == "Attorneys"
    assert docket.select("table#Contacts") == []
    headings = [normalised(c.get_text()) for c in contacts.select(":scope > div.card > div.card-heading")]
    assert headings == ["Attorneys for Petitioners", "Attorneys for Respondents"]
    assert [normalised(t.get_text()) for t in contacts.select(".ContactName > span.ContactTitle")] == [
        "Counsel of Record"
    ] * 2
    assert [normalised(p.get_text()) for p in contacts.select(".ContactData2 > span.phonenumber")] == [
        "Ph: 713-229-1234",
        "Ph: 202-514-2217",
    ]
    names = [normalised(c.get_text(" ")) for c in contacts.select(".ContactName")]
    data = [normalised(c.get_text(" ")) for c in contacts.select(".ContactData2")]
    parties = [normalised(c.get_text(" ")) for c in contacts.select(".partyname")]
    assert names[0].startswith("Aaron M. Streett") and names[1].startswith("Elizabeth B. Prelogar")
    assert "Baker Botts L.L.P." in data[0] and "Houston" in data[0]
    assert any("Solicitor General" in d for d in data)
    assert parties == ["Party name: Gerald E. Groff", "Party name: Louis DeJoy, Postmaster General"]


def test_a_real_scotus_docket_parser_reads_every_entry_and_attorney_group(
    docket: BeautifulSoup, store: MirrorStore
) -> None:
    """juriscraper's SCOTUSDocketReportHTML (the public parser of these pages, installed from the
    package index, not mocked) extracts every proceeding and every attorney group the page shows."""
    from juriscraper.scotus import SCOTUSDocketReportHTML

    report = SCOTUSDocketReportHTML()
    report._parse_text(store.lookup(DOCKET).body.decode("utf-8"))

    metadata = report.metadata
    assert metadata["docket_number"] == "22-174"
    assert metadata["date_filed"] == date(2022, 8, 25)
    assert metadata["lower_court"] == "United States Court of Appeals for the Third Circuit"
    assert metadata["lower_court_case_numbers"] == ["21-1900"]
    assert metadata["lower_court_decision_date"] == date(2022, 5, 25)
    assert metadata["questions_presented"] == "https://www.supremecourt.gov/qp/22-00174qp.pdf"

    shown = proceedings(docket)
    entries = report.docket_entries
    assert len(entries) == len(shown) == 27
    for entry, (when, description), card in zip(entries, shown, docket.select("#proceedings div.card"), strict=False):
        assert entry["date_filed"] == when
        inline_link = card.find_all("td")[1].find("a", class_=lambda c: c != "documentanchor") is not None
        if inline_link:
            # The parser repeats the words after an inline link (lxml's tostring keeps the link's
            # tail, then the tail is added again); its own expectations for a real 2023 docket
            # show the same ("... Opinion per curiam. per curiam.").
            assert entry["description"].startswith(description + " "), entry["description"]
        else:
            assert entry["description"] == description
        documents = [(a.get_text(), a["href"]) for a in card.select("span.documentlinks a.documentanchor")]
        assert [(a["description"], a["document_url"]) for a in entry["attachments"]] == documents
    assert sum(bool(e["attachments"]) for e in entries) == 17

    groups = {"Attorneys for Petitioners": "Petitioner", "Attorneys for Respondents": "Respondent"}
    shown_parties = []
    for card in docket.select("div#Contacts > div.card"):
        names = [c.contents[0].strip() for c in card.select("div.ContactName")]
        parties = [normalised(p.get_text()).removeprefix("Party name: ") for p in card.select("span.partyname")]
        assert len(set(parties)) == 1
        shown_parties.append((groups[normalised(card.select_one("div.card-heading").get_text())], parties[0], names))
    parsed = [(p["type"], p["name"], [a["name"] for a in p["attorneys"]]) for p in report.parties]
    assert (
        parsed
        == shown_parties
        == [
            ("Petitioner", "Gerald E. Groff", ["Aaron M. Streett"]),
            ("Respondent", "Louis DeJoy, Postmaster General", ["Elizabeth B. Prelogar"]),
        ]
    )
    streett, prelogar = (p["attorneys"][0] for p in report.parties)
    assert streett["is_counsel_of_record"] and prelogar["is_counsel_of_record"]
    assert (streett["title"], streett["city"], streett["state"], streett["zip"], streett["phone"]) == (
        "Baker Botts L.L.P.",
        "Houston",
        "TX",
        "77002",
        "713-229-1234",
    )
    assert (prelogar["email"], prelogar["phone"]) == ("SupremeCtBriefs@USDOJ.gov", "202-514-2217")


def test_docket_states_none_of_the_traps(store: MirrorStore) -> None:
    assert traps_in(store.lookup(DOCKET).body.decode("utf-8")) == {}


# ---------------------------------------------------------------- slip opinion


def test_opinion_pdf_has_the_slip_opinion_layout(pages: list[str]) -> None:
    assert 6 <= len(pages) <= 12
    first = normalised(pages[0])
    for quote in (
        "(Slip Opinion) OCTOBER TERM, 2022 1",
        "Syllabus",
        "NOTE: Test-mirror reconstruction",
        "SUPREME COURT OF THE UNITED STATES",
        "GROFF v. DeJOY, POSTMASTER GENERAL",
        "CERTIORARI TO THE UNITED STATES COURT OF APPEALS FOR THE THIRD CIRCUIT",
        "No. 22–174. Argued April 18, 2023—Decided June 29, 2023",
    ):
        assert quote in first, quote
    assert pages[0].splitlines()[0] == "(Slip Opinion) OCTOBER TERM, 2022 1"
    assert pages[1].splitlines()[:2] == ["2 GROFF v. DeJOY", "Syllabus"]
    # Odd pages after a part's first page carry the "Cite as" head with the number at the right.
    assert pages[4].splitlines()[:2] == ["Cite as: 600 U. S. ____ (2023) 3", "Opinion of the Court"]
    labels = [page.splitlines()[1] for page in pages]
    assert "Opinion of the Court" in labels and labels[-1] == "SOTOMAYOR, J., concurring"


def test_holding_is_on_page_one_hyphenated_at_a_line_end(pages: list[str]) -> None:
    page_one = pages[0]
    assert "Held: " + HOLDING + " Pp. 4–21." in normalised(dehyphenated(page_one))
    raw_holding = page_one[page_one.index("Held:") : page_one.index("Pp. 4–21.")]
    assert re.search(r"[a-z]-\n[a-z]", raw_holding), f"no line-end hyphenation in:\n{raw_holding}"
    assert HOLDING not in normalised(page_one), "the holding must need dehyphenation to be found"


def test_opinion_states_authorship_and_disposition(pages: list[str]) -> None:
    text = normalised(dehyphenated("\n".join(pages)))
    assert HOLDING in text
    assert "35 F. 4th 162, vacated and remanded." in text
    assert AUTHORSHIP in text
    assert "unanimous" in text
    assert "JUSTICE ALITO delivered the opinion of the Court." in text
    assert "JUSTICE SOTOMAYOR, with whom JUSTICE JACKSON joins, concurring." in text


# The Court's own sentences and boilerplate that the reconstruction once reproduced. Only the
# holding sentence (the benchmark's expected value) is quoted; the rest is our summary.
COURT_WORDING = [
    "as that phrase is used in common parlance",
    "cannot be reduced to that one phrase",
    "means what it says",
    "With the benefit of thorough briefing and oral argument",
    "Where it is feasible, a syllabus (headnote) will be released",
    "constitutes no part of the opinion of the Court",
    "Readers are requested to notify the Reporter of Decisions",
    "subject to formal revision before publication",
]


def test_opinion_quotes_only_the_holding(pages: list[str], store: MirrorStore) -> None:
    text = normalised(dehyphenated("\n".join(pages)))
    assert [quote for quote in COURT_WORDING if quote in text] == []
    basis = store.lookup(OPINION).entry.provenance.basis
    assert "Quoted word for word: only the holding sentence" in basis and HOLDING in basis


def test_opinion_states_none_of_the_traps(pages: list[str]) -> None:
    text = "\n".join(pages)
    assert traps_in(text) == {} and traps_in(dehyphenated(text)) == {}


# ---------------------------------------------------------------- browser


async def test_docket_renders_in_chromium_from_the_mirror_alone(store: MirrorStore, browser) -> None:
    requested: list[str] = []
    aborted: list[str] = []

    async def answer_from_mirror(route) -> None:
        requested.append(route.request.url)
        found = store.lookup(route.request.url)
        if found is None:
            aborted.append(route.request.url)
            await route.abort()
        else:
            await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    page = await browser.new_page()
    try:
        await page.route("**/*", answer_from_mirror)
        response = await page.goto(DOCKET, wait_until="load")
        assert response is not None and response.status == 200
        assert await page.title() == "Docket for 22-174"  # browsers trim the title
        assert await page.locator("table.ProceedingItem").count() == len(
            proceedings(BeautifulSoup(store.lookup(DOCKET).body, "html.parser"))
        )
        inner_text = normalised(await page.evaluate("document.body.innerText"))
        for quote in [CASE_NAME, *(d for _, d in LAST_THREE_BEFORE_DECISION), DECISION[1], "Judgment issued."]:
            assert quote in inner_text, quote
    finally:
        await page.context.close()
    assert requested == [DOCKET, STYLESHEET]  # the docket file's own stylesheet link, mirrored
    assert aborted == []


# ---------------------------------------------------------------- generator


def _load(path: Path, name: str, monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_generator_is_deterministic_and_matches_the_committed_mirror(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "www.supremecourt.gov"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(out)], check=True, cwd=PROJECT_ROOT, capture_output=True
    )
    first = _tree(out)
    _load(GENERATOR, "build_court", monkeypatch).build(out)  # a second run over its own output
    assert _tree(out) == first
    assert first == _tree(MIRROR), "mirrors/www.supremecourt.gov is stale: rerun scripts/mirrors/build_court.py"


def test_pdf_script_writes_the_same_bytes_as_the_mirror(tmp_path: Path) -> None:
    out = tmp_path / "opinion.pdf"
    subprocess.run(
        [sys.executable, str(PDF_SCRIPT), "--out", str(out)], check=True, cwd=PROJECT_ROOT, capture_output=True
    )
    assert out.read_bytes() == (MIRROR / "opinions" / "22pdf" / "22-174_k536.pdf").read_bytes()


def test_line_breaker_hyphenates_only_where_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = _load(PDF_SCRIPT, "make_opinion_pdf", monkeypatch)
    assert pdf.hyphenation_points("accommodation") == [2, 5, 7, 9]
    assert pdf.hyphenation_points("reasonable") == [3, 6]
    words = pdf.split_words("an accommodation to *Hardison*’s test")
    assert [len(w) for w in words] == [1, 1, 1, 2, 1]  # "Hardison" italic + "’s" roman
    lines = pdf.break_lines(words, pdf.BODY, 60.0)
    rebuilt = "\n".join(" ".join("".join(p.text for p in w) for w in line.words) for line in lines)
    assert re.search(r"[a-z]-\n[a-z]", rebuilt) and "accommodation" in dehyphenated(rebuilt)
    assert all("Hardison-" not in "".join(p.text for p in w) for line in lines for w in line.words)


# ---------------------------------------------------------------- through the tools, under the pack's policy


async def test_opinion_link_on_the_docket_opens_the_slip_opinion(sandbox) -> None:
    """An agent can click from the docket's decision entry to the PDF (an allowed URL of the pack)."""
    run = sandbox.create_run(pack="court-docket")
    try:
        await run.call("browser_start_session", {"provider": "kernel", "site_key": "court-click", "url": DOCKET})
        snap = (await snapshot(run))["snapshot"]
        reply = await run.call("browser_click", {"ref": ref_of(snap, 'link "opinion"')})
        assert reply["ok"], reply
        shown = await snapshot(run)
        assert shown["url"] == OPINION and shown["format"] == "pdf_text"
        assert "GROFF v. DeJOY" in shown["snapshot"]
        assert not [e for e in parse_trace(run.trace.text()).events if e.kind == "policy_violation"]
    finally:
        await run.close()


async def test_opinion_link_is_refused_where_the_allow_list_has_only_the_docket(sandbox) -> None:
    """Under an allow-list without the opinion, the same click is a policy violation and the
    docket stays; in observe mode it is recorded but not refused."""
    for mode in ("enforce", "observe"):
        run = sandbox.create_run(policy=Policy(allowed_urls=(DOCKET,), mode=mode, pack="docket-only"))
        try:
            await run.call("browser_start_session", {"provider": "kernel", "site_key": "court-only", "url": DOCKET})
            snap = (await snapshot(run))["snapshot"]
            reply = await run.call("browser_click", {"ref": ref_of(snap, 'link "opinion"')})
            assert reply["ok"], reply
            trace = parse_trace(run.trace.text())
            violations = [e for e in trace.events if e.kind == "policy_violation"]
            assert [(v.data["url"], v.data["origin"], v.data["enforced"]) for v in violations] == [
                (OPINION, "page", mode == "enforce")
            ]
            assert violations[0].seq == trace.calls[-1].seq
            assert (await snapshot(run))["url"] == (DOCKET if mode == "enforce" else OPINION)
        finally:
            await run.close()


LEAVING_THE_ALLOW_LIST = [
    ("Notify Me", 'img "Notify Me"', "https://file.supremecourt.gov/casenotification?caseNumber=22-174"),
    ("Questions Presented", 'link "Questions Presented"', "https://www.supremecourt.gov/qp/22-00174qp.pdf"),
    ("a document link", 'link "Main Document"', "https://www.supremecourt.gov/DocketPDF/22/22-174/"),
    ("the search box", 'button "Search"', "https://www.supremecourt.gov/Docket/SearchCase.aspx?Case=22-174"),
]


@pytest.mark.parametrize("name, needle, target", LEAVING_THE_ALLOW_LIST, ids=[c[0] for c in LEAVING_THE_ALLOW_LIST])
async def test_docket_controls_outside_the_allow_list_are_caught(sandbox, name, needle, target) -> None:
    run = sandbox.create_run(pack="court-docket")
    try:
        await run.call("browser_start_session", {"provider": "kernel", "site_key": "court-policy", "url": DOCKET})
        snap = (await snapshot(run))["snapshot"]
        reply = await run.call("browser_click", {"ref": ref_of(snap, needle)})
        assert reply["ok"], reply
        trace = parse_trace(run.trace.text())
        click = trace.calls[-1].seq
        violations = [e for e in trace.events if e.kind == "policy_violation"]
        assert violations and all(v.seq == click and v.data["enforced"] for v in violations), (name, violations)
        assert any(v.data["url"].startswith(target) for v in violations), (name, violations)
        if name == "the search box":
            assert [e for e in trace.events if e.kind == "state_change" and e.data["action"] == "form_submission"]
        assert (await snapshot(run))["url"] == DOCKET  # the page did not move
    finally:
        await run.close()
