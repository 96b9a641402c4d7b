"""Every reason the tool server ends a run with is listed in the ``run_end`` line's reference
(``RunEnd.reason``, from which docs/reference/trace.md is made)."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import toolserver
from toolserver.contract.trace import RunEnd

REASON_AT = {"close": 0, "end_run": 1}  # Run.close(reason), end_run(run_or_id, reason) (transports, Sandbox)


def reasons_written() -> dict[str, str]:
    """Each string constant given as the reason of a call that ends a run, and where."""
    found = {}
    for path in Path(toolserver.__file__).parent.rglob("*.py"):
        for node in ast.walk(parsed(path.read_text())):
            name = getattr(node, "func", None)
            at = REASON_AT.get(getattr(name, "attr", getattr(name, "id", "")))
            if not isinstance(node, ast.Call) or at is None or len(node.args) <= at:
                continue
            for constant in ast.walk(node.args[at]):  # a constant, or one of an `a if b else c`
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    found[constant.value] = f"{path.name}:{node.lineno}"
    return found


def parsed(source: str) -> ast.Module:
    """``ast.parse`` with the garbage collector paused: a finalizer run inside the AST's C
    constructor (a task of a failed test, logging its exception) trips CPython 3.11's recursion
    check ("AST constructor recursion depth mismatch")."""
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        gc.enable()


def test_every_run_end_reason_written_is_documented():
    documented = RunEnd.model_fields["reason"].description or ""
    written = reasons_written()
    assert {"idle_timeout", "answered", "mcp_idle_timeout", "initialize_failed", "server_stopped"} <= set(written)
    missing = {reason: where for reason, where in written.items() if f"`{reason}`" not in documented}
    assert missing == {}, f"run_end reasons written but not in RunEnd.reason's description: {missing}"
