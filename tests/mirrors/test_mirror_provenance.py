"""``sandbox mirror check`` reports, per host, which entries are reconstructed and from what
basis (and which are captured); every changed entry's provenance says what it was rebuilt from."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sandbox import MIRRORS_DIR
from sandbox.cli import main
from toolserver.contract.mirrors import MirrorStore, captured, provenance_by_host, reconstructed, write_entry

HOSTS = ["sam.gov", "sarah27h.github.io", "www.ecfr.gov", "www.sec.gov", "www.supremecourt.gov"]


def test_check_reports_provenance_per_host(capsys):
    assert main(["mirror", "check"]) == 0
    out = capsys.readouterr().out
    store = MirrorStore.load(MIRRORS_DIR)
    for host in HOSTS:
        count = sum(1 for url in store.urls() if url.split("/")[2] == host)
        assert f"{host}: {count} entries, {count} reconstructed, 0 captured" in out, host
    docket = "https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html"
    block = re.search(rf"  reconstructed \(1\): {re.escape(docket)}\n    basis: (.+)\n", out)
    assert block and block.group(1) == store.lookup(docket).entry.provenance.basis
    assert out.rstrip().endswith("no problems")


def test_changed_entries_say_what_they_were_reconstructed_from():
    store = MirrorStore.load(MIRRORS_DIR)

    def basis(url: str) -> str:
        return store.lookup(url).entry.provenance.basis

    docket = basis("https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html")
    assert "real captures of other 2022-2023 docket pages" in docket and "div.card" in docket
    after = basis(
        "https://www.ecfr.gov/api/renderer/v1/content/enhanced/2024-06-24/title-28?chapter=I&part=35&subpart=H"
    )
    assert "the subpart heading is an h2" in after and 'class="cfr external"' in after and "/on/2024-06-24/" in after
    versions = basis("https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35&section=35.200")
    assert "three spaces" in versions and "publication date" in versions and "total_pages" in versions
    page = basis("https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view")
    assert "public scrapers of the real page" in page and "Follow" in page and "Sign In" in page
    form = basis("https://sarah27h.github.io/simple-multi-step-form/")
    assert "console.log" in form and "<span> with the step counter" in form


def test_provenance_by_host_groups_bases_and_lists_captures(tmp_path):
    folder = tmp_path / "example.test"
    page = "text/html; charset=utf-8"
    write_entry(folder, "https://example.test/a", b"a", page, reconstructed("basis one"), body_path="a.html")
    write_entry(folder, "https://example.test/b", b"b", page, reconstructed("basis one"), body_path="b.html")
    write_entry(folder, "https://example.test/c", b"c", page, reconstructed("basis two"), body_path="c.html")
    write_entry(
        folder, "https://example.test/d", b"d", page, captured(datetime(2026, 1, 2, tzinfo=UTC)), body_path="d.html"
    )
    (summary,) = provenance_by_host(tmp_path)
    assert summary.host == "example.test"
    assert summary.captured == ("https://example.test/d",)
    assert summary.reconstructed == (
        ("basis one", ("https://example.test/a", "https://example.test/b")),
        ("basis two", ("https://example.test/c",)),
    )
