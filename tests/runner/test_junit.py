"""JUnit XML of a batch, validated against a JUnit XML Schema (tests/runner/data/junit.xsd)
with a real XML Schema validator; the validator is shown to reject a broken document."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import format_reasons, run_batch, write_summary
from sandbox.runner.folders import batch_attempts, outcome, read_summary
from sandbox.runner.junit import junit_xml

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit.xsd")


def test_the_schema_rejects_a_testcase_without_classname():
    broken = (
        '<testsuites><testsuite name="s" tests="1" failures="0" errors="0" time="0" '
        'timestamp="2026-01-01T00:00:00" hostname="h"><testcase name="x" time="0"/></testsuite></testsuites>'
    )
    with pytest.raises(xmlschema.XMLSchemaValidationError, match="classname"):
        SCHEMA.validate(broken)


async def test_run_junit_has_one_case_per_attempt_with_the_reason(sandbox, tmp_path, capsys):
    [failing] = await run_batch(
        [load_pack("bid-intake")], "cmd:/nonexistent/agent", out=tmp_path / "runs", progress=False, sandbox=sandbox
    )
    batch = failing.directory.parent
    assert main(["report", str(batch), "--junit", str(tmp_path / "junit.xml")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"junit: {tmp_path / 'junit.xml'}"
    SCHEMA.validate(str(tmp_path / "junit.xml"))
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "1", "0")
    [case] = suite.findall("testcase")
    assert case.get("name") == "bid-intake[cmd:/nonexistent/agent#1]" and case.get("classname") == "sandbox.bid-intake"
    failure = case.find("failure")
    assert failure.get("message") == failing.reason and "/nonexistent/agent: not found" in failure.get("message")
    assert failure.text.startswith("attempt bid-intake #1 by cmd:/nonexistent/agent: error")


def test_a_junit_path_that_cannot_be_written_is_refused_before_the_pages_with_exit_2(tmp_path, capsys):
    """As ``run --junit``: checked before anything is written, so bad usage (2), not a failed write (3)."""
    batch = tmp_path / "reference"
    shutil.copytree(FIXTURES_DIR / "attempts" / "reference", batch)
    assert main(["report", str(batch), "--junit", "/proc/junit.xml"]) == 2  # it said "no attempt" once
    assert "sandbox report: --junit /proc/junit.xml: cannot write a file there" in capsys.readouterr().err
    assert not (batch / "report.html").exists()


def test_a_junit_file_with_a_name_as_long_as_the_file_system_allows_is_written(tmp_path, capsys):
    """Its temporary file beside it (``.<name>.<pid>.tmp``) was too long a name: exit 3, "File name
    too long", naming the temporary file."""
    batch = tmp_path / "reference"
    shutil.copytree(FIXTURES_DIR / "attempts" / "reference", batch)
    junit = tmp_path / "out" / ("j" * 251 + ".xml")  # 255 bytes
    assert main(["report", str(batch), "--junit", str(junit)]) == 0, capsys.readouterr().err
    SCHEMA.validate(str(junit))
    assert sorted(p.name for p in junit.parent.iterdir()) == [junit.name]  # no temporary file left


def test_junit_of_an_older_batch_without_summary(tmp_path):
    batch = tmp_path / "reference"
    shutil.copytree(FIXTURES_DIR / "attempts" / "reference", batch)
    assert main(["report", str(batch), "--junit", str(tmp_path / "out" / "junit.xml")]) == 0
    SCHEMA.validate(str(tmp_path / "out" / "junit.xml"))
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite")
    names = [case.get("name") for case in suite.findall("testcase")]
    assert len(names) == 8 and "sec-contract[reference#1]" in names
    assert suite.get("failures") == "0" and not suite.findall("testcase/failure")


