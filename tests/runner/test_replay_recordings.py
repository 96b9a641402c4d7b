"""`sandbox replay` on attempts recorded by other harnesses: an Inspect eval log (exported from a
real attempt), and OpenAI and Anthropic chat transcripts derived from a real attempt's trace,
replayed on the real browser against the mirrors; a wrong ref, or a snapshot that is not what
the mirror shows, is the first divergence at that call's seq; and unreadable or unknown inputs
are refused with a clear message and exit 2."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents.reference_agent import ReferenceAgent
from sandbox.runner.attempt import run_attempt
from sandbox.runner.inspect_export import export_inspect_log
from sandbox.runner.recordings import load_recording
from sandbox.runner.replay import replay
from tests.support.transcripts import anthropic_messages, openai_messages
from toolserver.contract.trace import CallRecord, read_trace

DEEP = "[" * 100_000 + "]" * 100_000
TRACE_LINE = json.dumps({"seq": 1, "tool": "browser_snapshot", "args": {}, "ok": True, "result": {}})
TYPE_LIST = json.dumps({"type": ["call"], "seq": 1, "tool": "browser_snapshot", "args": {}})
DEEP_ARGUMENTS = [
    {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "x", "arguments": DEEP}}]}
]


class Attempt:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[CallRecord] = read_trace(folder / "trace.jsonl").calls
        self.prompt = (folder / "prompt.txt").read_text(encoding="utf-8")
        self.output = (folder / "output.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
async def attempt(sandbox, tmp_path_factory) -> Attempt:
    """A real attempt: the reference solver on the controlled-form pack."""
    folder = tmp_path_factory.mktemp("recordings") / "controlled-form-1"
    outcome = await run_attempt(sandbox, load_pack("controlled-form"), ReferenceAgent(), folder)
    assert outcome.qualified_pass
    return Attempt(folder)


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def first_click(attempt: Attempt) -> CallRecord:
    return next(call for call in attempt.calls if call.tool == "browser_click")


def test_a_trace_file_is_told_by_content_and_reads_its_attempt_folder(attempt, tmp_path):
    """A trace under any name is a trace; beside attempt.json and output.txt it is their attempt's."""
    recording = load_recording(attempt.folder / "trace.jsonl")
    assert (recording.kind, recording.folder, recording.pack) == ("trace", attempt.folder, "controlled-form")
    assert recording.output == attempt.output and recording.elapsed_seconds is not None
    renamed = tmp_path / "calls.json"
    renamed.write_bytes((attempt.folder / "trace.jsonl").read_bytes())
    recording = load_recording(renamed)
    assert recording.kind == "trace" and recording.output is None and len(recording.calls) == len(attempt.calls)


async def test_an_exported_inspect_log_replays_without_divergence(sandbox, attempt, tmp_path):
    log_file, _ = export_inspect_log(attempt.folder, tmp_path / "attempt.eval")
    recording = load_recording(log_file)
    assert recording.kind == "Inspect log" and recording.sample == "controlled-form-1"
    assert recording.pack == "controlled-form" and recording.output == attempt.output
    assert [(c.seq, c.tool, c.args) for c in recording.calls] == [(c.seq, c.tool, c.args) for c in attempt.calls]
    assert all(c.ok is True and c.whole and c.result is not None for c in recording.calls)  # every result read back

    report, _ = await replay(log_file, sandbox=sandbox)
    assert report.first_divergence is None, report.first_divergence
    assert report.compared == report.calls_replayed == len(attempt.calls)
    assert report.rescore["qualified_pass"] is True


