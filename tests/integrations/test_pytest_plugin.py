"""The pytest plugin, used as a user would: the shipped example test file run by pytest in a
subprocess (real Chromium, the bundled mirrors), a changed mirror fact failing it by name,
a cassette recorded against the scripted loopback model server and replayed, and the
clear errors of a missing, foreign or unknown cassette or pack.

Each session is its own pytest process in its own folder, set up as ``pytester`` sets up its
subprocess runs (``pytester``'s own runs block and change the process's working directory, so
they cannot overlap); the module starts them all at once (each spends most of its time starting
Python and Chromium, which overlap on two cores) and each test checks its own session's result."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from sandbox import MIRRORS_DIR, PROJECT_ROOT
from tests.support.mirrors import mirror_with_changes
from tests.support.models import scripted_server

EXAMPLES = PROJECT_ROOT / "examples"
# A user's repository has none of this repository's dev plugins (hypothesis adds ~0.45 s to each start).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
SESSION_TIMEOUT_S = 240

BAD_INPUT = """
import pytest
from sandbox.integrations.pytest_plugin import assert_qualified

def test_missing_cassette(sandbox_run):
    sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1")

def test_missing_anthropic_cassette(sandbox_run):
    sandbox_run(pack="bid-intake", agent="anthropic:scripted-browser-1")

def test_relative_cassette_of_another_pack(sandbox_run):
    sandbox_run(pack="controlled-form", agent="openai:scripted-browser-1", cassette="{relative}")

def test_cassette_of_another_pack(sandbox_run):
    sandbox_run(pack="controlled-form", agent="openai:scripted-browser-1", cassette="{cassette}")

def test_cassette_of_strings(sandbox_run):
    sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1", cassette="strings.yaml")

def test_cassette_folder(sandbox_run):
    sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1", cassette="folder.yaml")

def test_cassette_under_a_file(sandbox_run):
    sandbox_run("bid-intake", agent="openai:scripted-browser-1", cassette="strings.yaml/c.yaml", record_mode="once")

def test_cassette_of_one_turn(sandbox_run):
    attempt = sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1", cassette="one-turn.yaml")
    assert attempt.status == "completed", attempt.explain()

@pytest.mark.parametrize("limit", [0, -1, float("nan"), True])
def test_time_limit(sandbox_run, limit):
    sandbox_run(pack="bid-intake", time_limit=limit)

def test_unknown_pack(sandbox_run):
    sandbox_run(pack="no-such-pack")

def test_no_pack(sandbox_run):
    sandbox_run()

class TestOne:
    def test_same_name(self, sandbox_run):
        sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1")

class TestTwo:
    def test_same_name(self, sandbox_run):
        sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1")

    class TestInner:
        def test_same_name(self, sandbox_run):
            sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1")

@pytest.mark.parametrize("case", ["a b", "a/b", "1", "a::b", "a.b"])
def test_case(sandbox_run, case):
    sandbox_run(pack="bid-intake", agent="openai:scripted-browser-1")
"""

# Test ids that are one folder name once cleaned; run twice into the same --sandbox-out.
KEPT = """
import pytest

@pytest.mark.parametrize("case", ["a b", "a/b", "a_b"])
def test_kept(sandbox_run, case):
    assert sandbox_run(pack="controlled-form").report.qualified_pass
"""

# A user's own `sandbox` fixture (it replaced the plugin's: sandbox_run raised AttributeError), an
# attempt interrupted as pytest-timeout's signal does (it ran on to its end), and two test ids one
# folder name apart (they shared a folder, where one link to nothing made a FileExistsError traceback).
OWN_SANDBOX = """
import pytest

@pytest.fixture
def sandbox():
    return "the user's own"
"""

OWN_SANDBOX_TEST = """
def test_own_sandbox(sandbox, sandbox_run):
    assert sandbox == "the user's own"
    assert sandbox_run(pack="controlled-form").qualified_pass
"""

INTERRUPTED = """
import json
import signal
from pathlib import Path

import pytest


class Interrupted(Exception):
    pass


def interrupt(signum, frame):
    raise Interrupted("the test's time is up")


def test_interrupted(sandbox_run, request):
    signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 4)
    with pytest.raises(Interrupted):
        sandbox_run(pack="controlled-form", agent="think:1:reference")  # some 12 s
    (record,) = Path(request.config.getoption("sandbox_out")).glob("*test_interrupted*/controlled-form-1/attempt.json")
    assert json.loads(record.read_text())["status"] == "stopped"
