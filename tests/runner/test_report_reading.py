"""What the HTML report reads from an attempt folder, and how much of it it shows: a transcript whose
text holds a Unicode line separator, files that cannot be read, pages that cannot be written, each
session's Playwright trace, and bounds on a page's size. Built from the committed reference attempt;
no browser."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from sandbox.cli import main
from sandbox.runner.batch import write_summary
from sandbox.runner.folders import AttemptFolder, batch_attempts, outcome
from sandbox.runner.inspect_export import transcript_entries
from sandbox.runner.report import write_reports
from sandbox.runner.report._view import TIMELINE_ENDS, transcript
from sandbox.runner.transcript import TRANSCRIPT_FILE, Transcript
from tests.support.attempt_folders import scored_attempt
from tests.support.nobody import as_nobody, open_folder, open_to_all

SEPARATORS = "a\u2028b\u2029c\x85d"


def test_a_line_separator_in_a_transcript_keeps_one_entry_per_line(tmp_path):
    """The writer left U+2028, U+2029 and U+0085 raw and the readers split at them: the entry showed as
    unreadable halves on the page (later line numbers off) and was dropped from the Inspect export."""
    folder = scored_attempt(tmp_path / "attempt")
    Transcript(folder).write({"role": "tool", "content": SEPARATORS})
    Transcript(folder).write({"role": "assistant", "content": "done"})
    written = (folder / TRANSCRIPT_FILE).read_text(encoding="utf-8")
    assert "\u2028" not in written and "\\u2028" in written and len(written.splitlines()) == 2
    older = folder / "older"  # an older writer's file, the characters raw: read all the same
    older.mkdir()
    (older / TRANSCRIPT_FILE).write_text(
        json.dumps({"turn": 1, "role": "tool", "content": SEPARATORS}, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for text in (written, (older / TRANSCRIPT_FILE).read_text(encoding="utf-8")):
        assert next(transcript_entries(text))["content"] == SEPARATORS
    entries = transcript(AttemptFolder.load(older), [])
    assert [entry.heading for entry in entries] == ["1 · tool"]
    assert [entry.heading for entry in transcript(AttemptFolder.load(folder), [])] == ["0 · tool", "0 · assistant"]


def test_an_unreadable_transcript_or_score_txt_is_named_and_an_unwritable_page_is_left_out(capsys):
    """One unreadable file or unwritable attempt folder stopped the whole report: the batch page was
    written first, linking attempt pages never written, and `sandbox report` exited 3 "cannot write
    the report" for a file it could not read; `--junit` raised on an unreadable score.txt."""
    with open_folder() as made:
        batch = made / "batch"
        for n in (1, 2, 3):
            scored_attempt(batch / f"controlled-form-{n}")
        (batch / "controlled-form-1" / TRANSCRIPT_FILE).write_text('{"turn": 0, "role": "user"}\n')
        score = json.loads((batch / "controlled-form-1" / "score.json").read_text())
        (batch / "controlled-form-1" / "score.json").write_text(json.dumps({**score, "qualified_pass": False}))
        (batch / "controlled-form-1" / "score.txt").write_text("NOT QUALIFIED\n")
        write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
        assert main(["report", str(batch)]) == 0  # warm: every module and template loaded
        open_to_all(made)
        for name in (TRANSCRIPT_FILE, "score.txt"):
            (batch / "controlled-form-1" / name).chmod(0)
        (batch / "controlled-form-2" / "report.html").unlink()
        (batch / "controlled-form-2").chmod(0o555)  # entered, read, not written
        with as_nobody():
            code = main(["report", str(batch), "--junit", str(made / "junit.xml")])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert "no page for controlled-form-2/: cannot write its page (Permission denied" in captured.err
        assert "(and 2 attempt reports)" in captured.out
        page = (batch / "controlled-form-1" / "report.html").read_text()
        assert "transcript.jsonl is unreadable (Permission denied): no transcript shown" in page
        assert not (batch / "controlled-form-2" / "report.html").exists()
        listing = (batch / "report.html").read_text()
        assert 'href="controlled-form-2/report.html"' not in listing
        assert 'controlled-form-2 <span class="muted">(no page: it could not be written: Permission denied' in listing
        assert 'href="controlled-form-3/report.html"' in listing
        [failure] = [case.find("failure") for case in ET.parse(made / "junit.xml").getroot().iter("testcase")][:1]
        assert failure.text.startswith("score.txt is unreadable (Permission denied)")


