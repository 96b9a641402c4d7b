"""An agent's text that acts on a terminal or reorders a line (ANSI escapes, a carriage return,
NUL, the C1 CSI, bidirectional overrides) in its answer, its tool call's URL and its standard
error: every place people read it shows the escapes, never the characters themselves: the reason
lines, `sandbox score`, score.txt, the comparison table and the HTML report."""

from __future__ import annotations

import json

from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.runner.batch import format_reasons, run_batch
from tests.support.hostile import HOSTILE_TEXT, RAW_CONTROLS, hostile_text_agent
from tests.support.reports import open_report

# Its standard error as the reason line quotes it: each line (the carriage return ends one) after a " | ".
STDERR = "boom \\x1b[31mRED\\x1b[0m\\x07 | OVER\\x00\\x9b2J\\u202eDESREVER\\u2066"


def raw(text: str) -> list[str]:
    return [character for character in RAW_CONTROLS if character in text]


async def test_an_agents_control_and_bidi_characters_are_shown_escaped(sandbox, tmp_path, capsys):
    [attempt] = await run_batch(
        [load_pack("controlled-form")], hostile_text_agent(tmp_path), out=tmp_path / "runs", progress=False,
        sandbox=sandbox,
    )  # fmt: skip
    batch, folder = attempt.directory.parent, attempt.directory
    reasons = format_reasons([attempt.to_json()])
    assert raw(reasons) == [] and f"stderr: {STDERR}" in reasons  # the bidi override was raw

    score_text = (folder / "score.txt").read_text(encoding="utf-8")  # the stderr line was raw
    assert raw(score_text) == [] and STDERR in score_text
    assert main(["score", str(folder)]) == 1  # the fields' values: the C1 CSI and the override were raw
    printed = capsys.readouterr().out
    assert raw(printed) == [] and 'got "\\u001b[31mRED\\u001b[0m\\u0007\\rOVER\\u0000\\x9b2J\\u202e' in printed
    assert "evil.example/\\u001b" in printed  # the gate's line quotes the URL the agent asked for
    main(["score", "--json", str(folder)])  # the JSON: escapes for the C1 CSI and the override too
    printed = capsys.readouterr().out
    assert raw(printed) == [] and json.dumps(HOSTILE_TEXT) in json.dumps(json.loads(printed))  # the same values
    main(["results", "--json", str(batch)])
    printed = capsys.readouterr().out
    assert raw(printed) == [] and json.loads(printed)["attempts"]

    summary = json.loads((batch / "summary.json").read_text())  # an agent's name, from elsewhere
    summary["attempts"][0]["agent"] = "agent \x1b]0;title\x07\u202e"
    (batch / "summary.json").write_text(json.dumps(summary))
    assert main(["compare", str(batch)]) in (0, 1)
    compared = capsys.readouterr().out
    assert raw(compared) == [] and "agent \\x1b]0;title\\x07\\u202e" in compared

    assert main(["report", str(batch)]) == 0
    for page_file in (batch / "report.html", folder / "report.html"):
        html = page_file.read_text(encoding="utf-8")
        assert raw(html) == [], page_file  # NUL, ESC, the bell and the override were in the page
        assert "<script>alert" not in html
    page, context, _ = await open_report(sandbox, folder / "report.html")
    try:
        text = await page.locator("body").inner_text()
        assert STDERR in text and "\u202e" not in text
    finally:
        await context.close()
