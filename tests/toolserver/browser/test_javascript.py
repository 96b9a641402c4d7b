"""The JavaScript put into pages comes from the package's .js files (package data); the plain state
report of a document the page script never ran in."""

from __future__ import annotations

from toolserver.browser.javascript import INIT_SCRIPT, REPORT_PREFIX, init_script
from toolserver.browser.reports import STATE_JS, STATE_NOW_JS
from toolserver.browser.settling import PAGE_COUNTERS


def test_the_state_expression_is_sent_without_the_files_comment_lines():
    assert STATE_NOW_JS.startswith("(window.__sandboxState ? window.__sandboxState(false)")
    assert "//" not in STATE_NOW_JS
    assert STATE_NOW_JS.replace("__sandboxState(false)", "__sandboxState(true)") == STATE_JS


def test_the_injected_program_keeps_its_line_numbers():
    # Line 1 is the file's comment, where the program's source began with an empty line: a line
    # number in an error the page can read is the same as it was.
    assert INIT_SCRIPT.splitlines()[1] == "(() => {" and INIT_SCRIPT.endswith("})();\n")


def test_each_session_has_its_report_key_and_the_runs_switches():
    script = init_script("k123", block_state_changes=True, screenshots=False)
    assert f"'{REPORT_PREFIX}' + 'k123' + ':'" in script and "__REPORT_KEY__" not in script
    assert "const BLOCK_STATE_CHANGES = true, SHOTS = false;" in script
    shots = init_script("k", block_state_changes=False, screenshots=True)
    assert "const BLOCK_STATE_CHANGES = false, SHOTS = true;" in shots and shots.endswith("})();\n")
    assert "__" + "SHOTS__" not in shots and "__BLOCK_" not in shots


async def test_the_plain_state_report_of_a_document_without_the_page_script_has_every_counter(browser):
    """A document init.js never ran in (an error page, a frame's first) gets a plain report: it
    lacked ``closes``, so settling a call whose probe came from one failed with KeyError."""
    context = await browser.new_context()
    page = await context.new_page()
    await page.set_content("<title>Plain</title>")
    report = await page.evaluate(STATE_NOW_JS)
    await context.close()
    assert set(PAGE_COUNTERS) <= set(report), report
    assert report["title"] == "Plain" and report["final"] is None
