"""pytest plugin: regression tests for browser agents, in the user's own repository.

Active when the package is installed (entry point ``pytest11: sandbox``); ``-p no:sandbox``
turns it off. A test asks for ``sandbox_run`` and runs one attempt — a scripted or model
agent on a pack, against the offline mirrors, traced, gated and scored exactly as
``sandbox run`` does — then asserts on the outcome:

    @pytest.mark.sandbox_pack("bid-intake")
    def test_my_agent_still_qualifies(sandbox_run):
        attempt = sandbox_run(agent="openai:my-model")      # replays cassettes/<module>/<test>.yaml
        assert_qualified(attempt)                            # failing fields, gates, folder in the message

``assert_error_free`` also requires every field right; ``assert_field(attempt, "a.b")`` one field.

Agents that take a cassette (``openai:``, ``anthropic:``, and ``think:`` around one of them)
replay a vcrpy cassette kept next to the test file (``cassettes/<test module>/<test
name>.yaml``, as pytest-recording does; a test's second attempt ``<test name>-2.yaml`` and so
on). The record mode is ``--sandbox-record-mode`` (one of
``sandbox.runner.record_mode.RecordMode``: ``once``/``none``/``all``/``new_episodes``; default
``none``: nothing is recorded unless asked, so CI never reaches a model). Attempt folders go
to ``--sandbox-out`` (default: pytest's temporary directory; a relative one is in the folder
pytest was started in).

The warm sandbox (one Chromium for the test session, the ``sandbox_host`` fixture: a user's own
``sandbox`` fixture does not replace it) runs on its own event loop in a background thread, so
plain and async tests can use it alike, with or without pytest-asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from sandbox.runner.record_mode import RecordMode

# pytest loads this plugin into every test session where the package is installed: the sandbox
# (Playwright, scoring, agents) is imported when a test first asks for it, not at start-up.
if TYPE_CHECKING:
    from sandbox.evaluation.packs import Pack
    from sandbox.evaluation.scoring import ScoreReport


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sandbox", "browser-tool sandbox (offline agent regression tests)")
    group.addoption(
        "--sandbox-record-mode",
        choices=RecordMode.values(),
        default=None,
        help=f"vcrpy record mode for model agents' cassettes (default: none). {RecordMode.describe()}",
    )
    group.addoption(
        "--sandbox-out",
        type=Path,
        default=None,
        help="folder for the attempt folders (default: pytest's temporary directory)",
    )
    group.addoption(
        "--sandbox-mirrors",
        type=Path,
        action="append",
        default=None,
        help="mirror root to serve instead of the bundled mirrors (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sandbox_pack(pack_id): the pack sandbox_run uses when none is named")
    # the folder pytest was started in, for the roots and the out folder alike: a test that changes
    # folder (before the sandbox starts, or while it reads a page's body) changes neither
    roots = tuple(config.invocation_params.dir / root for root in config.getoption("sandbox_mirrors", None) or ())
    if roots:
        config.option.sandbox_mirrors = roots
    missing = [str(root) for root in roots if not root.is_dir()]
    if missing:  # said before any test, not as every test's failure
        raise pytest.UsageError(f"--sandbox-mirrors: no such mirror folder: {', '.join(missing)}")
    if roots:  # a manifest that is not one, too (as `sandbox run --mirrors`)
        from toolserver.contract.mirrors import MirrorStore

        try:
            MirrorStore.load(*roots)
        except ValueError as exc:
            raise pytest.UsageError(f"--sandbox-mirrors: {exc}") from None
    out = config.getoption("sandbox_out", None)
    if out is not None:
        out = config.invocation_params.dir / out
        if in_the_way := next((f for f in (out, *out.parents) if f.exists() and not f.is_dir()), None):
            raise pytest.UsageError(
                f"--sandbox-out: {out} is not a folder{'' if in_the_way == out else f' ({in_the_way} is a file)'}: "
                "give a folder for the attempt folders"
            )
        config.option.sandbox_out = out


class BackgroundSandbox:
    """A started ``Sandbox`` on its own event loop thread; ``call`` runs a coroutine there."""

    def __init__(self, mirror_roots: tuple[Path, ...]) -> None:
        from sandbox.runner.wiring import app_config, app_sandbox

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="sandbox", daemon=True)
        self.thread.start()
        self.sandbox = app_sandbox(app_config(mirror_roots=mirror_roots))
        try:
            self.call(self.sandbox.start())
        except BaseException:  # Chromium did not start, or the start was interrupted: nothing left running
            self.close()
            raise

    def call(self, coroutine):
        """The coroutine's result, run on the sandbox's loop. Interrupted (Ctrl-C, pytest-timeout's
        signal), it is cancelled and given ``CANCEL_WAIT_S`` to end (an attempt records itself as
        stopped and closes its run) before the interruption goes on: else it ran on, to its end."""
        ended = threading.Event()

        async def run():
            try:
                return await coroutine
            finally:
                ended.set()

        future = asyncio.run_coroutine_threadsafe(run(), self.loop)
        try:
            return future.result()
        except BaseException:
            if not future.done():  # interrupted here, not raised there
                future.cancel()
                ended.wait(CANCEL_WAIT_S)
            raise

    def close(self) -> None:
        try:
            self.call(self.sandbox.stop())  # a half-started one's too: what started is stopped
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=30)


CANCEL_WAIT_S = 10.0  # an interrupted call's wait for its coroutine to end (a run's close is bounded by 8 s)


@dataclass(frozen=True)
class Attempt:
    """One finished attempt: its verdict, its score report and where its files are."""

    pack: str
    agent: str
    status: str
    error: str | None
    report: ScoreReport
    directory: Path

    @property
    def qualified_pass(self) -> bool:
        return self.report.qualified_pass

    @property
    def trace_path(self) -> Path:
        return self.directory / "trace.jsonl"

    def explain(self) -> str:
        """Why the attempt did (not) qualify, with the evidence: fields, gates, files. Each value or
        message is cut at ``SHOWN_CHARACTERS`` (the agent's error at four times that), the output
        contract's errors after ``SHOWN_ERRORS``: the attempt folder holds them whole. The characters
        a terminal acts on are written as escapes (``sandbox.evaluation.shown``)."""
        from sandbox.evaluation.shown import shown
        from toolserver.floods import cut_text

        report = self.report
        verdict = (
            "error-free pass" if report.error_free else "qualified pass" if report.qualified_pass else "NOT qualified"
        )
        lines = [
            f"{self.pack} [{self.agent}]: {verdict} "
            f"(status {self.status}, field accuracy {float(report.field_accuracy):.3f})"
        ]
        if self.error:
            lines.append(f"  agent error: {cut_text(self.error, 4 * SHOWN_CHARACTERS)}")
        lines += [f"  reason: {cut_text(reason, SHOWN_CHARACTERS)}" for reason in report.reasons]
        for field in report.fields:
            if not field.correct:
                mark = "critical " if field.critical else ""
                lines.append(
                    f"  {mark}field {field.name}: expected {cut_text(repr(field.expected), SHOWN_CHARACTERS)}, "
                    f"got {cut_text(repr(field.got), SHOWN_CHARACTERS)}"
                    + (f" ({cut_text(field.detail, SHOWN_CHARACTERS)})" if field.detail else "")
                )
        for failure in report.gates.failures:
            at = f" (call seq {failure.seq})" if failure.seq is not None else ""
            lines.append(f"  gate {failure.gate}{at}: {cut_text(failure.message, SHOWN_CHARACTERS)}")
        if not report.output_contract.ok:
            errors = report.output_contract.errors
            lines += [
                f"  output contract: {cut_text(error.message, SHOWN_CHARACTERS)}" for error in errors[:SHOWN_ERRORS]
            ]
            if len(errors) > SHOWN_ERRORS:
                lines.append(f"  output contract: (+{len(errors) - SHOWN_ERRORS} more)")
        lines.append(f"  attempt folder: {self.directory}")
        report_html = self.directory / "report.html"
        if report_html.is_file():
            lines.append(f"  report: {report_html}")
        return shown("\n".join(lines))  # the agent's error and the reasons quote its text: shown escaped


SHOWN_CHARACTERS = 500  # of one value or message in a failure message
SHOWN_ERRORS = 3  # output contract errors in a failure message


def assert_qualified(attempt: Attempt) -> None:
    """Fail with the failing fields (expected vs got), gate violations and the attempt folder."""
    if not attempt.qualified_pass:
        pytest.fail(attempt.explain(), pytrace=False)


def assert_error_free(attempt: Attempt) -> None:
    """Fail unless the attempt is a qualified pass with every field right (the strictest check)."""
    if not attempt.report.error_free:
        pytest.fail(attempt.explain(), pytrace=False)


def assert_field(attempt: Attempt, name: str) -> None:
    """Fail unless the field ``name`` (dotted path) was answered correctly."""
    from toolserver.floods import cut_text

    for field in attempt.report.fields:
        if field.name == name:
            if not field.correct:
                pytest.fail(
                    f"field {name}: expected {cut_text(repr(field.expected), SHOWN_CHARACTERS)}, "
                    f"got {cut_text(repr(field.got), SHOWN_CHARACTERS)}\n"
                    f"{attempt.explain()}",
                    pytrace=False,
                )
            return
    pytest.fail(f"the pack {attempt.pack!r} scores no field {name!r}", pytrace=False)


@pytest.fixture(scope="session")
def sandbox_host(pytestconfig: pytest.Config):
    """The warm in-process sandbox (one Chromium for the whole test session) that ``sandbox_run``
    uses: a ``BackgroundSandbox`` (``.sandbox`` the started ``Sandbox``, ``.call(coroutine)``).
    Named apart from a ``sandbox`` fixture of the user's own, which would otherwise replace it."""
    from sandbox.paths import MIRRORS_DIR

    host = BackgroundSandbox(tuple(pytestconfig.getoption("sandbox_mirrors") or (MIRRORS_DIR,)))
    yield host
    host.close()


def default_cassette(request: pytest.FixtureRequest, call: int = 1) -> Path:
    """``cassettes/<module>/<test>.yaml`` beside the test file; a method's name is qualified by its
    classes (``TestA.TestInner.test_x``, as pytest-recording names one class deep), and a name with
    other characters than letters, digits, ``._-[]`` gets a short hash of the test's name, so no two
    tests share a cassette. The test's ``call``-th attempt with a default cassette, after the
    first, has one of its own: ``<test>-2.yaml``, ``<test>-3.yaml`` (a test's name has no ``-``
    but in its parameters' brackets or before its hash, so none is another test's)."""
    classes = [node.name for node in request.node.listchain() if isinstance(node, pytest.Class)]
    name = ".".join([*classes, request.node.name])
    if re.fullmatch(r"[A-Za-z0-9._\[\]-]+", name) is None:
        cleaned = re.sub(r"[^A-Za-z0-9._\[\]-]+", "_", name)
        name = f"{cleaned}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    suffix = f"-{call}" if call > 1 else ""
    return Path(request.path).parent / "cassettes" / Path(request.path).stem / f"{name}{suffix}.yaml"


def fail(message: str) -> NoReturn:
    """Fail the test with ``message`` alone: inside an ``except`` block pytest would print it twice,
    once as the exception being handled ("During handling of the above exception ...")."""
    raise pytest.fail.Exception(message, pytrace=False) from None


def resolve_pack(request: pytest.FixtureRequest, pack: str | None) -> Pack:
    from sandbox.evaluation.packs import PackError, load_pack

    marker = request.node.get_closest_marker("sandbox_pack")
    pack_id = pack or (marker_pack(marker) if marker else None)
    if not pack_id:
        pytest.fail("sandbox_run needs a pack: sandbox_run(pack=...) or @pytest.mark.sandbox_pack(...)", pytrace=False)
    try:
        return load_pack(pack_id)
    except PackError as exc:
        fail(f"pack {pack_id!r} cannot be loaded: {exc}")


def marker_pack(marker: pytest.Mark) -> str | None:
    """The pack of ``@pytest.mark.sandbox_pack("id")`` or ``sandbox_pack(pack_id="id")``."""
    if set(marker.kwargs) - {"pack_id"} or len(marker.args) + len(marker.kwargs) > 1:
        pytest.fail(
            f"@pytest.mark.sandbox_pack takes one pack id, as sandbox_pack('bid-intake') or "
            f"sandbox_pack(pack_id='bid-intake'); got args {marker.args!r}, keywords {marker.kwargs!r}",
            pytrace=False,
        )
    return marker.args[0] if marker.args else marker.kwargs.get("pack_id")


# The SDK's variables that point a model agent at an endpoint, by model kind.
ENDPOINT_VARIABLES = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
}


