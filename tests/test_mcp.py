"""The MCP server through a real in-memory client session: every tool, success and error paths,
on SQLite and PostgreSQL (Chinook), plus the resources and the descriptions of everything."""

from __future__ import annotations

import csv
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import BACKENDS, sample_fixture
from mcp import Client
from mcp.shared.exceptions import MCPError

from conftest import build_cache
from nl2sql.mcp import build_server
from nl2sql.operations.registry import OPERATIONS

chinook = sample_fixture("chinook", BACKENDS)  # every backend through the MCP client session

TOOL_NAMES = {op.name for op in OPERATIONS}

GENRE_SQL = {
    "sqlite": "SELECT g.Name AS genre, count(*) AS tracks FROM Track t "
              "JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.Name ORDER BY tracks DESC, genre",
    "mysql": "SELECT g.Name AS genre, count(*) AS tracks FROM Track t "
             "JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.Name ORDER BY tracks DESC, genre",
    "duckdb": "SELECT g.Name AS genre, count(*) AS tracks FROM Track t "
              "JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.Name ORDER BY tracks DESC, genre",
    "postgres": "SELECT g.name AS genre, count(*) AS tracks FROM track t "
                "JOIN genre g ON g.genre_id = t.genre_id GROUP BY g.name "
                "ORDER BY tracks DESC, genre",
}


@dataclass
class Served:
    """A built server; ``async with served.session():`` connects an in-memory client.

    (The client is opened inside each test, not in an async fixture: its task group must be
    entered and left by the same task.)"""

    server: object
    backend: str
    workspace: Path
    sample: object = None
    client: Client | None = None

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Served]:
        async with Client(self.server) as client:
            self.client = client
            yield self

    async def call(self, tool: str, **arguments: object) -> tuple[bool, str]:
        result = await self.client.call_tool(tool, arguments)
        assert len(result.content) == 1
        return bool(result.is_error), result.content[0].text


@pytest.fixture
def served(chinook, make_registry) -> Served:  # noqa: ANN001
    registry = make_registry(chinook.config)
    build_cache(chinook.config, registry.data_dir)
    server = build_server(registry.config_path, workspace=registry.workspace)
    return Served(server, chinook.backend, registry.workspace, chinook)


@pytest.fixture
def bookstore(tmp_path: Path) -> Served:
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "workspace")
    return Served(server, "sqlite", tmp_path / "workspace")


# -- descriptions and annotations ---------------------------------------------------------

async def test_every_tool_and_parameter_is_described(bookstore: Served) -> None:
    async with bookstore.session():
        tools = {tool.name: tool for tool in (await bookstore.client.list_tools()).tools}
        assert set(tools) == TOOL_NAMES
        for tool in tools.values():
            assert tool.description and len(tool.description) > 60, tool.name
            assert "\n" not in tool.description and "  " not in tool.description
            assert tool.title and tool.annotations is not None
            for name, schema in tool.input_schema.get("properties", {}).items():
                assert schema.get("description"), f"{tool.name}.{name}"
            assert tool.annotations.open_world_hint is False
            # Writes: result files, a verified answer in the data dir, a chart beside a result.
            read_only = tool.name not in {"db_execute_sql", "metrics_query", "saved_query_accept",
                                         "csv_chart"}
            assert tool.annotations.read_only_hint is read_only, tool.name
        # It only adds result files (replacing one needs overwrite=true): not destructive.
        execute = tools["db_execute_sql"].annotations
        assert (execute.destructive_hint, execute.idempotent_hint) == (False, False)
        accept = tools["saved_query_accept"].annotations  # the same result again: no change
        assert (accept.destructive_hint, accept.idempotent_hint) == (False, True)
        assert "overwrite" in tools["db_execute_sql"].input_schema["properties"]
        assert set(tools["db_execute_sql"].input_schema["required"]) == {"db_id", "query"}
        assert tools["db_get_row_by_id"].input_schema["properties"]["follow_foreign_keys"][
            "default"] is True


async def test_every_resource_is_described(bookstore: Served) -> None:
    async with bookstore.session():
        resources = (await bookstore.client.list_resources()).resources
        templates = (await bookstore.client.list_resource_templates()).resource_templates
        assert [r.uri for r in resources] == ["db://catalog"]
        assert [t.uri_template for t in templates] == ["db://{db_id}/schema"]
        for item in [*resources, *templates]:
            assert item.description and len(item.description) > 40


# -- db_list / db_show_schema and the resources --------------------------------------------

