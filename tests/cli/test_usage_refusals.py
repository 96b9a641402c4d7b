"""Command lines that cannot do what they say are refused with exit 2 and one line, not run to a
result that looks like another (an attached server's options dropped, zero model turns, a policy
without a pack), and a command that did nothing does not exit 0."""

from __future__ import annotations

import json

import pytest

from sandbox.cli import build_parser, main
from tests.support.har import har_entry

RUN = ["run", "controlled-form", "--agent", "openai:gpt-x"]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--max-turns", "0"], "argument --max-turns: 0: give a positive number"),
        (["--max-turns", "-3"], "argument --max-turns: -3: give a positive number"),
        (["--with", "max-turns=0"], "--with max-turns: 0: give a positive number"),
        (["--with", "max-turns=-1"], "--with max-turns: -1: give a positive number"),
        (["--with", "max-turns=many"], "--with max-turns: 'many' is not a whole number"),
        (["--with", "label="], "--with label= is empty: give --agent openai:gpt-x a name (--with label=NAME)"),
        (["--with", "label= "], "--with label= is empty"),
    ],
)
def test_a_model_agent_with_no_turns_or_an_empty_label_is_refused(capsys, extra, said):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*RUN, *extra])
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err
    args = build_parser().parse_args([*RUN, "--max-turns", "1", "--with", "max-turns=2", "--with", "label=mine"])
    assert (args.max_turns, args.agents[0]["with"]) == (1, {"max-turns": "2", "label": "mine"})


def test_every_server_option_given_with_attach_is_refused_and_named(capsys):
    given = [
        ["--policy", "observe"],
        ["--block-state-changes"],
        ["--trace-dir", "/elsewhere"],
        ["--mirrors", "/elsewhere"],
        ["--fallback-provider", "other"],
        ["--approvals"],
        ["--timeout-action", "9"],
        ["--timeout-navigation", "9"],
        ["--faults", "mirror-5xx"],
        ["--faults-seed", "5"],
    ]
    attach = ["mcp", "--attach", "http://127.0.0.1:1", "--name", "x"]  # port 1: nothing answers there
    for option in given:
        assert main([*attach, *option]) == 2, option
        assert capsys.readouterr().err.startswith(f"sandbox mcp: {option[0]} belongs to the server at"), option
    assert main([*attach, "--trace-dir", "/elsewhere", "--timeout-action", "9", "--faults-seed", "5"]) == 2
    assert "--trace-dir, --timeout-action, --faults-seed belong to the server" in capsys.readouterr().err
    assert main([*attach, "--trace-dir", "runs/traces", "--faults-seed", "0"]) == 3  # the defaults: not refused
    assert "belong" not in capsys.readouterr().err


@pytest.mark.parametrize("policy", ["observe", "enforce"])
def test_mcp_policy_without_a_pack_is_refused(tmp_path, capsys, policy):
    assert main(["mcp", "--policy", policy, "--trace-dir", str(tmp_path / "traces")]) == 2
    assert capsys.readouterr().err == (
        f"sandbox mcp: --policy {policy} goes with --pack: without a pack there are no allowed URLs to enforce or "
        "observe\n"
    )
    assert not (tmp_path / "traces").exists()


def test_bare_sandbox_prints_its_help_on_stderr_as_a_command_group_does(capsys):
    assert main([]) == 2
    bare = capsys.readouterr()
    assert bare.out == "" and bare.err.startswith("usage: sandbox ")
    assert main(["mirror"]) == 2
    group = capsys.readouterr()
    assert group.out == "" and group.err.startswith("usage: sandbox mirror ")


def test_report_with_a_folder_as_junit_exits_2_as_run_does(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--junit", str(tmp_path)]) == 2
    assert f"--junit {tmp_path}: cannot write a file there (it is a folder)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def har_of(*entries: tuple[str, int]) -> dict:
    return {"log": {"entries": [har_entry(url, status=status) for url, status in entries]}}


@pytest.mark.parametrize(
    "entries",
    [
        [("ws://example.org/socket", 101), ("https://example.org/blocked", 0), ("data:text/plain,hi", 200)],
        [],
    ],
    ids=["every-entry-skipped", "no-entry"],
)
def test_import_har_that_imports_nothing_exits_1(tmp_path, capsys, entries):
    har = tmp_path / "input.har"
    har.write_text(json.dumps(har_of(*entries)))
    assert main(["mirror", "import-har", str(har), "--into", str(tmp_path / "m")]) == 1
    said = capsys.readouterr()
    assert said.out.startswith("imported 0 response(s)")
    assert f"sandbox mirror: nothing imported from {har}: it has no response that can be mirrored" in said.err
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").iterdir())
    har.write_text(json.dumps(har_of(("https://example.org/kept.txt", 200), ("ws://example.org/socket", 101))))
    assert main(["mirror", "import-har", str(har), "--into", str(tmp_path / "m")]) == 0


def test_the_exit_codes_page_says_ctrl_c_exits_130_for_every_command():
    import importlib.util

    from sandbox.paths import PROJECT_ROOT

    spec = importlib.util.spec_from_file_location("docs_reference", PROJECT_ROOT / "scripts" / "docs_reference.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    page = generator.render_exit_codes(build_parser())
    assert "and 130 when Ctrl-C (SIGINT) stops it, with one line (`sandbox COMMAND: stopped (Ctrl-C)`)" in page
