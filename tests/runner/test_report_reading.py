"""What the HTML report reads from an attempt folder, and how much of it it shows: a transcript whose
text holds a Unicode line separator, files that cannot be read, pages that cannot be written, each
session's Playwright trace, and bounds on a page's size. Built from the committed reference attempt;
no browser."""

from __future__ import annotations

import json

from sandbox.runner.folders import AttemptFolder
from sandbox.runner.inspect_export import transcript_entries
from sandbox.runner.report._view import transcript
from sandbox.runner.transcript import TRANSCRIPT_FILE, Transcript
from tests.support.attempt_folders import scored_attempt

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
    entries = transcript(AttemptFolder.load(older))
    assert [entry.heading for entry in entries] == ["1 · tool"]
    assert [entry.heading for entry in transcript(AttemptFolder.load(folder))] == ["0 · tool", "0 · assistant"]