async def test_db_list_and_catalog(served: Served) -> None:
    async with served.session():
        is_error, text = await served.call("db_list")
        assert not is_error
        assert f"chinook ({served.backend})" in text and "11 tables" in text
        assert "bookstore (sqlite)" in text and "annotate-schema bookstore" in text
        catalog = await served.client.read_resource("db://catalog")
        assert catalog.contents[0].text == text


async def test_db_show_schema_and_schema_resource(served: Served) -> None:
    async with served.session():
        is_error, text = await served.call("db_show_schema", db_id="chinook")
        assert not is_error and "CREATE TABLE" in text
        assert served.sample.table("invoice_line") in text
        resource = await served.client.read_resource("db://chinook/schema")
        assert resource.contents[0].text == text

        is_error, text = await served.call("db_show_schema", db_id="chinok")
        assert is_error
        assert "Unknown database 'chinok'" in text and "Did you mean 'chinook'?" in text
        assert "Known databases: bookstore, chinook." in text

        is_error, text = await served.call("db_show_schema", db_id="bookstore")
        assert is_error and "run `annotate-schema bookstore` first" in text

        with pytest.raises(MCPError, match="Unknown database 'nope'"):
            await served.client.read_resource("db://nope/schema")


# -- db_execute_sql -----------------------------------------------------------------------

async def test_db_execute_sql_saves_csv_and_metadata(served: Served) -> None:
    async with served.session():
        is_error, text = await served.call(
            "db_execute_sql", db_id="chinook", query=GENRE_SQL[served.backend],
            output_file="genres.csv", nl_query="How many tracks per genre?")
        assert not is_error, text
        assert "25 rows x 2 columns saved to genres.csv" in text
        assert "| Rock | 1297 |" in text
        with (served.workspace / "genres.csv").open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert rows[0] == ["genre", "tracks"] and rows[1] == ["Rock", "1297"] and len(rows) == 26
        metadata = json.loads((served.workspace / "genres.metadata.json").read_text())
        assert metadata["row_count"] == 25 and metadata["db_id"] == "chinook"
        assert metadata["natural_language_query"] == "How many tracks per genre?"


@pytest.mark.parametrize(("query", "expected"), [
    ("SELECT no_such_column FROM {track}", "no_such_column"),
    ("DELETE FROM {track}", "read-only"),
    ("SELECT 1; SELECT 2", "one statement"),
])
async def test_db_execute_sql_errors_are_tool_errors(served: Served, query: str,
                                                     expected: str) -> None:
    async with served.session():
        track = served.sample.table("track")
        is_error, text = await served.call("db_execute_sql", db_id="chinook",
                                           query=query.format(track=track))
        assert is_error
        assert expected.lower() in text.lower(), text
        assert "Traceback" not in text and len(text.splitlines()) <= 3


async def test_a_table_the_schema_lacks_gets_the_closest_name(served: Served) -> None:
    """The database names the missing table; the answer adds the closest one the schema has,
    so the next try is right without a db_show_schema round trip. No hint for a name the
    error does not mention (a missing column), nor for a CTE."""
    customer = served.sample.table("customer")
    async with served.session():
        is_error, text = await served.call("db_execute_sql", db_id="chinook",
                                           query=f"SELECT count(*) FROM {customer}s")
        assert is_error and text.endswith(f"'{customer}s' is not a table of database "
                                          f"'chinook': did you mean '{customer}'?"), text
        is_error, text = await served.call(
            "db_execute_sql", db_id="chinook",
            query=f"WITH customers AS (SELECT 1 AS n) SELECT nope FROM customers, {customer}")
        assert is_error and "did you mean" not in text, text
        genre = served.sample.table("genre")
        is_error, text = await served.call("db_execute_sql", db_id="chinook",
                                           query=f"SELECT g.GenreName FROM {genre} g")
        assert is_error and f"'{genre}' (g) has no column 'GenreName'; its columns: " in text


async def test_db_execute_sql_refuses_unknown_db_and_outside_paths(served: Served) -> None:
    async with served.session():
        is_error, text = await served.call("db_execute_sql", db_id="nope", query="SELECT 1")
        assert is_error and "Known databases: bookstore, chinook." in text
        is_error, text = await served.call("db_execute_sql", db_id="chinook", query="SELECT 1",
                                           output_file="../escape.csv")
        assert is_error and "leaves the workspace" in text
        assert not (served.workspace.parent / "escape.csv").exists()


# -- db_get_row_by_id ---------------------------------------------------------------------

