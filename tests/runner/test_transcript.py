"""``transcript.jsonl`` (``sandbox.runner.transcript``): every entry is written, also one whose
text is not valid Unicode, and one written by a later ``Transcript`` keeps the conversation's turn.
Pure: a file in a temporary folder."""

from __future__ import annotations

import json

from sandbox.runner.transcript import TRANSCRIPT_FILE, Transcript


def entries(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / TRANSCRIPT_FILE).read_text(encoding="utf-8").splitlines()]


def test_half_a_surrogate_pair_in_a_model_s_text_is_written_escaped(tmp_path):
    """It raised UnicodeEncodeError: the attempt crashed, and under record modes all and once its
    recording was not saved."""
    transcript = Transcript(tmp_path)
    transcript.write({"role": "assistant", "content": "partial \ud83d", "tool_calls": []})
    transcript.write({"role": "user", "content": "São Paulo"})
    assert entries(tmp_path) == [
        {"turn": 0, "role": "assistant", "content": "partial \ud83d", "tool_calls": []},
        {"turn": 0, "role": "user", "content": "São Paulo"},
    ]
    assert "São Paulo" in (tmp_path / TRANSCRIPT_FILE).read_text(encoding="utf-8")  # other text as it is


def test_a_transcript_opened_again_goes_on_at_the_last_turn(tmp_path):
    """The cassette's entry (why a recording was not saved) is written by a Transcript of its own,
    after the conversation: it always said turn 0."""
    transcript = Transcript(tmp_path)
    transcript.write({"role": "user", "content": "task"})
    transcript.turn = 3
    transcript.write({"role": "assistant", "content": "x" * 200_000})  # a line longer than one read
    assert Transcript(tmp_path).turn == 3
    Transcript(tmp_path).write({"kind": "cassette", "error": "not saved"})
    assert entries(tmp_path)[-1] == {"turn": 3, "kind": "cassette", "error": "not saved"}
    assert Transcript(tmp_path / "elsewhere").turn == 0 and Transcript(None).turn == 0
