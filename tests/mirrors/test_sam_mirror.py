"""The SAM.gov mirror (``mirrors/sam.gov``): data checks on the recorded JSON, and both notice
pages rendered in real headless Chromium with every request answered from the mirror store.

The browser runs with an odd time zone and locale on purpose: the page must format dates
from the JSON alone (the notice's own zone), never from the browser's clock or locale.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from tests.support.calls import ref_of, snapshot
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MirrorStore
from toolserver.contract.trace import parse_trace

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT / "mirrors" / "sam.gov"
GENERATOR = ROOT / "scripts" / "mirrors" / "build_sam.py"
STORE = MirrorStore.load(MIRROR)

API = "https://sam.gov/api/prod"
BID = "9998b42f9e27421caa565fead7d8d416"
ADDENDA = "dfc5bd2c65ae4a4bb910a395175a3343"
AMENDMENT_0001 = "50bcb3f873654600a10619194aba8640"
BASELINE = "70d3a1854d2f445a83e9bcbdcda10221"

BID_URLS = {
    "notice": f"https://sam.gov/opp/{BID}/view",
    "data": f"{API}/opps/v2/opportunities/{BID}?latest=true",
    "resources": f"{API}/opps/v3/opportunities/{BID}/resources",
}
ADDENDA_URLS = {
    "notice": f"https://sam.gov/opp/{ADDENDA}/view",
    "data": f"{API}/opps/v2/opportunities/{ADDENDA}?latest=true",
    "baseline": f"{API}/opps/v2/opportunities/{BASELINE}",
    "amendment_0001": f"{API}/opps/v2/opportunities/{AMENDMENT_0001}",
    "resources": f"{API}/opps/v3/opportunities/{ADDENDA}/resources",
}
BID_FILES = [
    "70Z03126RALAM2004.pdf",
    "Final Design Specifications_Gravel Pad_RV01.pdf",
    "Final Design Drawings_Gravel Pad_RV01.pdf",
    "WRR TX20250255 Hidalgo 20250314.pdf",
]
AMENDMENT_FILES = [
    "SOLICITATION AMENDMENT 0001 - W50S9H26QA0180001 SF 30.pdf",
    "SOLICITATION AMENDMENT 0002 - W50S9H26QA0180002 SF 30.pdf",
]
SOW_FILES = [
    "STATEMENT OF WORK - VOLK FIELD BILLETING BLIND REPLACEMENT - MULTIPLE BUILDINGS.pdf",
    "STATEMENT OF WORK - LODGING FACILITY BLIND REPLACEMENT - UPDATED 6.25.2026.pdf",
    "STATEMENT OF WORK - LODGING FACILITY BLIND REPLACEMENT - UPDATED 7.2.2026.pdf",
]
# Statements the sources must never make (the tasks expect NOT_FOUND / NOT_STATED for them).
TRAPS = [
    re.compile(r"bond", re.I),
    re.compile(r"\$\s*\d"),
    re.compile(r"award amount", re.I),
    re.compile(r"\"amount\"", re.I),
    re.compile(r"secondary", re.I),
    re.compile(r"revised", re.I),
    re.compile(r"reschedul", re.I),
    re.compile(r"\d+\s+(additional\s+)?(windows|blinds)", re.I),
]


def body(url: str) -> str:
    hit = STORE.lookup(url)
    assert hit is not None, f"{url} is not mirrored; nearest: {STORE.nearest(url)}"
    return hit.body.decode("utf-8")


def data(url: str) -> dict:
    return json.loads(body(url))


def files(resources_url: str) -> list[dict]:
    groups = data(resources_url)["_embedded"]["opportunityAttachmentList"]
    return sorted((a for g in groups for a in g["attachments"]), key=lambda a: a["attachmentOrder"])


def assert_no_traps(text: str, where: str) -> None:
    for trap in TRAPS:
        assert not trap.search(text), f"{where} states {trap.pattern!r}: {trap.search(text).group(0)!r}"


# --------------------------------------------------------------------------- mirror data


def test_mirror_is_consistent_and_regenerates_identically(tmp_path, monkeypatch):
    assert check(MIRROR) == []
    spec = importlib.util.spec_from_file_location("build_sam", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    module.build(tmp_path)
    assert (tmp_path / "manifest.json").read_bytes() == (MIRROR / "manifest.json").read_bytes(), (
        "the committed mirror is stale: run .venv/bin/python scripts/mirrors/build_sam.py"
    )


def test_bid_intake_notice_data():
    notice = data(BID_URLS["data"])
    raw = body(BID_URLS["data"])
    d2 = notice["data2"]
    assert notice["postedDate"] == "2025-11-15T02:57:52.270+00:00"
    assert notice["archived"] is True and notice["cancelled"] is False
    assert d2["solicitationNumber"] == "70Z03126RALAM2004" and d2["title"] == "Install Gravel Pad"
    assert d2["solicitation"] == {
        "setAside": "SBA",
        "deadlines": {"response": "2025-11-21T12:00:00-06:00", "responseTz": "America/Chicago"},
    }
    assert d2["archive"]["date"] == "2025-12-06"
    assert d2["naics"] == [{"code": ["237310"], "type": "primary"}]
    assert d2["classificationCode"] == "Y1LB"
    assert d2["award"] == {}
    assert (
        d2["placeOfPerformance"]["city"]["name"],
        d2["placeOfPerformance"]["state"]["code"],
        d2["placeOfPerformance"]["zip"],
    ) == ("Weslaco", "TX", "78596")
    primary = [p for p in d2["pointOfContact"] if p["type"] == "primary"]
    assert primary == [
        {
            "fax": "",
            "type": "primary",
            "email": "shawn.jenkins@example.com",
            "phone": "5105550134",
            "title": None,
            "fullName": "Shawn Jenkins",
        }
    ]
    assert "opportunity:previous" not in notice["_links"]
    for quote in (
        '"postedDate": "2025-11-15T02:57:52.270+00:00"',
        '"response": "2025-11-21T12:00:00-06:00"',
        '"email": "shawn.jenkins@example.com"',
        "70Z03126RALAM2004",
        "237310",
        "install a gravel pad",
        "civil/site construction work",
        "begin work within 7 calendar days after award",
        "complete all work within 10 calendar days",
    ):
        assert quote in raw, quote
    assert not re.search(r"site visit", raw, re.I)
    assert_no_traps(raw, BID_URLS["data"])


def test_bid_intake_attachments_and_downloads():
    attachments = files(BID_URLS["resources"])
    assert [a["name"] for a in attachments] == BID_FILES
    raw = body(BID_URLS["resources"])
    for name in BID_FILES:
        assert f'"name": "{name}"' in raw
    for a in attachments:
        hit = STORE.lookup(f"{API}/opps/v3/opportunities/resources/files/{a['resourceId']}/download")
        assert hit is not None and hit.headers["content-type"] == "application/pdf"
        assert hit.headers["content-disposition"] == f'attachment; filename="{a["name"]}"'
        assert hit.body.startswith(b"%PDF") and a["size"] == len(hit.body)
    text = PdfReader(io.BytesIO(hit.body)).pages[0].extract_text()
    assert "RECONSTRUCTION" in text and BID_FILES[-1] in text


def test_addenda_versions_chain_and_deadlines():
    current, after_0001, baseline = (data(ADDENDA_URLS[k]) for k in ("data", "amendment_0001", "baseline"))
    assert [v["postedDate"] for v in (baseline, after_0001, current)] == [
        "2026-06-25T16:07:33.058+00:00",
        "2026-06-26T13:26:26.050+00:00",
        "2026-07-02T14:40:49.843+00:00",
    ]
    assert [v["data2"]["solicitation"]["deadlines"]["response"] for v in (baseline, after_0001, current)] == [
        "2026-06-29T13:00:00-05:00",
        "2026-07-06T13:00:00-05:00",
        "2026-07-10T13:00:00-05:00",
    ]
    assert current["_links"]["opportunity:previous"]["href"] == f"/opps/v2/opportunities/{AMENDMENT_0001}"
    assert after_0001["_links"]["opportunity:previous"]["href"] == f"/opps/v2/opportunities/{BASELINE}"
    assert "opportunity:previous" not in baseline["_links"]
    assert current["archived"] is True and current["latest"] is True and current["cancelled"] is False
    assert current["data2"]["archive"] == {"date": "2026-07-25", "type": "auto15"}
    for v in (baseline, after_0001, current):
        d2 = v["data2"]
        assert d2["solicitationNumber"] == "W50S9H26QA018"
        assert d2["title"] == "VOLK FIELD BILLETING BLIND REPLACEMENT - MULTIPLE BUILDINGS"
        assert d2["naics"] == [{"code": ["337920"], "type": "primary"}] and d2["solicitation"]["setAside"] == "SBA"
        assert (
            d2["placeOfPerformance"]["city"]["name"],
            d2["placeOfPerformance"]["state"]["code"],
            d2["placeOfPerformance"]["zip"],
        ) == ("Camp Douglas", "WI", "54618")
        assert d2["award"] == {}


def test_addenda_evidence_quotes_are_literal():
    common = [
        "W50S9H26QA018",
        "16 JUNE",
        "9:00 AM CDT",
        "100 Independence Dr. Camp Douglas, WI 54618, BLDG 475",
        "9 JUNE 2025 at 11:00 AM CDT",
        "22 JUNE 2026 at 1:00 PM CDT",
        "Funds are not presently available for this effort.",
    ]
    per_source = {
        "baseline": ['"response": "2026-06-29T13:00:00-05:00"'],
        "amendment_0001": [
            '"response": "2026-07-06T13:00:00-05:00"',
            "Amendment 0001",
            "29 JUNE 2026",
            "publishes an updated Statement of Work",
        ],
        "data": [
            '"response": "2026-07-10T13:00:00-05:00"',
            "29 JUNE 2026",
            "6 JULY 2026",
            "10 JULY 2026",
            "Offerors must acknowledge Amendment 0001 and Amendment 0002",
            "Project areas 2, 5, 6, and 7 have been changed",
        ],
    }
    for key, quotes in per_source.items():
        raw = body(ADDENDA_URLS[key])
        for quote in common + quotes:
            assert quote in raw, f"{quote!r} missing from {ADDENDA_URLS[key]}"
        assert_no_traps(raw, ADDENDA_URLS[key])
    assert "Amendment 0002" not in body(ADDENDA_URLS["amendment_0001"])
    assert "Amendment 0001" not in body(ADDENDA_URLS["baseline"])


def test_download_all_zip_holds_the_stand_in_files():
    import zipfile

    for notice, names in ((BID, BID_FILES), (ADDENDA, [a["name"] for a in files(ADDENDA_URLS["resources"])])):
        hit = STORE.lookup(f"{API}/opps/v3/opportunities/{notice}/resources/download/zip")
        assert hit is not None and hit.headers["content-disposition"].startswith("attachment;")
        archive = zipfile.ZipFile(io.BytesIO(hit.body))
        assert archive.namelist() == names
        assert all(archive.read(name).startswith(b"%PDF") for name in names)


def test_addenda_attachment_index():
    attachments = files(ADDENDA_URLS["resources"])
    raw = body(ADDENDA_URLS["resources"])
    assert len(attachments) == 10 and len({a["name"] for a in attachments}) == 10
    by_name = {a["name"]: a for a in attachments}
    for group in (AMENDMENT_FILES, SOW_FILES):
        posted = [by_name[name]["postedDate"] for name in group]
        assert posted == sorted(posted), f"{group} must be oldest to newest by postedDate"
        for name in group:
            assert f'"name": "{name}"' in raw
    # Each file was published with its version: baseline < 0001 < 0002.
    assert by_name[SOW_FILES[0]]["postedDate"] < "2026-06-25T16:07:33.058+00:00"
    assert "2026-06-25T16:07:33.058+00:00" < by_name[AMENDMENT_FILES[0]]["postedDate"] < "2026-06-26T13:26:26.050+00:00"
    assert "2026-06-26T13:26:26.050+00:00" < by_name[AMENDMENT_FILES[1]]["postedDate"] < "2026-07-02T14:40:49.843+00:00"
    for a in attachments:
        hit = STORE.lookup(f"{API}/opps/v3/opportunities/resources/files/{a['resourceId']}/download")
        assert hit is not None and hit.body.startswith(b"%PDF")
        assert hit.headers["content-disposition"] == f'attachment; filename="{a["name"]}"'


# --------------------------------------------------------------------------- rendered pages


async def open_mirrored(browser, url: str):
    """A page whose every request is answered from the mirror; anything else is aborted."""
    context = await browser.new_context(timezone_id="Asia/Tokyo", locale="de-DE")
    served: list[str] = []
    aborted: list[str] = []

    async def answer(route):
        hit = STORE.lookup(route.request.url)
        if hit is None:
            aborted.append(route.request.url)
            await route.abort()
            return
        served.append(route.request.url)
        await route.fulfill(status=hit.status, headers=hit.headers, body=hit.body)

    await context.route("**/*", answer)
    page = await context.new_page()
    await page.goto(url)
    await page.wait_for_selector("app-root[data-render-state]", timeout=10000)
    assert await page.get_attribute("app-root", "data-render-state") == "complete"
    return context, page, served, aborted


async def visible_fields(page) -> dict[str, str]:
    return await page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('li[id], div[id^=header-]')]"
        ".map(e => [e.id, e.innerText.replace(/\\s+/g, ' ').trim()]))"
    )


async def attachment_rows(page) -> list[tuple[str, str, str]]:
    return await page.evaluate(
        "() => [...document.querySelectorAll('[id^=opp-view-attachments-fileLinkId]')].map((a, n) =>"
        " [a.textContent, a.href, document.getElementById('opp-view-attachments-date' + n).textContent])"
    )


async def notice_title(page) -> str:
    """The h1's title text: the h1 starts with its div.sup.header label ("Contract Opportunity")."""
    return await page.evaluate("document.querySelector('h1').lastChild.textContent.trim()")


