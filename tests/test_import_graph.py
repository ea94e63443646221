"""The shape of the package (docs/architecture.md): layers that import only downwards, no import
circles between modules nor between packages (lazy, function-level and type-checking imports
included), and few modules directly in ``nl2sql/``."""

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
    assert "nl2sql.annotation.annotator" in graph["nl2sql.annotation.pipeline"]
    assert "nl2sql.db.base" in graph["nl2sql.operations.ops_context"]  # a lazy import
    assert "nl2sql.sql_guard" in graph["nl2sql.operations.queries"]  # a lazy import too
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


#: The layers, lowest first (docs/architecture.md). A module imports only from its own layer or
#: lower ones. ``nl2sql`` itself (``__init__``: ``ask``, ``context``, ``Answer`` loaded on first
#: use, ``__version__``) is the public face: anything may import it, its own imports are lazy.
LAYERS: list[set[str]] = [
    {"errors", "backends", "_helpers", "_call_stop", "_worker", "_tracing"},
    {"schema"},
    {"config"},
    {"store"},
    {"access", "workspace", "verified", "sql_guard", "llm", "charts", "semantic"},
    {"db"},
    {"inspection"},
    {"context_engine"},
    {"operations", "annotation"},
    {"agents"},
    {"evaluation", "mcp", "web"},
    {"cli"},
]
FACE = "nl2sql"


def _unit(module: str) -> str:
    """The package (or root module) a module belongs to: ``nl2sql.db.sqlite`` -> ``db``."""
    return module.split(".")[1] if module != FACE else FACE


def _rank(module: str) -> int:
    unit = _unit(module)
    ranks = [i for i, layer in enumerate(LAYERS) if unit in layer]
    assert ranks, f"{module}: its package {unit!r} is in no layer of LAYERS (add it)"
    return ranks[0]


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, targets in import_graph().items():
        if source == FACE:
            continue
        graph.setdefault(_unit(source), set()).update(
            _unit(t) for t in targets if t != FACE and _unit(t) != _unit(source))
    return graph


def test_imports_go_down_the_layers() -> None:
    upward = sorted(f"{source} -> {target}" for source, targets in import_graph().items()
                    if source != FACE for target in targets
                    if target != FACE and _rank(target) > _rank(source))
    assert upward == []


def test_no_import_circles_between_packages() -> None:
    cycle = find_cycle(_package_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_few_modules_directly_in_the_package() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(loose) <= 8, loose
    assert {"__init__.py", "errors.py", "backends.py"} <= set(loose)


def test_no_module_class_hack() -> None:
    """``nl2sql.context`` is a plain function, not a callable module."""
    hacks = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
             if "__class__ =" in p.read_text(encoding="utf-8")]
    assert hacks == []
    assert type(nl2sql.context).__name__ == "function"