def test_sandbox_run_writes_junit(tmp_path, capsys):
    code = main(
        [
            "run",
            "controlled-form",
            "--agent",
            "reference",
            "--out",
            str(tmp_path / "runs"),
            "--junit",
            str(tmp_path / "junit.xml"),
            "--no-progress",
            "--screenshots",
            "none",
        ]
    )
    assert code == 0 and capsys.readouterr().out.splitlines()[-1] == f"junit: {tmp_path / 'junit.xml'}"
    SCHEMA.validate(str(tmp_path / "junit.xml"))
    [case] = ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    assert case.get("name") == "controlled-form[reference#1]" and case.find("failure") is None


async def test_an_agents_control_characters_leave_the_document_well_formed(sandbox, tmp_path):
    """An agent's stderr with ANSI colours (and a NUL, a bell) went raw into the message: the
    document was not well-formed XML."""
    agent = f"cmd:{sys.executable} -c \"import sys; sys.stderr.write('\\x1b[31mred\\x1b[0m \\x00 \\x07'); sys.exit(3)\""
    [failing] = await run_batch(
        [load_pack("controlled-form")], agent, out=tmp_path / "runs", progress=False, sandbox=sandbox
    )
    assert "\x1b" in failing.reason
    printed = format_reasons([failing.to_json()])  # the terminal's line: escaped too, not acted on
    assert "\x1b" not in printed and "\\x1b[31mred" in printed
    assert main(["report", str(failing.directory.parent), "--junit", str(tmp_path / "junit.xml")]) == 0
    SCHEMA.validate(str(tmp_path / "junit.xml"))
    [case] = ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    assert "\\x1b[31mred\\x1b[0m \\x00 \\x07" in case.find("failure").get("message")


def reference_batch(folder: Path) -> Path:
    """The bundled reference attempts as a batch of ``sandbox run``'s, with its summary.json."""
    shutil.copytree(FIXTURES_DIR / "attempts" / "reference", folder)
    write_summary(folder, [outcome(attempt) for attempt in batch_attempts(folder)], 2000.0)
    return folder


def test_a_copied_batch_is_read_from_its_own_folders(tmp_path):
    """summary.json names its attempts' folders where the batch was written: a copy's JUnit came
    from the original's score.txt, and a moved batch's leaderboard linked to where it had been."""
    original = reference_batch(tmp_path / "original")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    (copy / "bid-intake" / "score.txt").write_text("COPY MARKER\n")
    (original / "bid-intake" / "score.txt").write_text("ORIGINAL MARKER\n")
    for name in ("attempt.json", "score.json"):  # a failed attempt: its record and its score say so alike
        entry = json.loads((copy / "bid-intake" / name).read_text()) | {"qualified_pass": False}
        (copy / "bid-intake" / name).write_text(json.dumps(entry))
    summary = json.loads((copy / "summary.json").read_text())
    [attempt] = [a for a in summary["attempts"] if a["pack"] == "bid-intake"]
    attempt["qualified_pass"] = False
    (copy / "summary.json").write_text(json.dumps(summary))
    assert {Path(a["directory"]).parent for a in read_summary(copy)["attempts"]} == {copy}
    assert main(["report", str(copy), "--junit", str(tmp_path / "junit.xml")]) == 0
    failures = [case.find("failure") for case in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")]
    assert [f.text for f in failures if f is not None] == ["COPY MARKER\n"]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda data: data["attempts"][0].pop("qualified_pass"), "its attempt 1 has no qualified_pass"),
        (lambda data: data["summary"][0].pop("agent"), "its row 1 has no agent"),
        (lambda data: data["summary"][0].pop("median_seconds"), "its row 1 has no median_seconds"),
        (lambda data: data.update(summary=[], attempts=[]), "it lists no attempt"),
        (lambda data: data.update(summary=[]), "it has no table rows for its attempts"),
        (lambda data: data["attempts"][0].update(qualified_pass="yes"), "has qualified_pass 'yes', not true or false"),
        (lambda data: data["summary"][0].update(attempts="two"), "has attempts 'two', not a whole number"),
    ],
    ids=["attempt-key", "row-key", "table-key", "no-attempt", "no-rows", "attempt-type", "row-type"],
)
def test_an_edited_summary_is_rebuilt_from_the_attempt_folders(tmp_path, edit, said):
    """It was used as it was: KeyError tracebacks (exit 1), or an empty table for a batch of 8."""
    batch = reference_batch(tmp_path / "batch")
    data = json.loads((batch / "summary.json").read_text())
    edit(data)
    (batch / "summary.json").write_text(json.dumps(data))
    read = read_summary(batch)
    assert len(read["attempts"]) == 8 and said in read["note"] and "rebuilt from the attempt folders" in read["note"]