def test_the_leaderboard_links_only_the_pages_that_are_there(tmp_path, capsys):
    """`sandbox compare --html` linked <folder>/report.html of a batch never reported: a dead link."""
    batch = tmp_path / "batch"
    for agent in ("a", "b"):
        scored_attempt(batch / f"{agent}--controlled-form-1", agent=agent)
    write_summary(batch, [outcome(folder) for folder in batch_attempts(batch)])
    board = tmp_path / "board.html"
    assert main(["compare", str(batch), "--html", str(board)]) == 0
    assert re.findall(r'href="([^"]*)"', board.read_text()) == []
    assert f"a--controlled-form-1 (no page: run `sandbox report {batch}`)" in board.read_text()
    assert main(["report", str(batch)]) == 0
    assert main(["compare", str(batch), "--html", str(board)]) == 0
    assert re.findall(r'href="([^"]*)"', board.read_text()) == [
        "batch/a--controlled-form-1/report.html",
        "batch/b--controlled-form-1/report.html",
    ]


def test_each_sessions_playwright_trace_is_linked(tmp_path):
    """Only playwright-trace.zip was linked and shown; a run's later sessions write -2, -3..."""
    folder = scored_attempt(tmp_path / "attempt")
    for name in ("playwright-trace.zip", "playwright-trace-2.zip", "playwright-trace-10.zip", "playwright-trace-x.zip"):
        (folder / name).write_bytes(b"PK")
    write_reports(folder)
    page = (folder / "report.html").read_text()
    links = re.findall(r'href="(playwright-trace[^"]*)"', page)
    assert links == ["playwright-trace.zip", "playwright-trace-2.zip", "playwright-trace-10.zip"]
    assert "Playwright traces, one per session" in page
    assert "<code>playwright show-trace playwright-trace-10.zip</code>" in page


def test_a_huge_field_value_is_cut_where_expected_and_got_differ(tmp_path):
    """A field's expected and got went into the page whole (a 16 MB value: a 16 MB cell)."""
    folder = scored_attempt(tmp_path / "attempt")
    score = json.loads((folder / "score.json").read_text())
    long = "x" * 3_000_000
    score["fields"][0].update(expected=long + "EXPECTED" + long, got=long + "GOT" + long, correct=False)
    (folder / "score.json").write_text(json.dumps(score))
    write_reports(folder)
    page = (folder / "report.html").read_text()
    assert len(page) < 100_000
    assert f"EXPECTED{'x' * 900}" in page and f"GOT{'x' * 900}" in page  # the difference is shown
    assert f"({len(long) * 2 + 10} characters)" in page and f"({len(long) * 2 + 5} characters)" in page


def test_a_long_timeline_shows_its_ends_and_the_calls_pointed_to(tmp_path):
    """Every call went into the page: with 10,000 calls it was ~300 MB, built as one string."""
    folder = scored_attempt(tmp_path / "attempt")
    header, *lines = (folder / "trace.jsonl").read_text().splitlines()
    call = next(json.loads(line) for line in lines if json.loads(line).get("type") == "call")
    calls = [json.dumps({**call, "seq": seq, "result": {"text": "r" * 20_000}}) for seq in range(1, 1001)]
    (folder / "trace.jsonl").write_text("\n".join([header, *calls]) + "\n")
    score = json.loads((folder / "score.json").read_text())
    score["gates"].update(ok=False, failures=[{"gate": "g", "message": "at fault", "seq": 500}])
    (folder / "score.json").write_text(json.dumps(score))
    write_reports(folder)
    page = (folder / "report.html").read_text()
    shown = [int(seq) for seq in re.findall(r'<article class="[^"]*" id="call-(\d+)"', page)]
    ends = TIMELINE_ENDS
    assert shown == [*range(1, ends + 1), 500, *range(1001 - ends, 1001)]
    assert "Timeline (1000 tool calls)" in page
    assert f"{499 - ends} tool calls not shown here (seq {ends + 1} to 499)" in page
    assert f"{500 - ends} tool calls not shown here (seq 501 to {1000 - ends})" in page
    assert len(page) < 20 * 1_000_000


