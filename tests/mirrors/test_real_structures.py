"""Structural facts read from real captures and real parsers, checked on the bundled mirrors.

The real pages cannot be fetched here, but captures of pages of the same kinds and the code of
public parsers and scrapers can be read. Each check below encodes a structure a program keys on
(ids, classes, table layout, label markup, link shapes, JSON field sets), never the real pages'
text, and names its source: repository, path and commit. Where a public parser is on the package
index it runs against the mirror (juriscraper for the docket, py-edgar for the filing index);
edgarWebR is an R package, so its XPath selectors are applied here with lxml.

docs/concepts/mirrors.md ("Structural facts and their sources") lists the same sources.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest
from bs4 import BeautifulSoup
from lxml import html as lxml_html

from sandbox import MIRRORS_DIR
from toolserver.contract.mirrors import MirrorStore

STORE = MirrorStore.load(MIRRORS_DIR)

SEC_INDEX = "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/0001193125-14-305083-index.html"
DOCKET = "https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html"
ECFR_AFTER = "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-24/title-28?chapter=I&part=35&subpart=H"
SAM_API = "https://sam.gov/api/prod/opps/v2/opportunities"
BID_NOTICE = "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view"
ADDENDA = {
    "latest": f"{SAM_API}/dfc5bd2c65ae4a4bb910a395175a3343?latest=true",
    "amendment_0001": f"{SAM_API}/50bcb3f873654600a10619194aba8640",
    "original": f"{SAM_API}/70d3a1854d2f445a83e9bcbdcda10221",
}
BID_DATA = f"{SAM_API}/9998b42f9e27421caa565fead7d8d416?latest=true"
FORM = "https://sarah27h.github.io/simple-multi-step-form/"


def body(url: str) -> bytes:
    found = STORE.lookup(url)
    assert found is not None, f"{url} is not mirrored"
    return found.body


def squeeze(text: str) -> str:
    return " ".join(text.split())


# ================================================================ SEC EDGAR filing index
#
# Capture: mwaldstein/edgarWebR tests/cache/920760/000162828017000327/0001628280-17-000327-index.htm.html
#   @1b0fc6e6ee845435734d52d2caeb89062776adac (a saved filing index page of the same template).
# Parsers: mwaldstein/edgarWebR R/filing_filers.R and R/filing_documents.R
#   @3a024d0264760cea3f39ed35865020386f2a4c3f, R/filing_information.R
#   @02e057f2ed497bda9ef6e150056728ed4b4d0bc0 (their XPath expressions, applied below with lxml);
#   py-edgar (PyPI "edgar" 5.6.3, edgar/document.py: Documents reads .formContent's pairs).


@pytest.fixture(scope="module")
def sec_tree():
    return lxml_html.fromstring(body(SEC_INDEX))


def xpath_text(node, expression: str) -> str:
    found = node.xpath(expression)
    if isinstance(found, str):
        return found.strip()
    return " ".join(squeeze(n if isinstance(n, str) else n.text_content()) for n in found).strip()


def test_sec_filers_as_edgarwebr_reads_them(sec_tree) -> None:
    # R/filing_filers.R: entries //div[@id='filerDiv'], pieces relative to each entry.
    (filer,) = sec_tree.xpath("//div[@id='filerDiv']")
    pieces = {
        "company_name": "substring-before(div[@class='companyInfo']/span[@class='companyName']/text()[1], ' (')",
        "company_cik": (
            "substring-before(div[@class='companyInfo']/span[@class='companyName']/a[contains(@href, "
            "'browse-edgar')],' (')"
        ),
        "company_irs_number": "div/p[@class='identInfo']/acronym[. = 'IRS No.']/following-sibling::strong[1]",
        "company_incorporation_state": (
            "div/p[@class='identInfo']/text()[contains(.,'Incorp')]/following-sibling::strong[1]"
        ),
        "company_fiscal_year_end": (
            "div/p[@class='identInfo']/text()[contains(.,'Year End')]/following-sibling::strong[1]"
        ),
        "filing_type": "div/p[@class='identInfo']/text()[contains(.,'Type:')]/following-sibling::strong[1]",
        "filing_act": "div/p[@class='identInfo']/text()[contains(.,'Act:')]/following-sibling::strong[1]",
        "file_number": "div/p[@class='identInfo']/a[1]",
        "sic_code": "div/p[@class='identInfo']/b/a",
        "mailing_address_1": "div[@class='mailer'][contains(.,'Mailing Address')]/span[1]",
        "mailing_address_3": "div[@class='mailer'][contains(.,'Mailing Address')]/span[3]",
    }
    read = {name: xpath_text(filer, expression) for name, expression in pieces.items()}
    assert read == {
        "company_name": "Oncothyreon Inc.",
        "company_cik": "0001412067",
        "company_irs_number": "260868560",  # empty when the colon sits inside the acronym
        "company_incorporation_state": "DE",
        "company_fiscal_year_end": "1231",
        "filing_type": "10-Q",
        "filing_act": "34",
        "file_number": "001-33882",
        "sic_code": "8731",
        "mailing_address_1": "2601 FOURTH AVENUE",
        "mailing_address_3": "SEATTLE WA 98121",
    }


def test_sec_documents_and_information_as_edgarwebr_reads_them(sec_tree) -> None:
    # R/filing_documents.R: rows of both tables, header rows left out.
    rows = sec_tree.xpath(
        "//table[@summary='Document Format Files']/tr[not(descendant::th)]|"
        "//table[@summary='Data Files']/tr[not(descendant::th)]"
    )
    documents = [
        {k: xpath_text(row, x) for k, x in (("seq", "td[1]"), ("document", "td[3]/a/text()"), ("type", "td[4]"))}
        for row in rows
    ]
    assert {"seq": "2", "document": "d769262dex101.htm", "type": "EX-10.1"} in documents
    assert [d["type"] for d in documents if d["type"].startswith("EX-101")][0] == "EX-101.INS"
    # R/filing_information.R
    assert xpath_text(sec_tree, "substring-after(//div[@id='formName']/strong, 'Form ')") == "10-Q"
    assert xpath_text(sec_tree, "//div[@id='secNum']/text()[2]") == "0001193125-14-305083"
    for label, value in (("Filing Date", "2014-08-11"), ("Period of Report", "2014-06-30")):
        assert xpath_text(sec_tree, f"//div[@class='infoHead'][. = '{label}']/following-sibling::div[1]") == value
    size = xpath_text(sec_tree, "//td[@scope='row'][. = 'Complete submission text file']/following-sibling::td[3]")
    assert size.isdigit()


def test_sec_index_layout_follows_the_capture() -> None:
    soup = BeautifulSoup(body(SEC_INDEX), "html.parser")
    # Page chrome: header, search, seal, breadcrumbs; no footer.
    for selector in (
        "#headerTop > #Nav",
        "#headerTop > #seal img[src='/images/sealTop.gif']",
        "#headerTop > #secWordGraphic img[src='/images/bannerTitle.gif']",
        "#headerBottom > #searchHome",
        "#headerBottom > #PageTitle",
        "#breadCrumbs > ul > li.last",
    ):
        assert soup.select_one(selector) is not None, selector
    assert soup.select_one("#footer") is None
    assert soup.select_one('head link[rel="stylesheet"]')["href"] == "/include/interactive.css"
    assert soup.select_one('head meta[http-equiv="Last-Modified"]') is not None
    # Three #formDiv blocks (filing, document format files, data files), the Interactive Data
    # button in #seriesDiv before the tables, then #filerDiv.
    blocks = [b for b in soup.select_one("#contentDiv").find_all("div", recursive=False)]
    form_divs = [b for b in blocks if b.get("id") == "formDiv"]
    assert len(form_divs) == 3
    assert form_divs[0].select_one("#formHeader") is not None
    summaries = [d.select_one("table.tableFile")["summary"] for d in form_divs[1:]]
    assert summaries == ["Document Format Files", "Data Files"]
    series = soup.select_one("#seriesDiv")
    assert series.select_one("a#interactiveDataBtn") is not None
    order = [b.get("id") or ("series" if b.select_one("#seriesDiv") else "") for b in blocks]
    assert order == ["formDiv", "series", "formDiv", "formDiv", "filerDiv"]


def test_sec_label_markup_and_company_link_shapes() -> None:
    soup = BeautifulSoup(body(SEC_INDEX), "html.parser")
    info = soup.select_one(".companyInfo")
    # The colon follows the acronym as text: <acronym>IRS No.</acronym>: <strong>...
    for title, label in (("Central Index Key", "CIK"), ("Internal Revenue Service Number", "IRS No."),
                         ("Standard Industrial Code", "SIC")):  # fmt: skip
        acronym = info.find("acronym", title=title)
        assert acronym.get_text() == label and acronym.next_sibling.startswith(":"), label
    # Company-search links: the query keys in the real pages' order.
    shapes = {
        a.get_text(strip=True): [k for k, _ in parse_qsl(urlsplit(a["href"]).query)]
        for a in info.find_all("a")
        if "browse-edgar" in a["href"]
    }
    assert shapes == {
        "0001412067 (see all company filings)": ["CIK", "action"],
        "001-33882": ["filenum", "action"],
        "8731": ["action", "SIC", "owner"],
    }


@pytest.fixture(scope="module")
def sec_server() -> Iterator[str]:
    """The SEC mirror on a loopback HTTP server, for a parser that fetches its own pages."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server hook name)
            found = STORE.lookup("https://www.sec.gov" + self.path)
            self.send_response(200 if found else 404)
            self.end_headers()
            self.wfile.write(found.body if found else b"")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()


