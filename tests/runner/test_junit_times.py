"""A JUnit test case's time is the attempt's measured time, or none: an attempt whose time is
unknown (unfinished, unreadable, one the sandbox could not run) was written ``time="0.000"``, which
a CI system shows as a measured 0 s."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from sandbox.runner.attempt import AttemptRecord
from sandbox.runner.batch import write_summary
from sandbox.runner.folders import batch_attempts, outcome
from sandbox.runner.junit import junit_xml
from tests.support.attempt_folders import scored_attempt

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit.xsd")


def batch_with_unknown_times(batch: Path) -> Path:
    """Attempt 1 measured (3.0 s); 2 unfinished (no attempt.json); 3 unreadable (its record cut
    short); 4 one the sandbox could not run (no time recorded)."""
    scored_attempt(batch / "controlled-form-1")
    (scored_attempt(batch / "controlled-form-2") / "attempt.json").unlink()
    scored_attempt(batch / "controlled-form-3", record=b'{"pack": "controlled-form", "agent": "a", "elapsed_se')
    unrun = AttemptRecord(
        pack="controlled-form", agent="a", attempt=4, status="crashed",
        error="the sandbox could not run the attempt: RuntimeError: no room for another run",
    )  # fmt: skip
    (scored_attempt(batch / "controlled-form-4") / "attempt.json").write_text(unrun.to_json())
    return batch


def times(document: str) -> tuple[dict[str, str | None], str | None]:
    suite = ET.fromstring(document).find("testsuite")
    assert suite is not None
    return {case.get("name", ""): case.get("time") for case in suite.iter("testcase")}, suite.get("time")


def test_an_unknown_time_is_left_out_not_written_as_0(tmp_path):
    batch = batch_with_unknown_times(tmp_path / "batch")
    for summarised in (False, True):  # rebuilt from the folders, then from the batch's summary.json
        if summarised:
            write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
            assert len(json.loads((batch / "summary.json").read_text())["attempts"]) == 4
        document = junit_xml(batch)
        SCHEMA.validate(document)
        cases, suite_time = times(document)
        assert cases == {
            "controlled-form[a#1]": "3.000",
            "controlled-form[a#2]": None,
            "controlled-form[a#3]": None,
            "controlled-form[a#4]": None,
        }, (summarised, cases)
        assert suite_time == "3.000", suite_time


@pytest.mark.parametrize(
    ("started_at", "timestamp"),
    [
        ("0001-01-01T00:00:00+05:00", None),  # before the first UTC time: OverflowError
        ("0001-01-01T00:00:00", "0001-01-01T00:00:00"),  # no zone: ValueError, taken as local time
        ("0999-06-01T10:00:00+00:00", "0999-06-01T10:00:00"),  # strftime wrote "999-06-01": no xs:dateTime
    ],
    ids=["overflow", "naive", "year-999"],
)
def test_a_start_time_that_is_no_utc_time_is_skipped_not_a_traceback(tmp_path, started_at, timestamp):
    """`sandbox report --junit` and `sandbox run --junit` ended in a traceback on an edited record's
    start time; the suite's timestamp is the earliest start that is a time (else now)."""
    batch = tmp_path / "batch"
    record = AttemptRecord(pack="controlled-form", agent="a", status="completed", elapsed_seconds=3.0)
    record = record.model_copy(update={"started_at": started_at})
    (scored_attempt(batch / "controlled-form-1") / "attempt.json").write_text(record.to_json())
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    document = junit_xml(batch)
    SCHEMA.validate(document)
    suite = ET.fromstring(document).find("testsuite")
    assert suite is not None
    if timestamp is not None:
        assert suite.get("timestamp") == timestamp
    else:
        assert suite.get("timestamp", "")[:4] >= "2026"  # now