def test_a_loop_of_failing_calls_with_many_events_and_a_long_transcript_keeps_its_page_small(tmp_path):
    """A gate failing every call of a loop pointed to each one, a call's events and result keys
    were all listed, and every transcript line was shown: 3,000 such calls made a page of 5.8 MB,
    20,000 events 8.7 MB, 3,000 turns 17.9 MB."""
    folder = scored_attempt(tmp_path / "attempt")
    header, *lines = (folder / "trace.jsonl").read_text().splitlines()
    call = next(json.loads(line) for line in lines if json.loads(line).get("type") == "call")
    events = [
        {"kind": "state_change", "seq": 1, "t": 0, "wall": "", "data": {"name": f"POST /{n}"}} for n in range(5000)
    ]
    wide = {f"key{n}": n for n in range(5000)}
    calls = [json.dumps({**call, "seq": 1, "events": events, "result": wide})]
    calls += [json.dumps({**call, "seq": seq, "tool": "browser_bogus"}) for seq in range(2, 3001)]
    (folder / "trace.jsonl").write_text("\n".join([header, *calls]) + "\n")
    score = json.loads((folder / "score.json").read_text())
    failures = [{"gate": "permitted_tools", "message": "not permitted", "seq": seq} for seq in range(2, 3001)]
    score["gates"].update(ok=False, failures=failures)
    (folder / "score.json").write_text(json.dumps(score))
    (folder / TRANSCRIPT_FILE).write_text(
        "".join(json.dumps({"turn": n, "role": "assistant"}) + "\n" for n in range(3000))
    )
    write_reports(folder)
    page = (folder / "report.html").read_text()
    shown = re.findall(r'<article class="[^"]*" id="call-(\d+)"', page)
    assert len(shown) == 2 * TIMELINE_ENDS + 100, len(shown)
    assert "4950 more events not shown (trace.jsonl has them)" in page
    assert "4960 more keys not shown (the full JSON has them)" in page
    assert "transcript.jsonl has 3000 lines: its first 400 are shown (the file has them all)" in page
    assert len(page) < 3_000_000, len(page)


def test_a_call_whose_times_make_no_duration_shows_it_unknown(tmp_path):
    """It showed ``nan s`` (and ``-3.0 s`` for times that ran backwards)."""
    folder = scored_attempt(tmp_path / "attempt")
    header, *lines = (folder / "trace.jsonl").read_text().splitlines()
    found = [n for n, line in enumerate(lines) if json.loads(line).get("type") == "call"]
    lines[found[0]] = json.dumps({**json.loads(lines[found[0]]), "t_end": float("nan")})
    lines[found[1]] = json.dumps({**json.loads(lines[found[1]]), "t_start": 5.0, "t_end": 2.0})
    (folder / "trace.jsonl").write_text("\n".join([header, *lines]) + "\n")
    write_reports(folder)
    page = (folder / "report.html").read_text()
    assert page.count("time unknown") == 2 and "nan s" not in page and "-3.0 s" not in page


