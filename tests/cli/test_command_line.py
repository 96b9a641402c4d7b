"""What every command shares: numbers checked as the command line is read, and a reader of the
output that has gone (a closed pipe) ends the command quietly."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.paths import PROJECT_ROOT


def test_every_command_and_subcommand_prints_its_help(capsys):
    """Help text is a %-format for argparse: a bare % in any help string broke `sandbox --help`."""
    from sandbox.cli import build_parser

    def helped(parser: argparse.ArgumentParser, path: list[str]) -> int:
        with pytest.raises(SystemExit) as exit_:
            build_parser().parse_args([*path, "--help"])
        assert exit_.value.code == 0, path
        assert "usage: " in capsys.readouterr().out, path
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return 1 + sum(helped(sub, [*path, name]) for group in subcommands for name, sub in group.choices.items())

    assert helped(build_parser(), []) > 15


@pytest.mark.parametrize(
    "value, says",
    [
        ("0", "0 s: give a number of seconds above 0"),
        ("-5", "-5 s: give a number of seconds above 0"),
        ("soon", "'soon' is not a number of seconds"),
        ("inf", "inf s: give a number of seconds above 0"),
    ],
)
def test_a_time_limit_that_is_not_above_zero_is_refused(capsys, value, says):
    from sandbox.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["run", "bid-intake", "--agent", "reference", "--time-limit", value])
    assert exit_.value.code == 2
    assert f"argument --time-limit: {says}" in capsys.readouterr().err
    args = build_parser().parse_args(["run", "bid-intake", "--agent", "reference", "--time-limit", "2.5"])
    assert args.time_limit == 2.5


def test_a_closed_pipe_ends_the_command_with_141_and_no_traceback():
    reading, writing = os.pipe()
    os.close(reading)  # the reader has gone before the command writes: its write fails (EPIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sandbox", "mirror", "list"],
            stdout=writing,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writing)
    assert (done.returncode, done.stderr) == (141, "")


def sandbox_command(*args: str, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


@pytest.mark.parametrize(
    "chromium, says",
    [
        ("/bin/true", "Chromium (/bin/true) did not start: BrowserType.launch: "),
        ("/nowhere/chrome", "SANDBOX_CHROMIUM is /nowhere/chrome, which is not a file: give the path of a Chromium"),
    ],
)
@pytest.mark.parametrize("command", ["run", "serve"])
def test_a_chromium_that_cannot_start_is_one_line_exit_two_and_no_batch_folder(tmp_path, chromium, says, command):
    args = ["run", "bid-intake", "--agent", "reference", "--out", str(tmp_path / "out")] if command == "run" else []
    with socket.socket() as probe:  # a port free now
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    done = sandbox_command(*(args or ["serve", "--port", port]), env={"SANDBOX_CHROMIUM": chromium}, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"sandbox {command}: {says}"), line
    assert done.stdout == ""  # no table, and no "tool server on" line before the browser is up
    assert not list((tmp_path / "out").glob("*"))  # no empty batch folder


REQUIRED = "sandbox run: error: the following arguments are required: --agent;"
UNRECOGNISED = "error: unrecognized arguments:"
NEAREST = "(did you mean --agent?)"


@pytest.mark.parametrize(
    "args, usage, said",
    [  # an argparse error with its command's usage (not the top level's), and the nearest option
        (["mcp", "--pak", "bid-intake"], "mcp", f"sandbox mcp: {UNRECOGNISED} --pak bid-intake; did you mean --pack?"),
        (["run", "bid-intake", "--agnet", "x"], "run", f"{REQUIRED} --agnet is not an option of sandbox run {NEAREST}"),
        (["export", "runs/x", "out.eval"], "export", f"sandbox export: {UNRECOGNISED} out.eval"),
        (["mirror", "import-har", "q.har", "--into", "m", "--inot", "x"], "mirror import-har",
         f"sandbox mirror import-har: {UNRECOGNISED} --inot x; did you mean --into?"),  # the innermost command's
        (["run", "bid-intake", "--agen", "x", "--repeats", "abc"], "run",  # an abbreviation argparse takes: no hint
         "sandbox run: error: argument --repeats: invalid int value: 'abc'"),
        (["rnu", "--agent", "x"], "", "sandbox: error: argument COMMAND: invalid choice: 'rnu' (choose from *); "
         "did you mean run?"),  # the choices are quoted or not, by Python's version
    ],
)  # fmt: skip
def test_a_mistyped_command_line_is_said_with_its_command_and_the_nearest_option(args, usage, said):
    done = sandbox_command(*args)
    assert done.returncode == 2 and fnmatch.fnmatchcase(done.stderr.rstrip().splitlines()[-1], said), done.stderr
    assert done.stderr.startswith(f"usage: sandbox {usage}".rstrip() + " ")


def test_an_agent_without_its_value_says_how_to_write_it():
    done = sandbox_command("run", "bid-intake", "--agent", "cmd:")
    assert done.returncode == 2
    assert done.stderr == "sandbox run: agent 'cmd:' is missing its value after cmd: write it as cmd:\"COMMAND\"\n"


def test_an_out_or_junit_path_that_cannot_be_written_is_refused_before_the_batch(tmp_path):
    (tmp_path / "a-file").write_text("")
    run = ["run", "bid-intake", "--agent", "reference"]
    done = sandbox_command(*run, "--out", str(tmp_path / "a-file"))
    assert (
        done.returncode == 2
        and done.stderr == f"sandbox run: cannot make a batch folder in {tmp_path}/a-file: File exists\n"
    )
    done = sandbox_command(*run, "--out", str(tmp_path / "out"), "--junit", "/proc/x.xml")
    assert done.returncode == 2 and done.stderr.startswith(
        "sandbox run: --junit /proc/x.xml: cannot write a file there ("
    )
    assert not (tmp_path / "out").exists()  # refused before the batch


CASSETTES = Path(__file__).resolve().parents[2] / "fixtures" / "cassettes"


@pytest.mark.parametrize(
    "cassette, says",
    [
        ("openai-bid-intake.yaml", "was recorded for pack 'bid-intake', not for 'controlled-form': re-record it"),
        ("broken.yaml", "broken.yaml cannot be read: "),
        ("strings.yaml", "strings.yaml cannot be read: interaction 1 is str 'x', not a mapping of a request"),
        ("missing.yaml", "no cassette at {folder}/missing.yaml and the record mode is 'none': record one first"),
        ("empty.yaml", "the cassette {folder}/empty.yaml is empty and the record mode is 'none': record one first"),
    ],
)
def test_a_cassette_that_cannot_replay_the_pack_is_refused_before_the_batch(tmp_path, cassette, says):
    # The pytest plugin refused a cassette recorded for another pack; `sandbox run` replayed it.
    (tmp_path / "broken.yaml").write_text('interactions: [{"request": ')
    (tmp_path / "strings.yaml").write_text("interactions: [x, y]\n")  # an AttributeError traceback, exit 1
    (tmp_path / "empty.yaml").write_text("")  # it ran the batch, each attempt failing in vcrpy's "couldn't be loaded"
    path = CASSETTES / cassette if (CASSETTES / cassette).is_file() else tmp_path / cassette
    run = ["run", "controlled-form", "--agent", "openai:scripted-browser-1", "--out", str(tmp_path / "out")]
    done = sandbox_command(*run, "--cassette", str(path), "--record-mode", "none")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("sandbox run: ") and says.format(folder=tmp_path) in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", ["none", "once", "all"])
def test_a_folder_given_as_a_cassette_is_refused_before_the_batch_in_every_record_mode(tmp_path, mode):
    """With none it was "no cassette at" the folder; with once or all the attempts talked to the
    model to the end, then crashed in an IsADirectoryError as vcrpy saved the recording."""
    (tmp_path / "folder.yaml").mkdir()
    run = ["run", "bid-intake", "--agent", "openai:m", "--base-url", "http://127.0.0.1:9/v1"]
    done = sandbox_command(
        *run, "--out", str(tmp_path / "out"), "--cassette", str(tmp_path / "folder.yaml"), "--record-mode", mode
    )
    assert done.returncode == 2 and done.stderr == (
        f"sandbox run: cassette {tmp_path}/folder.yaml is a folder, not a file: pass the path of a cassette file\n"
    ), done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", ["all", "once", "new_episodes"])
def test_recording_a_cassette_on_ray_at_a_concurrency_is_refused_before_the_batch(tmp_path, mode):
    """Ray's workers are processes of their own: the attempts recording one cassette did not take
    turns (the turn is per process), and each saved its conversation over the others'."""
    run = ["run", "bid-intake", "--agent", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path)]
    cassette = tmp_path / "new.yaml"
    done = sandbox_command(
        *run, "--cassette", str(cassette), "--record-mode", mode, "--executor", "ray", "--concurrency", "2",
        "--repeats", "3",
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr == (
        f"sandbox run: --executor ray with --cassette {cassette} recording (record mode {mode}) at --concurrency 2: "
        "its attempts would record it at once in separate worker processes, each over the others' conversation; "
        "record it with --concurrency 1 (or --repeats 1), then replay it at any concurrency\n"
    ), done.stderr
    assert not cassette.exists()


def test_one_cassette_given_to_two_agents_is_refused_before_the_batch(tmp_path):
    """Two agents each given the same file with --with cassette= both recorded into it, each saving
    over the other's conversation (in two Ray workers at once, or one after the other here)."""
    cassette = tmp_path / "shared.yaml"
    done = sandbox_command(
        "run", "bid-intake", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "out"),
        "--agent", "openai:a", "--with", f"cassette={cassette}",
        "--agent", "openai:b", "--with", f"cassette={cassette}",
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr == (
        f"sandbox run: cassette {cassette} is given to several agents: give each its own (--with cassette=FILE)\n"
    ), done.stderr
    assert not (tmp_path / "out").exists() and not cassette.exists()


def test_a_replay_agent_without_a_trace_is_refused_before_the_batch(tmp_path):
    done = sandbox_command("run", "bid-intake", "--agent", f"replay:{tmp_path}/nowhere", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"sandbox run: replay:{tmp_path}/nowhere: no trace.jsonl there; give an attempt folder\n"
    assert not (tmp_path / "out").exists()


def test_an_answer_with_a_lone_surrogate_escape_is_scored_and_printed_without_a_traceback(tmp_path):
    """JSON may escape half a surrogate pair ("\\ud800"); Python reads it into a str that UTF-8
    cannot encode. Printing the report ended in a UnicodeEncodeError and exit 1."""
    folder = shutil.copytree(PROJECT_ROOT / "fixtures" / "attempts" / "reference" / "bid-intake", tmp_path / "a")
    output = (folder / "output.txt").read_text(encoding="utf-8")
    assert '"title": "Install Gravel Pad"' in output
    (folder / "output.txt").write_text(output.replace('"Install Gravel Pad"', '"Install Gravel Pad \\ud800"'))
    sandbox = str(Path(sys.executable).with_name("sandbox"))
    for extra in ([], ["--json"]):
        done = subprocess.run([sandbox, "score", str(folder), *extra], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr  # a non-critical field
    assert json.loads(done.stdout)["qualified_pass"] is True


def test_a_cassette_of_the_other_model_api_is_said_as_such(tmp_path):
    """It was said as tool schemas that differ in every tool, which sent one looking at the tools."""
    run = ["run", "bid-intake", "--agent", "anthropic:scripted-browser-1", "--out", str(tmp_path / "out")]
    done = sandbox_command(*run, "--cassette", str(CASSETTES / "openai-bid-intake.yaml"), "--record-mode", "none")
    assert done.returncode == 2 and "was recorded by an OpenAI agent; this agent is an Anthropic one" in done.stderr


def test_score_says_when_the_pack_is_not_the_one_the_attempt_ran_with(tmp_path, capsys):
    """Another pack of the same id (or the pack edited since) scored the attempt without a word."""
    from sandbox import FIXTURES_DIR
    from sandbox.cli import main

    folder = tmp_path / "attempt"
    shutil.copytree(FIXTURES_DIR / "attempts" / "reference" / "bid-intake", folder)
    attempt = json.loads((folder / "attempt.json").read_text()) | {"pack_checksum": "000000000000"}
    (folder / "attempt.json").write_text(json.dumps(attempt))
    assert main(["score", str(folder)]) == 0
    said = capsys.readouterr().err
    assert "is not the pack the attempt ran with (checksum 000000000000): give that pack's folder" in said


def test_score_with_another_pack_names_the_attempts_own(capsys):
    from sandbox import FIXTURES_DIR
    from sandbox.cli import main

    folder = FIXTURES_DIR / "attempts" / "reference" / "bid-intake"
    assert main(["score", str(folder), "--pack", "controlled-form"]) == 1
    said = capsys.readouterr().err
    assert "is an attempt of pack bid-intake, not controlled-form: scored with controlled-form as asked" in said
    assert "give that pack's folder" not in said


def test_a_file_that_is_not_a_trace_is_refused_and_a_damaged_trace_judged(tmp_path, capsys):
    """Any file was taken as a trace with no call lines, and judged: gates FAILED, exit 1."""
    from sandbox import FIXTURES_DIR
    from sandbox.cli import main

    (tmp_path / "prices.toml").write_text("[models.x]\ninput = 1\noutput = 2\n")
    for command in (["gates"], ["score", "--output", str(tmp_path / "prices.toml")]):
        assert main([*command, "--pack", "bid-intake", "--trace", str(tmp_path / "prices.toml")]) == 2
        assert f"{tmp_path}/prices.toml is not a trace: no line of it is a trace line (line 1" in (
            capsys.readouterr().err
        )
    trace = (FIXTURES_DIR / "attempts" / "reference" / "bid-intake" / "trace.jsonl").read_text()
    (tmp_path / "trace.jsonl").write_text(trace + "{cut short\n")
    assert main(["gates", "--pack", "bid-intake", "--trace", str(tmp_path / "trace.jsonl")]) == 1  # judged
    assert "[measurement] unreadable trace line (line 13: " in capsys.readouterr().out


def test_a_file_that_cannot_be_written_is_named_as_asked_not_by_its_temporary(capsys):
    """It was named by the temporary file written beside it (/proc/.r.html.16991.tmp)."""
    from sandbox import FIXTURES_DIR
    from sandbox.cli import main

    attempts = FIXTURES_DIR / "attempts" / "reference"
    assert main(["export", str(attempts), "-o", "/proc/x.eval"]) == 3  # 2 before: "bad usage"
    assert capsys.readouterr().err == "sandbox export: cannot write the log /proc/x.eval: No such file or directory\n"
    assert main(["replay", str(attempts / "bid-intake"), "--report", "/proc/r.html"]) == 2  # checked before the replay
    said = capsys.readouterr().err
    assert said == "sandbox replay: --report /proc/r.html: cannot write a file there (No such file or directory)\n"


def test_run_and_replay_take_mirrors_of_their_own(tmp_path, capsys):
    """Neither had --mirrors: a pack of one's own could not be run or replayed on pages of its own."""
    from sandbox import FIXTURES_DIR
    from sandbox.cli import main
    from tests.support.mirrors import mirror_with_changes

    path = "api/opps/v2/bid-intake/9998b42f9e27421caa565fead7d8d416.json"
    mirror = mirror_with_changes(tmp_path, "sam.gov", {path: [('"78596"', '"78597"')]})
    args = ["--agent", "reference", "--out", str(tmp_path / "runs"), "--no-progress", "--screenshots", "none"]
    assert main(["run", "bid-intake", *args, "--mirrors", str(mirror)]) == 0
    capsys.readouterr()
    [score] = (tmp_path / "runs").glob("*/bid-intake-1/score.json")  # the reference read the changed page
    wrong = [f for f in json.loads(score.read_text())["fields"] if not f["correct"]]
    assert [(f["name"], f["got"]) for f in wrong] == [("place.postal_code", "78597")], wrong
    recorded = FIXTURES_DIR / "attempts" / "reference" / "bid-intake"
    assert main(["replay", str(recorded), "--mirrors", str(mirror)]) == 1
    assert "first divergence at seq" in capsys.readouterr().out
    assert main(["run", "bid-intake", *args, "--mirrors", str(tmp_path / "nowhere")]) == 2
    assert "no such mirror folder" in capsys.readouterr().err


async def test_serve_takes_packs_of_ones_own(tmp_path):
    """A pack folder's path was an unknown pack over HTTP: own packs could not be served."""
    import aiohttp

    from sandbox import PACKS_DIR
    from tests.support.serve import free_port, wait_healthy

    mine = tmp_path / "my-form"
    shutil.copytree(PACKS_DIR / "controlled-form", mine)
    card = json.loads((mine / "card.json").read_text()) | {"pack_id": "my-form", "scoring_pack": "my-form"}
    (mine / "card.json").write_text(json.dumps(card))
    port = free_port()
    sandbox = Path(sys.executable).with_name("sandbox")
    server = subprocess.Popen(
        [sandbox, "serve", "--port", str(port), "--pack", str(mine), "--trace-dir", str(tmp_path / "traces")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        await wait_healthy(base, server)
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/runs", json={"pack": "my-form"}) as created:
                assert created.status == 201, await created.text()
                run_id = (await created.json())["run_id"]
            async with http.get(f"{base}/runs/{run_id}/task") as task:
                assert "sarah27h.github.io" in " ".join((await task.json())["allowed_urls"])
            async with http.post(f"{base}/runs", json={"pack": "my-frm"}) as unknown:
                assert "; and from folders: my-form" in (await unknown.json())["error"]["message"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_score_and_replay_load_the_pack_of_ones_own_an_attempt_ran(tmp_path, capsys, monkeypatch):
    """Its id only was recorded: `score` and `replay` loaded the bundled pack of that id (the
    verdict flipped), or none at all from another folder."""
    from sandbox import PACKS_DIR
    from sandbox.cli import main

    mine = tmp_path / "own" / "controlled-form"
    shutil.copytree(PACKS_DIR / "controlled-form", mine)
    expected = json.loads((mine / "expected.json").read_text())
    expected[0]["fields"]["city"] = "Lisboa"  # the reference agent's answer no longer qualifies here
    (mine / "expected.json").write_text(json.dumps(expected))
    monkeypatch.chdir(tmp_path / "own")
    args = ["--agent", "reference", "--out", str(tmp_path / "runs"), "--no-progress", "--screenshots", "none"]
    assert main(["run", "./controlled-form", *args]) == 1
    [attempt] = (tmp_path / "runs").glob("*/controlled-form-1")
    assert json.loads((attempt / "attempt.json").read_text())["pack_path"] == str(mine)
    monkeypatch.chdir(tmp_path)  # elsewhere: the recorded folder is found all the same
    capsys.readouterr()
    assert main(["score", str(attempt)]) == 1 and "NOT A QUALIFIED PASS" in capsys.readouterr().out
    assert main(["replay", str(attempt)]) == 1 and "qualified_pass=False" in capsys.readouterr().out
    (mine / "rules.json").write_text((mine / "rules.json").read_text() + "\n")  # the pack edited since
    assert main(["replay", str(attempt)]) == 1
    assert "is not the one the attempt ran with (checksum " in capsys.readouterr().out