async def test_a_changed_result_in_an_inspect_log_is_the_first_divergence(sandbox, attempt, tmp_path):
    """The log's tool results are compared, not only replayed: a snapshot changed in the log
    (as the viewer's JSON would show it) diverges at that call."""
    _, log = export_inspect_log(attempt.folder, tmp_path / "attempt.json")
    (sample,) = log.samples
    snapshots = [e for e in sample.events if e.event == "tool" and e.function == "browser_snapshot"]
    changed = snapshots[-1]
    changed.result[0].text = changed.result[0].text.replace("São Paulo", "Sao Paulo")
    from inspect_ai.log import write_eval_log

    write_eval_log(log, tmp_path / "changed.json")
    assert read_eval_log(tmp_path / "changed.json").samples[0].id == "controlled-form-1"
    report, _ = await replay(tmp_path / "changed.json", sandbox=sandbox)
    assert report.first_divergence["seq"] == changed.metadata["seq"]
    assert report.first_divergence["difference"].startswith(".result.snapshot: first difference")


@pytest.mark.parametrize("args_as", ["object", "JSON text"])
async def test_a_minimal_trace_of_another_harness_is_compared_on_the_fields_it_gives(
    sandbox, attempt, tmp_path, args_as
):
    """The trace concept page's minimal format gives the start's provider alone: the fields the
    sandbox adds (profile, session id, status, ...) are not a divergence there. Its ``args`` may
    be JSON text, as OpenAI-style harnesses store them (each such call was refused on replay)."""
    header = {
        "type": "run",
        "pack": "controlled-form",
        "site_key": read_trace(attempt.folder / "trace.jsonl").header["site_key"],
    }
    lines = [header]
    for call in attempt.calls:
        args = json.dumps(call.args) if args_as == "JSON text" else call.args
        line = {"seq": call.seq, "tool": call.tool, "args": args, "ok": call.ok}
        if call.tool == "browser_start_session":
            line["result"] = {"provider": call.result["provider"]}
        lines.append(line)
    file = tmp_path / "other-harness.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report, _ = await replay(file, sandbox=sandbox)
    assert report.first_divergence is None, report.first_divergence
    lines[1]["result"]["provider"] = "browserbase"  # a field it gives is still compared
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report, _ = await replay(file, sandbox=sandbox)
    assert report.first_divergence is not None and ".result.provider" in report.first_divergence["difference"]


async def test_an_openai_transcript_of_a_real_attempt_replays(sandbox, attempt, tmp_path):
    file = write_json(tmp_path / "openai.json", openai_messages(attempt.prompt, attempt.calls, attempt.output))
    recording = load_recording(file)
    assert recording.kind == "OpenAI messages" and recording.pack is None
    assert recording.site_key == attempt.calls[0].args["site_key"] and recording.output == attempt.output
    report, _ = await replay(file, sandbox=sandbox, pack_id="controlled-form")
    assert report.first_divergence is None, report.first_divergence
    assert report.compared == len(attempt.calls) and report.rescore["qualified_pass"] is True


async def test_an_anthropic_transcript_with_mcp_text_results_replays(sandbox, attempt, tmp_path):
    """Tool results as an MCP client reads them: a snapshot's text alone is compared with the
    replayed snapshot; JSON results are compared whole."""
    file = write_json(tmp_path / "anthropic.json", anthropic_messages(attempt.prompt, attempt.calls, attempt.output))
    recording = load_recording(file)
    assert recording.kind == "Anthropic messages"
    snapshot = next(c for c in recording.calls if c.tool == "browser_snapshot")
    assert snapshot.result.keys() == {"snapshot"} and not snapshot.whole
    report, _ = await replay(file, sandbox=sandbox, pack_id="controlled-form")
    assert report.first_divergence is None, report.first_divergence
    assert report.compared == len(attempt.calls) and report.rescore["qualified_pass"] is True


async def test_a_wrong_ref_in_a_transcript_diverges_at_its_call(sandbox, attempt, tmp_path):
    click = first_click(attempt)
    messages = openai_messages(attempt.prompt, attempt.calls, attempt.output)
    for message in messages:
        for tool_call in message.get("tool_calls") or []:
            if tool_call["id"] == f"call_{click.seq:03d}":
                tool_call["function"]["arguments"] = json.dumps({**click.args, "ref": "e9999"})
    file = write_json(tmp_path / "wrong-ref.json", messages)

    report, _ = await replay(file, sandbox=sandbox, pack_id="controlled-form")
    divergence = report.first_divergence
    assert divergence["seq"] == click.seq and divergence["tool"] == "browser_click", divergence
    assert divergence["difference"].startswith(".ok: recorded ok, replayed error ")
    assert "e9999" in divergence["difference"]