def test_an_evaluation_error_says_what_rescoring_does_with_the_full_path(tmp_path):
    """It said "Fix it, then re-score: `sandbox score <folder name>`": the name works only from the
    batch folder, and `sandbox score` prints a verdict, never rewrites score.json."""
    folder = scored_attempt(tmp_path / "my batch" / "controlled-form-1")
    score = json.loads((folder / "score.json").read_text())
    error = {"evaluator": "rule x", "exception": "KeyError", "message": "k", "traceback": "Traceback"}
    (folder / "score.json").write_text(json.dumps({**score, "status": "error", "errors": [error]}))
    write_reports(folder)
    page = (folder / "report.html").read_text()
    assert f"<code>sandbox score &#39;{folder.resolve()}&#39;</code> prints the attempt's verdict" in page
    assert "does not rewrite this folder's score.json" in page


def test_a_transcript_line_nested_past_pythons_reach_is_one_unreadable_entry(tmp_path):
    """A line of 100,000 nested arrays raised RecursionError out of the page's transcript and the
    export's (a traceback from `sandbox report`, the end of `sandbox run` and `sandbox export`)."""
    folder = scored_attempt(tmp_path / "attempt")
    deep = "[" * 100_000 + "]" * 100_000
    (folder / TRANSCRIPT_FILE).write_text(f'{{"turn": 0, "role": "user"}}\n{deep}\n', encoding="utf-8")
    assert [e.heading for e in transcript(AttemptFolder.load(folder), [])] == ["0 · user", "line 2 (unreadable)"]
    assert list(transcript_entries(f'{deep}\n{{"role": "user"}}')) == [{"role": "user"}]


def test_a_number_past_pythons_digit_limit_is_unreadable_not_the_end_of_the_report(tmp_path):
    """json.loads raises a plain ValueError for it, which neither reader caught: `sandbox report`
    stopped at the attempt's page (exit 2), after the batch page had linked to it."""
    folder = scored_attempt(tmp_path / "attempt")
    huge = '{"turn": 1, "n": 1' + "0" * 5000 + "}"
    (folder / TRANSCRIPT_FILE).write_text(f'{{"turn": 0, "role": "user"}}\n{huge}\n', encoding="utf-8")
    assert [e.heading for e in transcript(AttemptFolder.load(folder), [])] == ["0 · user", "line 2 (unreadable)"]
    assert list(transcript_entries(f'{huge}\n{{"role": "user"}}')) == [{"role": "user"}]
    (folder / "attempt.json").write_text('{"pack": "controlled-form", "elapsed_seconds": 1' + "0" * 5000 + "}")
    loaded = AttemptFolder.load(folder)
    assert any(p.startswith("attempt.json is not valid JSON (Exceeds the limit") for p in loaded.problems), (
        loaded.problems
    )


def test_a_transcript_that_is_a_folder_or_a_link_out_is_said_on_the_page(tmp_path):
    """It was left out unsaid, where the page promises to list a transcript it cannot read."""
    folder = scored_attempt(tmp_path / "attempt")
    (folder / TRANSCRIPT_FILE).mkdir()
    problems: list[str] = []
    assert transcript(AttemptFolder.load(folder), problems) == []
    assert problems == ["transcript.jsonl is a folder, not a file: no transcript shown"]


def test_an_unreadable_prompt_or_transcript_is_a_problem_of_its_sample_not_a_traceback(capsys):
    """`sandbox export` raised PermissionError out of its reader (the page's reader said so already)."""
    from inspect_ai.log import read_eval_log

    with open_folder() as made:
        folder = scored_attempt(made / "controlled-form-1")
        (folder / TRANSCRIPT_FILE).write_text('{"turn": 0, "role": "user"}\n')
        assert main(["export", str(folder), "-o", str(made / "warm.json")]) == 0  # every module loaded
        open_to_all(made)
        for name in (TRANSCRIPT_FILE, "prompt.txt"):
            (folder / name).chmod(0)
        with as_nobody():
            code = main(["export", str(folder), "-o", str(made / "log.json")])
        assert code == 0, capsys.readouterr().err
        (sample,) = read_eval_log(made / "log.json").samples
    problems = sample.metadata["problems"]
    assert "prompt.txt is unreadable (Permission denied): left out" in problems, problems
    assert "transcript.jsonl is unreadable (Permission denied): left out" in problems, problems
