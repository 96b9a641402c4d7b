"""Scorer robustness: every broken output gives a named reason, never an exception."""

from __future__ import annotations

import copy
import json

import pytest

from sandbox.evaluation.scoring import score_attempt
from sandbox.evaluation.scoring.synthetic import SITE_KEY, attempt_output, cited_record, conforming_trace


@pytest.fixture
def form(synthetic_pack):
    return synthetic_pack("controlled-form")


def score(pack, text):
    return score_attempt(pack, text, conforming_trace(pack).trace(), None, site_key=SITE_KEY)


def codes(report) -> list[str]:
    return [e.code for e in report.output_contract.errors]


def body(pack) -> str:
    return json.dumps([cited_record(pack)], ensure_ascii=False)


@pytest.mark.parametrize("text", ["", "   \n", None])
def test_empty_output(form, text):
    report = score(form, text)
    assert codes(report) == ["empty_output"] and not report.qualified_pass
    assert report.field_accuracy == 0


@pytest.mark.parametrize(
    "wrap",
    [
        "{}",  # no markers at all
        "BENCHMARK_JSON_BEGIN\n{}",  # no END
        "{}\nBENCHMARK_JSON_END",  # no BEGIN
    ],
)
def test_missing_markers(form, wrap):
    report = score(form, wrap.format(body(form)) if "{}" in wrap else wrap)
    assert codes(report) == ["missing_markers"]
    assert not report.qualified_pass and report.field_accuracy == 0
    assert any("output contract not met" in r for r in report.reasons)


def test_markers_in_the_wrong_order(form):
    report = score(form, f"BENCHMARK_JSON_END\n{body(form)}\nBENCHMARK_JSON_BEGIN")
    assert codes(report) == ["markers_out_of_order"]


def test_fenced_json_fails_the_contract_but_fields_are_still_shown(form):
    report = score(form, f"BENCHMARK_JSON_BEGIN\n```json\n{body(form)}\n```\nBENCHMARK_JSON_END")
    assert codes(report) == ["markdown_fence"]
    assert not report.qualified_pass and report.field_accuracy == 1.0


def test_fence_around_the_markers_fails_too(form):
    report = score(form, f"```\nBENCHMARK_JSON_BEGIN\n{body(form)}\nBENCHMARK_JSON_END\n```")
    assert codes(report) == ["markdown_fence"] and not report.qualified_pass


@pytest.mark.parametrize(
    "before, after",
    [
        ("```json\n", "\n\n```"),  # blank lines between the fence and a marker change nothing
        ("```json ", "\n```\nMore prose."),  # a fence opened on the BEGIN line
    ],
)
def test_a_fence_next_to_the_markers_fails(form, before, after):
    report = score(form, before + f"BENCHMARK_JSON_BEGIN\n{body(form)}\nBENCHMARK_JSON_END" + after)
    assert codes(report) == ["markdown_fence"] and report.field_accuracy == 1.0


@pytest.mark.parametrize(
    "prose, after",
    [
        ("I ran:\n```\nbrowser_navigate(url)\n```\nThe result follows.\n", "\nNotes:\n~~~\nno errors\n~~~\n"),
        # the nearest line was looked at: a block's closing fence was taken for one around the markers
        ("Summary:\n```\nstep 1\n```\n\n", "\n```\nstep 2\n```\n"),
    ],
    ids=["apart", "just-before-and-after"],
)
def test_a_fence_in_the_prose_is_tolerated(form, prose, after):
    """Only a fence in or around the markers wraps the JSON; a block in the text outside does not."""
    report = score(form, attempt_output(cited_record(form), before=prose, after=after))
    assert report.output_contract.ok and report.qualified_pass, report.reasons


def test_invalid_json(form):
    report = score(form, 'BENCHMARK_JSON_BEGIN\n[{"record_id": "controlled-form-react-v1",}]\nBENCHMARK_JSON_END')
    assert codes(report) == ["invalid_json"] and "output line 2, column 43" in report.output_contract.errors[0].message
    assert not report.qualified_pass


def test_invalid_fenced_json_is_placed_in_the_output_too(form):
    """Counted from the text between the markers, where the output's line was said."""
    text = 'Prose.\nMore.\nBENCHMARK_JSON_BEGIN\n```json\n[{"record_id": "x",}]\n```\nBENCHMARK_JSON_END'
    report = score(form, text)
    assert codes(report) == ["markdown_fence", "invalid_json"], codes(report)
    assert "(output line 5, column 20)" in report.output_contract.errors[1].message


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda r: r["workflow"].update(steps_reached="3"), "0/workflow/steps_reached"),
        (lambda r: r.update(extra=1), "0"),
        (lambda r: r.update(target_url="not a uri"), "0/target_url"),
        (lambda r: r["workflow"].update(final_state="DONE"), "0/workflow/final_state"),
        (lambda r: r["fields"].pop("phone"), "0/fields"),
    ],
)
def test_schema_violations_are_named(form, change, where):
    record = cited_record(form)
    change(record)
    report = score(form, attempt_output(record))
    assert "schema_violation" in codes(report) and not report.qualified_pass
    assert any(e.message.startswith(where + ":") for e in report.output_contract.errors)


