"""JUnit XML of a batch, validated against a JUnit XML Schema (tests/runner/data/junit.xsd)
with a real XML Schema validator; the validator is shown to reject a broken document."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch

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
