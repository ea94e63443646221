"""Who may see what (``nl2sql.access``): the ``server:`` block, grants and ``can()``, and every face
showing a caller only their groups' databases: ``db_list`` and every MCP tool, the resources, the
prompt, ``nl2sql.context()``'s ranking and the catalog agent's choice, results in the caller's own
folder. Real SQLite copies of Chinook and Northwind and the bundled bookstore; MCP through an
in-memory client session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agent_scripts import Script, choose, final
from conftest import build_cache, sqlite_config, write_dbs_yaml
from mcp import Client

import nl2sql
from nl2sql.access import Caller, can, db_role, member, scope
from nl2sql.access.disclosure import shown_to
from nl2sql.agents.tools import agent_error
from nl2sql.access.oidc import groups_in
from nl2sql.access.permissions import user_workspace
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.config.server import ServerSettings
from nl2sql.errors import AccessDeniedError, ConfigError, QueryExecutionError
from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext

GROUPS = {
    "analysts": {"databases": ["chinook"]},
    "sales": {"databases": ["chinook", "northwind"], "db_role": "sales_reader"},
    "curators": {"databases": ["*"], "curator": True},
    "chinook_curators": {"databases": ["chinook"], "curator": True, "db_role": "curator_role"},
}


@pytest.fixture
def registry(tmp_path: Path, sqlite_samples: dict[str, Path]) -> DbConnectionConfigs:
    configs = []
    for name in ("chinook", "northwind"):
        shutil.copyfile(sqlite_samples[name], tmp_path / f"{name}.sqlite")
        configs.append(sqlite_config(name, tmp_path / f"{name}.sqlite"))
    path = write_dbs_yaml(tmp_path, configs, server={"groups": GROUPS})
    loaded = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    for config in loaded:
        build_cache(config, loaded.data_dir)
    return loaded


def _caller(registry: DbConnectionConfigs, name: str, *groups: str) -> Caller:
    return member(name, groups, registry.server)


# -- the server: block ----------------------------------------------------------------------

@pytest.mark.parametrize(("server", "expected"), [
    ({"group": {}}, "unknown key 'server.group'"),
    ({"groups": {"a": {"databases": ["nope"]}}}, "group 'a' names database 'nope'"),
    ({"groups": {"a": {"databases": ["bookstore"], "curators": True}}},
     "unknown key 'server.groups.a.curators'"),
    ({"oidc": {"issuer": "https://idp", "audience": "x",
               "jwks_url": "http://idp.example/jwks"}}, "must be an https:// address"),
    ({"oidc": {"issuer": "https://idp", "audience": "x", "jwks_url": "https://idp/jwks",
               "algorithms": ["HS256"]}}, "asymmetric algorithms only"),
    ({"oidc": {"issuer": "https://idp", "jwks_url": "https://idp/jwks"}},
     "'server.oidc.audience' field required"),
])
def test_a_wrong_server_block_is_one_sentence_at_load(tmp_path: Path, server: dict,
                                                      expected: str) -> None:
    path = write_dbs_yaml(tmp_path, [], server=server)
    with pytest.raises(ConfigError, match=expected) as caught:
        DbConnectionConfigs.load(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_groups_grant_databases_curation_and_a_role(registry: DbConnectionConfigs) -> None:
    ana = _caller(registry, "ana", "analysts")
    assert can(ana, "query", "chinook") and not can(ana, "query", "northwind")
    assert not can(ana, "query", "bookstore") and not can(ana, "curate", "chinook")
    assert db_role(ana, "chinook") is None
    sam = _caller(registry, "sam", "sales", "analysts")  # the union of both groups
    assert can(sam, "query", "northwind") and db_role(sam, "northwind") == "sales_reader"
    cora = _caller(registry, "cora", "curators")
    assert all(can(cora, action, db) for action in ("query", "curate")
               for db in ("chinook", "northwind", "bookstore"))
    # The first group in dbs.yaml that grants a database and names a role decides the role.
    both = _caller(registry, "both", "chinook_curators", "sales")
    assert db_role(both, "chinook") == "sales_reader" and db_role(both, "northwind") == "sales_reader"
    assert can(both, "curate", "chinook") and not can(both, "curate", "northwind")
    stranger = _caller(registry, "x", "no-such-group")
    assert not can(stranger, "query", "chinook")
    os_account = Caller(name="someone")  # a local face's account that is not a user
    assert can(os_account, "query", "northwind") and can(os_account, "curate", "bookstore")
    assert scope(registry, os_account) is registry


def test_a_scoped_registry_refuses_the_others_and_keeps_results_apart(
        registry: DbConnectionConfigs) -> None:
    ana = scope(registry, _caller(registry, "ana", "analysts"))
    assert ana.ids() == ["chinook"] and ana.workspace == registry.workspace / "users" / "ana"
    with pytest.raises(AccessDeniedError, match="'northwind' is not open to user 'ana' "
                                                "\\(groups: analysts\\)"):
        ana.get("northwind")
    with pytest.raises(nl2sql.errors.UnknownDatabaseError) as raised:
        ana.get("nope")
    # A configured user is told the databases that are theirs, never the server's files.
    assert str(raised.value) == "Unknown database 'nope'. Known databases: chinook."
    assert str(registry.config_path) in registry._unknown_message("nope")  # the local account


@pytest.mark.parametrize("name", ["José", "../etc", "a/b", "x+y", "..", ".hidden", "a" * 80,
                                  "ana smith"])
def test_user_folders_are_plain_names_and_never_shared(name: str, tmp_path: Path) -> None:
    folder = user_workspace(tmp_path, name)
    assert folder.parent == tmp_path / "users" and folder.name not in (".", "..")
    assert "/" not in folder.name and "+" in folder.name  # a digest: no plain name has '+'
    assert user_workspace(tmp_path, name + "2") != folder
    assert user_workspace(tmp_path, "ana").name == "ana"
    assert user_workspace(tmp_path, "ana@example.com").name == "ana@example.com"


@pytest.mark.parametrize(("claims", "claim", "groups"), [
    ({"groups": ["a", "b"]}, "groups", ["a", "b"]),
    ({"groups": "a"}, "groups", ["a"]),
    ({"realm_access": {"roles": ["a"]}}, "realm_access.roles", ["a"]),
    ({"https://example.com/groups": ["a"]}, "https://example.com/groups", ["a"]),
    ({"groups": ["/analysts"]}, "groups", ["/analysts"]),  # compared exactly
    ({"groups": [1, None, "a"]}, "groups", ["a"]),
    ({}, "groups", []),
])
def test_groups_are_read_from_the_claim_the_settings_name(claims: dict, claim: str,
                                                          groups: list[str]) -> None:
    assert groups_in(claims, claim) == groups


# -- every face -----------------------------------------------------------------------------

def _text(result) -> str:  # noqa: ANN001
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def test_mcp_tools_resources_and_prompts_show_only_the_callers_databases(
        registry: DbConnectionConfigs) -> None:
    server = build_server(registry.config_path, workspace=registry.workspace)
    ana = _caller(registry, "ana", "analysts")
    server.default_caller = lambda: ana  # as an OS account that is a configured user
    async with Client(server) as client:
        listed = _text(await client.call_tool("db_list", {}))
        assert "- chinook (sqlite)" in listed and "northwind" not in listed \
            and "bookstore" not in listed
        for tool, arguments in [
                ("db_show_schema", {"db_id": "northwind"}),
                ("db_execute_sql", {"db_id": "northwind", "query": "SELECT 1"}),
                ("db_search_schema", {"question": "orders", "db_id": "northwind"}),
                ("db_get_row_by_id", {"db_id": "bookstore", "table": "books", "row_id": 1})]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and "is not open to user 'ana'" in _text(result), tool
        ranked = _text(await client.call_tool("db_search_schema",
                                              {"question": "Which customers ordered tofu?"}))
        assert "chinook" in ranked and "northwind" not in ranked
        ran = await client.call_tool("db_execute_sql", {"db_id": "chinook", "query":
                                                        "SELECT count(*) AS n FROM Artist"})
        assert not ran.is_error
        assert list((registry.workspace / "users" / "ana").glob("*.csv"))  # her own folder

        catalog = (await client.read_resource("db://catalog")).contents[0].text
        assert "chinook" in catalog and "northwind" not in catalog
        schema = (await client.read_resource("db://chinook/schema")).contents[0].text
        assert "CREATE TABLE" in schema
        with pytest.raises(Exception, match="is not open to user 'ana'"):
            await client.read_resource("db://northwind/schema")

        prompt = await client.get_prompt("ask_database",
                                         {"question": "Which customers ordered tofu?"})
        assert "'chinook'" in prompt.messages[0].content.text  # the only one she sees
        with pytest.raises(Exception, match="is not open to user 'ana'"):
            await client.get_prompt("ask_database", {"question": "tofu?", "db_id": "northwind"})

    # Another user's results are not hers to list or read.
    sam = _caller(registry, "sam", "sales")
    server.default_caller = lambda: sam
    async with Client(server) as client:
        assert "No saved queries" in _text(await client.call_tool("saved_queries_list", {}))
        name = next((registry.workspace / "users" / "ana").glob("*.csv")).name
        head = await client.call_tool("csv_head", {"csv_file": name})
        assert head.is_error
        ana_file = await client.call_tool("csv_head", {"csv_file": f"../ana/{name}"})
        assert ana_file.is_error


def test_a_configured_user_is_told_the_servers_files_by_name(
        registry: DbConnectionConfigs) -> None:
    """Errors are worded for whoever runs the server; a configured user reads them with the
    server's paths named (dbs.yaml, its folder, the data dir, the workspace, a database file)."""
    ops = OpsContext(registry)
    ana = ops.for_caller(_caller(registry, "ana", "analysts"), "mcp-http")
    data, chinook = registry.data_dir, registry.get("chinook").path
    message = (f"no schema cache yet ({data}/database/chinook/chinook.db_info.json); "
               f"SQLite file {chinook} was deleted; see {registry.config_path}. "
               f"{registry.workspace}/users/ana/x.csv, {data}2/other and {chinook}.bak are others.")
    assert shown_to(ana, message) == (
        "no schema cache yet (the server's data folder/database/chinook/chinook.db_info.json); "
        "SQLite file the server's file was deleted; see dbs.yaml. the workspace/users/ana/x.csv, "
        "the server's config folder/data2/other and the server's config folder/chinook.sqlite.bak "
        "are others.")  # a path is a whole name: data2 is not the data dir
    assert shown_to(ops, message) == message  # the OS account: as it is
    retry = agent_error(QueryExecutionError(f"cannot open {chinook}; fix the SQL"), ana)
    assert str(retry) == "cannot open the server's file; fix the SQL"  # what the model reads
    ops.close()


