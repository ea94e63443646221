"""Dependency hygiene: every runtime dependency is used, and the fast-moving ones are bounded.

CI installs from pyproject.toml (``make test``), so the newest release inside each bound is what
the suite runs against: an upper bound is only as good as this check that the installed version
is inside it.
"""

from __future__ import annotations

import ast
import tomllib
from importlib.metadata import packages_distributions, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REQUIREMENTS = {Requirement(spec).name.lower(): Requirement(spec)
                for spec in PROJECT["dependencies"]}
#: Libraries whose minor releases have changed APIs or parse trees we rely on.
FAST_MOVING = ("pydantic-ai-slim", "mcp", "sqlglot")
#: Declared for the user's side of the API rather than imported here.
FOR_USERS = {"pandas": "Answer.df and the README's notebook examples read results with pandas"}


def _imported_top_level_modules() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "nl2sql").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
            elif _is_import_call(node):  # importlib.import_module("x"), quiet_import("x")
                names.add(node.args[0].value.split(".")[0])  # type: ignore[attr-defined]
    return names


def _is_import_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = node.args[0]
    return (name in ("import_module", "quiet_import", "find_spec")  # find_spec: its files
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str))


def test_every_runtime_dependency_is_imported() -> None:
    distributions = packages_distributions()
    used = {dist.lower() for module in _imported_top_level_modules()
            for dist in distributions.get(module, [])}
    unused = sorted(name for name in REQUIREMENTS if name not in used and name not in FOR_USERS)
    assert unused == [], f"declared in pyproject.toml but never imported by nl2sql: {unused}"


@pytest.mark.parametrize("name", FAST_MOVING)
def test_fast_moving_dependencies_have_a_tested_upper_bound(name: str) -> None:
    requirement = REQUIREMENTS[name]
    assert any(spec.operator in ("<", "<=", "~=") for spec in requirement.specifier), (
        f"{name} needs an upper bound in pyproject.toml")
    installed = version(name)
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"installed {name} {installed} is outside {requirement.specifier}")


def test_the_compiled_sqlglot_is_what_runs() -> None:
    """``sqlglot[c]`` overlays mypyc-compiled modules (the guard's parse is ~4.5x faster);
    a plain ``sqlglot`` install would still work, only slower: this says which one runs."""
    assert "c" in REQUIREMENTS["sqlglot"].extras
    from sqlglot import tokens

    assert tokens.SQLGLOTC_INSTALLED, "reinstall with `pip install -e .` to get sqlglotc"
    assert version("sqlglotc") == version("sqlglot")


def test_the_base_install_has_no_arrow_and_no_adbc_driver() -> None:
    """The SQLite columnar export is the ``fast-export`` extra (dev installs it so its tests
    run); DuckDB and Spark bring pyarrow through their own extras."""
    extras = PROJECT["optional-dependencies"]
    assert not {"pyarrow", "adbc-driver-sqlite"} & set(REQUIREMENTS)
    assert {Requirement(s).name for s in extras["fast-export"]} == {"pyarrow",
                                                                      "adbc-driver-sqlite"}
    assert "pyarrow" in {Requirement(s).name for s in extras["duckdb"]}
    assert "fast-export" in Requirement(extras["dev"][0]).extras
