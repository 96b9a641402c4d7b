"""Every field rule kind, called directly: values that must pass and values that must fail."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from sandbox.evaluation.packs import FieldRule
from sandbox.evaluation.scoring import RULE_KINDS, check_field

RULE = TypeAdapter(FieldRule)


def judge(rule: dict[str, Any], expected: Any, got: Any) -> bool:
    parsed = RULE.validate_python({"name": "f", **rule})
    return RULE_KINDS[parsed.kind](parsed, expected, got).correct


def test_every_seed_rule_kind_is_registered():
    assert set(RULE_KINDS) == {
        "exact",
        "enum",
        "date",
        "datetime",
        "integer",
        "aliases",
        "whitespace_normalized",
        "ordered_list",
        "unordered_set",
    }


@pytest.mark.parametrize(
    "expected, got, correct",
    [
        ("NOT_FOUND", "NOT_FOUND", True),
        (True, True, True),
        (True, 1, False),  # a boolean is not the integer 1
        (1, True, False),
        (1, "1", False),  # 1 != "1"
        (1, 1.0, False),
        (False, None, False),
        (
            {"date": "2023-04-07", "description": "Letter filed."},
            {"description": "Letter filed.", "date": "2023-04-07"},
            True,
        ),
        (["4", "5"], ["5", "4"], False),
        ("NOT_FOUND", "not_found", False),
        ("Celldex Indemnitees", "Celldex Indemnitees ", False),
    ],
)
def test_exact_is_type_sensitive(expected, got, correct):
    assert judge({"kind": "exact"}, expected, got) is correct


def test_exact_reports_a_type_difference():
    rule = RULE.validate_python({"name": "f", "kind": "exact"})
    assert "type differs" in RULE_KINDS["exact"](rule, True, 1).detail


@pytest.mark.parametrize(
    "got, correct",
    [
        ("VACATED_AND_REMANDED", True),
        ("VACATED", False),
        ("vacated_and_remanded", False),
        ("REMANDED", False),
        (None, False),
    ],
)
def test_enum(got, correct):
    rule = {"kind": "enum", "enum_values": ["VACATED", "VACATED_AND_REMANDED", "OTHER"]}
    assert judge(rule, "VACATED_AND_REMANDED", got) is correct


@pytest.mark.parametrize(
    "got, correct",
    [
        ("2023-06-29", True),
        ("2023-6-29", False),
        ("June 29, 2023", False),
        ("2023-06-29T00:00:00Z", False),
        ("2023-06-30", False),
        (20230629, False),
        ("2023-02-30", False),
        ("2023-06-29\n", False),  # `$` would match before the line break
        ("٢٠٢٣-٠٦-٢٩", False),  # Arabic-Indic digits: `\d` matches them and int() reads them
    ],
)
def test_date(got, correct):
    assert judge({"kind": "date"}, "2023-06-29", got) is correct


@pytest.mark.parametrize(
    "expected, got, correct",
    [
        ("2025-11-21T18:00:00Z", "2025-11-21T12:00:00-06:00", True),  # one instant, two offsets
        ("2025-11-21T12:00:00-06:00", "2025-11-21T18:00:00+00:00", True),
        ("2025-11-15T02:57:52.270+00:00", "2025-11-15T02:57:52.27Z", True),
        ("2025-11-15T02:57:52.270+00:00", "2025-11-14T20:57:52.270-06:00", True),
        ("2025-11-15T02:57:52.270+00:00", "2025-11-15T02:57:52Z", False),  # minute/second rounding loses ms
        ("2025-11-21T18:00:00Z", "2025-11-21T18:00:00-06:00", False),
        ("2025-11-21T18:00:00Z", "2025-11-21T18:00:00", False),  # no offset: not the same instant
        ("2025-11-21T18:00:00Z", "2025-11-21", False),
        ("2025-11-21T18:00:00Z", "Nov 21, 2025 12:00 PM CST", False),
        ("2025-11-15T02:57:52.270Z", "2025-11-15T02:57:52.270Z\n", False),
        ("2025-11-15T02:57:52.270Z", "٢٠٢٥-١١-١٥T٠٢:٥٧:٥٢.٢٧٠Z", False),
    ],
)
def test_datetime_compares_instants(expected, got, correct):
    assert judge({"kind": "datetime"}, expected, got) is correct


def test_datetime_with_a_very_long_fraction_is_wrong_not_an_error():
    """int() of more than 4,300 digits raises ValueError; the rule must judge the field wrong."""
    rule = RULE.validate_python({"name": "f", "kind": "datetime"})
    got = "2025-11-21T12:00:00." + "1" * 5000 + "-06:00"
    check = RULE_KINDS["datetime"](rule, "2025-11-21T18:00:00Z", got)
    assert check.correct is False and "5000 significant digits" in check.detail
    zeros = "2025-11-21T12:00:00." + "0" * 5000 + "-06:00"  # trailing zeros change nothing
    assert RULE_KINDS["datetime"](rule, "2025-11-21T18:00:00Z", zeros).correct


@pytest.mark.parametrize(
    "got, correct", [(7, True), (7.0, True), (True, False), (7.5, False), ("7", False), (8, False), (8.0, False)]
)
def test_integer_reads_integers_as_the_schema_does(got, correct):
    """JSON Schema's "type": "integer" (Draft 2020-12) accepts 7.0, so the rule does too."""
    assert judge({"kind": "integer"}, 7, got) is correct