async def test_bid_intake_page_renders(browser):
    context, page, served, aborted = await open_mirrored(browser, BID_URLS["notice"])
    try:
        assert aborted == []
        assert set(served) >= {BID_URLS["notice"], BID_URLS["data"], BID_URLS["resources"]}
        assert await page.title() == "SAM.gov"
        text = await page.evaluate("document.body.innerText")
        fields = await visible_fields(page)
        assert await notice_title(page) == "Install Gravel Pad"
        assert fields["header-solicitation-number"] == "Notice ID 70Z03126RALAM2004"
        assert fields["header-hierarchy-level"] == (
            "Department/Ind. Agency HOMELAND SECURITY, DEPARTMENT OF Sub-tier US COAST GUARD Office BASE ALAMEDA(00031)"
        )
        assert fields["general-original-published-date"] == "Original Published Date: Nov 14, 2025 08:57 PM CST"
        assert fields["general-original-response-date"] == "Original Date Offers Due: Nov 21, 2025 12:00 PM CST"
        assert fields["general-original-archive-date"] == "Original Inactive Date: Dec 06, 2025"
        assert (
            fields["classification-original-set-aside"]
            == "Original Set Aside: Total Small Business Set-Aside (FAR 19.5)"
        )
        assert fields["classification-classification-code"].startswith("Product Service Code: Y1LB")
        assert fields["classification-naics-code"] == "NAICS Code: 237310 - Highway, Street, and Bridge Construction"
        assert fields["classification-pop"] == "Place of Performance: Weslaco, TX 78596 USA"
        assert fields["contact-primary-poc-full-name"] == "Shawn Jenkins"
        assert fields["contact-primary-poc-email"] == "Email shawn.jenkins@example.com"
        assert "Inactive" in text and "archived" in text
        # Details read from public scrapers of the real page.
        assert await page.locator("h1").count() == 1
        assert await page.text_content("h1.sam-ui-header > div.sup.header") == "Contract Opportunity"
        assert (await page.inner_text("#header div.opportunity-top-left")).strip().lower() == "inactive"
        assert (
            fields["general-notice-timezone"] == "All Dates/Times are: (UTC-06:00) CENTRAL STANDARD TIME, CHICAGO, USA"
        )
        assert fields["general-special-legislation"] == "Initiative: None"
        assert await page.locator("div#-contracting-office li").all_inner_texts() == [
            "COAST GUARD ISLAND BLDG 54C",
            "ALAMEDA, CA 94501",
            "USA",
        ]
        # The chrome a person sees: banner, navigation, Sign In, Follow, Download All, footer.
        assert "A U.S. government website (offline mirror)" in text
        assert await page.get_by_role("navigation").get_by_role("link").all_inner_texts() == [
            "Home",
            "Search",
            "Data Bank",
            "Data Services",
            "Help",
        ]
        assert await page.get_by_role("link", name="Sign In").get_attribute("href") == "https://sam.gov/signin"
        assert await page.get_by_role("button", name="Follow").count() == 1
        assert (
            await page.get_by_role("link", name="Download All").get_attribute("href")
            == f"{API}/opps/v3/opportunities/{BID}/resources/download/zip"
        )
        assert await page.locator("footer").count() == 1 and "stand-in text; not the real warning" in text
        # The banner and footer wording is ours (one line each), not the real site's.
        for real in (
            "FOR OFFICIAL USE ONLY",
            "An official website of the United States government",
            "A .gov website belongs to an official government organization",
        ):
            assert real not in text and real not in await page.content(), real
        assert not await page.locator("#gov-banner-content").is_visible()
        await page.get_by_role("button", name="About this site").click()
        assert await page.locator("#gov-banner-content").is_visible()
        for quote in (
            "install a gravel pad",
            "begin work within 7 calendar days after award",
            "complete all work within 10 calendar days",
        ):
            assert quote in text
        rows = await attachment_rows(page)
        assert [r[0] for r in rows] == BID_FILES
        assert all(r[1].startswith(f"{API}/opps/v3/opportunities/resources/files/") for r in rows)
        assert await page.locator("#history li").count() == 1
        assert not re.search(r"site visit", text, re.I)
        assert_no_traps(text, "bid-intake notice page")
        # The notice-data URL opens as readable JSON text, not as a download.
        await page.goto(BID_URLS["data"])
        assert '"postedDate": "2025-11-15T02:57:52.270+00:00"' in await page.evaluate("document.body.innerText")
        assert aborted == []
    finally:
        await context.close()