def test_the_summary_of_a_batch_stopped_before_any_attempt_ended_is_kept(tmp_path):
    write_summary(tmp_path, [], 2000.0)
    assert read_summary(tmp_path)["attempts"] == [] and "note" not in read_summary(tmp_path)


def test_control_characters_in_folder_names_leave_the_document_well_formed(tmp_path):
    """The suite's name, the batch property and a damaged attempt's class name (its pack: its
    folder's name) were written raw: ET.fromstring refused the document."""
    from tests.support.attempt_folders import scored_attempt

    batch = tmp_path / "batch\x01x"
    folder = scored_attempt(batch / "my\x1b[31mattempt", record=b"{garbled", traced=False)
    score = json.loads((folder / "score.json").read_text())
    (folder / "score.json").write_text(json.dumps({k: v for k, v in score.items() if k != "pack"}))  # names none
    suite = ET.fromstring(junit_xml(batch)).find("testsuite")
    assert suite.get("name") == "batch\\x01x"
    assert suite.find("properties/property").get("value") == f"{tmp_path}/batch\\x01x"
    assert suite.find("testcase").get("classname") == "sandbox.my\\x1b[31mattempt"


def failed_batch(batch: Path, edit_entry) -> Path:
    """A batch of one attempt that did not qualify, its summary entry edited by ``edit_entry``."""
    from tests.support.attempt_folders import scored_attempt

    folder = scored_attempt(batch / "controlled-form-1")
    score = json.loads((folder / "score.json").read_text()) | {"qualified_pass": False}
    (folder / "score.json").write_text(json.dumps(score))
    write_summary(batch, [outcome(attempt) for attempt in batch_attempts(batch)])
    summary = json.loads((batch / "summary.json").read_text())
    edit_entry(summary["attempts"][0])
    (batch / "summary.json").write_text(json.dumps(summary))
    return batch


def test_a_status_with_a_control_character_leaves_the_document_well_formed(tmp_path):
    """The failure's type, ``not_qualified (<status>)``, was written raw: ET refused the document."""
    batch = failed_batch(tmp_path / "batch", lambda entry: entry.update(status="completed\x1b"))
    [case] = ET.fromstring(junit_xml(batch)).iter("testcase")
    assert case.find("failure").get("type") == "not_qualified (completed\\x1b)"


def test_an_error_is_counted_by_the_summarys_status_as_on_the_batch_page(tmp_path):
    """A score.json of status error under a summary status that is not evaluation_error (a summary
    written before the attempt was scored again) was an <error> in JUnit and "not qualified" on the
    batch page: the two now count it alike, by the summary's status."""
    batch = failed_batch(tmp_path / "batch", lambda entry: None)
    folder = batch / "controlled-form-1"
    score = json.loads((folder / "score.json").read_text()) | {"status": "error"}
    (folder / "score.json").write_text(json.dumps(score))
    suite = ET.fromstring(junit_xml(batch)).find("testsuite")
    assert (suite.get("errors"), suite.get("failures")) == ("0", "1")
    assert main(["report", str(batch)]) == 0
    assert '<span class="fail">not qualified</span>' in (batch / "report.html").read_text()