def prepare_cassette(host: BackgroundSandbox, pack: Pack, model_kind: str, cassette: Path, mode: RecordMode) -> None:
    from sandbox.runner.agents import MODEL_TOOL_FORMATS
    from sandbox.runner.cassettes import CassetteMismatch, check_cassette, nothing_recorded
    from toolserver.formats import tool_definitions

    try:
        missing = nothing_recorded(cassette)  # a folder or a path under a file: refused in every mode
    except CassetteMismatch as exc:
        fail(str(exc))
    if missing is not None:
        if mode is RecordMode.NONE:
            url, key = ENDPOINT_VARIABLES.get(model_kind, ENDPOINT_VARIABLES["openai"])
            pytest.fail(
                f"{missing} and the record mode is 'none'. Record one against your model "
                f"endpoint: set {url} (and {key}) and run pytest with --sandbox-record-mode once",
                pytrace=False,
            )
        return
    if mode is not RecordMode.ALL:  # the others replay what the cassette holds
        try:
            tools = tool_definitions(MODEL_TOOL_FORMATS[model_kind], host.sandbox.registry.schemas())
            check_cassette(cassette, pack, tools)
        except CassetteMismatch as exc:
            fail(str(exc))


def rerecord_hint(model_kind: str, record_mode: object) -> str:
    """How to record a test's cassette again, said when it cannot answer (``sandbox run``'s options
    are not pytest's)."""
    url = ENDPOINT_VARIABLES.get(model_kind, ENDPOINT_VARIABLES["openai"])[0]
    how = "this sandbox_run call's record_mode='all'" if record_mode else "pytest --sandbox-record-mode all"
    return f"record it again with {how}, {url} set to your model endpoint"


