"""The HTML report, looked at as a person would: opened from file:// in real headless
Chromium, it makes no network request, every internal link resolves, the accessibility
snapshot shows the verdict and a failing field's expected/got values, and the page is not
blank. Inputs: the committed sample attempts (recorded reference attempts, the recorded
failing external agent) and damaged copies of them."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from PIL import Image

from sandbox import FIXTURES_DIR
from sandbox.cli import main
from tests.support.reports import open_report

SAMPLES = FIXTURES_DIR / "attempts"


@pytest.fixture
def samples(tmp_path) -> Path:
    shutil.copytree(SAMPLES, tmp_path / "attempts")
    return tmp_path / "attempts"


async def broken_links(page, folder: Path) -> list[str]:
    """Every href: an anchor must name an element id; a relative link a file that exists."""
    hrefs = await page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
    ids = set(await page.eval_on_selector_all("[id]", "nodes => nodes.map(n => n.id)"))
    assert hrefs, "the report has no link at all"
    broken = []
    for href in hrefs:
        if href.startswith("#"):
            if href[1:] not in ids:
                broken.append(href)
        elif urlparse(href).scheme or not (folder / unquote(href)).is_file():
            broken.append(href)
    return broken


def not_blank(png: bytes) -> bool:
    colours = Image.open(io.BytesIO(png)).convert("L").getcolors(maxcolors=1 << 16)
    return colours is None or len(colours) > 10


async def test_batch_report_of_the_recorded_reference_attempts(sandbox, samples, capsys):
    batch = samples / "reference"
    assert main(["report", str(batch)]) == 0
    assert capsys.readouterr().out.startswith(f"report: {batch / 'report.html'} (and 8 attempt reports)")
    page, context, requests = await open_report(sandbox, batch / "report.html")
    try:
        snapshot = await page.locator("body").aria_snapshot()
        assert "8/8 attempts qualified" in snapshot
        assert 'table "Summary"' in snapshot and "sec-contract" in snapshot
        assert await broken_links(page, batch) == []
        assert not_blank(await page.screenshot())
        await page.get_by_role("link", name="bid-intake", exact=True).click()
        await page.wait_for_load_state("load")
        assert page.url.endswith("/reference/bid-intake/report.html")
        attempt = await page.locator("body").aria_snapshot()
        assert "QUALIFIED PASS (error-free)" in attempt and "Timeline (7 tool calls)" in attempt
        assert await broken_links(page, batch / "bid-intake") == []
    finally:
        await context.close()
    assert [url for url in requests if not url.startswith("file://")] == []


async def test_failing_attempt_report_shows_why_and_expected_vs_got(sandbox, samples):
    folder = samples / "example-agent-bid-intake"
    assert main(["report", str(folder)]) == 0
    page, context, requests = await open_report(sandbox, folder / "report.html")
    try:
        snapshot = await page.locator("body").aria_snapshot()
        assert "NOT A QUALIFIED PASS" in snapshot
        assert "Why it did not qualify" in snapshot
        row = page.get_by_role("row").filter(has_text="identity.solicitation_number")
        cells = await row.get_by_role("cell").all_inner_texts()
        assert cells[:6] == [
            "identity.solicitation_number",
            "exact",
            "critical",
            "wrong (field missing)",
            '"70Z03126RALAM2004"',
            "null",
        ]
        assert "not found: no evidence given for this field" in cells[6]
        assert await broken_links(page, folder) == []
        assert not_blank(await page.screenshot())
    finally:
        await context.close()
    assert [url for url in requests if not url.startswith("file://")] == []


async def test_gate_violations_link_to_the_call_at_fault(sandbox, samples, capsys):
    folder = samples / "controlled-form-handmade-confirm-click"  # hand-made: scored here
    assert main(["score", str(folder), "--json"]) == 1
    (folder / "score.json").write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["report", str(folder)]) == 0
    page, context, _ = await open_report(sandbox, folder / "report.html")
    try:
        await page.get_by_role("link", name="seq 12").first.click()
        assert page.url.endswith("#call-12")
        call = page.locator("#call-12")
        assert "gate tool_counts" in await call.inner_text() and "gate safety" in await call.inner_text()
        assert await call.locator(".event.highlighted").count() >= 1  # the state change it caused
        assert await broken_links(page, folder) == []
    finally:
        await context.close()


async def test_a_killed_run_without_score_still_renders_what_there_is(sandbox, samples):
    folder = samples / "reference" / "bid-intake"
    (folder / "score.json").unlink()
    lines = (folder / "trace.jsonl").read_text().splitlines()
    (folder / "trace.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    assert main(["report", str(folder)]) == 0
    page, context, _ = await open_report(sandbox, folder / "report.html")
    try:
        missing = await page.get_by_role("region", name="Missing").inner_text()
        assert "score.json is missing" in missing
        assert f"trace.jsonl line {len(lines)}: unreadable" in missing
        assert "NOT SCORED" in await page.locator("body").inner_text()
        assert await page.locator("article.call").count() >= 6
        assert await broken_links(page, folder) == []
    finally:
        await context.close()


async def test_an_attempt_killed_before_it_was_recorded_renders_its_trace(sandbox, samples):
    """What a batch killed mid-attempt leaves: the prompt and the trace, no attempt.json."""
    folder = samples / "reference" / "bid-intake"
    for name in ("attempt.json", "score.json", "output.txt"):
        (folder / name).unlink()
    assert main(["report", str(folder)]) == 0
    page, context, _ = await open_report(sandbox, folder / "report.html")
    try:
        attempt = await page.get_by_role("table", name="Attempt").inner_text()
        assert "status\tunknown" in attempt and "time\tunknown" in attempt, attempt
        assert "attempt.json is missing" in await page.get_by_role("region", name="Missing").inner_text()
        assert await page.locator("article.call").count() >= 6
    finally:
        await context.close()


def test_nothing_to_report_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not an attempt")
    assert main(["report", str(tmp_path)]) == 2
    assert "nothing to report" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing")]) == 2


async def test_report_shows_each_calls_screenshot(sandbox, tmp_path):
    from sandbox.evaluation.packs import load_pack
    from sandbox.runner.agents.reference_agent import ReferenceAgent
    from sandbox.runner.attempt import run_attempt

    outcome = await run_attempt(sandbox, load_pack("controlled-form"), ReferenceAgent(), tmp_path / "controlled-form-1")
    assert main(["report", str(outcome.directory)]) == 0
    page, context, requests = await open_report(sandbox, outcome.directory / "report.html")
    try:
        images = page.locator("article.call img")
        assert await images.count() == outcome.tool_calls - 1  # every call but browser_close
        widths = await images.evaluate_all("imgs => imgs.map(i => i.complete ? i.naturalWidth : -1)")
        assert set(widths) == {sandbox.config.viewport[0]}
        assert await broken_links(page, outcome.directory) == []
    finally:
        await context.close()
    assert [url for url in requests if not url.startswith("file://")] == []


async def test_the_batch_page_shows_an_attempt_folder_its_summary_does_not_list(sandbox, tmp_path, capsys):
    """An attempt folder the summary.json does not list (copied in; a summary older than its
    folders) was left out of the batch page and `sandbox results` without a word, while `sandbox
    report` wrote its attempt page."""
    from sandbox.runner.batch import write_summary
    from sandbox.runner.folders import batch_attempts, outcome

    batch = tmp_path / "batch"
    shutil.copytree(SAMPLES / "reference" / "controlled-form", batch / "controlled-form-1")
    write_summary(batch, [outcome(attempt) for attempt in batch_attempts(batch)], 2000.0)
    shutil.copytree(SAMPLES / "reference" / "controlled-form", batch / "controlled-form-2")
    assert main(["results", str(batch)]) == 0
    said = capsys.readouterr()
    assert "2/2" in said.out
    assert f"{batch / 'summary.json'} does not list the attempt folder(s) controlled-form-2/" in said.err
    assert main(["report", str(batch)]) == 0
    page, context, _ = await open_report(sandbox, batch / "report.html")
    try:
        assert "2/2 attempts qualified" in await page.locator("body").inner_text()
        assert await page.get_by_role("link", name="controlled-form-2").count() == 1
        assert "does not list" in await page.get_by_role("region", name="Missing").inner_text()
        assert await broken_links(page, batch) == []
    finally:
        await context.close()


async def test_the_batch_page_gives_no_time_for_an_attempt_killed_before_it_was_recorded(sandbox, tmp_path):
    """It showed 0.00 seconds, a time the attempt never took (the median leaves it out: unknown)."""
    batch = tmp_path / "batch"
    for name in ("controlled-form-1", "controlled-form-2"):
        shutil.copytree(SAMPLES / "reference" / "controlled-form", batch / name)
    for name in ("attempt.json", "score.json", "output.txt"):  # what a batch killed mid-attempt leaves
        (batch / "controlled-form-2" / name).unlink()
    assert main(["report", str(batch)]) == 0
    page, context, _ = await open_report(sandbox, batch / "report.html")
    try:
        attempts = page.get_by_role("table", name="Attempts")
        killed = (
            await attempts.get_by_role("row").filter(has_text="controlled-form-2").get_by_role("cell").all_inner_texts()
        )
        kept = (
            await attempts.get_by_role("row").filter(has_text="controlled-form-1").get_by_role("cell").all_inner_texts()
        )
        assert killed[3] == "unknown" and kept[3] != "unknown" and float(kept[3]) > 0
    finally:
        await context.close()
