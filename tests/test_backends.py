"""The backend registry: every entry is complete, and every place that differs asks it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot
from conftest import BACKENDS, REPO_ROOT

from nl2sql.backends import BACKENDS as REGISTRY
from nl2sql.backends import DatabaseType, get_backend
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.db.base import DbConnection, DbOperations
from nl2sql.errors import ConfigError
from nl2sql.schema.formatting import quote_identifier
from nl2sql.inspection.base import DbSchemaInspector
from nl2sql.sql_guard import DENIED_FUNCTIONS


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_entry_is_complete(name: str) -> None:
    backend = REGISTRY[name]
    assert backend.name == name and DatabaseType(name) == name
    assert issubclass(backend.load("connection_class"), DbConnection)
    assert issubclass(backend.load("operations_class"), DbOperations)
    assert issubclass(backend.load("inspector_class"), DbSchemaInspector)
    assert sqlglot.Dialect.get_or_raise(backend.sqlglot_dialect) is not None
    assert backend.sqlglot_dialect in DENIED_FUNCTIONS, "every backend has a deny list"
    assert backend.sqlalchemy().identifier_preparer.quote("a b") != "a b"
    assert backend.file_based == bool(backend.path_fields) == (not backend.takes_password)
    assert backend.file_based or backend.default_port
    prompt = REPO_ROOT / "prompts" / "nl2sql" / "db_type" / f"{name}.md"
    if prompt.parent.is_dir():  # the dialect prompts arrive with the agents
        assert prompt.is_file(), f"{prompt} is missing"


def test_every_backend_has_a_test_database_factory() -> None:
    assert set(BACKENDS) <= set(REGISTRY)


def test_unknown_type_names_the_closest() -> None:
    with pytest.raises(ConfigError, match="Unknown database type 'postgress'. Did you mean "
                                          "'postgres'"):
        get_backend("postgress")


def test_unknown_type_in_dbs_yaml_lists_every_registered_type(tmp_path: Path) -> None:
    path = tmp_path / "dbs.yaml"
    path.write_text("databases:\n  x:\n    type: oracle\n")
    with pytest.raises(ConfigError) as error:
        DbConnectionConfigs.load(path)
    assert all(name in str(error.value) for name in REGISTRY)


def test_file_paths_resolve_against_the_config_folder_only_for_file_backends(
        tmp_path: Path) -> None:
    path = tmp_path / "conf" / "dbs.yaml"
    path.parent.mkdir()
    path.write_text("databases:\n"
                    "  local: {type: sqlite, path: data/x.db}\n"
                    "  server: {type: postgres, dbname: shop}\n")
    registry = DbConnectionConfigs.load(path)
    assert registry.get("local").path == tmp_path / "conf" / "data" / "x.db"
    server = registry.get("server")
    assert server.port == REGISTRY["postgres"].default_port
    assert server.effective_schema == REGISTRY["postgres"].default_schema


@pytest.mark.parametrize("name", list(REGISTRY))
def test_quoting_uses_the_backends_own_quote_character(name: str) -> None:
    preparer = REGISTRY[name].sqlalchemy().identifier_preparer
    assert quote_identifier("Order Details", name) == preparer.quote_identifier("Order Details")
    assert quote_identifier("plain_name", name) == "plain_name"
    folded = quote_identifier("MixedCase", name)
    assert (folded != "MixedCase") is REGISTRY[name].folds_unquoted_case


# Places outside the backends' own modules must ask the registry, not compare type names.
_TYPE_TEST = re.compile(r"""(\.type|db_type|\.value|type_name|dialect)\s*(==|!=|is|in)\s*["'(\[{]?\s*"""
                        r"""(DatabaseType\.|["'](%s)["'])""" % "|".join(REGISTRY))


def test_no_module_tests_the_type_name() -> None:
    package = REPO_ROOT / "nl2sql"
    offenders = []
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if _TYPE_TEST.search(line):
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
    assert "match config.type" not in "".join(
        p.read_text(encoding="utf-8") for p in package.rglob("*.py"))
