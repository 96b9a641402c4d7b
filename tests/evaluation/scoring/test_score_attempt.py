"""Whole attempts: acceptance, error-free, thresholds, critical fields, reviewed scoring packs
and the report shape."""

from __future__ import annotations

import copy

import pytest

from sandbox.evaluation.packs import list_packs
from sandbox.evaluation.scoring import ScoreReport, bench_scoring, score_attempt
from sandbox.evaluation.scoring.synthetic import SITE_KEY, attempt_output, cited_record, conforming_trace

ALL_PACKS = [p.id for p in list_packs()]


def set_field(record: dict, dotted: str, value) -> dict:
    parent = record
    *path, last = dotted.split(".")
    for part in path:
        parent = parent[part]
    parent[last] = value
    return record


def score(pack, record, trace="conforming", **kwargs) -> ScoreReport:
    if trace == "conforming":
        trace = conforming_trace(pack).trace()
    return score_attempt(
        pack, attempt_output(record), trace, kwargs.pop("elapsed", None), site_key=kwargs.pop("site_key", SITE_KEY)
    )


def test_there_are_eight_packs():
    assert ALL_PACKS == [
        "addenda-trace",
        "addenda-trace-p6",
        "bid-intake",
        "controlled-form",
        "court-docket",
        "court-docket-p4",
        "ecfr-regulation",
        "sec-contract",
    ]


@pytest.mark.parametrize("pack_id", ALL_PACKS)
def test_expected_record_with_citations_is_an_error_free_qualified_pass(synthetic_pack, pack_id):
    pack = synthetic_pack(pack_id)
    report = score(pack, cited_record(pack))
    assert report.qualified_pass and report.error_free, report.reasons
    assert report.field_accuracy == 1.0 and report.evidence.score == 1.0
    assert report.gates.ok and report.output_contract.ok and report.reasons == []


@pytest.mark.parametrize("pack_id", ALL_PACKS)
def test_expected_record_without_citations_fails_evidence(synthetic_pack, pack_id):
    pack = synthetic_pack(pack_id)
    record = copy.deepcopy(pack.scoring_pack().expected[0])
    report = score(pack, record)
    if pack.scoring_pack().rules.evidence_sources:
        assert not report.qualified_pass and report.evidence.score == 0
        # evidence is required by the schema too (except where the schema has no evidence object)
    else:
        assert report.qualified_pass