async def test_a_changed_snapshot_text_in_an_anthropic_transcript_diverges_there(sandbox, attempt, tmp_path):
    messages = anthropic_messages(attempt.prompt, attempt.calls, attempt.output)
    last_snapshot = [c for c in attempt.calls if c.tool == "browser_snapshot"][-1]
    for message in messages:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("tool_use_id") == f"toolu_{last_snapshot.seq:03d}":
                block["content"][0]["text"] = block["content"][0]["text"].replace("São Paulo", "Sao Paulo")
    file = write_json(tmp_path / "changed.json", messages)
    report, _ = await replay(file, sandbox=sandbox, pack_id="controlled-form")
    assert report.first_divergence["seq"] == last_snapshot.seq
    assert "São Paulo" in report.first_divergence["difference"]


def test_replay_command_replays_a_transcript_and_names_its_source(attempt, tmp_path, capsys):
    file = write_json(tmp_path / "transcript.json", openai_messages(attempt.prompt, attempt.calls, attempt.output))
    assert main(["replay", str(file)]) == 2  # a transcript names no pack
    assert "names no pack: pass --pack" in capsys.readouterr().err
    assert main(["replay", str(file), "--pack", "controlled-form"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"pack controlled-form (OpenAI messages): replayed {len(attempt.calls)}/")
    assert "no divergence" in printed and "qualified_pass=True" in printed


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("garbled.json", '[{"role": "assistant", "tool_calls": [', "is not valid JSON (Expecting value at line 1"),
        ("unknown.json", '{"model": "gpt", "choices": []}', "holds a JSON object with keys ['choices', 'model']"),
        ("no-calls.json", '[{"role": "user", "content": "hi"}]', "holds 1 chat message but no tool call"),
        ("empty.jsonl", "\n", "is empty"),
        ("binary.bin", "\udcff", "is neither text nor an Inspect .eval log"),
        # each was a RecursionError traceback (exit 1)
        ("deep.json", DEEP, "holds JSON nested too deeply to read (deeper than Python's recursion limit)"),
        ("deep-line.jsonl", f"{TRACE_LINE}\n{DEEP}\n", "holds JSON nested too deeply to read"),
        ("deep-arguments.json", json.dumps(DEEP_ARGUMENTS), "holds JSON nested too deeply to read"),
        # a TypeError traceback (unhashable type: 'list')
        ("type-list.jsonl", f"{TYPE_LIST}\n{TYPE_LIST}\n", "records no tool call: there is nothing to replay"),
    ],
    ids=["garbled", "unknown", "no-calls", "empty", "binary", "deep", "deep-line", "deep-arguments", "type-list"],
)
def test_unreadable_or_unknown_recordings_are_refused_with_exit_2(tmp_path, capsys, name, content, says):
    file = tmp_path / name
    file.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert main(["replay", str(file), "--pack", "controlled-form"]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"sandbox replay: {file} ") and says in error, error
    assert "replay reads an attempt folder" in error or "nothing to replay" in error


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("trace.jsonl", b"\x00\xff binary", "trace.jsonl is not UTF-8 text ("),
        ("attempt.json", b'{"pack": ', "attempt.json is not JSON ("),
        ("attempt.json", b"[]", "attempt.json is not a JSON object"),
        ("output.txt", b"\xfe\xff", "output.txt is not UTF-8 text ("),
    ],
)
def test_an_attempt_folder_with_an_unreadable_file_is_refused_naming_it(attempt, tmp_path, capsys, name, content, says):
    folder = shutil.copytree(attempt.folder, tmp_path / "attempt")
    (folder / name).write_bytes(content)
    assert main(["replay", str(folder)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"sandbox replay: {folder / name} ") and says in error and "Traceback" not in error, error


def test_a_missing_sample_and_misplaced_options_are_refused_with_exit_2(attempt, tmp_path, capsys):
    log_file, _ = export_inspect_log(attempt.folder, tmp_path / "attempt.eval")
    assert main(["replay", str(log_file), "--sample", "bid-intake-7"]) == 2
    assert (
        f"{log_file} has no sample 'bid-intake-7'; its samples: controlled-form-1 (give one with --sample ID)"
        in capsys.readouterr().err
    )
    assert main(["replay", str(log_file), "--report"]) == 2
    assert "--report marks the divergence on an attempt folder's page" in capsys.readouterr().err
    assert main(["replay", str(attempt.folder), "--sample", "x"]) == 2
    assert "--sample picks a sample of an Inspect log" in capsys.readouterr().err
    broken = tmp_path / "broken.eval"
    broken.write_bytes(log_file.read_bytes()[:200])  # a zip cut short
    assert main(["replay", str(broken)]) == 2
    assert f"{broken} is not a readable Inspect eval log" in capsys.readouterr().err


async def test_the_cli_replays_an_exported_log_of_a_batch_by_sample(attempt, tmp_path, capsys):
    """One log, two samples (the same real attempt twice): --sample picks one, the default is the first."""
    batch = tmp_path / "batch"
    for name in ("controlled-form-1", "controlled-form-2"):
        target = batch / name
        target.mkdir(parents=True)
        for file in attempt.folder.iterdir():
            if file.is_file():
                (target / file.name).write_bytes(file.read_bytes())
    log_file, _ = export_inspect_log(batch)
    assert [s.id for s in read_eval_log(log_file).samples] == ["controlled-form-1", "controlled-form-2"]
    assert load_recording(log_file).sample == "controlled-form-1"
    assert await asyncio.to_thread(main, ["replay", str(log_file), "--sample", "controlled-form-2"]) == 0
    assert capsys.readouterr().out.startswith("pack controlled-form (Inspect log, sample controlled-form-2): ")


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ([{"role": "assistant", "tool_calls": ["oops"]}], 'message 1\'s tool call 1 is str "oops", not a mapping'),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c1", "function": "browser_snapshot"}]}],
            'message 1\'s tool call 1 is dict {"id": "c1", "function": "browser_snapshot"}, not a mapping',
        ),
        ([{"role": "assistant", "tool_calls": "browser_snapshot"}], "message 1's tool_calls is str \"browser_sn"),
    ],
)
def test_a_garbled_openai_tool_call_is_said_not_a_traceback(tmp_path, capsys, messages, says):
    """`sandbox replay` crashed in an AttributeError ('str' object has no attribute 'get')."""
    file = write_json(tmp_path / "garbled.json", messages)
    assert main(["replay", str(file), "--pack", "controlled-form"]) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        f"sandbox replay: {file} (OpenAI messages) records no tool call: there is nothing to replay"
    )
    assert says in error and "not replayed" in error, error