def folder_of_test(nodeid: str) -> str:
    """A test's folder under ``--sandbox-out``: its node id made a name (each run of other
    characters than letters, digits and ``._-``, as ``/`` and ``::``, becomes ``_``) with a short
    hash of the id whenever that changed it: ``tests/api_v1/test_x.py::test_y`` and
    ``tests/api/v1/test_x.py::test_y``, or ``test[a b]`` and ``test[a/b]``, would otherwise be one folder."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid)
    return name if name == nodeid else f"{name}-{hashlib.sha256(nodeid.encode()).hexdigest()[:8]}"


@pytest.fixture
def sandbox_run(request: pytest.FixtureRequest, sandbox_host: BackgroundSandbox, tmp_path: Path):
    """``sandbox_run(pack=None, agent="reference", cassette=None, record_mode=None, time_limit=None)``
    runs one attempt and returns an ``Attempt``."""
    from sandbox.evaluation.scoring import ScoreReport
    from sandbox.runner.agents import AGENT_KINDS, AgentOptions, make_agent
    from sandbox.runner.attempt import RECORDING_ERROR, run_attempt
    from sandbox.runner.prices import finite_number
    from sandbox.runner.report import write_attempt_report

    config = request.config
    out = config.getoption("sandbox_out")
    counter = itertools.count(1)
    cassette_calls = itertools.count(1)  # the calls with a default cassette: each has its own

    def run(
        pack: str | None = None,
        agent: str = "reference",
        *,
        cassette: Path | str | None = None,
        record_mode: RecordMode | str | None = None,
        time_limit: float | None = None,
    ) -> Attempt:
        if time_limit is not None and not (finite_number(time_limit) and time_limit > 0):
            fail(f"time_limit={time_limit!r}: give a number of seconds above 0")  # as `sandbox run --time-limit`
        loaded = resolve_pack(request, pack)
        options = AgentOptions()
        try:
            uses_cassette = "cassette" in AGENT_KINDS.uses(agent)
        except ValueError as exc:
            fail(str(exc))
        if uses_cassette:
            given = record_mode or config.getoption("sandbox_record_mode") or RecordMode.NONE
            if given not in RecordMode.values():
                pytest.fail(
                    f"record_mode must be one of {', '.join(RecordMode.values())}, got {given!r}", pytrace=False
                )
            mode = RecordMode(given)
            # a relative path is the test file's, like the default: the same file from any folder
            if cassette is not None:
                path = Path(request.path).parent / cassette
            else:
                path = default_cassette(request, next(cassette_calls))
            model_kind = AGENT_KINDS.unwrap(agent).partition(":")[0]
            prepare_cassette(sandbox_host, loaded, model_kind, path, mode)
            path.parent.mkdir(parents=True, exist_ok=True)
            options = AgentOptions(
                cassette=path, record_mode=mode, rerecord_hint=rerecord_hint(model_kind, record_mode)
            )
        elif cassette is not None or record_mode is not None:
            given = "cassette" if cassette is not None else "record_mode"
            pytest.fail(
                f"agent {agent!r} does not use a cassette: {given}= is for model agents (openai:, anthropic:, "
                "think: around one)",
                pytrace=False,
            )
        try:
            instance = make_agent(agent, options)
        except ValueError as exc:
            fail(str(exc))
        base = Path(out) / folder_of_test(request.node.nodeid) if out else tmp_path
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a folder that cannot be written: said, where a traceback was
            fail(f"--sandbox-out: the test's attempt folders cannot be made in {base}: {exc.strerror or exc}")
        while True:  # beside an earlier session's attempt, kept, or one another process made just now
            directory = base / f"{loaded.id}-{next(counter)}"
            if directory.exists():
                continue
            try:
                outcome = sandbox_host.call(
                    run_attempt(sandbox_host.sandbox, loaded, instance, directory, time_limit=time_limit)
                )
            except FileExistsError as exc:  # made since, or a link to nothing (run_attempt makes its folder first)
                if exc.filename is not None and Path(exc.filename) == directory and os.path.lexists(directory):
                    continue  # else a file in the way above it, or one the attempt made later: said
                raise
            break
        if outcome.status == RECORDING_ERROR:  # no score to give: said, where a traceback was
            fail(f"{loaded.id} [{outcome.agent}]: {RECORDING_ERROR}: {outcome.reason}; its folder: {directory}")
        with contextlib.suppress(OSError):  # a full disk: the attempt is recorded all the same
            write_attempt_report(directory)  # the page a failure message names
        report = ScoreReport.model_validate_json((directory / "score.json").read_text(encoding="utf-8"))
        attempt_error = None
        if outcome.status != "completed":
            attempt_error = json.loads((directory / "attempt.json").read_text(encoding="utf-8")).get("error")
        return Attempt(loaded.id, outcome.agent, outcome.status, attempt_error, report, directory)

    return run
