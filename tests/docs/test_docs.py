"""The documentation stays true to the code: the generated reference is current, the check that
guards it fails when an option is added without regenerating, every event kind, transport error,
command and folder file the code has is documented, the site builds with --strict, and the README
stays short."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

from bs4 import BeautifulSoup

from sandbox import PROJECT_ROOT

GENERATOR = PROJECT_ROOT / "scripts" / "docs_reference.py"
VENV_BIN = Path(sys.executable).parent


def generator():
    spec = importlib.util.spec_from_file_location("docs_reference", GENERATOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_what_the_code_gives():
    docs = generator()
    assert docs.stale(docs.pages()) == []


def test_an_option_added_without_regenerating_the_reference_fails_the_check():
    docs = generator()
    from sandbox.cli import build_parser

    parser = build_parser()
    docs.subcommands(parser)["run"].add_argument("--brand-new-option", help="an option nobody documented")
    problems = docs.stale(docs.pages(parser))
    assert len(problems) == 1 and problems[0].startswith("docs/reference/cli.md is stale"), problems
    assert "--brand-new-option" in problems[0]


def test_docs_check_exits_1_naming_the_stale_page_when_a_command_gains_an_option():
    """The real `make docs-check` path (the script's main) with one command's register() extended,
    as a developer adding an option would leave it."""
    program = f"""
import sys
sys.path.insert(0, {str(PROJECT_ROOT)!r})
import sandbox.cli.commands.run as run
original = run.register
def register(subparsers):
    original(subparsers)
    subparsers.choices["run"].add_argument("--brand-new-option")
run.register = register
import importlib.util
spec = importlib.util.spec_from_file_location("docs_reference", {str(GENERATOR)!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.exit(module.main(["--check"]))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "docs/reference/cli.md is stale" in done.stderr and "--brand-new-option" in done.stderr
    assert "make docs-ref" in done.stderr
    clean = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr


def recorded_literals(pattern: str, *roots: str) -> set[str]:
    found: set[str] = set()
    for root in roots:
        for path in (PROJECT_ROOT / root).rglob("*.py"):
            found |= set(re.findall(pattern, path.read_text(encoding="utf-8")))
    return found


def test_every_event_kind_the_code_records_is_in_the_trace_reference():
    from toolserver.contract.events import EVENT_KINDS

    kinds = recorded_literals(r'record_event\(\s*"([a-z_]+)"', "toolserver", "sandbox")
    kinds |= {"policy_violation", "state_change"}  # recorded through their own helpers
    assert len(kinds) >= 15, kinds  # the pattern still finds the calls
    assert kinds <= set(EVENT_KINDS), sorted(kinds - set(EVENT_KINDS))


def test_the_http_transport_answers_only_with_error_types_the_reference_lists():
    """Every refusal is a ``RequestError`` subclass (listed, with its status, by the generated
    errors page); the error boundary itself answers only ``http_error`` and ``server_fault``."""
    from toolserver.errors import RequestError

    literal = recorded_literals(r'error_response\(\s*"([a-z_]+)"', "toolserver/transports")
    assert literal == {"http_error", "server_fault"}, literal
    page = (PROJECT_ROOT / "docs" / "reference" / "errors.md").read_text()
    kinds = {cls.type for cls in RequestError.__subclasses__()}
    assert len(kinds) >= 14, kinds
    for kind in kinds | literal:
        assert f"| `{kind}` |" in page, kind


def test_every_error_a_tool_call_ends_with_is_listed_among_the_tool_errors():
    """A call whose run ended gets ``unknown_run`` as its result (``ok: false``, ``isError``): the
    page listed it only among the HTTP transport's refusals."""
    from toolserver.errors import ToolError

    answered = recorded_literals(r'error = \{"type": "([a-z_]+)"', "toolserver")
    assert answered >= {"unknown_run", "server_fault"}, answered  # the pattern still finds the dispatcher's
    page = (PROJECT_ROOT / "docs" / "reference" / "errors.md").read_text()
    tool_errors = page.split("## Tool errors", 1)[1].split("\n## ", 1)[0]
    for kind in answered | {cls.type for cls in ToolError.__subclasses__()}:
        assert f"| `{kind}` |" in tool_errors, kind


def test_every_command_says_what_its_exit_codes_mean():
    docs = generator()
    from sandbox.cli import build_parser
    from sandbox.cli.exits import exit_codes

    leaves = [(name, sub) for name, _, sub in docs.commands(build_parser()) if not docs.subcommands(sub)]
    assert len(leaves) >= 14
    for name, sub in leaves:
        codes = exit_codes(sub)
        assert 0 in codes, name
        assert " ".join(sub.format_help().split()).endswith(codes[max(codes)]), name  # and --help says so


def test_every_option_of_every_command_says_what_it_does():
    """The reference's option tables had empty cells (run --repeats, serve --port, ...)."""
    docs = generator()
    from sandbox.cli import build_parser

    silent = [
        f"{name} {'/'.join(action.option_strings) or action.dest}"
        for name, _, sub in docs.commands(build_parser())
        for action in sub._actions
        if not action.help and not isinstance(action, argparse._SubParsersAction)
    ]
    assert silent == []


def test_every_file_a_batch_writes_is_in_the_folders_reference(tmp_path):
    from sandbox.runner.files import ATTEMPT_FILES, BATCH_FILES

    done = subprocess.run(
        [VENV_BIN / "sandbox", "run", "controlled-form", "--agent", "reference", "--out", tmp_path,
         "--playwright-trace", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (batch,) = tmp_path.iterdir()
    # shots/<seq>.png, and a run's later sessions' playwright-trace-2.zip, ...
    attempt_patterns = [name.replace("<seq>", "*") for name in ATTEMPT_FILES] + ["playwright-trace-*.zip"]
    seen = set()
    for path in batch.rglob("*"):
        if path.is_dir():
            continue
        relative = path.relative_to(batch)
        if len(relative.parts) == 1:
            assert relative.name in BATCH_FILES, relative
            continue
        inside = str(Path(*relative.parts[1:]))
        match = next((pattern for pattern in attempt_patterns if fnmatch(inside, pattern)), None)
        assert match, f"{inside} is written but not in ATTEMPT_FILES"
        seen.add(match)
    assert {"trace.jsonl", "score.json", "attempt.json", "shots/*.png", "playwright-trace.zip"} <= seen


def test_the_site_builds_strict(tmp_path):
    done = subprocess.run(
        [VENV_BIN / "mkdocs", "build", "--strict", "--quiet", "--site-dir", tmp_path / "site"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "make run" in home and "make test" in home
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()
    # Every table row of the reference has its header's cells: a `|` in a cell (a type "string | null",
    # a flag "local|ray") once split rows, shifting the columns and losing the descriptions.
    for page in (tmp_path / "site" / "reference").glob("*/index.html"):
        for table in BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find_all("table"):
            width = len(table.find_all("th"))
            for row in table.find_all("tr")[1:]:
                cells = [td.get_text() for td in row.find_all("td")]
                assert len(cells) == width, (page.parent.name, cells)
                assert not any("\\|" in text or "%%" in text for text in cells), (page.parent.name, cells)


def test_the_readme_is_short_and_shows_the_two_commands():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 10 * 1024
    assert "make run" in readme and "make test" in readme
    for link in re.findall(r"\]\(([^)#]+)\)", readme):  # every relative link points at a file
        if "://" not in link:
            assert (PROJECT_ROOT / link).exists(), link


def test_a_second_benchmark_run_within_the_minute_is_published_beside_the_first(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(PROJECT_ROOT / "scripts"))  # as running the script puts it first
    spec = importlib.util.spec_from_file_location("bench", PROJECT_ROOT / "scripts" / "bench.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    record = {"date": "2026-12-04T20:01:07+00:00", "section": "workflow", "commit": "9e7715f" + "0" * 33}
    names = [bench.publish(record, f"run {number}\n", tmp_path) for number in (1, 2, 3)]
    stamp = "2026-12-04T2001-workflow-9e7715f"
    assert names == [f"{stamp}.json", f"{stamp}-2.json", f"{stamp}-3.json"]
    assert [(tmp_path / name).read_text() for name in names] == ["run 1\n", "run 2\n", "run 3\n"]
