"""`sandbox replay` as a person uses it: the divergence message shows where the texts differ
(not their first 200 characters), --report marks the first divergence on the attempt's
timeline, and the exit code reflects a failing re-score as well as a divergence."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from sandbox import FIXTURES_DIR, PROJECT_ROOT
from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import run_batch
from sandbox.runner.replay import first_difference, short_repr
from tests.support.attempt_folders import scored_attempt
from tests.support.reports import open_report
from tests.support.serve import free_port

SAMPLES = FIXTURES_DIR / "attempts"


def test_a_long_text_difference_is_shown_where_it_is():
    recorded = '- heading "Enter Personal Details"\n' * 20 + "- text: City São Paulo\n" + "- button Next\n" * 20
    replayed = recorded.replace("São Paulo", "Sao Paulo")
    message = first_difference({"result": {"snapshot": recorded}}, {"result": {"snapshot": replayed}})
    index = recorded.index("São")
    assert message.startswith(f".result.snapshot: first difference at character {index + 1} (line 21)")
    assert "City São Paulo" in message and "City Sao Paulo" in message
    assert "Enter Personal Details\\n- heading" not in message.split("\n")[1][:20]  # not the beginning
    assert first_difference({"n": 1}, {"n": 2}) == ".n: recorded 1, replayed 2"


def test_a_list_of_another_length_names_the_item_that_differs():
    one, two = {"id": "t1", "url": "https://a.example/"}, {"id": "t2", "url": "https://b.example/"}
    assert first_difference({"tabs": [one]}, {"tabs": [one, two]}) == (
        f".tabs[1]: new in replay: {short_repr(two)} (1 items recorded, 2 replayed)"
    )
    assert first_difference({"tabs": [one, two]}, {"tabs": [one]}).startswith(".tabs[1]: missing in replay: ")
    assert first_difference({"n": [1, 2]}, {"n": [3]}) == ".n[0]: recorded 1, replayed 3 (2 items recorded, 1 replayed)"


async def test_replay_report_marks_the_first_divergence(sandbox, tmp_path, capsys):
    folder = tmp_path / "bid-intake"
    shutil.copytree(SAMPLES / "reference" / "bid-intake", folder)
    lines = (folder / "trace.jsonl").read_text().splitlines()
    index, call = next(
        (i, json.loads(line))
        for i, line in enumerate(lines)
        if '"type": "call"' in line and '"browser_snapshot"' in line
    )
    call["result"]["snapshot"] = call["result"]["snapshot"].replace("Gravel", "Grovel", 1)
    lines[index] = json.dumps(call, ensure_ascii=False)
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")

    assert await asyncio.to_thread(main, ["replay", str(folder), "--report"]) == 1  # the CLI runs its own loop
    printed = capsys.readouterr().out
    assert f"first divergence at seq {call['seq']} (browser_snapshot): .result.snapshot: first difference" in printed
    assert "Grovel" in printed and "Gravel" in printed and "no divergence" not in printed
    assert printed.splitlines()[-1] == f"report: {folder / 'replay-report.html'}"
    page, context, _ = await open_report(sandbox, folder / "replay-report.html")
    try:
        marked = page.locator("article.call.divergence")
        assert await marked.count() == 1 and await marked.get_attribute("id") == f"call-{call['seq']}"
        await page.get_by_role("link", name=f"seq {call['seq']}").first.click()
        assert page.url.endswith(f"#call-{call['seq']}")
    finally:
        await context.close()


def test_replay_exit_code_reflects_a_failing_rescore(capsys):
    assert main(["replay", str(SAMPLES / "example-agent-bid-intake")]) == 1
    printed = capsys.readouterr().out
    assert "no divergence" in printed and "qualified_pass=False" in printed


async def recorded_off_the_list(sandbox, folder, site_key: str = "replayed") -> None:
    """An attempt folder recorded under observe with state changes blocked: a navigation off the
    list was not refused there (not_in_mirror), as it would be under enforce (policy_violation)."""
    folder.mkdir()
    pack = load_pack("controlled-form")
    run = sandbox.create_run(
        policy=pack.policy("observe", True), trace_path=folder / "trace.jsonl", header={"site_key": site_key}
    )
    start = {"provider": "kernel", "site_key": site_key, "url": "https://sarah27h.github.io/simple-multi-step-form/"}
    assert (await run.call("browser_start_session", start))["ok"]
    refused = await run.call("browser_navigate", {"url": "https://example.org/elsewhere"})
    assert refused["error"]["type"] == "not_in_mirror", refused
    await run.close()
    (folder / "attempt.json").write_text(json.dumps({"pack": pack.id, "site_key": site_key}))


async def test_replay_runs_under_the_recorded_policy(sandbox, tmp_path, capsys):
    """It ran under the server's (enforce): the off-list navigation diverged as a policy_violation."""
    await recorded_off_the_list(sandbox, tmp_path / "observed")
    assert await asyncio.to_thread(main, ["replay", str(tmp_path / "observed"), "--json"]) == 0  # no output.txt
    report = json.loads(capsys.readouterr().out)
    assert report["first_divergence"] is None, report["first_divergence"]
    assert (report["policy"], report["block_state_changes"]) == ("observe", True)


