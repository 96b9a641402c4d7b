"""Every trace line is strict JSON in valid UTF-8, one record per line, whatever it carries
(issue 12, items 8 and 9)."""

from __future__ import annotations

import json

from toolserver.contract.lines import encode_line, strict_json
from toolserver.contract.trace import RunHeader, TraceWriter, parse_trace


def strict(line: str) -> dict:
    def refuse(name):
        raise ValueError(name)

    return json.loads(line, parse_constant=refuse)


def test_lone_surrogates_are_escaped_and_listed():
    line = encode_line({"type": "call", "args": {"text": "a\ud800b", "k\udfff": ["\udc80"]}})
    data = strict(line)
    assert data["args"] == {"text": "a\\ud800b", "k\\udfff": ["\\udc80"]}
    assert data["escaped"] == ["args.text", "args(key)", "args.k\\udfff[0]"]
    line.encode("utf-8")


def test_non_finite_numbers_become_their_names():
    data = strict(encode_line({"args": {"a": float("nan"), "b": [float("inf"), -float("inf")], "c": 1.5}}))
    assert data["args"] == {"a": "NaN", "b": ["Infinity", "-Infinity"], "c": 1.5}
    assert data["escaped"] == ["args.a", "args.b[0]", "args.b[1]"]


def test_unicode_line_separators_never_split_a_line():
    text = "x\u2028y\x85z\u2029w"
    line = encode_line({"args": {"text": text}})
    assert len(line.splitlines()) == 1 and strict(line)["args"]["text"] == text


def test_valid_text_is_untouched_and_not_flagged():
    value = {"text": "João Muñoz — 東京 🎉", "n": 3}
    assert strict_json(value) == (value, [])
    assert "escaped" not in strict(encode_line({"args": value}))


def test_too_deep_arguments_are_kept_as_text(tmp_path):
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    data = strict(encode_line({"type": "call", "args": deep}))
    assert data["args"].startswith("[[[") and data["escaped"] == ["args (too deep: kept as shortened text)"]


def test_a_writer_never_appends_to_an_existing_file(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text("x\n")
    try:
        TraceWriter(path, RunHeader(run_id="r", started_wall=""))
    except FileExistsError:
        pass
    else:
        raise AssertionError("an existing trace file was opened for writing")
    assert path.read_text() == "x\n"


def test_the_reader_splits_only_on_newlines():
    line = json.dumps({"seq": 1, "tool": "browser_type", "args": {"text": "a\u2028b"}}, ensure_ascii=False)
    trace = parse_trace(line + "\n")
    assert trace.problems == [] and trace.calls[0].args == {"text": "a\u2028b"}


def test_a_trace_of_a_newer_format_says_so_before_what_it_could_not_read():
    header = {"type": "run", "format": 2, "run_id": "run_x", "pack": "bid-intake"}
    call = {"type": "call", "seq": 1, "name": "browser_snapshot", "args": {}}  # its calls' fields renamed
    trace = parse_trace(json.dumps(header) + "\n" + json.dumps(call) + "\n")
    assert trace.problems[0] == (
        "the trace is format 2, newer than this sandbox reads (format 1): upgrade the sandbox; "
        "what it could not read is listed"
    )
    assert len(trace.problems) == 2 and trace.problems[1].startswith("line 2: unreadable")
    assert parse_trace(json.dumps({**header, "format": 1}) + "\n").problems == []


def test_a_trace_deleted_while_its_run_lives_loses_no_line(tmp_path):
    """Its folder removed mid-run: later lines went to the deleted file, unseen, and reading the
    trace failed with a FileNotFoundError naming no path."""
    import shutil

    path = tmp_path / "traces" / "run.jsonl"
    path.parent.mkdir()
    writer = TraceWriter(path, RunHeader(run_id="r", started_wall=""))
    writer.write({"type": "call", "seq": 1, "tool": "list_tools", "args": {}})
    shutil.rmtree(path.parent)
    assert [json.loads(line)["type"] for line in writer.text().splitlines()] == ["run", "call"]  # the open copy
    writer.write({"type": "call", "seq": 2, "tool": "list_tools", "args": {}})  # written anew at its path
    writer.close("deleted")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["type"], line.get("seq")) for line in lines] == [
        ("run", None),
        ("call", 1),
        ("call", 2),
        ("run_end", None),
    ]
    path.unlink()
    try:
        writer.text()
    except OSError as exc:
        assert str(path) in str(exc)
    else:
        raise AssertionError("a deleted trace of an ended run read as something")


def test_no_line_follows_run_end_and_an_integer_too_long_to_write_keeps_its_digits(caplog):
    """A line written after ``run_end`` was appended (a trace kept in memory); writing an integer
    of over 4,300 digits raised ValueError."""
    writer = TraceWriter(None, RunHeader(run_id="r", started_wall=""))
    writer.write({"type": "event", "kind": "x", "data": {"n": -(10**5000)}})
    writer.close("closed")
    writer.write({"type": "event", "kind": "late"})
    lines = [json.loads(line) for line in writer.text().splitlines()]
    assert [line["type"] for line in lines] == ["run", "event", "run_end"]
    assert lines[1]["data"]["n"] == "-1" + "0" * 5000 and lines[1]["escaped"] == ["data.n"]
    assert "a line after the trace's end not written" in caplog.text
