"""The HTML reports of batch folders with odd names and hostile text in them, opened in real
headless Chromium: a summary.json whose attempt folder is named like a ``javascript:`` URL, a
folder name that is not UTF-8."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from sandbox.runner.batch import write_summary
from sandbox.runner.folders import batch_attempts, outcome
from tests.support.reports import open_report

ATTEMPT = FIXTURES_DIR / "attempts" / "reference" / "controlled-form"


def batch_of(folder: Path, *names: str) -> Path:
    """A batch folder holding the recorded controlled-form attempt under each of ``names``, with its summary.json."""
    for name in names:
        shutil.copytree(ATTEMPT, folder / name)
    write_summary(folder, [outcome(attempt) for attempt in batch_attempts(folder)], 2000.0)
    return folder


async def test_a_summary_cannot_make_the_batch_page_run_a_script(sandbox, tmp_path):
    """An attempt's ``directory`` in summary.json became the link's URL as it was: a batch folder
    whose summary.json says ``javascript:alert(...)`` ran its script when the attempt was clicked."""
    batch = batch_of(tmp_path / "batch", "controlled-form-1")
    summary = json.loads((batch / "summary.json").read_text())
    summary["attempts"].append(summary["attempts"][0] | {"directory": "javascript:alert(document.title)"})
    (batch / "summary.json").write_text(json.dumps(summary))
    (batch / "javascript:alert(document.title)").mkdir()  # a folder is linked only when it is there
    assert main(["report", str(batch)]) == 0
    page, context, _ = await open_report(sandbox, batch / "report.html")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), asyncio.ensure_future(dialog.dismiss())))
    try:
        link = page.get_by_role("link", name="javascript:alert(document.title)")
        assert await link.get_attribute("href") == "javascript%3Aalert%28document.title%29/report.html"
        await link.click()  # a file that is not there: Chromium's error page, no script
        await page.wait_for_load_state("load")
        await page.evaluate("new Promise(done => setTimeout(done, 100))")  # after a javascript: URL's task
        assert dialogs == []
    finally:
        await context.close()


async def test_an_attempt_folder_named_in_bytes_that_are_not_utf8_is_linked(sandbox, tmp_path):
    """The link carried the name's escapes (``ab\\udcff-2``), a file that does not exist."""
    odd = os.fsdecode(b"ab\xff\xfe-2")
    batch = batch_of(tmp_path / "batch", "controlled-form-1", odd)
    assert main(["report", str(batch)]) == 0
    page, context, _ = await open_report(sandbox, batch / "report.html")
    try:
        link = page.locator('a[href^="ab"]')
        assert await link.get_attribute("href") == "ab%FF%FE-2/report.html"
        await link.click()
        await page.wait_for_load_state("load")
        assert "attempt ab" in await page.title() and "QUALIFIED PASS" in await page.locator("body").inner_text()
    finally:
        await context.close()


def test_a_summary_naming_a_folder_with_a_lone_surrogate_still_gets_its_report(tmp_path):
    """``"directory": "x\\ud800"`` (a surrogate no file name decodes to) made ``sandbox report``
    fail: the link's quoting raised UnicodeEncodeError."""
    batch = batch_of(tmp_path / "batch", "controlled-form-1")
    summary = json.loads((batch / "summary.json").read_text())
    summary["attempts"].append(summary["attempts"][0] | {"directory": "x\ud800"})
    (batch / "summary.json").write_text(json.dumps(summary))
    assert main(["report", str(batch)]) == 0
    page = (batch / "report.html").read_text()  # no folder can have that name: it is not there, nor linked
    assert 'x\\ud800 <span class="muted">(no page: its folder is not in the batch folder)</span>' in page
