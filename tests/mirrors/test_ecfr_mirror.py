"""The eCFR mirror serves what the "eCFR regulation" task needs, and nothing it must not.

Checks the three mirrored responses against the benchmark's expected record (headings,
exceptions, dates, the silence traps), loads them in a real headless Chromium answered only
from the mirror store, and rebuilds the mirror to prove the generator is deterministic.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.support.calls import ref_of, snapshot
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MirrorStore
from toolserver.contract.trace import parse_trace

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MIRROR = PROJECT_ROOT / "mirrors" / "www.ecfr.gov"
GENERATOR = PROJECT_ROOT / "scripts" / "mirrors" / "build_ecfr.py"

BEFORE = "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-23/title-28?chapter=I&part=35&subpart=H"
AFTER = "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-24/title-28?chapter=I&part=35&subpart=H"
VERSIONS = "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35&section=35.200"

SECTION_HEADINGS = [
    "§ 35.200 Requirements for web and mobile accessibility.",
    "§ 35.201 Exceptions.",
    "§ 35.202 Conforming alternate versions.",
    "§ 35.203 Equivalent facilitation.",
    "§ 35.204 Duties.",
    "§ 35.205 Effect of noncompliance that has a minimal impact on access.",
    "§§ 35.206-35.209 [Reserved]",
]
EXCEPTIONS = [
    "Archived web content",
    "Preexisting conventional electronic documents",
    "Content posted by a third party",
    "Individualized, password-protected or otherwise secured conventional electronic documents",
    "Preexisting social media posts",
]
# Quotes an agent would cite from the after view (evidence matching normalises whitespace).
AFTER_QUOTES = [
    "Subpart H—Web and Mobile Accessibility",
    "AG Order No. 5919-2024",
    "89 FR 31337",
    "Apr. 24, 2024",
    "Source: AG Order No. 5919-2024, 89 FR 31337, Apr. 24, 2024, unless otherwise noted.",
    "web content",
    "mobile apps",
    "WCAG 2.1",
    "Level A",
    "Level AA",
    "Level A and Level AA",
    "April 24, 2026",
    "April 26, 2027",
    *SECTION_HEADINGS,
    *EXCEPTIONS,
]
# Silence/absence traps: none of these may be stated in the 2024 point-in-time views.
TRAPS = {
    "RIN": re.compile(r"\bRIN\b"),
    "Federal Register document number": re.compile(r"\b\d{4}-\d{5}\b"),
    "testing frequency": re.compile(r"testing|annual|frequency", re.IGNORECASE),
    "the 2026 amendment": re.compile(r"6742-2026|91 FR 20912|2026-04-20|Apr\. 20, 2026"),
}


def normalised(text: str) -> str:
    return " ".join(text.split())


def visible_text(html: str) -> str:
    return normalised(BeautifulSoup(html, "html.parser").get_text())


@pytest.fixture(scope="module")
def store() -> MirrorStore:
    return MirrorStore.load(MIRROR)


def body_text(store: MirrorStore, url: str) -> str:
    response = store.lookup(url)
    assert response is not None, f"{url} is not mirrored; mirrored: {store.urls()}"
    return response.body.decode("utf-8")


def test_mirror_is_consistent_and_serves_exactly_the_three_urls(store: MirrorStore) -> None:
    assert check(MIRROR) == []
    assert store.urls() == sorted([BEFORE, AFTER, VERSIONS])
    for url in (BEFORE, AFTER):
        response = store.lookup(url)
        assert response.status == 200
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert response.entry.provenance.kind == "reconstructed"
        assert "<html" not in body_text(store, url)  # the renderer API returns a fragment
    assert store.lookup(VERSIONS).headers["content-type"] == "application/json; charset=utf-8"


def test_after_view_states_every_expected_fact(store: MirrorStore) -> None:
    html = body_text(store, AFTER)
    text = visible_text(html)
    missing = [quote for quote in AFTER_QUOTES if quote not in text]
    assert not missing, f"not in the after view's visible text: {missing}"

    soup = BeautifulSoup(html, "html.parser")
    assert [normalised(h.get_text()) for h in soup.select("div.section > h4")] == SECTION_HEADINGS
    assert normalised(soup.select_one("div.subpart > h2").get_text()) == "Subpart H—Web and Mobile Accessibility"
    assert soup.select("h3") == []  # the subpart heading is an h2, as the real renderer emits it
    for heading in soup.select("h2, h4"):
        json.loads(heading["data-hierarchy-metadata"])  # valid JSON in every heading
    exception_headings = soup.select('div.section[id="35.201"] > div > p.indent-1 > em.paragraph-heading')
    assert [h.get_text().removesuffix(".") for h in exception_headings] == EXCEPTIONS
    assert soup.select_one('a.fr-reference[data-reference="89 FR 31337"]') is not None
    # CFR cross-references are links, as the real renderer makes them, into the same dated view.
    references = [(a.get_text(), a["href"]) for a in soup.select("a.cfr.external")]
    assert ("§ 35.104", "/on/2024-06-24/title-28/section-35.104") in references
    assert ("§ 35.200(b)", "/on/2024-06-24/title-28/section-35.200#p-35.200(b)") in references
    assert {text for text, _ in references} == {"§ 35.104", "§ 35.200", "§ 35.200(b)"}
    assert "None of the requirements of § 35.200 apply" in normalised(visible_text(html))
    first = soup.select_one('p[data-title="35.200(a)"]')
    assert normalised(first.get_text()).startswith("(a) General. In summary, a public entity must make")


# Sentences of the codified regulation the reconstruction once reproduced: the paragraph wording
# is ours (the provenance says so), so none of them may appear.
CODIFIED_WORDING = [
    "shall ensure that the following are readily accessible to and usable by",
    "provides or makes available, directly or through contractual, licensing, or other arrangements",
    "comply with Level A and Level AA success criteria and conformance requirements specified in WCAG 2.1",
    "unless such documents are currently used to apply for, gain access to, or participate in",
    "In those circumstances where personnel of the public entity believe that the proposed action",
    "to the maximum extent possible",
    "substantially equivalent or greater accessibility and usability",
]


def test_after_view_does_not_reproduce_the_codified_wording(store: MirrorStore) -> None:
    text = normalised(visible_text(body_text(store, AFTER)))
    assert [quote for quote in CODIFIED_WORDING if quote in text] == []
    basis = store.lookup(AFTER).entry.provenance.basis
    assert "do not reproduce the codified text" in basis and "as remembered" not in basis


def test_before_view_has_the_old_heading_and_no_sections(store: MirrorStore) -> None:
    html = body_text(store, BEFORE)
    text = visible_text(html)
    assert "Subpart H—General" in text
    assert "§" not in text and "35.2" not in text
    assert BeautifulSoup(html, "html.parser").select("div.section") == []


@pytest.mark.parametrize("url", [BEFORE, AFTER])
def test_point_in_time_views_state_none_of_the_traps(store: MirrorStore, url: str) -> None:
    html = body_text(store, url)
    found = {name: pattern.findall(html) for name, pattern in TRAPS.items() if pattern.search(html)}
    assert not found, f"{url} states what it must not: {found}"


def test_versions_json_gives_first_substantive_version_and_later_latest_date(store: MirrorStore) -> None:
    raw = body_text(store, VERSIONS)
    data = json.loads(raw)
    versions = data["content_versions"]
    assert {v["identifier"] for v in versions} == {"35.200"}
    first = min((v for v in versions if v["substantive"]), key=lambda v: v["date"])
    # issue_date is the Federal Register publication date, before the effective date.
    assert (first["date"], first["amendment_date"], first["issue_date"]) == ("2024-06-24", "2024-06-24", "2024-04-24")
    assert first["name"] == "§ 35.200   Requirements for web and mobile accessibility."  # three spaces
    assert " ".join(first["name"].split()) == SECTION_HEADINGS[0]
    assert data["meta"]["total_pages"] == "1"
    assert data["meta"]["latest_amendment_date"] == "2026-04-20"

    def all_strings(value: object) -> bool:
        return isinstance(value, str) or (isinstance(value, dict) and all(map(all_strings, value.values())))

    assert all_strings(data["meta"])
    assert '"date": "2024-06-24"' in raw  # quotable literally in the rendered JSON text
    assert not TRAPS["RIN"].search(raw) and not TRAPS["Federal Register document number"].search(raw)


async def test_views_render_in_chromium_from_the_mirror_alone(store: MirrorStore, browser) -> None:
    aborted: list[str] = []

    async def answer_from_mirror(route) -> None:
        found = store.lookup(route.request.url)
        if found is None:
            aborted.append(route.request.url)
            await route.abort()
        else:
            await route.fulfill(status=found.status, headers=found.headers, body=found.body)

    expectations = {
        BEFORE: ["Subpart H—General"],
        AFTER: [
            "Subpart H—Web and Mobile Accessibility",
            *SECTION_HEADINGS,
            *EXCEPTIONS,
            "Source: AG Order No. 5919-2024, 89 FR 31337, Apr. 24, 2024, unless otherwise noted.",
        ],
        VERSIONS: ['"date": "2024-06-24"', '"latest_amendment_date": "2026-04-20"', SECTION_HEADINGS[0]],
    }
    page = await browser.new_page()
    try:
        await page.route("**/*", answer_from_mirror)
        for url, wanted in expectations.items():
            response = await page.goto(url, wait_until="load")
            assert response is not None and response.status == 200
            inner_text = normalised(await page.evaluate("document.body.innerText"))
            missing = [quote for quote in wanted if quote not in inner_text]
            assert not missing, f"{url}: not in body.innerText: {missing}"
            if url != VERSIONS:  # what an agent's snapshot says: the subpart heading is level 2
                aria = await page.aria_snapshot(mode="ai")
                heading = "Subpart H—General" if url == BEFORE else "Subpart H—Web and Mobile Accessibility"
                assert f'heading "{heading}" [level=2]' in aria, aria
                assert ('link "§ 35.104"' in aria) is (url == AFTER)
    finally:
        await page.context.close()
    assert aborted == []


def _load_generator(monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location("build_ecfr", GENERATOR)
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
    out = tmp_path / "www.ecfr.gov"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(out)], check=True, cwd=PROJECT_ROOT, capture_output=True
    )
    first = _tree(out)
    _load_generator(monkeypatch).build(out)  # a second run over its own output
    assert _tree(out) == first
    assert first == _tree(MIRROR), "mirrors/www.ecfr.gov is stale: rerun scripts/mirrors/build_ecfr.py"


async def test_clicking_a_cross_reference_is_caught_by_the_pack_policy(sandbox) -> None:
    """The cross-reference links lead outside the pack's three URLs: the click is refused."""
    run = sandbox.create_run(pack="ecfr-regulation")
    try:
        await run.call("browser_start_session", {"provider": "kernel", "site_key": "ecfr-xref", "url": BEFORE})
        assert (await run.call("browser_navigate", {"url": AFTER}))["ok"]
        snap = (await snapshot(run))["snapshot"]
        reply = await run.call("browser_click", {"ref": ref_of(snap, 'link "§ 35.104"')})
        assert reply["ok"], reply
        trace = parse_trace(run.trace.text())
        violations = [e for e in trace.events if e.kind == "policy_violation"]
        assert [v.data["url"] for v in violations] == ["https://www.ecfr.gov/on/2024-06-24/title-28/section-35.104"]
        assert violations[0].seq == trace.calls[-1].seq and violations[0].data["enforced"]
        assert (await snapshot(run))["url"] == AFTER
    finally:
        await run.close()
