"""dbs.yaml values: ``${ENV_VAR}`` interpolation, ``password_env``, the ``url:`` form,
``include_sample: false`` and the per-user data dir when there is no dbs.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ConfigError


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dbs.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        DbConnectionConfigs.load(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_environment_variables_are_interpolated(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_HOST", "db.internal")
    monkeypatch.setenv("SHOP_PORT", "6543")
    monkeypatch.setenv("SHOP_SUFFIX", "prod")
    monkeypatch.setenv("NL2SQL_TEST_MODEL", "test")
    path = write(tmp_path, "model: ${NL2SQL_TEST_MODEL}\ndatabases:\n  shop:\n"
                           "    type: postgres\n    host: ${SHOP_HOST}\n    port: ${SHOP_PORT}\n"
                           "    dbname: shop_${SHOP_SUFFIX}\n    description: costs $$5\n")
    registry = DbConnectionConfigs.load(path)
    shop = registry.get("shop")
    assert (shop.host, shop.port, shop.dbname) == ("db.internal", 6543, "shop_prod")
    assert shop.description == "costs $5"
    assert registry.model == "test"


def test_unset_variable_is_one_line_without_any_value(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_USER", "s3cr3t-user")
    monkeypatch.delenv("SHOP_PASSWORD", raising=False)
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: shop\n"
                           "    user: ${SHOP_USER}\n    password: ${SHOP_PASSWORD}\n")
    message = load_error(path)
    assert message == (f"{path} line 2: database 'shop': environment variable SHOP_PASSWORD "
                       f"(used in field 'password') is not set; export it or change the field.")
    assert "s3cr3t" not in message


def test_password_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "databases:\n  shop:\n    type: postgres\n    dbname: shop\n"
                           "    password_env: SHOP_PW\n")
    shop = DbConnectionConfigs.load(path).get("shop")
    monkeypatch.delenv("SHOP_PW", raising=False)
    with pytest.raises(ConfigError, match="SHOP_PW named by 'password_env' is not set"):
        shop.resolve_password()
    monkeypatch.setenv("SHOP_PW", "hunter2")
    assert shop.resolve_password() == "hunter2"
    assert "hunter2" not in repr(shop)
    both = write(tmp_path / "both", "databases:\n  shop:\n    type: postgres\n    dbname: shop\n"
                                    "    password: x\n    password_env: SHOP_PW\n")
    assert "either 'password' or 'password_env'" in load_error(both)


def test_url_form(tmp_path: Path) -> None:
    path = write(tmp_path, "databases:\n"
                           "  shop:\n    url: postgresql://app:pa55@db.example:5433/shop"
                           "?sslmode=require\n    schema: sales\n"
                           "  local:\n    url: postgresql+psycopg://me@localhost/local\n"
                           "  file:\n    url: sqlite:///data/file.db\n"
                           "  short:\n    url: postgres://me@db/short\n")
    registry = DbConnectionConfigs.load(path)
    shop = registry.get("shop")
    assert (shop.type, shop.host, shop.port, shop.user, shop.dbname, shop.sslmode) == (
        "postgres", "db.example", 5433, "app", "shop", "require")
    assert shop.resolve_password() == "pa55" and shop.schema_name == "sales"
    local = registry.get("local")
    assert (local.user, local.port, local.password) == ("me", 5432, None)
    assert registry.get("file").path == (tmp_path / "data" / "file.db").resolve()
    assert (registry.get("short").type, registry.get("short").dbname) == ("postgres", "short")


@pytest.mark.parametrize(("entry", "expected"), [
    ("url: oracle://app:pa55@db/shop", "the url scheme 'oracle' is not a known database type"),
    ("url: postgresql://app:pa55@db/shop\n    host: other", "field 'host' is given twice"),
    ("url: postgresql://app:pa55@db/shop\n    type: sqlite", "disagrees with the url scheme"),
    ("url: not a url pa55", "field 'url' is not a database URL"),
    ("url: postgresql://app:pa55@db:notaport/shop", "has a port that is not a number"),
    ("url: postgresql://app:pa55/shop", "has a port that is not a number"),  # no '@host'
    ("url: mysql://app:pa55@db:99999/shop", "port"),
])
def test_url_mistakes_are_one_line_without_the_password(tmp_path: Path, entry: str,
                                                         expected: str) -> None:
    message = load_error(write(tmp_path, f"databases:\n  shop:\n    {entry}\n"))
    assert expected in message and "pa55" not in message


def test_include_sample_false_switches_the_bookstore_off(tmp_path: Path) -> None:
    path = write(tmp_path, "include_sample: false\ndatabases:\n  shop:\n    type: sqlite\n"
                           "    path: shop.db\n")
    assert DbConnectionConfigs.load(path).ids() == ["shop"]
    assert "'include_sample' must be true or false" in load_error(
        write(tmp_path / "bad", "include_sample: nope\n"))


async def test_mcp_server_honours_include_sample(tmp_path: Path) -> None:
    from mcp import Client

    from nl2sql.mcp import build_server

    path = write(tmp_path, "include_sample: false\ndatabases: {}\n")
    async with Client(build_server(path, workspace=tmp_path / "ws")) as client:
        listed = (await client.call_tool("db_list", {})).content[0].text
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
    assert "bookstore" not in listed
    assert "bookstore" not in " ".join(resources)


def test_no_dbs_yaml_uses_the_per_user_data_dir_and_says_where(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from nl2sql.cli.annotate import main

    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert main(["bookstore"]) == 0
    out, err = capsys.readouterr()
    user_dir = tmp_path / "xdg-data" / "nl2sql"  # XDG_DATA_HOME is set by conftest
    assert list(folder.iterdir()) == []  # nothing created in the current folder
    assert f"cache: {user_dir / 'database' / 'bookstore' / 'bookstore.db_info.json'}" in out
    assert (user_dir / "bookstore" / "bookstore.db").is_file()
    assert f"No dbs.yaml here: the cache goes to the per-user data dir {user_dir}" in err
