"""The layering is enforced: import-linter's contracts hold with no exceptions, a back-edge
makes them fail, and importing the tool server loads no pack, scoring or runner module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from sandbox import PROJECT_ROOT

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / ".importlinter"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


def test_import_contracts_are_kept_with_no_exceptions_listed():
    config = (PROJECT_ROOT / ".importlinter").read_text()
    assert "ignore_imports" not in config and "unmatched_ignore" not in config
    result = lint_imports(PROJECT_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def test_a_back_edge_breaks_the_contract(tmp_path):
    for package in ("sandbox", "toolserver"):
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / ".importlinter", tmp_path / ".importlinter")
    policy = tmp_path / "sandbox" / "core" / "policy.py"
    policy.write_text(policy.read_text() + "\n\ndef _late():\n    from sandbox.runner import batch  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "sandbox.core.policy -> sandbox.runner.batch" in result.stdout


def test_importing_the_tool_server_loads_no_pack_scoring_or_runner_module():
    code = (
        "import sys; import toolserver.api, toolserver.transports.http, toolserver.tools; "
        "bad = sorted(m for m in sys.modules if m.startswith(('sandbox.evaluation', 'sandbox.runner', "
        "'sandbox.cli'))); print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