def test_format_checking_is_on(synthetic_pack):
    docket = synthetic_pack("court-docket")
    record = cited_record(docket)
    record["dates"]["argued"] = "2023-13-45"
    record["evidence"]["holding"]["url"] = "not a url at all"
    report = score(docket, attempt_output(record))
    messages = [e.message for e in report.output_contract.errors]
    assert any(m.startswith("0/dates/argued:") for m in messages)
    assert any(m.startswith("0/evidence/holding/url:") for m in messages)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(synthetic_pack, constant):
    pack = synthetic_pack("bid-intake")
    text = attempt_output(cited_record(pack)).replace('"award_amount": "NOT_FOUND"', f'"award_amount": {constant}')
    assert constant in text
    report = score(pack, text)
    assert codes(report) == ["invalid_json"] and not report.qualified_pass
    assert f"{constant.lstrip('-')} is not a JSON value" in report.output_contract.errors[0].message


@pytest.mark.parametrize(
    "number, message",
    [
        ("1" + "0" * 5000, "an integer of 5001 digits is longer than this reader takes"),
        ("-1e400", "the number -1e400 is beyond a double's range"),
    ],
)
def test_a_number_beyond_the_reader_is_invalid_json_not_an_evaluation_error(synthetic_pack, number, message):
    pack = synthetic_pack("bid-intake")
    text = attempt_output(cited_record(pack)).replace('"award_amount": "NOT_FOUND"', f'"award_amount": {number}')
    assert number in text
    report = score(pack, text)
    assert report.status == "fail" and not report.errors
    assert codes(report) == ["invalid_json"] and message in report.output_contract.errors[0].message