def test_py_edgar_reads_the_filing_information(sec_server: str) -> None:
    from edgar.document import Documents  # PyPI "edgar" (py-edgar), in the dev extra

    page = Documents(sec_server + urlsplit(SEC_INDEX).path)
    assert page.content["Filing Date"] == "2014-08-11"
    assert page.content["Period of Report"] == "2014-06-30"
    assert page.content["Documents"] == "12"


# ================================================================ Supreme Court docket
#
# Captures: freelawproject/juriscraper tests/examples/scotus/dockets/html/21-1397.html (a 2022-2023
#   docket in the card layout, saved in 2025) and 16-1265.html (the docket file's own head),
#   @8446197f3885164fd337624490cf466d8817d775.
# Parser: juriscraper.scotus.scotus_docket_report_html.SCOTUSDocketReportHTML (PyPI juriscraper).


@pytest.fixture(scope="module")
def docket_tree():
    return lxml_html.fromstring(body(DOCKET))


def test_docket_links_are_separated_in_text_extraction(docket_tree) -> None:
    (petition,) = [
        span
        for span in docket_tree.xpath("//span[contains(@class,'documentlinks')]")
        if "Petition" in span.text_content()
    ]
    text = petition.text_content()
    assert "PetitionAppendix" not in text and squeeze(text) == "Petition Appendix Proof of Service"