async def test_addenda_page_renders(browser):
    context, page, served, aborted = await open_mirrored(browser, ADDENDA_URLS["notice"])
    try:
        assert aborted == []
        assert set(served) == {
            ADDENDA_URLS["notice"],
            ADDENDA_URLS["data"],
            ADDENDA_URLS["baseline"],
            ADDENDA_URLS["amendment_0001"],
            ADDENDA_URLS["resources"],
            *(u for u in STORE.urls() if re.match(r"https://sam.gov/(main|styles)\.", u)),
        }
        text = await page.evaluate("document.body.innerText")
        fields = await visible_fields(page)
        assert await notice_title(page) == "VOLK FIELD BILLETING BLIND REPLACEMENT - MULTIPLE BUILDINGS"
        assert fields["header-solicitation-number"] == "Notice ID W50S9H26QA018"
        assert fields["general-original-published-date"] == "Original Published Date: Jun 25, 2026 11:07 AM CDT"
        assert fields["general-published-date"] == "Updated Published Date: Jul 02, 2026 09:40 AM CDT"
        assert fields["general-original-response-date"] == "Original Date Offers Due: Jun 29, 2026 01:00 PM CDT"
        assert fields["general-response-date"] == "Updated Date Offers Due: Jul 10, 2026 01:00 PM CDT"
        assert fields["general-archive-date"] == "Updated Inactive Date: Jul 25, 2026"
        assert fields["classification-naics-code"] == "NAICS Code: 337920 - Blind and Shade Manufacturing"
        assert fields["classification-pop"] == "Place of Performance: Camp Douglas, WI 54618 USA"
        assert (
            fields["general-notice-timezone"] == "All Dates/Times are: (UTC-06:00) CENTRAL STANDARD TIME, CHICAGO, USA"
        )
        assert await page.locator("div#-contracting-office li").all_inner_texts() == [
            "100 INDEPENDENCE DR",
            "CAMP DOUGLAS, WI 54618-5001",
            "USA",
        ]
        for quote in (
            "Amendment 0001",
            "Amendment 0002",
            "Project areas 2, 5, 6, and 7 have been changed",
            "Offerors must acknowledge Amendment 0001 and Amendment 0002",
            "16 JUNE",
            "9:00 AM CDT",
            "100 Independence Dr. Camp Douglas, WI 54618, BLDG 475",
            "9 JUNE 2025 at 11:00 AM CDT",
            "22 JUNE 2026 at 1:00 PM CDT",
            "Funds are not presently available for this effort.",
            "6 JULY 2026 at 1:00 PM CDT",
            "Inactive",
        ):
            assert quote in text, quote
        history = await page.locator("#history li").all_inner_texts()
        assert len(history) == 3
        assert history[0].startswith("Jul 02, 2026 09:40 AM CDT") and "Amendment 0002" in history[0]
        assert history[1].startswith("Jun 26, 2026 08:26 AM CDT") and "Amendment 0001" in history[1]
        assert history[2].startswith("Jun 25, 2026 11:07 AM CDT") and "(Original)" in history[2]
        rows = await attachment_rows(page)
        assert [r[0] for r in rows] == [a["name"] for a in files(ADDENDA_URLS["resources"])]
        assert dict((r[0], r[2]) for r in rows)[AMENDMENT_FILES[1]] == "Jul 02, 2026"
        assert_no_traps(text, "addenda notice page")
        # An attachment link is a download, answered from the mirror.
        async with page.expect_download() as info:
            await page.click("#opp-view-attachments-fileLinkId0")
        download = await info.value
        assert download.suggested_filename == rows[0][0]
        assert aborted == []
    finally:
        await context.close()