async def test_db_get_row_by_id_follows_foreign_keys(served: Served) -> None:
    async with served.session():
        track, album = served.sample.table("track"), served.sample.table("album")
        is_error, text = await served.call("db_get_row_by_id", db_id="chinook", table=track,
                                           row_id=1)
        assert not is_error, text
        assert "For Those About To Rock (We Salute You)" in text
        assert album in text and "Related rows" in text
        is_error, text = await served.call("db_get_row_by_id", db_id="chinook", table=track,
                                           row_id="1", follow_foreign_keys=False)
        assert not is_error and "Related rows" not in text
        is_error, text = await served.call("db_get_row_by_id", db_id="chinook", table=track,
                                           row_id=999999)
        assert not is_error and "No row in" in text


async def test_db_get_row_by_id_errors(served: Served) -> None:
    async with served.session():
        is_error, text = await served.call("db_get_row_by_id", db_id="chinook", table="trakc",
                                           row_id=1)
        assert is_error and "trakc" in text
        is_error, text = await served.call("db_get_row_by_id", db_id="chinook",
                                           table=served.sample.table("playlist_track"), row_id=1)
        assert is_error and "primary key" in text


# -- saved queries and CSV browsing -------------------------------------------------------

async def test_saved_queries_list_search_and_details(served: Served) -> None:
    async with served.session():
        is_error, text = await served.call("saved_queries_list")
        assert not is_error and "No saved queries" in text
        await served.call("db_execute_sql", db_id="chinook", query=GENRE_SQL[served.backend],
                          output_file="genres.csv", nl_query="How many tracks per genre?")
        await served.call("db_execute_sql", db_id="chinook",
                          query=f"SELECT count(*) AS n FROM {served.sample.table('invoice')}",
                          output_file="invoices.csv", nl_query="How many invoices are there?")
        is_error, text = await served.call("saved_queries_list")
        assert not is_error and text.index("invoices.csv") < text.index("genres.csv")
        is_error, text = await served.call("saved_queries_list", search="genre tracks")
        assert not is_error and "genres.csv" in text and "invoices.csv" not in text
        is_error, text = await served.call("saved_queries_list", search='"unbalanced * NEAR(')
        assert not is_error and "No saved queries matching" in text

        is_error, text = await served.call("saved_query_get_details", csv_file="genres.csv")
        assert not is_error
        assert "How many tracks per genre?" in text and "rows: 25, columns: 2" in text
        assert "First 5 of 25 rows of genres.csv" in text and "Rock,1297" in text
        is_error, text = await served.call("saved_query_get_details", csv_file="missing.csv")
        assert is_error and "does not exist in the workspace" in text


async def test_csv_head_and_tail(served: Served) -> None:
    async with served.session():
        await served.call("db_execute_sql", db_id="chinook", query=GENRE_SQL[served.backend],
                          output_file="genres.csv")
        is_error, text = await served.call("csv_head", csv_file="genres.csv", n=2)
        assert not is_error
        assert text.splitlines()[1:] == ["genre,tracks", "Rock,1297", "Latin,579"]
        is_error, text = await served.call("csv_tail", csv_file="genres.csv", n=1)
        assert not is_error and text.splitlines() == [
            "Last 1 of 25 rows of genres.csv:", "genre,tracks", "Opera,1"]
        is_error, text = await served.call("csv_tail", csv_file="genres.csv")
        assert not is_error and len(text.splitlines()) == 12


@pytest.mark.parametrize("tool", ["csv_head", "csv_tail"])
async def test_csv_tools_errors(served: Served, tool: str) -> None:
    async with served.session():
        is_error, text = await served.call(tool, csv_file="../../etc/passwd")
        assert is_error and "leaves the workspace" in text
        is_error, text = await served.call(tool, csv_file="nothing.csv")
        assert is_error and "does not exist in the workspace" in text
        is_error, text = await served.call(tool, csv_file="x.csv", n=0)
        assert is_error and "greater than or equal to 1" in text


async def test_an_unknown_argument_names_the_accepted_parameters(bookstore: Served) -> None:
    """Not dropped: a client that says natural_language_query would lose the question."""
    async with bookstore.session():
        is_error, text = await bookstore.call(
            "db_execute_sql", db_id="bookstore", query="SELECT 1 AS one",
            natural_language_query="One?")
        assert is_error
        assert text.endswith("Unknown argument 'natural_language_query' for db_execute_sql; "
                             "db_execute_sql takes: db_id, query, output_file, nl_query, "
                             "overwrite."), text
        is_error, text = await bookstore.call("csv_head", csv_file="x.csv", rows=5)
        assert is_error and "did you mean" not in text and "takes: csv_file, n." in text
        is_error, text = await bookstore.call("db_list", verbose=True)
        assert is_error and text.endswith("db_list takes: no arguments.")
        assert list((bookstore.workspace).glob("*.csv")) == []