"""

SAME_NAME = """
def test_y(sandbox_run):
    assert sandbox_run(pack="controlled-form").qualified_pass
"""

RECORDED = """
import pytest

@pytest.mark.sandbox_pack("bid-intake")
def test_scripted_model(sandbox_run):
    attempt = sandbox_run(agent="openai:scripted-browser-1")
    assert attempt.status == "completed" and attempt.report.gates.ok, attempt.explain()

def test_two_packs(sandbox_run):
    first = sandbox_run("bid-intake", agent="openai:scripted-browser-1")
    second = sandbox_run("controlled-form", agent="openai:scripted-browser-1")
    assert (first.status, second.status) == ("completed", "completed"), first.explain() + second.explain()
"""


async def run_pytest(folder: Path, *args: str, env: dict[str, str] | None = None) -> pytest.RunResult:
    """``pytest *args`` in ``folder`` as its own process, with what ``pytester`` gives its
    subprocess runs: the folder on ``PYTHONPATH`` and as ``HOME``, no ``PYTEST_ADDOPTS``, a
    base temporary folder inside, no colours."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTEST_ADDOPTS", None)
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH", "")])),
        HOME=str(folder),
        PY_COLORS="0",
    )
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pytest",
        f"--basetemp={folder / 'basetemp'}",
        *args,
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), SESSION_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"pytest {' '.join(args)} in {folder} did not end within {SESSION_TIMEOUT_S} s") from None
    return pytest.RunResult(
        process.returncode, out.decode().splitlines(), err.decode().splitlines(), time.monotonic() - started
    )


def example_folder(folder: Path) -> Path:
    shutil.copy(EXAMPLES / "test_agent_regression.py", folder / "test_agent_regression.py")
    shutil.copytree(EXAMPLES / "cassettes", folder / "cassettes")
    return folder


async def record_then_replay(folder: Path) -> tuple[pytest.RunResult, Path, pytest.RunResult]:
    """Record a cassette against the scripted model server, then replay it with no server."""
    (folder / "test_model.py").write_text(RECORDED)
    runner, url = await scripted_server().start_server()
    try:
        recorded = await run_pytest(
            folder, "-q", *QUIET, "--sandbox-record-mode", "once", env={**os.environ, "OPENAI_BASE_URL": f"{url}/v1"}
        )
    finally:
        await runner.cleanup()
    offline = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    cassette = folder / "cassettes" / "test_model" / "test_scripted_model.yaml"
    return recorded, cassette, await run_pytest(folder, "-q", *QUIET, env=offline)  # no server: vcrpy answers


async def twice_into_one_folder(folder: Path) -> tuple[list[pytest.RunResult], Path]:
    (folder / "test_kept.py").write_text(KEPT)
    out = folder / "attempts"
    return [await run_pytest(folder, "-q", *QUIET, "--sandbox-out", str(out)) for _ in range(2)], out


async def users_own(folder: Path) -> tuple[pytest.RunResult, Path]:
    from sandbox.integrations.pytest_plugin import folder_of_test

    for path, text in {
        "a/test_interrupted.py": INTERRUPTED,  # first: the tests after it use the host it interrupted
        "api/v1/test_x.py": SAME_NAME,
        "api_v1/test_x.py": SAME_NAME,
        "own/conftest.py": OWN_SANDBOX,
        "own/test_own.py": OWN_SANDBOX_TEST,
    }.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    out = folder / "attempts"
    (out / folder_of_test("api_v1/test_x.py::test_y")).mkdir(parents=True)
    (out / folder_of_test("api_v1/test_x.py::test_y") / "controlled-form-1").symlink_to(folder / "nothing")
    return await run_pytest(folder, "-v", *QUIET, "--import-mode=importlib", "--sandbox-out", str(out)), out