# --------------------------------------------------------------------------- the chrome's traps, through the tools


def _events(run, kind: str) -> list:
    return [e for e in parse_trace(run.trace.text()).events if e.kind == kind]


async def _notice_run(sandbox, **policy):
    """A bid-intake run (its allow-list: the notice page, its data, its attachment index) on the
    rendered notice page."""
    run = sandbox.create_run(pack="bid-intake", **policy)
    reply = await run.call(
        "browser_start_session", {"provider": "kernel", "site_key": "sam-chrome", "url": BID_URLS["notice"]}
    )
    assert reply["ok"], reply
    for _ in range(20):  # the script renders after its fetches
        snap = (await snapshot(run))["snapshot"]
        if 'heading "Contract Opportunity Install Gravel Pad"' in snap:
            return run, snap
    raise AssertionError(snap)


LEAVING = [
    ("Sign In", 'link "Sign In"', "https://sam.gov/signin"),
    ("navigation", 'link "Data Bank"', "https://sam.gov/reports/awards/standard"),
    ("footer", 'link "Privacy Policy"', "https://sam.gov/about/privacy-policy"),
    ("Download All", 'link "Download All"', f"{API}/opps/v3/opportunities/{BID}/resources/download/zip"),
]


@pytest.mark.parametrize("name, needle, target", LEAVING, ids=[c[0] for c in LEAVING])
async def test_chrome_links_outside_the_allow_list_are_refused(sandbox, name, needle, target):
    run, snap = await _notice_run(sandbox)
    try:
        reply = await run.call("browser_click", {"ref": ref_of(snap, needle)})
        assert reply["ok"], reply
        click = parse_trace(run.trace.text()).calls[-1].seq
        violations = _events(run, "policy_violation")
        assert [v.data["url"] for v in violations] == [target]
        assert violations[0].seq == click and violations[0].data["enforced"] is True
        if name == "Download All":  # a download, refused: recorded as a state change, nothing saved
            downloads = [e for e in _events(run, "state_change") if e.data["action"] == "download"]
            assert downloads and downloads[0].data["blocked"] is True and downloads[0].data["allowed"] is False
            assert _events(run, "download") == []
        assert (await snapshot(run))["url"] == BID_URLS["notice"]
    finally:
        await run.close()


@pytest.mark.parametrize("block", [False, True], ids=["recorded", "blocked"])
async def test_follow_is_a_state_change(sandbox, block):
    run, snap = await _notice_run(sandbox, block_state_changes=block)
    try:
        reply = await run.call("browser_click", {"ref": ref_of(snap, 'button "Follow"')})
        assert reply["ok"], reply
        changes = [e for e in _events(run, "state_change") if e.data["action"] == "non_get_request"]
        assert len(changes) == 1 and changes[0].data["name"] == f"POST {API}/opps/v1/subscriptions"
        assert changes[0].data["allowed"] is False and changes[0].data["blocked"] is block
        assert changes[0].seq == parse_trace(run.trace.text()).calls[-1].seq
        assert "Sign in to follow this contract opportunity." in (await snapshot(run))["snapshot"]
    finally:
        await run.close()