def trace_line(seq: int, **more: object) -> str:
    return json.dumps({"seq": seq, "tool": "browser_snapshot", "args": {}, **more}) + "\n"


def test_a_trace_file_with_a_byte_order_mark_or_a_garbled_first_line_is_read(tmp_path):
    """Each was refused as "not valid JSON nor a JSONL trace" (exit 2), though the same trace in its
    attempt folder replayed."""
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + (trace_line(1) + trace_line(2)).encode())
    assert [call.seq for call in load_recording(marked).calls] == [1, 2]
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_text('{"seq": 1, "tool": "browser_snap\n' + trace_line(2), encoding="utf-8")
    recording = load_recording(garbled)
    assert recording.kind == "trace" and [call.seq for call in recording.calls] == [2]
    assert recording.not_read[0]["difference"].startswith("recorded, not replayed: the trace holds no call of seq 1")


def test_a_trace_missing_its_first_calls_or_with_a_call_of_a_garbled_type_diverges_there(tmp_path):
    """Only a seq missing between two calls read was a divergence: a trace without its first
    lines, or with a call line whose type was garbled, replayed to "no divergence" and exit 0."""
    cut = tmp_path / "cut.jsonl"
    cut.write_text(trace_line(3) + trace_line(4), encoding="utf-8")
    (missing,) = load_recording(cut).not_read
    assert missing == {
        "seq": 1,
        "tool": "?",
        "difference": "recorded, not replayed: the trace holds no call of seqs 1-2 (before seq 3: a line deleted?)",
    }
    typo = tmp_path / "typo.jsonl"
    typo.write_text(trace_line(1) + trace_line(2, type="cal") + trace_line(3), encoding="utf-8")
    (unread,) = load_recording(typo).not_read
    assert unread["seq"] == 2 and unread["tool"] == "browser_snapshot", unread
    assert unread["difference"] == (
        "recorded, not replayed: trace line 2 cannot be read (ValueError: its type is str \"cal\", not 'call')"
    )


