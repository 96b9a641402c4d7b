"""`sandbox replay` as a person uses it: the divergence message shows where the texts differ
(not their first 200 characters), --report marks the first divergence on the attempt's
timeline, and the exit code reflects a failing re-score as well as a divergence."""

from __future__ import annotations

import asyncio
import json
import shutil

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.runner.replay import first_difference
from tests.support.reports import open_report

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
    assert "Grovel" in printed and "Gravel" in printed
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