def test_docket_columns_head_and_info_table(docket_tree) -> None:
    assert docket_tree.get_element_by_id("proceedings").get("class").split() == [
        "col-lg-8",
        "col-md-12",
        "col-sm-12",
        "col-xs-12",
        "col-lg-push-4",
    ]
    assert docket_tree.get_element_by_id("Contacts").get("class").split() == [
        "col-lg-4",
        "col-md-12",
        "col-sm-12",
        "col-xs-12",
        "col-lg-pull-8",
    ]
    head = docket_tree.find("head")
    names = [m.get("name") for m in head.iter("meta") if m.get("name")]
    assert names == ["creation_date", "Term", "CaseNumber", "CaseType", "Petitioner", "Respondent", "Docketed"]
    assert [m.get("http-equiv") for m in head.iter("meta") if m.get("http-equiv")] == [
        "CACHE-CONTROL",
        "PRAGMA",
        "Expires",
    ]
    assert head.xpath("link[@rel='stylesheet']/@href") == ["../styles/WebDocket.css"]
    assert not head.xpath("meta[@name='viewport']") and not head.xpath("style")
    info = docket_tree.get_element_by_id("docketinfo")
    assert info.get("class") is None
    assert len(info.xpath(".//td[@class='InfoTitle']/span[@class='DocketInfoTitle']")) == 2
    labels = [squeeze(t) for t in info.xpath(".//td[@width='200']/span/text()")]
    assert labels == ["Title:", "Docketed:", "Lower Ct:", "Case Numbers:", "Decision Date:"]
    assert info.xpath(".//span[@class='title']/*[last()]")[0].tag == "br"
    assert len(info.xpath(".//tr[td[@colspan='2'] = '\xa0']")) == 2  # the blank rows


