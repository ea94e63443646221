"""No import circles between nl2sql modules, lazy (function-level) and type-checking imports
included: every shared piece has its own home, so each module can be read, tested and loaded on
its own."""

from __future__ import annotations

import ast
from pathlib import Path

import nl2sql

PACKAGE = Path(nl2sql.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1],
                                 *([node.module] if node.module else [])])
            for alias in node.names:  # "from nl2sql import operations" names a module
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(path) for path in paths}
    return {_module_name(path): _imports(path, modules) for path in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    graph = import_graph()
    assert "nl2sql.annotation.seam" in graph["nl2sql.annotation.pipeline"]
    assert "nl2sql.annotation.pipeline_steps" in graph["nl2sql.annotation.pipeline"]  # a lazy import
    assert "nl2sql.config.secrets" in graph["nl2sql.config.registry"]  # a lazy import too
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_circles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_quiet_import_leaves_logging_as_it_was() -> None:
    import logging
    import subprocess
    import sys

    script = ("import logging, sys\nfrom nl2sql._helpers import quiet_imports\n"
              "with quiet_imports('wordllama', 'bm25s'):\n    import wordllama, bm25s\n"
              "print(logging.getLogger().handlers, logging.getLogger('bm25s').level)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == f"[] {logging.NOTSET}" and done.stderr == ""
