"""``attempt.json`` is written and read through ``AttemptRecord``: every committed attempt folder
(recorded by older versions, or hand-made) reads back without a problem and writes back the same
text; a field this version cannot read is left out and named, never raised; and site keys come
from one generator."""

from __future__ import annotations

import json

import pytest

from sandbox import FIXTURES_DIR
from sandbox.runner.attempt import AttemptRecord, attempt_status, new_site_key
from sandbox.runner.folders import AttemptFolder, outcome, read_attempt_record

ATTEMPT_FILES = sorted((FIXTURES_DIR / "attempts").glob("**/attempt.json"))


@pytest.mark.parametrize("file", ATTEMPT_FILES, ids=lambda p: str(p.parent.relative_to(FIXTURES_DIR)))
def test_committed_attempt_files_read_and_write_back_unchanged(file):
    text = file.read_text(encoding="utf-8")
    record, problems = read_attempt_record(json.loads(text))
    assert problems == [] and record is not None
    assert json.loads(record.to_json()) == json.loads(text)  # the same fields and values
    if record.origin == "recorded":  # written by run_attempt: the same order and layout, too
        assert record.to_json() == text
    assert AttemptFolder.load(file.parent).attempt == record


def test_a_ray_crash_record_reads():
    data = {"pack": "bid-intake", "agent": "reference", "attempt": 2, "status": "crashed", "error": "worker died"}
    record, problems = read_attempt_record({**data, "tries": 2, "executor": "ray"})
    assert problems == [] and record is not None and (record.tries, record.site_key) == (2, None)


def test_unreadable_fields_are_left_out_and_named(tmp_path):
    (tmp_path / "attempt.json").write_text(
        json.dumps({"pack": "bid-intake", "status": "completed", "tool_calls_total": "many", "colour": "red"})
    )
    folder = AttemptFolder.load(tmp_path)
    assert folder.attempt == AttemptRecord(pack="bid-intake", status="completed")
    assert "attempt.json field 'colour' left out: Extra inputs are not permitted" in folder.problems
    assert any(p.startswith("attempt.json field 'tool_calls_total' left out: ") for p in folder.problems)
    assert folder.counted and outcome(folder).status == "completed" and outcome(folder).tool_calls == 0

    (tmp_path / "attempt.json").write_text(json.dumps({"agent": "reference"}))
    folder = AttemptFolder.load(tmp_path)
    assert folder.attempt is None and "attempt.json is unreadable (pack: Field required)" in folder.problems


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"status": 7}, "attempt.json field 'status' is unreadable (7): how the agent ended is unknown"),
        ({"status": None}, "attempt.json field 'status' is unreadable (null): how the agent ended is unknown"),
        ({"elapsed_seconds": "slow"}, "attempt.json field 'elapsed_seconds' is unreadable (\"slow\"): its time is"),
        ({"elapsed_seconds": float("nan")}, "attempt.json field 'elapsed_seconds' is unreadable (NaN): its time is"),
        ({"elapsed_seconds": -3.0}, "attempt.json field 'elapsed_seconds' is unreadable (-3.0): its time is"),
        ({"elapsed_seconds": "12.5"}, "attempt.json field 'elapsed_seconds' is unreadable (\"12.5\"): its time is"),
        ({"elapsed_seconds": True}, "attempt.json field 'elapsed_seconds' is unreadable (true): its time is"),
    ],
    ids=["status-a-number", "status-null", "elapsed-a-word", "elapsed-nan", "elapsed-negative", "elapsed-text", "true"],
)
def test_a_field_the_counts_rest_on_that_cannot_be_read_leaves_the_record_uncounted(tmp_path, fields, said):
    """Its pack readable, its status or time not: the rest of the record was taken, and counted."""
    record = {"pack": "bid-intake", "agent": "a", "status": "completed", "elapsed_seconds": 3.0, "cost_usd": 0.5}
    (tmp_path / "attempt.json").write_text(json.dumps(record | fields))
    folder = AttemptFolder.load(tmp_path)
    assert folder.attempt is not None and not folder.counted and folder.record_damage.startswith(said)
    assert folder.record_problem.endswith("and its score is not counted") and folder.reasons()[0].startswith(said)
    counted = outcome(folder)
    assert (counted.status, counted.agent, counted.elapsed_seconds, counted.cost_usd) == ("unreadable", "a", None, None)


def test_values_no_writer_gives_are_left_out(tmp_path):
    """A start that is no ISO time crashed the JUnit and Inspect exports; a NaN cost the comparison."""
    values = {"started_at": "yesterday", "cost_usd": float("nan"), "credits_per_dollar": 0, "tool_calls_total": -1}
    record, problems = read_attempt_record({"pack": "bid-intake", "status": "completed", **values})
    assert record == AttemptRecord(pack="bid-intake", status="completed")
    assert sorted(p.split("'")[1] for p in problems) == sorted(values)


def test_the_attempt_status_says_when_an_evaluator_raised():
    assert attempt_status("completed", "pass") == "completed" and attempt_status("timeout", "fail") == "timeout"
    assert attempt_status("completed", "error") == "evaluation_error"
    assert attempt_status("completed", None) == "completed"  # an older score.json has no status


def test_site_keys_are_never_issued_twice_nor_taken():
    keys = {new_site_key() for _ in range(200)}
    assert len(keys) == 200 and all(key.startswith("bench-") and len(key) == len("bench-") + 16 for key in keys)

    class TakenThrice:  # a server holding the first three keys it is asked about
        def __init__(self) -> None:
            self.asked: list[str] = []

        def __contains__(self, key: object) -> bool:
            self.asked.append(str(key))
            return len(self.asked) <= 3

    taken = TakenThrice()
    key = new_site_key(taken)
    assert taken.asked[-1] == key and len(taken.asked) == 4 and key not in keys


def test_a_value_of_another_json_type_is_left_out_never_coerced():
    """A "12.5" or true was read as the number 12.5 or 1.0, "yes" as true, true as a count of 1."""
    values = {
        "cost_usd": "0.5", "dispatch_wait_seconds": True, "time_limit_seconds": "300", "qualified_pass": "yes",
        "error_free": 1, "tool_calls_total": True, "attempt": "2", "tries": 2.0, "token_usage": {"input": "9"},
    }  # fmt: skip
    record, problems = read_attempt_record({"pack": "bid-intake", "status": "completed", **values})
    assert record == AttemptRecord(pack="bid-intake", status="completed")
    assert sorted(p.split("'")[1] for p in problems) == sorted(values)
    whole = {"pack": "b", "elapsed_seconds": 12, "cost_usd": 0, "time_limit_seconds": 300}
    record, problems = read_attempt_record(whole)  # JSON's whole numbers are numbers
    assert problems == [] and record is not None and (record.elapsed_seconds, record.cost_usd) == (12.0, 0.0)


def test_an_attempt_time_over_its_limit_stays_over_it_once_rounded():
    from sandbox.runner.attempt import counted_seconds

    assert counted_seconds(600.0004) == 600.001 > 600  # to the nearest it was 600.0, which a 600 s gate passed
    assert counted_seconds(599.9996) == 600.0 and counted_seconds(1.25) == 1.25