def test_juriscraper_reads_the_docket_metadata() -> None:
    from juriscraper.scotus.scotus_docket_report_html import SCOTUSDocketReportHTML

    report = SCOTUSDocketReportHTML()
    report._parse_text(body(DOCKET).decode("utf-8"))
    metadata = report.metadata
    assert metadata["docket_number"] == "22-174"
    assert metadata["case_name"] == "Gerald E. Groff v. Louis DeJoy, Postmaster General"
    assert metadata["lower_court_case_numbers"] == ["21-1900"]
    assert metadata["questions_presented"] == "https://www.supremecourt.gov/qp/22-00174qp.pdf"
    first = report.docket_entries[0]
    assert [a["description"] for a in first["attachments"]] == ["Petition", "Appendix", "Proof of Service"]


# ================================================================ eCFR renderer
#
# Link builder: criticaljuncture/reference_parser lib/reference_parser/cfr.rb (url_current_compare_or_on:
#   "/on/<date>" for a dated view) and lib/reference_parser/base.rb (link_to writes href before
#   class), @e0fb505d4135240ab1e5a7e66a935a64c441c728.
# Saved dated view: slawsk/lawsky-practice-problems createCleanCodeRegsDictionaries.py
#   @25fdd80c443879e62bea9c5aab5f150578fb265e (renderer markup: '<a href="/on/<date>/title-26/
#   section-..." class="cfr external">', one space after span.paragraph-hierarchy, two after
#   em.paragraph-heading).


def test_ecfr_cross_references_point_into_the_dated_view() -> None:
    raw = body(ECFR_AFTER).decode("utf-8")
    anchors = re.findall(r'<a href="([^"]+)" class="cfr external">', raw)
    assert anchors and all(h.startswith("/on/2024-06-24/title-28/section-35.") for h in anchors)
    assert 'class="cfr external" href=' not in raw  # the attribute order of the link builder
    assert "/current/" not in raw


def test_ecfr_paragraph_heading_spacing() -> None:
    raw = body(ECFR_AFTER).decode("utf-8")
    headed = re.findall(r'</span></span>( *)<em class="paragraph-heading">[^<]*</em>( *)(.)', raw)
    assert headed
    for before, after, following in headed:
        assert before == " "
        assert after == ("  " if following != "<" else " "), (before, after, following)


# ================================================================ SAM.gov
#
# v2 notice data: a real response saved in kingshah673/samgov-data-extraction-output README.md
#   @7cd46544770a12c1057262942cd46a2da0b45be0 (key order, data2.permissions, modifiedBy/createdBy,
#   parent.opportunityId on an amended version).
# Rendered page: Abhishekn1947/SamGov-Scraper main.py @0fbfbbd8143063bfdd49eb1b905424a296c7d609
#   (#button-opp-view-attachments-accordion-section, #opp-view-attachments-fileLinkId<N> and
#   -date<N>); further public Selenium/BeautifulSoup scrapers found by code search whose repository
#   the index does not name (file ids 15221228612: div.sam-ui.attached.grid with #header-related-notice;
#   27623037389: ul.usa-unstyled-list, div.inner-html-description, #-contracting-office >
#   div.ng-star-inserted, the point-of-contact list, a.file-link; 10772844967:
#   #opp-view-attachments-section-title; 42215271091: .sup.header in the h1, sam-history; 41986883073
#   (Selenium) and 11743275622 (a Playwright selector map): the contracting office's address lines
#   #contracting-office-contracting-office-street, -city-contracting-office-state, -contracting-office-
#   country) and GSA's sam-ui-elements title-and-section template (div.sam-ui.segment > h1.sam-ui.header >
#   div.sup.header).

TOP_LEVEL_KEYS = [
    "data2",
    "additionalInfo",
    "parent",
    "related",
    "status",
    "archived",
    "cancelled",
    "latest",
    "deleted",
    "postedDate",
    "modifiedDate",
    "createdDate",
    "modifiedBy",
    "createdBy",
    "description",
    "totalCount",
    "_links",
    "opportunityId",
    "id",
]
DATA2_KEYS = [
    "type",
    "award",
    "naics",
    "title",
    "archive",
    "version",
    "permissions",
    "solicitation",
    "organizationId",
    "pointOfContact",
    "classificationCode",
    "placeOfPerformance",
    "solicitationNumber",
    "additionalReporting",
]