def test_a_repeated_key_is_named_and_the_last_value_shown(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    record = cited_record(pack)
    verdict = record["qualification"]["verdict"]
    text = attempt_output(record).replace(
        f'"verdict": "{verdict}"', f'"verdict": "ACTIONABLE_NOW", "verdict": "{verdict}", "verdict": "{verdict}"'
    )
    report = score(pack, text)
    assert codes(report) == ["duplicate_key"] and not report.qualified_pass
    assert report.output_contract.errors[0].message.startswith('0/qualification: key "verdict" appears more than once')
    assert report.field_accuracy == 1.0  # the last value, as a JSON reader keeps it


def test_a_date_time_with_a_trailing_line_break_fails_the_format(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    record = cited_record(pack)
    record["dates"]["published_at"] += "\n"
    report = score(pack, attempt_output(record))
    assert [e.message for e in report.output_contract.errors] == [
        f"0/dates/published_at: {record['dates']['published_at']!r} is not a 'date-time'"
    ]
    assert not report.qualified_pass


def test_an_object_instead_of_an_array(form):
    report = score(form, f"BENCHMARK_JSON_BEGIN\n{json.dumps(cited_record(form))}\nBENCHMARK_JSON_END")
    assert codes(report) == ["schema_violation"] and report.field_accuracy == 0


def test_two_records_violate_max_items(form):
    record = cited_record(form)
    report = score(form, attempt_output(record, record))
    assert "schema_violation" in codes(report)
    assert any("output records share record_id" in r for r in report.reasons)


def test_a_wrong_key_on_the_one_record_is_one_wrong_field(form):
    """The form expects one record: the one given is scored, and its non-critical record_id is
    one wrong field (15/16), a qualified pass that is not error-free."""
    record = cited_record(form)
    record["record_id"] = "controlled-form-react-v2"
    report = score(form, attempt_output(record))
    assert report.output_contract.ok and report.qualified_pass and not report.error_free
    assert [f.name for f in report.fields if not f.correct] == ["record_id"]
    assert any('has record_id = "controlled-form-react-v2"' in r and "scored all the same" in r for r in report.reasons)


def test_with_several_records_the_key_chooses_and_a_wrong_key_matches_none(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    right, other = cited_record(pack), cited_record(pack)
    other["identity"]["solicitation_number"] = "W0000000000000"
    other["place"]["state"] = "WI"
    report = score(pack, attempt_output(other, right))  # the matching record is chosen, not the first
    assert [f.name for f in report.fields if not f.correct] == []
    report = score(pack, attempt_output(other, copy.deepcopy(other)))
    assert report.field_accuracy == 0 and all(f.got is None and f.detail == "field missing" for f in report.fields)
    assert any("no output record has identity.solicitation_number" in r for r in report.reasons)


def test_text_outside_the_markers_is_tolerated(form):
    report = score(form, attempt_output(cited_record(form), before="Done. Result:\n", after="\nThanks."))
    assert report.output_contract.ok and report.qualified_pass


def test_repeated_markers_are_named(form):
    text = "I will answer between BENCHMARK_JSON_BEGIN and BENCHMARK_JSON_END.\n" + attempt_output(cited_record(form))
    report = score(form, text)
    assert codes(report) == ["multiple_markers"] and report.field_accuracy == 1.0 and not report.qualified_pass


def test_a_stray_begin_after_a_complete_pair_keeps_the_pair(form):
    text = attempt_output(cited_record(form)) + "\nBENCHMARK_JSON_BEGIN (oops)"
    report = score(form, text)
    assert codes(report) == ["multiple_markers"] and "last BENCHMARK_JSON_BEGIN...BENCHMARK_JSON_END pair" in (
        report.output_contract.errors[0].message
    )
    assert report.field_accuracy == 1.0 and not report.qualified_pass


@pytest.mark.parametrize(
    "text",
    [
        "BENCHMARK_JSON_BEGIN\nnull\nBENCHMARK_JSON_END",
        'BENCHMARK_JSON_BEGIN\n[1, "x", null]\nBENCHMARK_JSON_END',
        'BENCHMARK_JSON_BEGIN\n[{"record_id": {"nested": [1]}}]\nBENCHMARK_JSON_END',
        'BENCHMARK_JSON_BEGIN\n[{"record_id": "controlled-form-react-v1", "fields": 5, "workflow": []}]\n'
        "BENCHMARK_JSON_END",
        "BENCHMARK_JSON_BEGIN\n" + "[" * 50 + "]" * 50 + "\nBENCHMARK_JSON_END",
        "BENCHMARK_JSON_BEGIN\n" + "[" * 100000 + "]" * 100000 + "\nBENCHMARK_JSON_END",
        "BENCHMARK_JSON_BEGIN\n[" + '{"a":' * 500 + "1" + "}" * 500 + "]\nBENCHMARK_JSON_END",
    ],
)
def test_odd_json_never_raises(synthetic_pack, text):
    for pack_id in ("controlled-form", "bid-intake", "court-docket"):
        report = score(synthetic_pack(pack_id), text)
        assert not report.qualified_pass and not report.output_contract.ok


def test_odd_evidence_never_raises(synthetic_pack):
    pack = synthetic_pack("bid-intake")
    for evidence in (None, [], "x", {"attachments.names": {"url": 5, "quote": ["a"]}}, {"place.state": [[1]]}):
        record = cited_record(pack)
        record["evidence"] = evidence
        report = score(pack, attempt_output(record))
        assert not report.qualified_pass and report.evidence.score < 1


def test_an_agents_huge_values_are_cut_in_the_report(form):
    """Each schema message held the whole value: two 3 MB strings gave 6 MB of reasons and a
    15 MB score text."""
    from sandbox.evaluation.scoring import describe_score

    huge = "x" * 3_000_000
    record = cited_record(form)
    record["fields"]["city"] = [huge]  # not a string: the message showed the whole array
    record["record_id"] = {"id": huge}  # the key matched nothing: the note showed it whole
    record["workflow"][huge] = 1  # an extra key: "Additional properties are not allowed ('xxx…' was unexpected)"
    report = score(form, attempt_output(record))
    assert {"schema_violation"} == set(codes(report))
    assert all(len(e.message) <= 300 for e in report.output_contract.errors), [
        len(e.message) for e in report.output_contract.errors
    ]
    assert "is not of type 'string'" in " ".join(e.message for e in report.output_contract.errors)
    assert sum(len(r) for r in report.reasons) < 3_000
    assert len(describe_score(report)) < 20_000


def test_a_long_garbled_answer_lists_its_first_schema_errors(form):
    """Every schema error was built and sorted before 20 were listed: 200,000 empty objects took a
    minute and 2.5 GB; 20,000 here."""
    report = score(form, "BENCHMARK_JSON_BEGIN\n[" + ",".join(["{}"] * 20_000) + "]\nBENCHMARK_JSON_END")
    messages = [e.message for e in report.output_contract.errors]
    assert len(messages) == 21 and messages[-1] == "... and more schema errors (the first 20 are listed)", messages[-3:]


def test_a_huge_value_a_field_cannot_compare_is_cut_in_its_detail(form):
    """The detail held the whole value: a 1 MB enum value made a 1 MB line of the score text."""
    from sandbox.evaluation.scoring import describe_score

    record = cited_record(form)
    record["workflow"]["final_state"] = "x" * 1_000_000
    report = score(form, attempt_output(record))
    (field,) = [f for f in report.fields if f.name == "workflow.final_state"]
    assert not field.correct and "is not one of" in field.detail and len(field.detail) < 400, len(field.detail)
    assert len(describe_score(report)) < 20_000