@pytest.fixture(scope="module")
async def sessions(tmp_path_factory) -> dict:
    """Every session the tests below check, all at once, each in a folder of its own."""
    folder = tmp_path_factory.mktemp
    changed = folder("changed")
    mirror = mirror_with_changes(
        changed, "sam.gov", {"api/opps/v2/bid-intake/9998b42f9e27421caa565fead7d8d416.json": [('"78596"', '"78597"')]}
    )
    example_folder(changed)
    bad = folder("bad")
    cassette = (
        EXAMPLES / "cassettes" / "test_agent_regression" / "test_recorded_model_conversation_obeys_the_gates.yaml"
    )
    shutil.copy(cassette, bad / "bid-intake.yaml")
    (bad / "strings.yaml").write_text("interactions: [x, y]\n")
    (bad / "folder.yaml").mkdir()
    recorded = yaml.safe_load(cassette.read_text())
    (bad / "one-turn.yaml").write_text(yaml.safe_dump({**recorded, "interactions": recorded["interactions"][:1]}))
    (bad / "test_bad.py").write_text(BAD_INPUT.format(cassette=cassette, relative="bid-intake.yaml"))
    runs = {
        "example": run_pytest(example_folder(folder("example")), "-q", *QUIET),
        "changed": run_pytest(changed, "-q", *QUIET, "--sandbox-mirrors", str(mirror), "-k", "reference"),
        "bad": run_pytest(bad, "-q", *QUIET),
        "record_replay": record_then_replay(folder("record")),
        "kept": twice_into_one_folder(folder("kept")),
        "own": users_own(folder("own")),
        "on": run_pytest(folder("on"), "--fixtures", *QUIET),
        "off": run_pytest(folder("off"), "--fixtures", *QUIET, "-p", "no:sandbox"),
    }
    return dict(zip(runs, await asyncio.gather(*runs.values()), strict=True))


def test_the_example_passes_as_shipped(sessions):
    sessions["example"].assert_outcomes(passed=2)


def test_a_changed_mirror_fact_fails_the_example_naming_the_field(sessions):
    result = sessions["changed"]
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*bid-intake [[]reference[]]: qualified pass (status completed, field accuracy 0.9*",
            "*field place.postal_code: expected '78596', got '78597'*",
            "*attempt folder: *",
            "*report: */bid-intake-1/report.html",  # the plugin wrote none: the line was left out
        ]
    )


def test_bad_input_fails_with_what_to_do(sessions):
    result = sessions["bad"]
    result.assert_outcomes(failed=22)
    result.stdout.fnmatch_lines_random(
        [  # no two tests share a default cassette
            "*no cassette at */test_bad/TestOne.test_same_name.yaml and*",
            "*no cassette at */test_bad/TestTwo.test_same_name.yaml and*",
            "*no cassette at */test_bad/TestTwo.TestInner.test_same_name.yaml and*",
            "*no cassette at */test_bad/test_case[[]a_b[]]-c584a383.yaml and*",
            "*no cassette at */test_bad/test_case[[]a_b[]]-68f019b6.yaml and*",
            "*no cassette at */test_bad/test_case[[]1[]].yaml and*",
            "*no cassette at */test_bad/test_case[[]a.b[]].yaml and*",
            "*no cassette at */test_bad/test_case[[]a_b[]]-4e25ea75.yaml and*",
            "*no cassette at *test_missing_cassette.yaml and the record mode is 'none'*set OPENAI_BASE_URL*",
            "*no cassette at *test_missing_anthropic_cassette.yaml *set ANTHROPIC_BASE_URL (and ANTHROPIC_API_KEY)*",
            "*was recorded for pack 'bid-intake', not for 'controlled-form'*re-record it*",
            "*bid-intake.yaml was recorded for pack 'bid-intake', not for 'controlled-form'*",
            "*cassette */strings.yaml cannot be read: interaction 1 is str 'x', not a mapping of a request and*",
            # "no cassette at" the folder; a FileExistsError traceback under the file
            "*cassette */folder.yaml is a folder, not a file: pass the path of a cassette file",
            "*cassette */strings.yaml/c.yaml cannot be written: */strings.yaml is a file, not a folder: pass the*",
            "*agent error: cassette */one-turn.yaml (record mode none) cannot answer model request 2; record it "
            "again with pytest --sandbox-record-mode all, OPENAI_BASE_URL set to your model endpoint.",
            "*time_limit=0: give a number of seconds above 0",  # it ran, and ended in a timeout
            "*time_limit=-1: give a number of seconds above 0",
            "*time_limit=nan: give a number of seconds above 0",
            "*time_limit=True: give a number of seconds above 0",
            "*pack 'no-such-pack' cannot be loaded: */packs/no-such-pack: no such pack folder*",
            "*sandbox_run needs a pack*",
        ]
    )
    # each said once: pytest.fail() inside an except block printed the caught error's failure too
    assert "During handling of the above exception" not in result.stdout.str()
    assert result.stdout.str().count("pack 'no-such-pack' cannot be") == 2  # its section and the (cut) summary