@pytest.mark.parametrize("url", [BID_DATA, *ADDENDA.values()])
def test_sam_notice_data_field_sets(url: str) -> None:
    notice = json.loads(body(url))
    assert list(notice) == TOP_LEVEL_KEYS
    assert list(notice["data2"]) == DATA2_KEYS
    (permission,) = notice["data2"]["permissions"].values()
    assert set(permission) == {"read", "create", "delete", "update"}
    assert all(isinstance(v, bool) for v in permission.values())
    for who in ("modifiedBy", "createdBy"):
        assert notice[who].endswith("@example.com"), "an invented poster must be on a reserved domain"


def test_sam_amended_versions_name_their_parent() -> None:
    latest, amendment, original = (json.loads(body(ADDENDA[k])) for k in ("latest", "amendment_0001", "original"))
    assert original["parent"] == {}
    for version in (latest, amendment):
        assert version["parent"] == {"opportunityId": original["opportunityId"]}
    previous = latest["_links"]["opportunity:previous"]["href"].rsplit("/", 1)[-1]
    assert latest["parent"]["opportunityId"] != previous  # as in the capture: parent is not the previous one
    assert json.loads(body(BID_DATA))["parent"] == {}


async def test_sam_rendered_page_wrappers(browser) -> None:
    context = await browser.new_context()

    async def answer(route) -> None:
        found = STORE.lookup(route.request.url)
        if found is None:
            await route.abort()
        else:
            await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    await context.route("**/*", answer)
    page = await context.new_page()
    try:
        await page.goto(BID_NOTICE)
        await page.wait_for_selector("app-root[data-render-state=complete]", timeout=10000)
        for selector in (
            "div.sam-ui.segment > h1.sam-ui.header > div.sup.header:first-child",
            "div.sam-ui.attached.grid > #header-solicitation-number .header + .description",
            "div.sam-ui.attached.grid > #header-related-notice .header",
            "div.sam-ui.attached.grid > #header-hierarchy-level .header",
            "ul.usa-unstyled-list > li#general-type > strong",
            "ul.usa-unstyled-list > li#classification-naics-code",
            "#description div.inner-html-description",
            "h2#opp-view-attachments-section-title",
            "button#button-opp-view-attachments-accordion-section",
            "#opp-view-attachments-accordion-section table#opp-view-attachments-tableId",
            "#opp-view-attachments-fileLinkId0.file-link",
            "#opp-view-attachments-date0",
            "div#-contracting-office > div.ng-star-inserted",
            "#contact-primary-poc ul.usa-unstyled-list > li > strong",
            "#contact-primary-poc span.sr-only",
            "sam-history ul#history > li",
        ):
            assert await page.locator(selector).count() >= 1, selector
        hrefs = await page.eval_on_selector_all("a.file-link", "links => links.map(a => a.getAttribute('href'))")
        assert len(hrefs) == 4 and all(h.startswith("/api/prod/opps/v3/opportunities/resources/files/") for h in hrefs)
        assert await page.text_content("#contact-primary-poc-phone span.sr-only") == "Phone Number"
        office = [  # each address line by the id scrapers select it by (they read them empty before)
            await page.text_content(f"div#-contracting-office li#contracting-office-{line}")
            for line in ("contracting-office-street", "city-contracting-office-state", "contracting-office-country")
        ]
        assert office[0] and re.fullmatch(r"[A-Z ]+, [A-Z]{2} \d{5}(-\d{4})?", office[1]) and office[2] == "USA", office
    finally:
        await context.close()


# ================================================================ demo form
#
# The real bundle: sarah27h/simple-multi-step-form branch gh-pages @19973b1742796d610a8b3e002dd632dbb02a762a
# (static/js/main.57a241ca.chunk.js), driven in headless Chromium through the four steps with the
# inputs below; its accessibility snapshots (Playwright's aria_snapshot(mode="ai"), what the tool
# server returns) are written here as they came. Steps 1-3 show the counter span as a child (its
# text is three text nodes); the success heading is flat ("(Finished)" is one text node).

