"""The pytest plugin, used as a user would: the shipped example test file run by pytest in a
subprocess (real Chromium, the bundled mirrors), a changed mirror fact failing it by name,
a cassette recorded against the scripted loopback model server and replayed, and the
clear errors of a missing, foreign or unknown cassette or pack."""

from __future__ import annotations

import asyncio
import shutil

from sandbox import PROJECT_ROOT
from tests.runner.reference_support import mirror_with_changes
from tests.runner.test_model_agents import scripted_server

EXAMPLES = PROJECT_ROOT / "examples"
# A user's repository has none of this repository's dev plugins (hypothesis adds ~0.45 s to each start).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def copy_example(pytester) -> None:
    shutil.copy(EXAMPLES / "test_agent_regression.py", pytester.path / "test_agent_regression.py")
    shutil.copytree(EXAMPLES / "cassettes", pytester.path / "cassettes")


def test_the_example_passes_as_shipped(pytester):
    copy_example(pytester)
    result = pytester.runpytest_subprocess("-q", *QUIET)
    result.assert_outcomes(passed=2)


def test_a_changed_mirror_fact_fails_the_example_naming_the_field(pytester, tmp_path):
    copy_example(pytester)
    mirror = mirror_with_changes(tmp_path, "sam.gov", {
        "api/opps/v2/bid-intake/9998b42f9e27421caa565fead7d8d416.json": [('"78596"', '"78597"')]})
    result = pytester.runpytest_subprocess("-q", *QUIET, "--sandbox-mirrors", str(mirror),
                                           "-k", "reference")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*bid-intake [[]reference[]]: qualified pass (status completed, field accuracy 0.9*",
                                 "*field place.postal_code: expected '78596', got '78597'*",
                                 "*attempt folder: *"])


BAD_INPUT = '''
import pytest
from sandbox.integrations.pytest_plugin import assert_qualified

def test_missing_cassette(sandbox_run):
    sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1")

def test_cassette_of_another_pack(sandbox_run):
    sandbox_run(pack="controlled-form", agent="openai:scripted-browser-1", cassette="{cassette}")

def test_unknown_pack(sandbox_run):
    sandbox_run(pack="no-such-pack")

def test_no_pack(sandbox_run):
    sandbox_run()
'''


def test_bad_input_fails_with_what_to_do(pytester):
    cassette = EXAMPLES / "cassettes" / "test_agent_regression" / "test_recorded_model_conversation_obeys_the_gates.yaml"
    pytester.makepyfile(test_bad=BAD_INPUT.format(cassette=cassette))
    result = pytester.runpytest_subprocess("-q", *QUIET)
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines_random([
        "*no cassette at *test_missing_cassette.yaml and the record mode is 'none'*--sandbox-record-mode once*",
        "*was recorded for pack 'bid-intake', not for 'controlled-form'*re-record it*",
        "*unknown pack 'no-such-pack'*",
        "*sandbox_run needs a pack*",
    ])


RECORDED = '''
import pytest

@pytest.mark.sandbox_pack("bid-intake")
def test_scripted_model(sandbox_run):
    attempt = sandbox_run(agent="openai:scripted-browser-1")
    assert attempt.status == "completed" and attempt.report.gates.ok, attempt.explain()
'''


async def test_recording_a_cassette_against_the_scripted_server_then_replaying_it(pytester, monkeypatch):
    pytester.makepyfile(test_model=RECORDED)
    runner, url = await scripted_server().start_server()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        recorded = await asyncio.to_thread(pytester.runpytest_subprocess, "-q", *QUIET,
                                           "--sandbox-record-mode", "once")
    finally:
        await runner.cleanup()
    recorded.assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_model" / "test_scripted_model.yaml"
    assert cassette.is_file() and "browser_start_session" in cassette.read_text()
    monkeypatch.delenv("OPENAI_BASE_URL")
    replayed = pytester.runpytest_subprocess("-q", *QUIET)   # no server: vcrpy answers
    replayed.assert_outcomes(passed=1)


def test_the_plugin_can_be_turned_off(pytester):
    on = pytester.runpytest_subprocess("--fixtures", *QUIET)
    off = pytester.runpytest_subprocess("--fixtures", *QUIET, "-p", "no:sandbox")
    assert "sandbox_run" in on.stdout.str() and "sandbox_run" not in off.stdout.str()