def test_integer_true_is_not_one():
    assert judge({"kind": "integer"}, 1, True) is False


@pytest.mark.parametrize(
    "got, correct", [("TX", True), ("Texas", True), ("texas", False), ("Tex.", False), ("WI", False), (None, False)]
)
def test_aliases_accept_the_alternative(got, correct):
    assert judge({"kind": "aliases", "aliases": {"Texas": "TX"}}, "TX", got) is correct


@pytest.mark.parametrize(
    "got, correct", [("9:00 AM CDT", True), ("09:00 AM CDT", True), ("09:00 CDT", True), ("9:00 CDT", False)]
)
def test_aliases_map_both_sides(got, correct):
    rule = {"kind": "aliases", "aliases": {"9:00 AM CDT": "09:00 CDT", "09:00 AM CDT": "09:00 CDT"}}
    assert judge(rule, "9:00 AM CDT", got) is correct


@pytest.mark.parametrize(
    "got, correct",
    [
        ("Final Design Drawings_Gravel Pad_RV01.pdf", True),
        ("  Final Design  Drawings_Gravel\tPad_RV01.pdf ", True),
        ("Final Design Drawings_Gravel Pad_RV01", False),
        ("Final Design Drawings Gravel Pad RV01.pdf", False),
        ("FinalDesign Drawings_Gravel Pad_RV01.pdf", False),
    ],
)
def test_whitespace_normalized(got, correct):
    assert judge({"kind": "whitespace_normalized"}, "Final Design Drawings_Gravel Pad_RV01.pdf", got) is correct


ACK_ALIASES = {
    "AMENDMENT 0001": "0001",
    "Amendment 0001": "0001",
    "amendment 0001": "0001",
    "AMENDMENT 0002": "0002",
    "Amendment 0002": "0002",
    "amendment 0002": "0002",
}


@pytest.mark.parametrize(
    "got, correct",
    [
        (["0001", "0002"], True),
        (["Amendment 0001", "Amendment 0002"], True),
        (["Amendment 0001", "0002"], True),
        (["0002", "0001"], False),  # reversed order is rejected
        (["Amendment 0002", "Amendment 0001"], False),
        (["0001"], False),
        (["0001", "0002", "0002"], False),
        (["Amend. 0001", "0002"], False),
        ("0001, 0002", False),
    ],
)
def test_ordered_list_with_element_aliases(got, correct):
    rule = {"kind": "ordered_list", "element_kind": "aliases", "element_aliases": ACK_ALIASES}
    assert judge(rule, ["0001", "0002"], got) is correct


