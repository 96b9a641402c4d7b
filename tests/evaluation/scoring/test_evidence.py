"""Evidence citations against fixture text written by the test: exact URLs, visible-text
quotes, whitespace and line-break hyphenation normalisation, alternatives and min_citations."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.evaluation.scoring import score_attempt
from sandbox.evaluation.scoring._evidence import check_evidence, visible_text
from sandbox.evaluation.scoring.synthetic import attempt_output

PAGE = "https://example.gov/opp/view?id=7&latest=true"
DATA = "https://example.gov/api/data/7?latest=true"
PDF = "https://example.gov/opinions/7.pdf"

PAGE_HTML = """<!doctype html><html><head><title>Head title only</title>
<script>var hidden = "Offers due in script";</script><style>.x{content:"style text"}</style></head>
<body><h1>Notice   7</h1>
<table><tr><td>Filing Date</td><td>2014-08-11</td></tr></table>
<p>Offers due
   <b>Nov 21, 2025</b> at 12:00 PM&nbsp;CST</p>
<p>Contract with AT&amp;T Inc.</p>
<div hidden>Secret hidden text</div><p style="display: none">Invisible paragraph</p>
<ul><li>first item</li><li>second item</li></ul>
</body></html>"""
DATA_TEXT = '{"solicitationNumber": "70Z03126RALAM2004",\n  "email": "shawn.jenkins@example.com"}\n'
PDF_TEXT = (
    "Held: Title VII requires an employer that denies a religious accom-\n"
    "modation to show undue hardship in a well-\nknown sense.  Pp. 4–21.\n"
)


def evidence_pack(custom_pack, **overrides: Any):
    sources = {
        "page": {
            "url": PAGE,
            "path": "fixtures/page.html",
            "format": "html",
            "require_quote": True,
            "normalize_quote_whitespace": True,
        },
        "page_items": {
            "url": PAGE,
            "path": "fixtures/page.html",
            "format": "html",
            "require_quote": True,
            "normalize_quote_whitespace": True,
            "min_citations": 2,
        },
        "data": {
            "url": DATA,
            "path": "fixtures/data.json",
            "format": "text",
            "require_quote": True,
            "normalize_quote_whitespace": True,
        },
        "opinion": {
            "url": PDF,
            "path": "fixtures/opinion.txt",
            "format": "text",
            "require_quote": True,
            "normalize_quote_whitespace": True,
            "normalize_linebreak_hyphenation": True,
        },
        "raw": {"url": DATA, "path": "fixtures/data.json", "format": "text", "require_quote": True},
    }
    rules = {
        "record_key": "id",
        "success_threshold": "0.90",
        "evidence_threshold": "1.00",
        "field_rules": [
            {"name": "id", "kind": "exact"},
            {"name": "due", "kind": "exact", "evidence_source": "page"},
            {"name": "number", "kind": "exact", "evidence_sources": ["page", "data"]},
            {"name": "items", "kind": "ordered_list", "evidence_source": "page_items"},
            {"name": "holding", "kind": "exact", "evidence_source": "opinion"},
        ],
        "evidence_sources": sources,
    }
    rules.update(overrides)
    fixtures = {"fixtures/page.html": PAGE_HTML, "fixtures/data.json": DATA_TEXT, "fixtures/opinion.txt": PDF_TEXT}
    expected = [{"id": "r1", "due": "x", "number": "70Z03126RALAM2004", "items": ["a", "b"], "holding": "h"}]
    return custom_pack(rules, expected, fixtures=fixtures)


def good_evidence() -> dict[str, Any]:
    return {
        "due": {"url": PAGE, "quote": "Offers due Nov 21, 2025 at 12:00 PM CST"},
        "number": {"url": DATA, "quote": '"solicitationNumber": "70Z03126RALAM2004"'},
        "items": [{"url": PAGE, "quote": "first item"}, {"url": PAGE, "quote": "second item"}],
        "holding": {"url": PDF, "quote": "requires an employer that denies a religious accommodation"},
    }


def failures_for(pack, evidence: dict[str, Any]) -> dict[str, str]:
    result, _ = check_evidence(pack, {"id": "r1", "evidence": evidence})
    return {f.field: f.message for f in result.failures}


def with_entry(field: str, entry: Any) -> dict[str, Any]:
    evidence = good_evidence()
    evidence[field] = entry
    return evidence


def test_good_citations_are_all_valid(custom_pack):
    pack = evidence_pack(custom_pack)
    result, missing = check_evidence(pack, {"id": "r1", "evidence": good_evidence()})
    assert result.failures == [] and result.score == 1.0 and result.required == 4 and not missing


@pytest.mark.parametrize(
    "url",
    [
        "https://example.gov/opp/view?latest=true&id=7",  # query reordered
        "https://example.gov/opp/view?id=7%26latest=true",  # & percent-encoded
        "https://example.gov/opp/view?id=7&amp;latest=true",  # HTML-escaped
        "https://example.gov/opp/view?id=7&latest=true#top",  # fragment added
        "http://example.gov/opp/view?id=7&latest=true",
        "https://example.gov/opp/view?id=7",
        "https://example.gov/opp/view/?id=7&latest=true",
    ],
)
def test_citation_url_must_be_exactly_the_source_url(custom_pack, url):
    pack = evidence_pack(custom_pack)
    failures = failures_for(pack, with_entry("due", {"url": url, "quote": "Offers due"}))
    assert "is not an accepted source" in failures["due"]


def test_quote_with_collapsed_whitespace_is_accepted(custom_pack):
    pack = evidence_pack(custom_pack)
    for quote in ("Offers due Nov 21, 2025", "  Offers\n due   Nov 21,\t2025 ", "12:00 PM CST", "Notice 7"):
        assert failures_for(pack, with_entry("due", {"url": PAGE, "quote": quote})) == {}, quote


@pytest.mark.parametrize(
    "quote",
    [
        "Offers are due on November 21, 2025",  # paraphrase
        "offers due nov 21, 2025",  # case differs
        "Offers due in script",  # only inside <script>
        "style text",  # only inside <style>
        "Head title only",  # <title> is not page text
        "Secret hidden text",
        "Invisible paragraph",
        "Filing Date2014-08-11",  # table cells do not run together
        "first itemsecond item",
    ],
)
def test_quote_not_in_visible_text_is_rejected(custom_pack, quote):
    pack = evidence_pack(custom_pack)
    assert "quote not found" in failures_for(pack, with_entry("due", {"url": PAGE, "quote": quote}))["due"]


def test_visible_text_decodes_entities_and_joins_inline_elements():
    text = " ".join(visible_text(PAGE_HTML).split())
    assert "Contract with AT&T Inc." in text
    assert "Filing Date 2014-08-11" in text
    assert "Offers due Nov 21, 2025 at 12:00 PM CST" in text


def test_any_accepted_alternative_source_is_valid(custom_pack):
    pack = evidence_pack(custom_pack)
    assert failures_for(pack, with_entry("number", {"url": PAGE, "quote": "Notice 7"})) == {}
    assert failures_for(pack, with_entry("number", {"url": DATA, "quote": "70Z03126RALAM2004"})) == {}
    # the quote must be in the source the URL names, not merely in another accepted source
    rejected = failures_for(pack, with_entry("number", {"url": DATA, "quote": "Notice 7"}))
    assert "quote not found" in rejected["number"]
    # a URL that is a source of the pack but not accepted for this field is rejected
    assert "not an accepted source" in failures_for(pack, with_entry("due", {"url": DATA, "quote": "email"}))["due"]


@pytest.mark.parametrize(
    "quote",
    [
        "a religious accommodation to show",  # line-break hyphenation joined
        "a religious accom- modation to show",  # the source's own form
        "a religious accom-\nmodation to show",
        "in a well-known sense",  # a real hyphen at a line end is kept
        "in a wellknown sense",
        # two broken words, one quoted joined and one with its hyphen
        "a religious accommodation to show undue hardship in a well-known sense",
        "a religious accom-modation to show undue hardship in a wellknown sense",
    ],
)
def test_linebreak_hyphenation_is_normalised(custom_pack, quote):
    pack = evidence_pack(custom_pack)
    assert failures_for(pack, with_entry("holding", {"url": PDF, "quote": quote})) == {}


def test_hyphenation_is_normalised_only_where_configured(custom_pack):
    pack = evidence_pack(custom_pack)
    pack_page = with_entry("due", {"url": PAGE, "quote": "accommodation"})
    assert "quote not found" in failures_for(pack, pack_page)["due"]


def test_without_whitespace_normalisation_the_quote_must_match_raw_text(custom_pack):
    pack = evidence_pack(
        custom_pack,
        field_rules=[{"name": "id", "kind": "exact"}, {"name": "number", "kind": "exact", "evidence_source": "raw"}],
    )
    ok = {"number": {"url": DATA, "quote": '"70Z03126RALAM2004",\n  "email"'}}
    collapsed = {"number": {"url": DATA, "quote": '"70Z03126RALAM2004", "email"'}}
    assert failures_for(pack, ok) == {}
    assert "quote not found" in failures_for(pack, collapsed)["number"]


def test_min_citations_need_distinct_valid_citations(custom_pack):
    pack = evidence_pack(custom_pack)
    same_twice = [{"url": PAGE, "quote": "first item"}, {"url": PAGE, "quote": " first  item "}]
    assert "1 distinct valid citation(s), 2 required" in failures_for(pack, with_entry("items", same_twice))["items"]
    single = {"url": PAGE, "quote": "first item"}
    assert "2 required" in failures_for(pack, with_entry("items", single))["items"]
    one_bad = [{"url": PAGE, "quote": "first item"}, {"url": PAGE, "quote": "third item"}]
    assert "citation 1: quote not found" in failures_for(pack, with_entry("items", one_bad))["items"]
    assert "0 distinct" in failures_for(pack, with_entry("items", []))["items"]


def test_rule_level_evidence_min_citations(custom_pack):
    pack = evidence_pack(
        custom_pack,
        field_rules=[
            {"name": "id", "kind": "exact"},
            {"name": "items", "kind": "ordered_list", "evidence_sources": ["page"], "evidence_min_citations": 3},
        ],
    )
    two = {"items": [{"url": PAGE, "quote": "first item"}, {"url": PAGE, "quote": "second item"}]}
    assert "2 distinct valid citation(s), 3 required" in failures_for(pack, two)["items"]
    three = {"items": two["items"] + [{"url": PAGE, "quote": "Notice 7"}]}
    assert failures_for(pack, three) == {}


@pytest.mark.parametrize(
    "entry, message",
    [
        ("https://example.gov/opp/view?id=7&latest=true", "citation object or an array"),
        ({"url": PAGE}, "quote must be a string"),
        ({"url": PAGE, "quote": "   "}, "quote is empty"),
        ({"quote": "Offers due"}, "url must be a string"),
        ([["nested"]], "must be an object"),
    ],
)
def test_malformed_citations_are_named_failures(custom_pack, entry, message):
    pack = evidence_pack(custom_pack)
    assert message in failures_for(pack, with_entry("due", entry))["due"]


def test_evidence_score_is_valid_entries_over_required(custom_pack):
    pack = evidence_pack(custom_pack)
    evidence = good_evidence()
    del evidence["holding"]
    result, _ = check_evidence(pack, {"id": "r1", "evidence": evidence})
    assert result.valid == 3 and result.required == 4 and result.score == 0.75
    assert [f.field for f in result.failures] == ["holding"]
    none, _ = check_evidence(pack, {"id": "r1"})
    assert none.score == 0 and len(none.failures) == 4


def test_missing_fixture_is_reported_not_raised(custom_pack):
    pack = evidence_pack(custom_pack)
    (pack.dir / "fixtures" / "opinion.txt").unlink()
    record = {
        "id": "r1",
        "due": "x",
        "number": "70Z03126RALAM2004",
        "items": ["a", "b"],
        "holding": "h",
        "evidence": good_evidence(),
    }
    report = score_attempt(pack, attempt_output(record), None, None)
    assert not report.qualified_pass
    assert report.evidence.valid == 3
    failure = next(f for f in report.evidence.failures if f.field == "holding")
    assert "fixtures/opinion.txt" in failure.message and "missing" in failure.message
    assert any("evidence fixtures missing" in r and "opinion.txt" in r for r in report.reasons)


def test_a_fixture_that_is_not_utf8_is_said_as_such_not_as_missing(custom_pack):
    """It was "evidence fixtures missing (generate them from the mirrors)", blaming nothing real."""
    pack = evidence_pack(custom_pack)
    fixture = pack.dir / "fixtures" / "opinion.txt"
    fixture.write_bytes(fixture.read_text(encoding="utf-8").encode("utf-8") + b" caf\xe9")
    record = {"id": "r1", "due": "x", "number": "70Z03126RALAM2004", "items": ["a", "b"], "holding": "h"}
    report = score_attempt(pack, attempt_output(record | {"evidence": good_evidence()}), None, None)
    [said] = [r for r in report.reasons if "evidence fixtures" in r]
    assert "missing or unreadable" in said and "opinion.txt (" in said and "UTF-8" in said, said


def test_a_fixture_that_is_a_folder_or_a_link_out_of_the_pack_is_reported_not_read(custom_pack, tmp_path):
    """A folder made the evidence check raise (status error, IsADirectoryError); a link to a file
    outside the pack was read, so a quote of that file passed."""
    pack = evidence_pack(custom_pack)
    outside = tmp_path / "outside.txt"
    outside.write_text("requires an employer that denies a religious accommodation\n")
    (pack.dir / "fixtures" / "opinion.txt").unlink()
    (pack.dir / "fixtures" / "opinion.txt").symlink_to(outside)
    (pack.dir / "fixtures" / "data.json").unlink()
    (pack.dir / "fixtures" / "data.json").mkdir()
    record = {"id": "r1", "due": "x", "number": "70Z03126RALAM2004", "items": ["a", "b"], "holding": "h"}
    evidence = good_evidence() | {"number": {"url": DATA, "quote": "70Z03126RALAM2004"}}
    report = score_attempt(pack, attempt_output(record | {"evidence": evidence}), None, None)
    assert report.status == "fail" and not report.errors
    failures = {f.field: f.message for f in report.evidence.failures}
    assert sorted(failures) == ["holding", "number"] and "leading out of the pack folder" in failures["holding"]
    assert "is not a regular file" in failures["number"]
    [said] = [r for r in report.reasons if "evidence fixtures" in r]
    assert "missing or unreadable" in said and "data.json (" in said and "opinion.txt (" in said, said
    assert str(outside) not in said