FORM_INPUTS = {
    "name": "João Muñoz",
    "email": "joao.munoz@example.com",
    "city": "São Paulo",
    "bio": "Synthetic contractor intake for a public browser benchmark; no real person, client, bid, or account.",
}
REAL_BUNDLE_SNAPSHOTS = [
    """- generic [ref=e2]:
  - banner [ref=e3]:
    - heading "Enter User Details (Step 1 of 3)" [level=1] [ref=e4]:
      - text: Enter User Details
      - generic [ref=e5]: (Step 1 of 3)
  - generic [ref=e6]:
    - generic [ref=e7]: Name
    - textbox "Name" [ref=e9]
  - generic [ref=e10]:
    - generic [ref=e11]: Email
    - textbox "Email" [ref=e13]
  - button "Next" [ref=e15] [cursor=pointer]""",
    """- generic [ref=e2]:
  - banner [ref=e17]:
    - heading "Enter Personal Details (Step 2 of 3)" [level=1] [ref=e18]:
      - text: Enter Personal Details
      - generic [ref=e19]: (Step 2 of 3)
  - generic [ref=e20]:
    - generic [ref=e21]: City
    - textbox "City" [ref=e23]
  - generic [ref=e24]:
    - generic [ref=e25]: Bio
    - textbox "Bio" [ref=e27]:
      - /placeholder: Placeholder
    - paragraph [ref=e28]: character Numbers 0
  - generic [ref=e29]:
    - button "Back" [ref=e30] [cursor=pointer]
    - button "Next" [ref=e32] [cursor=pointer]""",
    """- generic [ref=e2]:
  - banner [ref=e34]:
    - heading "Confirm (Step 3 of 3)" [level=1] [ref=e35]:
      - text: Confirm
      - generic [ref=e36]: (Step 3 of 3)
  - list [ref=e38]:
    - listitem [ref=e39]:
      - generic [ref=e40]:
        - generic [ref=e41]: name
        - paragraph [ref=e42]: João Muñoz
    - listitem [ref=e43]:
      - generic [ref=e44]:
        - generic [ref=e45]: email
        - paragraph [ref=e46]: joao.munoz@example.com
    - listitem [ref=e47]:
      - generic [ref=e48]:
        - generic [ref=e49]: city
        - paragraph [ref=e50]: São Paulo
    - listitem [ref=e51]:
      - generic [ref=e52]:
        - generic [ref=e53]: bio
        - paragraph [ref=e54]: {bio}
  - generic [ref=e55]:
    - button "Back" [ref=e56] [cursor=pointer]
    - button "Confirm & Next" [ref=e58] [cursor=pointer]""".format(bio=FORM_INPUTS["bio"]),
    """- generic [ref=e2]:
  - banner [ref=e60]:
    - heading "Success (Finished)" [level=1] [ref=e61]
  - generic [ref=e62]:
    - heading "Thank you for your submission!" [level=2] [ref=e63]
    - heading "you will get an email with further instructions" [level=2] [ref=e64]""",
]
SIMILARITY_BAR = 0.95


async def test_form_snapshots_match_the_real_bundle_at_every_step(browser) -> None:
    context = await browser.new_context()

    async def answer(route) -> None:
        found = STORE.lookup(route.request.url)
        if found is None:
            await route.abort()
        else:
            await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    await context.route("**/*", answer)
    page = await context.new_page()
    snapshots: list[str] = []
    try:
        await page.goto(FORM)
        await page.wait_for_selector("h1")
        snapshots.append(await page.aria_snapshot(mode="ai"))
        for field in ("name", "email"):
            await page.locator(f"#{field}").fill(FORM_INPUTS[field])
            await page.locator(f"#{field}").blur()
        await page.get_by_role("button", name="Next", exact=True).click()
        await page.wait_for_selector("#city")
        snapshots.append(await page.aria_snapshot(mode="ai"))
        for field in ("city", "bio"):
            await page.locator(f"#{field}").fill(FORM_INPUTS[field])
            await page.locator(f"#{field}").blur()
        await page.get_by_role("button", name="Next", exact=True).click()
        await page.wait_for_selector("li")
        snapshots.append(await page.aria_snapshot(mode="ai"))
        await page.get_by_role("button", name="Confirm & Next").click()
        await page.wait_for_selector("h2")
        snapshots.append(await page.aria_snapshot(mode="ai"))
        # The DOM facts behind the snapshots: screens straight under #root, the counter's text nodes.
        assert await page.evaluate("document.querySelector('#root > header > h1 > span').childNodes.length") == 1
    finally:
        await context.close()
    for step, (real, mirrored) in enumerate(zip(REAL_BUNDLE_SNAPSHOTS, snapshots, strict=True), start=1):
        ratio = difflib.SequenceMatcher(None, real.splitlines(), mirrored.splitlines()).ratio()
        assert ratio >= SIMILARITY_BAR, f"step {step}: similarity {ratio:.3f}\n{mirrored}"
