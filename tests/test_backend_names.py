"""A backend is its own modules plus one registry entry: no other code branches on a backend's
type name. The scan reads every module's syntax tree for a type name (or a ``DatabaseType``
member) compared with, used as a mapping key, or indexed by, outside the backend's own modules
(``nl2sql/db/<type>*.py``, ``nl2sql/inspection/<type>*.py``), the registry
(``nl2sql/backends.py``) and the guard's profiles (``nl2sql/sql_guard/profiles.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import nl2sql
from nl2sql.backends import BACKENDS

PACKAGE = Path(nl2sql.__file__).parent
#: Type names, their sqlglot/SQLAlchemy spellings and flavours.
NAMES = {*BACKENDS, *(b.sqlglot_dialect for b in BACKENDS.values()), "postgresql", "mariadb",
         "databricks"}
REGISTRY = {PACKAGE / "backends.py", PACKAGE / "sql_guard" / "profiles.py"}


def _own_module(path: Path) -> bool:
    relative = path.relative_to(PACKAGE)
    return len(relative.parts) == 2 and relative.parts[0] in ("db", "inspection") \
        and any(relative.stem.startswith(name) for name in BACKENDS)


def _is_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.lower() in NAMES
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == "DatabaseType"
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return any(_is_name(element) for element in node.elts)
    return False


def branches_on_type_names(source: str, where: str) -> list[str]:
    """``where:line`` of each comparison, mapping key or subscript with a backend type name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        hits = []
        if isinstance(node, ast.Compare):
            hits = [node.left, *node.comparators]
        elif isinstance(node, ast.Dict):
            hits = [key for key in node.keys if key is not None]
        elif isinstance(node, ast.Subscript):
            hits = [node.slice]
        elif isinstance(node, ast.match_case):
            hits = [node.pattern.value] if isinstance(node.pattern, ast.MatchValue) else []
        if any(_is_name(hit) for hit in hits):
            found.append(f"{where}:{node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno}")
    return found


def test_no_code_outside_a_backends_modules_branches_on_its_type_name() -> None:
    paths = [path for path in sorted(PACKAGE.rglob("*.py"))
             if path not in REGISTRY and not _own_module(path)]
    assert len(paths) > 50
    assert [hit for path in paths for hit in branches_on_type_names(
        path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))] == []


def test_the_scan_finds_each_kind_of_branch() -> None:
    source = ('if dialect == "spark":\n    pass\nRULES = {"mysql": 1}\n'
              'x = t in ("sqlite", "x")\ny = d[DatabaseType.DUCKDB]\n'
              'match kind:\n    case "postgres":\n        pass\n'
              'z = "a spark of text"\nw = {"label": "DuckDB files"}\n')
    assert branches_on_type_names(source, "probe") == [
        "probe:1", "probe:3", "probe:4", "probe:5", "probe:7"]
