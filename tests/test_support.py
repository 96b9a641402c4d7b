"""Test helpers live in ``tests/support/``: no file under tests/ imports a conftest, a test
module or ``scripts/``; the only ``tests.*`` modules anything imports are under
``tests.support``; conftest files hold fixtures (and pytest hooks) only; and no helper module
sits beside the tests outside ``tests/support/``. The check is shown to catch each kind."""

from __future__ import annotations

import ast
from pathlib import Path

from sandbox import PROJECT_ROOT

SUPPORT = ("tests", "support")
FIXTURE_DECORATORS = {"fixture"}  # pytest.fixture, pytest_asyncio.fixture, or a bare ``fixture``


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(tree: ast.Module, name: str, is_package: bool) -> list[tuple[int, list[str]]]:
    """(line, what it may import, most specific first) for every import anywhere in the module
    (inside functions too), relative imports resolved against the module's own package:
    ``from tests.runner import test_report`` may import the module ``tests.runner.test_report``."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, [alias.name]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found += [(node.lineno, [f"{module}.{alias.name}", module]) for alias in node.names]
    return found


def forbidden(module: str) -> str | None:
    """Why importing ``module`` from a file under tests/ is not allowed, or None."""
    parts = module.split(".")
    if parts[0] == "scripts":
        return "imports scripts/ (copy what it needs into tests/support/)"
    if parts[0] != "tests" or len(parts) == 1:
        return None
    if "conftest" in parts:
        return "imports a conftest (shared helpers live in tests/support/)"
    if any(part.startswith("test_") for part in parts):
        return "imports a test module (shared helpers live in tests/support/)"
    if tuple(parts[:2]) != SUPPORT:
        return "imports a tests module outside tests/support/"
    return None


def is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr in FIXTURE_DECORATORS:
            return True
        if isinstance(target, ast.Name) and target.id in FIXTURE_DECORATORS:
            return True
    return False


def conftest_problems(tree: ast.Module) -> list[tuple[int, str]]:
    """A conftest holds imports, fixtures, pytest hooks and ``pytest_plugins`` only."""
    problems = []
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if is_fixture(node) or node.name.startswith("pytest_"):
                continue
            problems.append((node.lineno, f"defines {node.name}() beside the fixtures (move it to tests/support/)"))
        elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["pytest_plugins"]:
            continue
        else:
            kind = type(node).__name__
            problems.append(
                (node.lineno, f"holds a statement ({kind}) beside the fixtures (move it to tests/support/)")
            )
    return problems


def support_problems(root: Path) -> list[str]:
    """Every breach of the rules above in the tests/ folder of ``root``, as ``path:line: why``."""
    problems = []
    for path in sorted((root / "tests").rglob("*.py")):
        relative = path.relative_to(root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(relative))
        name = module_name(root, path)
        for line, candidates in imported_modules(tree, name, path.name == "__init__.py"):
            reasons = [(why, module) for module in candidates if (why := forbidden(module))]
            if reasons:
                problems.append(f"{relative}:{line}: {reasons[0][0]}: {reasons[0][1]}")
        in_support = relative.parts[:2] == SUPPORT
        if path.name == "conftest.py":
            problems += [f"{relative}:{line}: {why}" for line, why in conftest_problems(tree)]
        elif not (in_support or path.name.startswith("test_") or path.name == "__init__.py"):
            problems.append(f"{relative}:1: a helper module outside tests/support/ (move it there)")
    return problems


def test_helpers_come_from_tests_support_only():
    problems = support_problems(PROJECT_ROOT)
    assert problems == [], "\n".join(problems)


def test_the_check_sees_each_kind_of_breach(tmp_path):
    files = {
        "tests/__init__.py": "",
        "tests/conftest.py": "import pytest\n\nSITE = 'x'\n\n\ndef start():\n    pass\n\n\n"
        "@pytest.fixture\ndef fine():\n    return 1\n",
        "tests/support/__init__.py": "",
        "tests/support/calls.py": "def start():\n    pass\n",
        "tests/r/__init__.py": "",
        "tests/r/helpers.py": "X = 1\n",
        "tests/r/test_a.py": "from tests.conftest import start\nfrom tests.support.calls import start\n",
        "tests/r/test_b.py": "def test():\n    from tests.r.test_a import start\n",
        "tests/r/test_c.py": "from . import test_a\nfrom scripts.soak import process_tree\n",
        "tests/r/test_d.py": "import tests.r.helpers\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    assert support_problems(tmp_path) == [
        "tests/conftest.py:3: holds a statement (Assign) beside the fixtures (move it to tests/support/)",
        "tests/conftest.py:6: defines start() beside the fixtures (move it to tests/support/)",
        "tests/r/helpers.py:1: a helper module outside tests/support/ (move it there)",
        "tests/r/test_a.py:1: imports a conftest (shared helpers live in tests/support/): tests.conftest.start",
        "tests/r/test_b.py:2: imports a test module (shared helpers live in tests/support/): tests.r.test_a.start",
        "tests/r/test_c.py:1: imports a test module (shared helpers live in tests/support/): tests.r.test_a",
        "tests/r/test_c.py:2: imports scripts/ (copy what it needs into tests/support/): scripts.soak.process_tree",
        "tests/r/test_d.py:1: imports a tests module outside tests/support/: tests.r.helpers",
    ]
