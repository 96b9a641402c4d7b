"""The layering is enforced: import-linter's contracts hold with no exceptions, a back-edge
makes them fail, and importing the tool server loads no pack, scoring or runner module."""

from __future__ import annotations

import ast
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
    assert "7 kept, 0 broken" in result.stdout


def test_a_back_edge_breaks_the_contract(tmp_path):
    for package in ("sandbox", "toolserver"):
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / ".importlinter", tmp_path / ".importlinter")
    policy = tmp_path / "toolserver" / "contract" / "policy.py"
    policy.write_text(policy.read_text() + "\n\ndef _late():\n    from sandbox.runner import batch  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "toolserver.contract.policy -> sandbox.runner.batch" in result.stdout


def test_importing_the_tool_server_loads_no_pack_scoring_or_runner_module():
    code = (
        "import sys; import toolserver.api, toolserver.transports.http, toolserver.tools; "
        "bad = sorted(m for m in sys.modules if m.startswith(('sandbox.evaluation', 'sandbox.runner', "
        "'sandbox.cli'))); print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project modules it imports, counting imports inside functions (every
    ``import`` statement anywhere in the module's source)."""
    modules: dict[str, Path] = {}
    for package in ("sandbox", "toolserver"):
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {target for alias in node.names if (target := resolve(alias.name))}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    target = f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else resolve(module)
                    if target:
                        edges.add(target)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_anywhere_counting_imports_inside_functions(tmp_path):
    assert cycles(import_graph(PROJECT_ROOT)) == []
    # the check sees a cycle made by an import inside a function
    for package in ("sandbox", "toolserver"):
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    names = tmp_path / "toolserver" / "contract" / "names.py"
    names.write_text(names.read_text() + "\n\ndef _late():\n    from toolserver.contract import trace  # noqa\n")
    trace = tmp_path / "toolserver" / "contract" / "trace.py"
    trace.write_text(trace.read_text() + "\n\ndef _late():\n    from toolserver.contract import names  # noqa\n")
    assert ["toolserver.contract.names", "toolserver.contract.trace"] in cycles(import_graph(tmp_path))


def test_the_tool_server_keeps_its_shape():
    """No module over 350 lines, no JavaScript program in a Python string (they are .js files),
    and no tool handler building the page-state dict (the response does)."""
    for path in (PROJECT_ROOT / "toolserver").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert source.count("\n") <= 350, f"{path} has {source.count(chr(10))} lines"
        tree = ast.parse(source)
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                program = node.value.count("\n") >= 2 and ("=>" in node.value or "function" in node.value)
                assert not program, f"JavaScript in {path}:{node.lineno}"
    for path in (PROJECT_ROOT / "toolserver" / "tools").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
                assert not {"tab", "url", "title"} <= keys, f"a page-state dict built in {path}:{node.lineno}"


def test_the_tool_server_uses_no_private_attribute_or_module_of_another_package():
    """Only public APIs of Playwright and the MCP SDK (so their pins can be plain lower bounds):
    no ``obj._name`` outside ``self``/``cls``, no import from a ``_private`` module."""

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    def own(value: ast.expr) -> bool:
        return isinstance(value, ast.Name) and value.id in ("self", "cls")

    found = []
    for path in (PROJECT_ROOT / "toolserver").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and private(node.attr) and not own(node.value):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                parts = node.module.split(".")
                if parts[0] != "toolserver" and any(private(part) for part in parts):
                    found.append(f"{path.name}:{node.lineno} from {node.module}")
    assert found == []
