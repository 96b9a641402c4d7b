"""The JavaScript put into pages comes from the package's .js files (package data)."""

from __future__ import annotations

from toolserver.browser.javascript import INIT_SCRIPT, REPORT_PREFIX, init_script
from toolserver.browser.reports import STATE_JS, STATE_NOW_JS


def test_the_state_expression_is_sent_without_the_files_comment_lines():
    assert STATE_NOW_JS.startswith("({...(window.__sandboxState")
    assert "//" not in STATE_NOW_JS
    assert STATE_JS.endswith(f"resolve({STATE_NOW_JS}), 0))")


def test_the_injected_program_keeps_its_line_numbers():
    # Line 1 is the file's comment, where the program's source began with an empty line: a line
    # number in an error the page can read is the same as it was.
    assert INIT_SCRIPT.splitlines()[1] == "(() => {" and INIT_SCRIPT.endswith("})();\n")


def test_each_session_has_its_report_key_and_the_runs_switches():
    script = init_script("k123", block_state_changes=True, screenshots=False)
    assert f"'{REPORT_PREFIX}' + 'k123' + ':'" in script and "__REPORT_KEY__" not in script
    assert script.endswith("})();\nwindow.__sandboxBlockStateChanges = true;")
    shots = init_script("k", block_state_changes=False, screenshots=True)
    assert shots.endswith("})();\nwindow.__sandboxShots = true;")
    assert init_script("k", block_state_changes=False, screenshots=False).endswith("})();\n")