def test_chat_results_without_text_or_calls_without_ids_are_read_as_they_were(tmp_path):
    """An empty result was read as the result {}, a false divergence from every real one; calls
    without ids each overwrote the last one waiting, so a call got another's result."""
    openai = [
        {"role": "assistant", "tool_calls": [{"function": {"name": "browser_navigate", "arguments": "{}"}}]},
        {"role": "assistant", "tool_calls": [{"function": {"name": "browser_snapshot", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"url": "A"}'},
        {"role": "tool", "content": '{"url": "B"}'},
        {"role": "assistant", "tool_calls": [{"id": "c3", "function": {"name": "browser_snapshot", "arguments": ""}}]},
        {"role": "tool", "tool_call_id": "c3", "content": ""},
    ]
    calls = load_recording(write_json(tmp_path / "openai.json", openai)).calls
    assert [(c.tool, c.ok, c.result) for c in calls] == [
        ("browser_navigate", True, {"url": "A"}),
        ("browser_snapshot", True, {"url": "B"}),
        ("browser_snapshot", None, None),  # no text, no error flag: not compared
    ]
    use = {"type": "tool_use", "id": "t1", "name": "browser_snapshot", "input": {}}
    anthropic = [
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": []}]},
    ]
    (call,) = load_recording(write_json(tmp_path / "anthropic.json", anthropic)).calls
    assert (call.ok, call.result) == (True, None)  # the outcome alone: is_error says it was not one


def test_a_recording_path_that_cannot_be_looked_up_is_said_with_exit_2(tmp_path, capsys):
    """An OSError traceback (Errno 36, File name too long)."""
    path = tmp_path / ("x" * 300)
    assert main(["replay", str(path), "--pack", "controlled-form"]) == 2
    assert capsys.readouterr().err == f"sandbox replay: {path} cannot be looked up: File name too long\n"


def test_an_anthropic_block_that_is_no_mapping_is_skipped_and_said(tmp_path):
    """A string among the content blocks crashed the replay in an AttributeError."""
    use = {"type": "tool_use", "id": "t1", "name": "browser_snapshot", "input": {}}
    messages = [
        {"role": "user", "content": "Do the task."},
        {"role": "assistant", "content": ["Looking.", use]},
        {"role": "user", "content": [7, {"type": "tool_result", "tool_use_id": "t1", "content": "{}"}]},
    ]
    recording = load_recording(write_json(tmp_path / "anthropic.json", messages))
    assert recording.kind == "Anthropic messages"
    assert [(c.tool, c.args, c.ok) for c in recording.calls] == [("browser_snapshot", {}, True)]
    assert recording.problems == [
        'message 2\'s content block 1 is str "Looking.", not a mapping: not replayed',
        "message 3's content block 1 is int 7, not a mapping: not replayed",
    ]


def test_a_trace_header_of_the_wrong_types_is_said_not_used(tmp_path, capsys):
    """A header pack of ["a"] reached load_pack: a TypeError traceback; a policy of a list was
    unhashable in the replay's look-up."""
    trace = tmp_path / "trace.jsonl"
    header = {"type": "run", "pack": ["a"], "site_key": {"k": 1}, "policy": ["enforce"], "block_state_changes": "no"}
    call = {"type": "call", "seq": 1, "tool": "browser_snapshot", "args": {}, "ok": True, "result": {}}
    trace.write_text(json.dumps(header) + "\n" + json.dumps(call) + "\n")
    recording = load_recording(trace)
    assert (recording.pack, recording.site_key, recording.policy, recording.block_state_changes) == (None,) * 4
    assert recording.problems == [
        'the trace header\'s pack is list ["a"], not a pack id: left out',
        'the trace header\'s site_key is dict {"k": 1}, not a text: left out',
        'the trace header\'s policy is list ["enforce"], not a policy mode: left out',
        'the trace header\'s block_state_changes is str "no", not true or false: left out',
    ]
    assert main(["replay", str(trace)]) == 2
    error = capsys.readouterr().err
    assert f"sandbox replay: {trace}: the trace header's pack is list" in error
    assert error.rstrip().endswith(f"sandbox replay: {trace} (a trace) names no pack: pass --pack"), error


def test_an_inspect_sample_whose_pack_is_no_id_is_said_not_loaded(attempt, tmp_path, capsys):
    """The sample's metadata pack reached load_pack as a list: a TypeError traceback."""
    log_file, _ = export_inspect_log(attempt.folder, tmp_path / "attempt.json")
    log = json.loads(log_file.read_text(encoding="utf-8"))
    log["samples"][0]["metadata"]["pack"] = ["controlled-form"]
    write_json(log_file, log)
    assert main(["replay", str(log_file)]) == 2
    error = capsys.readouterr().err
    assert f'sandbox replay: {log_file}: the Inspect sample\'s pack is list ["controlled-form"], not a pack id' in error
    assert error.rstrip().endswith(f"sandbox replay: {log_file} (an Inspect log) names no pack: pass --pack"), error


@pytest.mark.parametrize(
    "error, recorded_type, diverges",
    [
        ("stale_ref: Ref e9 is stale", "stale_ref", None),
        ("unknown_ref: Ref e9 not found", "unknown_ref", ".error_type: recorded 'unknown_ref', replayed 'stale_ref'"),
        ("Ref e9 is stale", None, None),  # no type named: not compared
    ],
    ids=["typed", "other-type", "untyped"],
)
def test_a_minimal_trace_s_error_text_is_compared_by_the_type_it_names(error, recorded_type, diverges):
    """The trace concept page allows an error as text; it was read as type 'error', a false
    divergence from every real error (`.error_type: recorded 'error', replayed 'stale_ref'`)."""
    from sandbox.runner.recordings import trace_recording
    from sandbox.runner.replay import call_difference

    line = {"seq": 1, "tool": "browser_click", "args": {"ref": "e9"}, "ok": False, "error": error}
    (call,) = trace_recording(json.dumps(line) + "\n", Path("other.jsonl")).calls
    assert (call.ok, call.error_type) == (False, recorded_type)
    reply = {"ok": False, "error": {"type": "stale_ref", "message": "Ref e9 is stale: take a new snapshot"}}
    assert call_difference(call, reply) == diverges
    assert call_difference(call, {"ok": True, "result": {}}) == (
        f".ok: recorded error {recorded_type or '(type unknown)'}, replayed ok"
    )


def test_a_trace_beside_an_attempt_folder_s_files_is_not_their_attempt_s(attempt, tmp_path):
    """Any .jsonl read the folder's attempt.json (its pack and site key over the trace's header) and
    output.txt (re-scored as this trace's answer), and --report rendered the folder's own trace."""
    folder = shutil.copytree(attempt.folder, tmp_path / "controlled-form-1")
    lines = (folder / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header.update(pack="bid-intake", site_key="other-key")
    (folder / "other.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    other = load_recording(folder / "other.jsonl")
    assert (other.kind, other.pack, other.site_key, other.output, other.folder) == (
        "trace", "bid-intake", "other-key", None, None,
    )  # fmt: skip
    own = load_recording(folder / "trace.jsonl")
    assert (own.pack, own.output, own.folder) == ("controlled-form", attempt.output, folder)
