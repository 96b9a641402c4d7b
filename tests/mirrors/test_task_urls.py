"""Every task URL of every pack loads through the sandbox (with the pack's policy) and its
snapshot shows the key facts; the evidence fixtures agree with the mirrors."""

from __future__ import annotations

import pytest

from sandbox import MIRRORS_DIR
from sandbox.evaluation.packs import list_packs, load_pack
from sandbox.runner.fixtures import expected_fixtures
from toolserver.contract.mirrors import MirrorStore

KEY_FACTS = {
    "https://sarah27h.github.io/simple-multi-step-form/": ["Enter User Details (Step 1 of 3)", 'textbox "Name"'],
    "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/0001193125-14-305083-index.html": [
        "0001193125-14-305083",
        "EX-10.1",
        "2014-08-11",
    ],
    "https://www.sec.gov/Archives/edgar/data/1412067/000119312514305083/d769262dex101.htm": [
        "PHASE I CO-DEVELOPMENT AGREEMENT",
        "May 28, 2014",
        "Completion of the Trial",
        "State of Delaware",
    ],
    "https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html": [
        "22-174",
        "Letter filed. (Distributed)",
        "Judgment issued.",
    ],
    "https://www.supremecourt.gov/opinions/22pdf/22-174_k536.pdf": ["Held:", "ALITO, J., delivered the opinion"],
    "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-23/title-28?chapter=I&part=35&subpart=H": [
        "Subpart H—General"
    ],
    "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-24/title-28?chapter=I&part=35&subpart=H": [
        "Subpart H—Web and Mobile Accessibility",
        "89 FR 31337",
        "§§ 35.206-35.209 [Reserved]",
    ],
    "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35&section=35.200": [
        "2024-06-24",
        "latest_amendment_date",
    ],
    "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view": ["Install Gravel Pad", "70Z03126RALAM2004", "Weslaco"],
    "https://sam.gov/api/prod/opps/v2/opportunities/9998b42f9e27421caa565fead7d8d416?latest=true": [
        '"postedDate": "2025-11-15T02:57:52.270+00:00"',
        "237310",
    ],
    "https://sam.gov/api/prod/opps/v3/opportunities/9998b42f9e27421caa565fead7d8d416/resources": [
        "WRR TX20250255 Hidalgo 20250314.pdf"
    ],
    "https://sam.gov/opp/dfc5bd2c65ae4a4bb910a395175a3343/view": ["W50S9H26QA018", "Camp Douglas"],
    "https://sam.gov/api/prod/opps/v2/opportunities/dfc5bd2c65ae4a4bb910a395175a3343?latest=true": [
        "2026-07-10T13:00:00-05:00",
        '"postedDate": "2026-07-02T14:40:49.843+00:00"',
    ],
    "https://sam.gov/api/prod/opps/v2/opportunities/70d3a1854d2f445a83e9bcbdcda10221": ["2026-06-29T13:00:00-05:00"],
    "https://sam.gov/api/prod/opps/v2/opportunities/50bcb3f873654600a10619194aba8640": ["2026-07-06T13:00:00-05:00"],
    "https://sam.gov/api/prod/opps/v3/opportunities/dfc5bd2c65ae4a4bb910a395175a3343/resources": [
        "STATEMENT OF WORK - LODGING FACILITY BLIND REPLACEMENT - UPDATED 7.2.2026.pdf"
    ],
}


def test_every_allowed_url_has_key_facts_listed():
    urls = {url for pack in list_packs() for url in pack.gates.allowed_urls}
    assert urls == set(KEY_FACTS)


@pytest.mark.parametrize("pack_id", [p.id for p in list_packs()])
async def test_task_urls_load_through_the_sandbox(sandbox, pack_id):
    pack = load_pack(pack_id)
    run = sandbox.create_run(pack=pack_id)
    try:
        reply = await run.call(
            "browser_start_session",
            {"provider": "kernel", "site_key": f"urls-{pack_id}", "clear_cookies": False, "url": pack.gates.start_url},
        )
        assert reply["ok"], reply
        for url in pack.gates.allowed_urls:
            reply = await run.call("browser_navigate", {"url": url})
            assert reply["ok"] and reply["result"]["status"] == 200, (url, reply)
            snap = (await run.call("browser_snapshot", {}))["result"]["snapshot"]
            for fact in KEY_FACTS[url]:
                assert fact in snap, (url, fact)
    finally:
        await run.close()
    events = [e for e in run.trace.text().splitlines() if '"blocked_request"' in e or '"policy_violation"' in e]
    assert events == []


async def test_evidence_fixtures_agree_with_the_mirrors(sandbox):
    store = MirrorStore.load(MIRRORS_DIR)
    for pack in list_packs():
        for rel, data in (await expected_fixtures(pack, store, (MIRRORS_DIR,), sandbox)).items():
            path = pack.dir / rel
            assert path.is_file(), f"{pack.id}: {rel} missing: run scripts/make_fixtures.py"
            assert path.read_bytes() == data, (
                f"{pack.id}: {rel} disagrees with its mirror: run scripts/make_fixtures.py"
            )
