"""Packs, scoring and gates stay pure: importing them loads neither Playwright nor aiohttp."""

from __future__ import annotations

import subprocess
import sys

from sandbox import PROJECT_ROOT


def test_pure_modules_import_no_browser_or_server_code():
    code = (
        "import sys; import sandbox.evaluation.packs, sandbox.evaluation.gates, sandbox.evaluation.scoring, "
        "sandbox.evaluation.scoring.synthetic; "
        "import sandbox.cli.commands.score, sandbox.cli.commands.packs; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('playwright', 'aiohttp')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