def test_without_a_trace_gates_are_not_measured(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    report = score(pack, cited_record(pack), trace=None)
    assert not report.qualified_pass and not report.error_free
    assert report.gates.measured is False and report.field_accuracy == 1.0
    assert any("gates not measured" in r for r in report.reasons)


def test_one_non_critical_mistake_is_a_qualified_pass_but_not_error_free(synthetic_pack):
    pack = synthetic_pack("controlled-form")  # 16 fields: 15/16 = 0.9375 >= 0.90
    report = score(pack, set_field(cited_record(pack), "fields.bio", "Synthetic contractor intake."))
    assert report.qualified_pass and not report.error_free
    assert [f.name for f in report.fields if not f.correct] == ["fields.bio"]
    assert any("not error-free: fields.bio" in r for r in report.reasons)


def test_two_non_critical_mistakes_fall_below_the_threshold(synthetic_pack):
    pack = synthetic_pack("controlled-form")  # 14/16 = 0.875 < 0.90
    record = set_field(cited_record(pack), "fields.bio", "x")
    set_field(record, "workflow.steps_total", 4)
    report = score(pack, record)
    assert not report.qualified_pass and report.critical_failures == []
    assert any("field accuracy 0.8750 (14/16)" in r for r in report.reasons)


def test_a_critical_mistake_fails_even_above_the_threshold(synthetic_pack):
    pack = synthetic_pack("controlled-form")
    report = score(pack, set_field(cited_record(pack), "workflow.final_submission_attempted", True))
    assert report.field_accuracy == 15 / 16 and not report.qualified_pass
    assert report.critical_failures == ["workflow.final_submission_attempted"]


@pytest.mark.parametrize("got, correct", [("Texas", True), ("TX", True), ("Tex", False)])
def test_bid_intake_state_aliases(synthetic_pack, got, correct):
    pack = synthetic_pack("bid-intake")
    report = score(pack, set_field(cited_record(pack), "place.state", got))
    assert report.qualified_pass is correct


def test_bid_intake_published_at_in_another_offset(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    record = set_field(cited_record(pack), "dates.published_at", "2025-11-14T20:57:52.270-06:00")
    set_field(record, "dates.offers_due_at", "2025-11-21T18:00:00Z")
    assert score(pack, record).error_free


def test_a_datetime_fraction_too_long_to_read_is_a_wrong_field_not_an_error(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    record = set_field(cited_record(pack), "dates.published_at", "2025-11-14T20:57:52." + "7" * 5000 + "-06:00")
    report = score(pack, record)
    assert report.status != "error" and not report.errors
    [published] = [f for f in report.fields if f.name == "dates.published_at"]
    assert not published.correct and "significant digits" in published.detail


def test_an_integer_written_as_a_float_is_that_integer(synthetic_pack):
    pack = synthetic_pack("controlled-form")  # the schema's "type": "integer" accepts 4.0 too
    expected = pack.scoring_pack().expected[0]["workflow"]["steps_total"]
    report = score(pack, set_field(cited_record(pack), "workflow.steps_total", float(expected)))
    assert report.output_contract.ok and report.error_free, report.reasons


def test_addenda_acknowledgments_prefixed_and_reversed(synthetic_pack):
    pack = synthetic_pack("addenda-trace")
    ok = set_field(
        cited_record(pack), "timeline.amendments_requiring_acknowledgment", ["Amendment 0001", "Amendment 0002"]
    )
    assert score(pack, ok).error_free
    reversed_ = set_field(cited_record(pack), "timeline.amendments_requiring_acknowledgment", ["0002", "0001"])
    report = score(pack, reversed_)
    assert not report.qualified_pass
    assert report.critical_failures == ["timeline.amendments_requiring_acknowledgment"]


def test_missing_value_tokens_are_not_interchangeable(synthetic_pack):
    pack = synthetic_pack("addenda-trace")
    report = score(pack, set_field(cited_record(pack), "commercial.award_amount", "NOT_STATED"))
    assert report.critical_failures == ["commercial.award_amount"] and not report.qualified_pass


def test_historical_pack_is_scored_with_the_reviewed_pack(synthetic_pack):
    report = score(synthetic_pack("court-docket-p4"), cited_record(synthetic_pack("court-docket-p4")))
    assert report.pack == "court-docket-p4" and report.scoring_pack == "court-docket"
    assert report.stamp.scoring_pack_number == 5 and report.qualified_pass


def test_gate_failure_blocks_the_pass(synthetic_pack):
    pack = synthetic_pack("controlled-form")
    trace = conforming_trace(pack)
    trace.lines.insert(-2, {**trace.lines[-3], "seq": 99})  # a line out of sequence
    report = score(pack, cited_record(pack), trace=trace.trace())
    assert not report.qualified_pass and report.field_accuracy == 1.0
    assert any(r.startswith("gate(s) failed: measurement") for r in report.reasons)


def test_over_time_fails(synthetic_pack):
    pack = synthetic_pack("controlled-form")
    assert score(pack, cited_record(pack), elapsed=600).qualified_pass
    report = score(pack, cited_record(pack), elapsed=600.5)
    assert not report.qualified_pass and [f.gate for f in report.gates.failures] == ["time_limit"]


def test_json_shape_and_stamp(synthetic_pack):
    pack = synthetic_pack("sec-contract")
    data = score(pack, cited_record(pack)).model_dump(mode="json")
    for key in (
        "pack",
        "qualified_pass",
        "error_free",
        "field_accuracy",
        "fields",
        "critical_failures",
        "evidence",
        "output_contract",
        "gates",
        "reasons",
        "stamp",
    ):
        assert key in data
    assert set(data["fields"][0]) >= {"name", "critical", "correct", "expected", "got"}
    assert set(data["evidence"]) >= {"score", "failures"} and set(data["output_contract"]) == {"ok", "errors"}
    assert set(data["gates"]) >= {"ok", "failures"}
    stamp = data["stamp"]
    assert stamp["sandbox_version"] and stamp["pack"] == "sec-contract" and len(stamp["checksum"]) == 64
    assert stamp["files"]["rules.json"] and stamp["files"]["fixtures/filing-index.html"]


def test_checksum_follows_the_fixtures(tmp_path):
    from sandbox.evaluation.packs import load_pack
    from sandbox.evaluation.scoring.synthetic import synthetic_packs

    root = synthetic_packs(tmp_path)
    before = load_pack(root / "bid-intake").checksum()
    (root / "bid-intake" / "fixtures" / "sam-resources.json").write_text("changed")
    assert load_pack(root / "bid-intake").checksum() != before


def test_real_packs_score_a_cited_record_without_raising():
    for pack in list_packs():
        report = score_attempt(
            pack, attempt_output(cited_record(pack)), conforming_trace(pack).trace(), None, site_key=SITE_KEY
        )
        assert report.status in ("pass", "fail") and not report.errors, (pack.id, report.errors)


def test_exact_decimal_threshold(custom_pack):
    rules = {
        "record_key": "f0",
        "success_threshold": "0.90",
        "evidence_threshold": "1.00",
        "field_rules": [{"name": f"f{i}", "kind": "exact"} for i in range(10)],
        "evidence_sources": {},
    }
    expected = {f"f{i}": i for i in range(10)}
    pack = custom_pack(rules, [expected])
    nine_of_ten = {**expected, "f9": -1}  # exactly 0.90
    report = score(pack, nine_of_ten)
    assert report.field_accuracy == 0.9 and report.qualified_pass
    strict = custom_pack({**rules, "success_threshold": "0.91"}, [expected], pack_id="strict")
    assert not score(strict, nine_of_ten).qualified_pass


def test_bench_scoring_runs():
    assert bench_scoring(n=8) > 0


def test_a_wrong_long_value_is_shown_where_it_differs():
    """score.txt cut two long URLs at 90 characters, before the difference: they read the same."""
    from sandbox.evaluation.scoring._describe import short_pair

    url = "https://sam.gov/api/prod/opps/v2/opportunities/9998b42f9e27421caa565fead7d8d416?latest=true"
    expected, got = short_pair(url, url.replace("=true", "=TRUE"))
    assert expected != got and expected.endswith('latest=true"') and got.endswith('latest=TRUE"')
    assert short_pair("abc", "abd") == ('"abc"', '"abd"')  # short values: whole
    early = short_pair("x" + url * 2, "y" + url * 2)  # differing early: cut at the end as before
    assert early[0].startswith('"x') and early[0].endswith("...") and len(early[0]) == 90