async def test_every_face_names_the_servers_files_to_a_configured_user(
        registry: DbConnectionConfigs) -> None:
    """A database whose schema cache is missing: the MCP tool, resource and prompt answers
    name no server path for a configured user."""
    (registry.data_dir / "database" / "chinook" / "chinook.db_info.json").unlink()
    server = build_server(registry.config_path, workspace=registry.workspace)
    server.default_caller = lambda: _caller(registry, "ana", "analysts")
    data = str(registry.data_dir)
    async with Client(server) as client:
        shown = await client.call_tool("db_show_schema", {"db_id": "chinook"})
        assert shown.is_error and "has no schema cache yet" in _text(shown)
        assert data not in _text(shown) and "the server's data folder" in _text(shown)
        with pytest.raises(Exception, match="has no schema cache yet") as raised:
            await client.read_resource("db://chinook/schema")
        assert data not in str(raised.value)
        with pytest.raises(Exception) as raised:
            await client.get_prompt("ask_database", {"question": "tofu?", "db_id": "chinook"})
        assert data not in str(raised.value)
    server.default_caller = lambda: Caller(name="someone")  # the OS account: the path
    async with Client(server) as client:
        assert data in _text(await client.call_tool("db_show_schema", {"db_id": "chinook"}))


def test_context_ranks_and_the_catalog_chooses_only_among_the_callers_databases(
        registry: DbConnectionConfigs) -> None:
    ops = OpsContext(registry)
    sam = ops.for_caller(_caller(registry, "sam", "sales"), "python")
    context = nl2sql.context("How many tracks are there?", config=sam)
    assert [c.db_id for c in context.candidates] == ["chinook", "northwind"] or \
        {c.db_id for c in context.candidates} == {"chinook", "northwind"}
    ana = ops.for_caller(_caller(registry, "ana", "analysts"), "python")
    assert nl2sql.context("Which customers ordered tofu?", config=ana).db_id == "chinook"
    with pytest.raises(AccessDeniedError):
        nl2sql.context("tofu?", db_id="northwind", config=ana)

    script = Script([choose("bookstore"), choose("chinook"),
                     final("SELECT count(*) AS tracks FROM Track")])
    answer = nl2sql.ask("How many tracks are there?", model=script.model, config=sam)
    assert answer.db_id == "chinook" and "'bookstore' is not one of the candidates" in \
        script.feedback(1)
    assert "bookstore" not in script.instructions[0]
    assert Path(answer.csv_path).parent == registry.workspace / "users" / "sam"

    nobody = ops.for_caller(_caller(registry, "x"), "python")
    with pytest.raises(AccessDeniedError, match="No database is open to user 'x'"):
        nl2sql.ask("How many tracks are there?", model=Script([]).model, config=nobody)
    ops.close()


def test_a_settings_object_without_groups_is_not_a_team_server() -> None:
    assert not ServerSettings().configured
    assert ServerSettings.model_validate({"groups": {"a": {"databases": ["*"]}}}).configured
