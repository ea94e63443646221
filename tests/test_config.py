"""The dbs.yaml registry: error messages name the file, line and field; locations follow
"flag > environment > file > default"; the bundled bookstore is always there."""

from __future__ import annotations

from pathlib import Path

import pytest

from nl2sql.backends import BACKENDS
from nl2sql.config.registry import DatabaseType, DbConnectionConfigs, sample_database_path
from nl2sql.errors import ConfigError, UnknownDatabaseError


def write(folder: Path, text: str, name: str = "dbs.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        DbConnectionConfigs.load(path)
    return str(info.value)


# -- messages -------------------------------------------------------------------------------

def test_broken_yaml_names_file_and_line(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: [shop\n"
                           "    user: x\n")
    message = load_error(path)
    assert message.startswith(f"{path.resolve()} line ") or message.startswith(f"{path} line ")
    assert "line 5" in message and message.endswith("fix the YAML syntax there.")


def test_tab_indentation_names_line(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n\ttype: sqlite\n")
    assert f"{path} line 3:" in load_error(path)


def test_unknown_type_names_type_field_and_line(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    dbname: shop\n    type: oracle\n")
    known = ", ".join(BACKENDS)  # every registered backend type
    assert load_error(path) == (f"{path} line 4: database 'shop': unknown type 'oracle'; use "
                                f"one of: {known}.")


@pytest.mark.parametrize(("written", "meant"), [
    ("postgresql", "postgres"), ("mariadb", "mysql"), ("sqlite3", "sqlite"), ("DuckDB", "duckdb")])
def test_a_type_written_as_url_schemes_and_drivers_name_it_gets_a_hint(
        tmp_path, written, meant):
    """``url: postgresql://`` and ``mariadb://`` work, so ``type: postgresql`` is a likely
    slip: the message names the type meant."""
    path = write(tmp_path, f"databases:\n  shop:\n    dbname: shop\n    type: {written}\n")
    assert load_error(path) == (f"{path} line 4: database 'shop': unknown type '{written}'; "
                                f"did you mean '{meant}'? use one of: {', '.join(BACKENDS)}.")


def test_postgres_with_spark_database_field_says_dbname(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    database: shop\n")
    assert load_error(path) == (f"{path} line 2: database 'shop': field 'dbname' is required for "
                                f"type postgres; 'database' names a Spark namespace, write the "
                                f"database's name as 'dbname'.")


def test_postgres_without_dbname(tmp_path):
    path = write(tmp_path, "databases:\n  ok:\n    type: sqlite\n    path: a.db\n"
                           "  shop:\n    type: postgres\n    host: localhost\n")
    message = load_error(path)
    assert message == (f"{path} line 5: database 'shop': field 'dbname' is required for type "
                       f"postgres.")


def test_duckdb_without_path_or_files(tmp_path):
    path = write(tmp_path, "databases:\n  lake:\n    type: duckdb\n")
    assert load_error(path) == (f"{path} line 2: database 'lake': field 'path' or 'files' is "
                                f"required for type duckdb.")


def test_missing_type(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    dbname: shop\n")
    assert load_error(path) == f"{path} line 2: database 'shop': field 'type' is missing; add it."


def test_unknown_field_names_field_and_line(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: s\n"
                           "    hostname: db\n")
    assert load_error(path) == (f"{path} line 5: database 'shop': unknown field 'hostname'; "
                                f"did you mean 'host'? remove it or check its spelling.")
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: s\n"
                           "    schemas: [public, sales]\n    colour: red\n")
    assert "unknown field 'schemas'; did you mean 'schema'? " in load_error(path)
    path = write(tmp_path, "databases:\n  shop:\n    type: sqlite\n    path: a.db\n"
                           "    colour: red\n")
    assert load_error(path).endswith("unknown field 'colour'; remove it or check its spelling.")


def test_unknown_top_level_key(tmp_path):
    path = write(tmp_path, "database:\n  shop:\n    type: sqlite\n")
    assert load_error(path) == (f"{path}: unknown top-level key 'database'; allowed keys are "
                                f"agent, data_dir, databases, include_sample, model, server, "
                                f"store, workspace.")


def test_bad_password_value_is_not_echoed(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: s\n"
                           "    password: 987654321\n")
    message = load_error(path)
    assert "line 5" in message and "password" in message
    assert "987654321" not in message


def test_unknown_db_id_suggests_close_name(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: shop\n")
    registry = DbConnectionConfigs.load(path)
    with pytest.raises(UnknownDatabaseError) as info:
        registry.get("shpo")
    assert str(info.value) == (f"Unknown database 'shpo' in {path.resolve()}. Did you mean "
                               f"'shop'? Known databases: bookstore, shop.")
    assert info.value.model_fixable and info.value.db_id == "shpo"
    with pytest.raises(UnknownDatabaseError) as info:
        registry.get("zzzz")
    assert "Did you mean" not in str(info.value)


def test_explicit_missing_config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NL2SQL_CONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(ConfigError, match=r"nope.yaml does not exist; create it from "
                                          r"dbs.yaml.example or unset NL2SQL_CONFIG"):
        DbConnectionConfigs.load()


# -- locations ------------------------------------------------------------------------------

def _three_configs(tmp_path: Path) -> dict[str, Path]:
    return {where: write(tmp_path / where, f"databases:\n  from_{where}:\n    type: sqlite\n"
                                           f"    path: {where}.db\n")
            for where in ("flag", "env", "cwd")}


def test_config_precedence_flag_env_cwd(tmp_path, monkeypatch):
    paths = _three_configs(tmp_path)
    monkeypatch.chdir(tmp_path / "cwd")
    assert "from_cwd" in DbConnectionConfigs.load()
    monkeypatch.setenv("NL2SQL_CONFIG", str(paths["env"]))
    assert "from_env" in DbConnectionConfigs.load()
    registry = DbConnectionConfigs.load(paths["flag"])
    assert "from_flag" in registry and "from_env" not in registry
    assert registry.config_path == paths["flag"].resolve()


def test_relative_sqlite_path_resolves_against_the_yaml_folder(tmp_path, monkeypatch):
    path = write(tmp_path / "conf", "databases:\n  shop:\n    type: sqlite\n"
                                    "    path: data/shop.db\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    config = DbConnectionConfigs.load(path).get("shop")
    assert config.path == (tmp_path / "conf" / "data" / "shop.db").resolve()


def test_data_dir_and_workspace_precedence(tmp_path, monkeypatch):
    path = write(tmp_path / "conf", "data_dir: cache\nworkspace: results\ndatabases: {}\n")
    monkeypatch.chdir(tmp_path)
    registry = DbConnectionConfigs.load(path)
    assert registry.data_dir == (tmp_path / "conf" / "cache").resolve()  # file: beside the yaml
    assert registry.workspace == (tmp_path / "conf" / "results").resolve()
    monkeypatch.setenv("NL2SQL_DATA_DIR", "env_data")
    monkeypatch.setenv("NL2SQL_WORKSPACE", "env_ws")
    registry = DbConnectionConfigs.load(path)
    assert registry.data_dir == (tmp_path / "env_data").resolve()  # env: relative to cwd
    assert registry.workspace == (tmp_path / "env_ws").resolve()
    registry = DbConnectionConfigs.load(path, data_dir=tmp_path / "flag_data",
                                        workspace=tmp_path / "flag_ws")
    assert registry.data_dir == (tmp_path / "flag_data").resolve()
    assert registry.workspace == (tmp_path / "flag_ws").resolve()


def test_default_data_dir_is_beside_the_config(tmp_path, monkeypatch):
    path = write(tmp_path / "conf", "databases: {}\n")
    monkeypatch.chdir(tmp_path)
    registry = DbConnectionConfigs.load(path)
    assert registry.data_dir == (tmp_path / "conf" / "data").resolve()
    assert registry.workspace == (tmp_path / "workspace").resolve()


def test_model_precedence(tmp_path, monkeypatch):
    path = write(tmp_path, "model: test:file\n")
    assert DbConnectionConfigs.load(path).model == "test:file"
    monkeypatch.setenv("NL2SQL_MODEL", "test:env")
    assert DbConnectionConfigs.load(path).model == "test:env"
    assert DbConnectionConfigs.load(path, model="test:flag").model == "test:flag"


def test_bundled_bookstore_without_any_dbs_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    registry = DbConnectionConfigs.load()
    assert registry.config_path is None
    assert registry.ids() == ["bookstore"]
    sample = registry.get("bookstore")
    assert sample.type is DatabaseType.SQLITE and sample.is_bundled_sample
    assert sample.path == sample_database_path(registry.data_dir)
    # No ./data created in the current folder: the per-user data dir (XDG_DATA_HOME).
    assert registry.data_dir == (tmp_path / "xdg-data" / "nl2sql").resolve()
    # Nor a ./workspace: an MCP client starts the server in the user's project folder.
    assert registry.workspace == (tmp_path / "xdg-data" / "nl2sql" / "workspace").resolve()


def test_bundled_bookstore_beside_other_databases(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: shop\n")
    registry = DbConnectionConfigs.load(path)
    assert sorted(registry.ids()) == ["bookstore", "shop"]
    assert registry.get("bookstore").is_bundled_sample


def test_empty_config_file_still_has_bookstore(tmp_path):
    path = write(tmp_path, "# nothing yet\n")
    assert DbConnectionConfigs.load(path).ids() == ["bookstore"]


def test_postgres_defaults_and_schema_alias(tmp_path):
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: shop\n"
                           "    schema: sales\n  plain:\n    type: postgres\n    dbname: p\n")
    registry = DbConnectionConfigs.load(path)
    shop = registry.get("shop")
    assert (shop.host, shop.port, shop.effective_schema) == ("localhost", 5432, "sales")
    assert registry.get("plain").effective_schema == "public"
    assert registry.get("bookstore").effective_schema is None


def test_duplicate_db_id_is_refused_with_its_line(tmp_path):
    path = tmp_path / "dbs.yaml"
    path.write_text("databases:\n  a:\n    type: sqlite\n    path: a.db\n"
                    "  a:\n    type: sqlite\n    path: b.db\n")
    with pytest.raises(ConfigError) as info:
        DbConnectionConfigs.load(path)
    assert str(info.value) == f"{path} line 5: database 'a' is defined twice; keep one entry."


def test_a_workspace_or_data_dir_that_is_a_file_says_so(tmp_path, monkeypatch):
    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(ConfigError) as info:
        DbConnectionConfigs.load(None, workspace=tmp_path / "results")
    assert str(info.value) == (f"The workspace {tmp_path / 'results'} is a file, not a folder; "
                               f"point --workspace, NL2SQL_WORKSPACE or 'workspace:' in dbs.yaml "
                               f"at a folder.")
    monkeypatch.setenv("NL2SQL_DATA_DIR", str(tmp_path / "results"))
    with pytest.raises(ConfigError, match="The data dir .* is a file, not a folder"):
        DbConnectionConfigs.load(None)