def test_recording_a_cassette_against_the_scripted_server_then_replaying_it(sessions):
    recorded, cassette, replayed = sessions["record_replay"]
    recorded.assert_outcomes(passed=2)
    assert cassette.is_file() and "browser_start_session" in cassette.read_text()
    replayed.assert_outcomes(passed=2)


def test_two_attempts_in_one_test_record_and_replay_a_cassette_each(sessions):
    """They shared one: the second recording replaced the first, whose replay was then refused
    as recorded for the other pack."""
    recorded, cassette, replayed = sessions["record_replay"]
    from sandbox.evaluation.packs import load_pack
    from sandbox.runner.agents._cassette import SITE_KEY_PLACEHOLDER
    from sandbox.runner.cassettes import first_request, recorded_prompt

    recorded.assert_outcomes(passed=2)
    replayed.assert_outcomes(passed=2)
    for name, pack in (("test_two_packs.yaml", "bid-intake"), ("test_two_packs-2.yaml", "controlled-form")):
        path = cassette.with_name(name)
        prompt = recorded_prompt(path, first_request(path) or {})
        assert prompt == load_pack(pack).render_prompt(SITE_KEY_PLACEHOLDER), name


def test_attempt_folders_are_never_shared_nor_overwritten(sessions):
    """Ids one folder name apart, and a second session into the same --sandbox-out, failed with
    FileExistsError."""
    (first, second), out = sessions["kept"]
    first.assert_outcomes(passed=3)
    second.assert_outcomes(passed=3)
    folders = sorted(p.relative_to(out).as_posix() for p in out.glob("*/*") if (p / "attempt.json").is_file())
    assert len(folders) == 6 and len({f.split("/")[0] for f in folders}) == 3, folders
    assert sorted({f.split("/")[1] for f in folders}) == ["controlled-form-1", "controlled-form-2"], folders


def test_a_users_own_sandbox_fixture_leaves_sandbox_run_its_own(sessions):
    result, _ = sessions["own"]
    result.stdout.fnmatch_lines(["*own/test_own.py::test_own_sandbox PASSED*"])


def test_an_interrupted_attempt_is_stopped_and_recorded_before_the_interruption_goes_on(sessions):
    """A signal's exception (pytest-timeout's, Ctrl-C's) left the attempt running on the shared
    loop, to its end: its attempt.json was not there when the test went on."""
    result, _ = sessions["own"]
    result.stdout.fnmatch_lines(["*a/test_interrupted.py::test_interrupted PASSED*"])


def test_ids_one_folder_name_apart_get_a_folder_each_and_a_link_in_the_way_is_stepped_over(sessions):
    result, out = sessions["own"]
    result.stdout.fnmatch_lines_random(["*api/v1/test_x.py::test_y PASSED*", "*api_v1/test_x.py::test_y PASSED*"])
    made = sorted(p.relative_to(out).as_posix() for p in out.glob("*/*/attempt.json"))
    assert len({f.split("/")[0] for f in made if "test_x.py" in f}) == 2, made
    assert any(f.endswith("controlled-form-2/attempt.json") and "api_v1" in f for f in made), made


def test_a_sandbox_that_cannot_start_leaves_no_thread_nor_process_running(tmp_path, monkeypatch):
    """Its loop thread and the Playwright driver it had started were left running."""
    import threading

    from sandbox.integrations.pytest_plugin import BackgroundSandbox
    from sandbox.paths import MIRRORS_DIR
    from tests.support.processes import descendant_argvs
    from toolserver.errors import ChromiumUnavailable

    monkeypatch.setenv("SANDBOX_CHROMIUM", str(tmp_path / "no-chromium"))
    before = set(descendant_argvs(os.getpid()))
    with pytest.raises(ChromiumUnavailable, match="no-chromium"):
        BackgroundSandbox((MIRRORS_DIR,))
    assert [t for t in threading.enumerate() if t.name == "sandbox"] == []
    assert {pid: argv for pid, argv in descendant_argvs(os.getpid()).items() if pid not in before} == {}


def test_the_plugin_can_be_turned_off(sessions):
    on, off = sessions["on"].stdout.str(), sessions["off"].stdout.str()
    assert "sandbox_run" in on and "sandbox_run" not in off