def test_ordered_list_says_when_only_the_order_differs():
    rule = RULE.validate_python({"name": "f", "kind": "ordered_list"})
    check = RULE_KINDS["ordered_list"](rule, ["4", "5", "7"], ["7", "5", "4"])
    assert not check.correct and "order" in check.detail


@pytest.mark.parametrize(
    "got, correct",
    [
        (["2026-06-29", "2026-07-06", "2026-07-10"], True),
        (["2026-06-29", "2026-07-10", "2026-07-06"], False),
        (["2026-06-29", "2026-07-06", "July 10, 2026"], False),
    ],
)
def test_ordered_list_of_dates(got, correct):
    rule = {"kind": "ordered_list", "element_kind": "date"}
    assert judge(rule, ["2026-06-29", "2026-07-06", "2026-07-10"], got) is correct


@pytest.mark.parametrize(
    "got, correct",
    [([2, 5, 6, 7], True), ([2, 5, 6, True], False), ([2, 5, 6, 7.0], True), (["2", "5", "6", "7"], False)],
)
def test_ordered_list_of_integers(got, correct):
    assert judge({"kind": "ordered_list", "element_kind": "integer"}, [2, 5, 6, 7], got) is correct


def test_ordered_list_of_whitespace_normalized_filenames():
    rule = {"kind": "ordered_list", "element_kind": "whitespace_normalized"}
    expected = [
        "SOLICITATION AMENDMENT 0001 - W50S9H26QA0180001 SF 30.pdf",
        "SOLICITATION AMENDMENT 0002 - W50S9H26QA0180002 SF 30.pdf",
    ]
    assert judge(
        rule,
        expected,
        [
            "SOLICITATION  AMENDMENT 0001 - W50S9H26QA0180001 SF 30.pdf",
            "SOLICITATION AMENDMENT 0002 -  W50S9H26QA0180002 SF 30.pdf",
        ],
    )
    assert not judge(rule, expected, ["SOLICITATION AMENDMENT 0001 - W50S9H26QA0180001 SF30.pdf", expected[1]])


CATEGORIES = ["DEADLINE", "SCOPE", "DOCUMENTS", "ACKNOWLEDGMENT"]


@pytest.mark.parametrize(
    "got, correct",
    [
        (["DEADLINE", "SCOPE", "DOCUMENTS", "ACKNOWLEDGMENT"], True),
        (["ACKNOWLEDGMENT", "DOCUMENTS", "SCOPE", "DEADLINE"], True),  # any order
        (["DEADLINE", "SCOPE", "DOCUMENTS"], False),
        (["DEADLINE", "SCOPE", "DOCUMENTS", "ACKNOWLEDGMENT", "DEADLINE"], False),
        (["DEADLINE", "SCOPE", "DOCUMENTS", "ACKNOWLEDGEMENT"], False),  # not an enum value
        ("DEADLINE", False),
    ],
)
def test_unordered_set_with_enum_elements(got, correct):
    rule = {"kind": "unordered_set", "element_kind": "enum", "element_enum_values": CATEGORIES}
    assert judge(rule, CATEGORIES, got) is correct


def test_missing_field_is_wrong():
    rule = RULE.validate_python({"name": "a.b", "kind": "exact"})
    expected, got, check = check_field(rule, {"a": {"b": 1}}, {"a": {}})
    assert not check.correct and check.detail == "field missing"
    _, _, present_null = check_field(rule, {"a": {"b": None}}, {"a": {"b": None}})
    assert present_null.correct


def test_list_rule_options_are_validated():
    with pytest.raises(ValidationError, match="element_enum_values is required with element_kind 'enum'"):
        RULE.validate_python({"name": "f", "kind": "ordered_list", "element_kind": "enum"})
    with pytest.raises(ValidationError, match="element_aliases is required with element_kind 'aliases'"):
        RULE.validate_python({"name": "f", "kind": "unordered_set", "element_aliases": {"a": "b"}})