async def test_a_run_without_an_allow_list_replays_observed_and_other_mirrors_are_said(sandbox, tmp_path, capsys):
    """A trace whose header said policy none was replayed under enforce, where its off-list
    navigation diverged; a trace read from other mirrors was replayed on these without a word."""
    folder = tmp_path / "unlisted"
    await recorded_off_the_list(sandbox, folder, "unlisted")
    lines = (folder / "trace.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "run" and header["policy"] == "observe"
    header.update(policy="none", mirror_checksum="0123456789abcdef")
    (folder / "trace.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert await asyncio.to_thread(main, ["replay", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert "compared 2 (policy observe, state changes blocked)" in printed and "no divergence" in printed, printed
    assert (
        "the mirrors served are not the ones the recording read (checksum 0123456789abcdef): a page that changed "
        "diverges; give those mirrors with --mirrors DIR (a recording made before the checksum covered whole "
        "entries, on 2026-12-06, differs on any mirrors: re-record it to compare them)"
    ) in printed


async def test_a_bare_trace_is_compared_not_scored_and_recorded_faults_are_said(tmp_path, capsys):
    trace = (SAMPLES / "reference" / "bid-intake" / "trace.jsonl").read_text()
    fault = {"type": "event", "kind": "fault_injected", "t": 1.0, "wall": "2026-12-04T15:42:21.000+00:00",
             "data": {"fault": "mirror-delay", "detail": "a response 5 ms late"}}  # fmt: skip
    (tmp_path / "lone.jsonl").write_text(trace + json.dumps(fault) + "\n")
    assert await asyncio.to_thread(main, ["replay", str(tmp_path / "lone.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "no divergence" in printed and "re-score" not in printed
    assert "no recorded answer (a trace without its attempt folder): only the calls are compared" in printed
    assert "the recording had injected faults (mirror-delay); the replay has none" in printed


async def test_replay_until_on_a_port_in_use_is_one_line(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        args = ["replay", str(SAMPLES / "reference" / "bid-intake"), "--until", "2", "--hold", "1"]
        code = await asyncio.to_thread(main, [*args, "--port", str(taken.getsockname()[1])])
    captured = capsys.readouterr()
    assert code == 2 and "cannot serve the session on --port" in captured.err, captured.err
    assert "replayed" not in captured.out  # said before the replay, which it was not worth running
    args[-1:] = ["1", "--port", "70000"]  # --hold 1 --port 70000: an OverflowError's traceback before
    assert await asyncio.to_thread(main, args) == 2
    assert "--port 70000 is not a TCP port: give a number from 1 to 65535" in capsys.readouterr().err


async def test_replay_until_holds_the_session_open_on_its_port(capsys):
    from aiohttp import ClientSession

    port = free_port()
    args = ["replay", str(SAMPLES / "reference" / "bid-intake"), "--until", "2", "--hold", "6", "--port", str(port)]
    replaying = asyncio.ensure_future(asyncio.to_thread(main, args))
    deadline, said = time.monotonic() + 60, ""
    while "the session is open" not in (said := said + capsys.readouterr().out) and not replaying.done():
        assert time.monotonic() < deadline, said
        await asyncio.sleep(0.2)
    assert "the recorded output is not re-scored: --until stops the replay before the answer" in said, said
    run = said.split("/runs/")[1].split("/")[0]
    async with ClientSession() as http:
        reply = await (await http.post(f"http://127.0.0.1:{port}/runs/{run}/tools/browser_snapshot", json={})).json()
    assert reply["ok"] and reply["result"]["url"].startswith("https://sam.gov/opp/"), reply
    assert await replaying == 0


async def test_a_report_written_elsewhere_links_to_the_attempt_folder(sandbox, tmp_path):
    folder = tmp_path / "attempt"
    shutil.copytree(SAMPLES / "controlled-form-handmade-confirm-click", folder)
    target = tmp_path / "pages" / "new" / "replay.html"
    assert await asyncio.to_thread(main, ["replay", str(folder), "--report", str(target)]) in (0, 1)
    page, context, _ = await open_report(sandbox, target)
    try:
        links = await page.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        files = [link for link in links if not link.startswith("#")]
        assert files and all((target.parent / link).resolve().is_file() for link in files), files
    finally:
        await context.close()


def test_ctrl_c_mid_replay_is_one_line_and_exit_130():
    """It was a CancelledError traceback, then KeyboardInterrupt (killed by SIGINT); and a Ctrl-C
    while the commands loaded (this sleep, on a loaded machine) exited 130 saying nothing."""
    sandbox = Path(sys.executable).with_name("sandbox")
    process = subprocess.Popen(
        [sandbox, "replay", str(SAMPLES / "reference" / "bid-intake")], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    time.sleep(0.8)  # the commands loading, the browser starting, or the calls under way: each is one line
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in err.decode(), err.decode()
    assert "sandbox replay: stopped (Ctrl-C)" in err.decode()


async def test_the_replay_agent_replaces_only_the_site_key_itself(sandbox, tmp_path):
    """A short recorded key ("k") was replaced inside every string: provider "kernel" became
    "<new key>ernel", and the start gate failed."""
    folder = tmp_path / "recorded"
    shutil.copytree(SAMPLES / "reference" / "bid-intake", folder)
    key = json.loads((folder / "attempt.json").read_text())["site_key"]  # the recording's, whatever it is
    for name in ("trace.jsonl", "attempt.json"):
        text = (folder / name).read_text()
        assert key in text and len(key) > 1, name
        (folder / name).write_text(text.replace(key, "k"))
    [outcome] = await run_batch(
        [load_pack("bid-intake")], f"replay:{folder}", out=tmp_path / "runs", progress=False, sandbox=sandbox
    )
    assert outcome.qualified_pass, outcome.reason


def test_a_batch_folder_is_said_as_such(tmp_path, capsys):
    shutil.copytree(SAMPLES / "reference", tmp_path / "batch")
    assert main(["replay", str(tmp_path / "batch")]) == 2
    said = capsys.readouterr().err
    assert (
        "holds 8 attempt folder(s); replay one of them, e.g. " in said
        and str(tmp_path / "batch" / "addenda-trace") in said
    )


def test_a_folder_of_batches_names_an_attempt_folder(tmp_path, capsys):
    shutil.copytree(SAMPLES / "reference", tmp_path / "runs" / "batch")
    assert main(["replay", str(tmp_path / "runs")]) == 2
    said = capsys.readouterr().err
    assert said.rstrip().endswith(f"e.g. {tmp_path / 'runs' / 'batch' / 'addenda-trace'}"), said


# `sandbox replay` run as a reader without permission: as root, it drops to nobody once it has
# imported what it needs (Python's own modules lie under /root, where nobody may not enter)
REPLAY_AS_NOBODY = """
import os, sys
from sandbox.cli import build_parser, main
import sandbox.runner.recordings, sandbox.runner.replay
build_parser()
if os.geteuid() == 0:
    os.setegid(65534)
    os.seteuid(65534)
sys.exit(main(["replay", *sys.argv[1:]]))
"""


@pytest.mark.parametrize("unreadable", ["trace.jsonl", "output.txt", "the trace given"])
def test_a_recording_file_that_cannot_be_read_is_said_with_exit_2(unreadable):
    """It was a PermissionError traceback (exit 1)."""
    with tempfile.TemporaryDirectory() as made:  # not under pytest's folder, which only root may enter
        folder = scored_attempt(Path(made) / "controlled-form-1")
        for path in (Path(made), folder, *folder.iterdir()):
            path.chmod(0o777 if path.is_dir() else 0o644)
        name = "trace.jsonl" if unreadable == "the trace given" else unreadable
        (folder / name).chmod(0)
        given = folder / name if unreadable == "the trace given" else folder
        done = subprocess.run(
            [sys.executable, "-c", REPLAY_AS_NOBODY, str(given)], cwd=PROJECT_ROOT, capture_output=True, text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )  # fmt: skip
    assert (done.returncode, done.stderr) == (2, f"sandbox replay: {folder / name} cannot be read: Permission denied\n")


@pytest.mark.parametrize(
    "edit, says",
    [
        ("args lost", "(browser_snapshot): recorded, not replayed: trace line 4 cannot be read (args: Field required)"),
        ("line deleted", "(?): recorded, not replayed: the trace holds no call of seq 2 (between seq 1 and 3: a line"),
    ],
)
def test_a_recorded_call_replay_cannot_make_is_a_divergence(tmp_path, capsys, edit, says):
    """A call line that lost its args was said on stderr and skipped, a deleted one not even that:
    either way "no divergence" and exit 0, though the calls after it ran on another state."""
    folder = tmp_path / "bid-intake"
    shutil.copytree(SAMPLES / "reference" / "bid-intake", folder)
    lines = (folder / "trace.jsonl").read_text().splitlines()
    call = json.loads(lines[3])
    assert (call["seq"], call["tool"]) == (2, "browser_snapshot")
    if edit == "args lost":
        call.pop("args")
        lines[3] = json.dumps(call)
    else:
        del lines[3]
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["replay", str(folder)]) == 1
    printed = capsys.readouterr().out
    assert f"first divergence at seq 2 {says}" in printed, printed
    assert "1 recorded call(s) could not be read or are missing, and were not replayed" in printed
    assert "no divergence" not in printed


@pytest.mark.parametrize(
    "options, says",
    [
        (["--until", "0"], "--until 0: give the seq of a recorded call (from 1)"),
        (["--until", "-3"], "--until -3: give the seq of a recorded call (from 1)"),
        (["--hold", "5"], "--hold serve(s) the session kept open by --until SEQ: give --until too"),
        (["--port", "9000"], "--port serve(s) the session kept open by --until SEQ: give --until too"),
        (["--until", "2", "--hold", "-5"], "--hold -5.0: give a number of seconds above 0 (or leave it out"),
        (["--until", "2", "--hold", "nan"], "--hold nan: give a number of seconds above 0 (or leave it out"),
        (["--until", "2", "--hold", "inf"], "--hold inf: give a number of seconds above 0 (or leave it out"),
        (["--report", "{tmp}"], "--report {tmp}: cannot write a file there (it is a folder)"),
    ],
    ids=["until-0", "until-negative", "hold-alone", "port-alone", "hold-negative", "hold-nan", "hold-inf", "report"],
)
def test_replay_options_that_cannot_work_are_refused_before_the_replay(tmp_path, capsys, options, says):
    """Each was accepted: the replay ran (--until 0 stopped after no call, --hold and --port alone
    were ignored, --hold -5 closed at once), and --report to a folder exited 3 after the replay."""
    options = [option.replace("{tmp}", str(tmp_path)) for option in options]
    assert main(["replay", str(SAMPLES / "reference" / "bid-intake"), *options]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"sandbox replay: {says.replace('{tmp}', str(tmp_path))}"), captured.err
    assert captured.err.count("\n") == 1
    assert "replayed" not in captured.out


async def test_replay_until_past_the_last_call_says_so_and_json_stays_json(capsys):
    """--json printed "stopped after call 99" and the curl lines to stdout (no `| jq`), for a call
    the recording does not hold."""
    args = ["replay", str(SAMPLES / "reference" / "bid-intake"), "--until", "99", "--hold", "1", "--json"]
    assert await asyncio.to_thread(main, [*args, "--port", str(free_port())]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["calls_replayed"] == 7
    assert captured.err.startswith(
        "--until 99 is past the recording's last call, seq 7: stopped after it; the session is open for inspection:"
    ), captured.err


def test_ctrl_c_during_the_hold_ends_it_with_the_replay_s_verdict():
    """The guide said Ctrl-C stops a replay with exit 130; during --until's hold it is the way to
    end the hold, and the exit status is the replay's (0 here: no divergence, a qualified pass)."""
    sandbox = Path(sys.executable).with_name("sandbox")
    args = ["replay", str(SAMPLES / "reference" / "bid-intake"), "--until", "2", "--port", str(free_port())]
    process = subprocess.Popen([sandbox, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = []
    while not said or "the session is open" not in said[-1]:
        line = process.stdout.readline()
        assert line, process.stderr.read()
        said.append(line)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0 and "Traceback" not in err, err