async def test_the_pytest_plugin_refuses_a_mirror_folder_that_does_not_exist(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing(sandbox_run):\n    pass\n")
    result = await run_pytest(tmp_path, "--sandbox-mirrors", str(tmp_path / "gone"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--sandbox-mirrors: no such mirror folder: {tmp_path / 'gone'}*"])


async def test_the_pytest_plugin_refuses_a_mirror_folder_whose_manifest_is_not_one(tmp_path):
    """It was every test's setup error (a ValueError), not one usage error before the tests."""
    (tmp_path / "test_nothing.py").write_text("def test_nothing(sandbox_run):\n    pass\n")
    (tmp_path / "mirror" / "example.org").mkdir(parents=True)
    (tmp_path / "mirror" / "example.org" / "manifest.json").write_text('{"entries": 1}')
    result = await run_pytest(tmp_path, "--sandbox-mirrors", str(tmp_path / "mirror"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(["*--sandbox-mirrors: */example.org/manifest.json: invalid mirror manifest: *"])


async def test_an_attempt_that_cannot_be_recorded_fails_its_test_saying_why(tmp_path):
    """On a full disk (a real small tmpfs: mounting it needs root) the plugin read a score.json
    that was never written: the test errored with a traceback instead of the recording error."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "small"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=120k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        (tmp_path / "test_full.py").write_text('def test_full(sandbox_run):\n    sandbox_run(pack="controlled-form")\n')
        result = await run_pytest(tmp_path, "-q", *QUIET, "--sandbox-out", str(disk))
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*controlled-form [[]reference[]]: recording_error: the agent ended *, but its attempt could not be recorded*"]
    )
    assert "FileNotFoundError" not in result.stdout.str(), result.stdout.str()


def test_a_test_ids_folder_has_a_hash_of_the_id_whenever_its_name_is_not_the_id():
    """``tests/api_v1/test_x.py::test_y`` and ``tests/api/v1/test_x.py::test_y`` had one folder."""
    from sandbox.integrations.pytest_plugin import folder_of_test

    underscored, nested = (
        folder_of_test("tests/api_v1/test_x.py::test_y"),
        folder_of_test("tests/api/v1/test_x.py::test_y"),
    )
    assert underscored.startswith("tests_api_v1_test_x.py_test_y-") and nested.startswith(
        "tests_api_v1_test_x.py_test_y-"
    )
    assert underscored != nested
    spaced, slashed = folder_of_test("t.py::test_k[a b]"), folder_of_test("t.py::test_k[a/b]")
    assert spaced.startswith("t.py_test_k_a_b_-") and slashed.startswith("t.py_test_k_a_b_-") and spaced != slashed
    assert folder_of_test("test_x.py") == "test_x.py"  # a name as it is: no hash


def test_a_failure_message_shows_each_value_and_message_cut_short(tmp_path):
    """A 200 KB output contract error went whole into the message (reasons elsewhere end "(+N more)")."""
    import json

    from sandbox.evaluation.scoring import ScoreReport
    from sandbox.integrations.pytest_plugin import Attempt

    score = json.loads((PROJECT_ROOT / "fixtures" / "attempts" / "reference" / "bid-intake" / "score.json").read_text())
    huge = "x" * 200_000
    score["qualified_pass"] = score["error_free"] = False
    score["output_contract"] = {"ok": False, "errors": [{"code": "schema_violation", "message": huge}] * 5}
    score["fields"][0] |= {"correct": False, "got": huge, "detail": huge}
    score["reasons"] = [huge]
    score["gates"]["failures"] = [{"gate": "allowed_urls", "seq": 3, "message": huge}]
    attempt = Attempt("bid-intake", "reference", "error", huge, ScoreReport.model_validate(score), tmp_path)
    said = attempt.explain()
    assert len(said) < 10_000, len(said)
    assert said.count("… (199500 more characters)") == 3 + 1 + 1 + 1  # contract errors, reason, gate, detail
    assert said.count("… (199502 more characters)") == 1  # the field's value, quoted
    assert "… (198000 more characters)" in said  # the agent's error, a longer cut
    assert "  output contract: (+2 more)" in said and f"attempt folder: {tmp_path}" in said


def test_a_failure_message_shows_an_agents_control_characters_escaped(tmp_path):
    """The agent's error (its standard error) and the reasons (which quote its answer) reached the
    terminal with their ANSI escapes, C1 controls and bidirectional overrides raw."""
    import json

    from sandbox.evaluation.scoring import ScoreReport
    from sandbox.integrations.pytest_plugin import Attempt

    score = json.loads((PROJECT_ROOT / "fixtures" / "attempts" / "reference" / "bid-intake" / "score.json").read_text())
    hostile = "\x1b[2J\x9b31m\u202eevil"
    score["qualified_pass"] = score["error_free"] = False
    score["reasons"] = [f'critical field(s) wrong: got "{hostile}"']
    attempt = Attempt(
        "bid-intake", "reference", "error", f"stderr: {hostile}", ScoreReport.model_validate(score), tmp_path
    )
    said = attempt.explain()
    assert not any(raw in said for raw in ("\x1b", "\x9b", "\u202e")), said
    assert "stderr: \\x1b[2J\\x9b31m\\u202eevil" in said and 'got "\\x1b[2J\\x9b31m\\u202eevil"' in said


MISUSED = """
import os
import pytest

@pytest.fixture(scope="session", autouse=True)
def elsewhere(tmp_path_factory):  # before the sandbox starts, which reads --sandbox-mirrors then
    os.chdir(tmp_path_factory.mktemp("elsewhere"))

def test_record_mode_of_a_scripted_agent(sandbox_run):
    sandbox_run(pack="controlled-form", record_mode="bogus")

@pytest.mark.sandbox_pack(pack_id="controlled-form")
def test_marker_keyword_and_a_changed_folder(sandbox_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    attempt = sandbox_run()
    assert attempt.status == "completed", attempt.explain()
    print("ATTEMPT", attempt.directory)
"""


async def test_misused_options_are_refused_and_a_relative_out_is_pytests_folders(tmp_path):
    """record_mode= of an agent with no cassette was taken in silence; the marker's keyword form
    was ignored ("sandbox_run needs a pack"); a relative --sandbox-out was taken from the folder
    the test had changed to, and a file given as --sandbox-out failed every test with a FileExistsError
    (one in the way above it, every test with a NotADirectoryError). A relative --sandbox-mirrors
    was read from the folder the test had changed to: no mirror was found."""
    misused, blocked = tmp_path / "misused", tmp_path / "blocked"
    misused.mkdir(), blocked.mkdir()
    (misused / "test_misused.py").write_text(MISUSED)
    (misused / "own-mirrors").symlink_to(MIRRORS_DIR)
    (blocked / "test_nothing.py").write_text("def test_nothing(sandbox_run):\n    pass\n")
    (blocked / "out").write_text("a file")
    (unwritable := tmp_path / "unwritable").mkdir()
    (unwritable / "test_attempt.py").write_text("def test_attempt(sandbox_run):\n    sandbox_run('controlled-form')\n")
    result, refused, under, unmade = await asyncio.gather(
        run_pytest(misused, "-q", "-s", *QUIET, "--sandbox-out", "attempts", "--sandbox-mirrors", "own-mirrors"),
        run_pytest(blocked, "-q", *QUIET, "--sandbox-out", "out"),
        run_pytest(blocked, "-q", *QUIET, "--sandbox-out", "out/attempts"),
        run_pytest(unwritable, "-q", *QUIET, "--sandbox-out", "/proc/sandbox-out"),  # no folder made there, by root too
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*agent 'reference' does not use a cassette: record_mode= is for model agents*"], consecutive=False
    )
    from sandbox.integrations.pytest_plugin import folder_of_test

    folder = misused / "attempts" / folder_of_test("test_misused.py::test_marker_keyword_and_a_changed_folder")
    result.stdout.fnmatch_lines([f"*ATTEMPT {folder / 'controlled-form-1'}*"])
    assert (folder / "controlled-form-1" / "score.json").is_file()
    assert refused.ret == pytest.ExitCode.USAGE_ERROR, refused.stdout.str()[-2000:]
    refused.stderr.fnmatch_lines([f"*--sandbox-out: {blocked / 'out'} is not a folder: give a folder*"])
    assert under.ret == pytest.ExitCode.USAGE_ERROR, under.stdout.str()[-2000:]
    under.stderr.fnmatch_lines(
        [f"*--sandbox-out: {blocked / 'out' / 'attempts'} is not a folder ({blocked / 'out'} is a file)*"]
    )
    unmade.assert_outcomes(failed=1)  # said as the test's failure, not a traceback
    unmade.stdout.fnmatch_lines(
        ["*--sandbox-out: the test's attempt folders cannot be made in /proc/sandbox-out/test_attempt.py*"]
    )
    assert "Traceback" not in unmade.stdout.str() and "def run(" not in unmade.stdout.str(), unmade.stdout.str()
