"""The context engine's MCP faces through an in-memory client: ``db_search_schema`` (pruned
schema with reasons and value hints; ranked databases without db_id), and ``db_show_schema``
with a table list and its token cap."""

from __future__ import annotations

import pytest
from mcp import Client

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.context_engine.prompt_context import WHOLE_SCHEMA_FITS
from nl2sql.mcp import build_server
from nl2sql.operations.search import ENV_SCHEMA_TOKEN_CAP
from nl2sql.annotation.pipeline import annotate_database


SAME_BACKEND = pytest.mark.parametrize("chinook, northwind", [("sqlite", "sqlite"),
                                                             ("postgres", "postgres")],
                                       indirect=True)


@pytest.fixture
def server(chinook, northwind, make_registry):  # noqa: ANN001, ANN201
    registry = make_registry(chinook.config, northwind.config)
    for sample in (chinook, northwind):
        annotate_database(sample.config, registry.data_dir)
    return build_server(registry.config_path, workspace=registry.workspace), chinook


async def call(client: Client, tool: str, **arguments: object) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), result.content[0].text


@SAME_BACKEND
async def test_db_search_schema_prunes_with_reasons_and_values(server) -> None:  # noqa: ANN001
    mcp_server, chinook = server
    async with Client(mcp_server) as client:
        is_error, text = await call(client, "db_search_schema",
                                    question="List the songs by AC/DC", db_id="chinook")
        assert not is_error, text
        artist = chinook.table("artist")
        assert "= 'AC/DC'" in text and f"{artist}." in text
        assert "value 'AC/DC'" in text  # the reason the artist table was kept
        assert "CREATE TABLE" in text
        is_error, text = await call(client, "db_search_schema",
                                    question="Which suppliers ship seafood products?")
        assert not is_error
        ranked = [line.split()[1] for line in text.splitlines() if line.startswith("- ")]
        assert ranked[0] == "northwind" and set(ranked) == {"northwind", "chinook", "bookstore"}
        is_error, text = await call(client, "db_search_schema", question="songs",
                                    db_id="chinok")
        assert is_error and "Did you mean 'chinook'" in text
        for blank, db_id in (("", None), ("  ", None), (" \n", "chinook")):
            arguments = {"question": blank} | ({"db_id": db_id} if db_id else {})
            is_error, text = await call(client, "db_search_schema", **arguments)
            assert is_error and text.endswith("The question is empty; ask something about "
                                              "the data."), (blank, db_id, text)
        # A lone surrogate (an undecodable byte of a terminal; a Python caller's string): a
        # one-line error for the question, the SQL and nl_query, never "internal error".
        for tool, arguments in (
                ("db_search_schema", {"question": "songs by AC\udcc3DC"}),
                ("db_search_schema", {"question": "caf\udce9", "db_id": "chinook"}),
                ("db_execute_sql", {"db_id": "chinook", "query": "SELECT 'caf\udce9'"}),
                ("db_execute_sql", {"db_id": "chinook", "query": "SELECT 1",
                                    "nl_query": "caf\udce9"})):
            is_error, text = await call(client, tool, **arguments)
            assert is_error and "U+DC" in text and "lone surrogate" in text, (tool, text)
            assert "internal error" not in text
        is_error, text = await call(client, "db_search_schema", question="songs\x00")
        assert is_error and text.endswith("The question contains a NUL character; remove it "
                                          "and send it again.")


@SAME_BACKEND
async def test_db_show_schema_table_list_and_token_cap(server, monkeypatch) -> None:  # noqa: ANN001
    mcp_server, chinook = server
    album, artist = chinook.table("album"), chinook.table("artist")
    async with Client(mcp_server) as client:
        is_error, text = await call(client, "db_show_schema", db_id="chinook",
                                    tables=[artist, album])
        assert not is_error
        assert text.count("CREATE TABLE") == 2 and "Invoice" not in text
        is_error, text = await call(client, "db_show_schema", db_id="chinook",
                                    tables=["Artistt"])
        assert is_error and "no table 'Artistt'" in text
        monkeypatch.setenv(ENV_SCHEMA_TOKEN_CAP, "500")
        is_error, text = await call(client, "db_show_schema", db_id="chinook")
        assert not is_error
        assert "over the 500-token cap" in text and "db_search_schema" in text
        assert "CREATE TABLE" not in text and artist in text
        is_error, text = await call(client, "db_show_schema", db_id="chinook", tables=[artist])
        assert not is_error and "CREATE TABLE" in text  # a small table list fits the cap


@SAME_BACKEND
async def test_ask_database_prompt_hands_over_the_agent_instructions(server) -> None:  # noqa: ANN001
    mcp_server, chinook = server
    async with Client(mcp_server) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        prompt = prompts["ask_database"]
        assert len(prompt.description) > 60
        assert {a.name: a.required for a in prompt.arguments} == {"question": True,
                                                                  "db_id": False}
        result = await client.get_prompt("ask_database", {"question": "List the songs by AC/DC"})
        text = result.messages[0].content.text
    assert "'chinook'" in text and "db_execute_sql" in text
    assert "= 'AC/DC'" in text  # the value hint
    assert "CREATE TABLE" in text and "List the songs by AC/DC" in text
    # how to check an answer by hand the way --candidates does
    assert "several candidates, compared by their results" in text
    assert "(db_id='chinook'" in text and "3 of 4 queries" in text


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # backend-neutral
def test_show_context_prints_the_context_without_a_model(chinook, make_registry,  # noqa: ANN001
                                                         capsys) -> None:  # noqa: ANN001
    import json

    from nl2sql.cli.ask import main

    registry = make_registry(chinook.config)
    annotate_database(chinook.config, registry.data_dir)
    config = str(registry.config_path)
    assert main(["songs by Acdc", "--db", "chinook", "--show-context", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "Artist.Name = 'AC/DC'" in out and "CREATE TABLE" in out
    assert main(["songs by AC/DC", "--show-context", "--json", "--config", config]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["db_id"] == "chinook"
    assert set(document) == {"question", "db_id", "candidates", "tables", "value_hints",
                             "examples", "glossary", "metrics", "saved_metric_queries",
                             "schema_sql", "schema_tokens", "full_schema_tokens",
                             "budget_tokens", "ambiguous_between"}


async def test_db_search_schema_on_a_schema_that_fits_is_db_show_schema(tmp_path) -> None:  # noqa: ANN001
    """No reason per table when the whole schema fits: said once, then the same schema."""
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    annotate_database(DbConnectionConfigs.load(None, data_dir=tmp_path / "data").get("bookstore"),
                      tmp_path / "data")
    async with Client(server) as client:
        _, shown = await call(client, "db_show_schema", db_id="bookstore")
        is_error, found = await call(client, "db_search_schema", db_id="bookstore",
                                     question="How many customers are there?")
    assert not is_error
    assert found.startswith("The whole schema of bookstore fits (") and found.endswith(shown.rstrip())
    assert WHOLE_SCHEMA_FITS not in found
    assert len(found) - len(shown) < 300, found[:len(found) - len(shown)]


async def test_tools_list_stays_small(tmp_path) -> None:  # noqa: ANN001
    """What every MCP client pays on every request: no generated titles or null unions, and
    descriptions kept to what a model needs to choose and call a tool."""
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    async with Client(server) as client:
        listing = await client.list_tools()
    wire = listing.model_dump_json(by_alias=True, exclude_none=True)
    assert '"title":"Db Id"' not in wire and '{"type":"null"}' not in wire
    # 8 KiB for the first 11 tools; the two metric tools (metrics_list, metrics_query: the
    # contract of issue 30) take 1.1 KiB with descriptions cut to the bone: 9 KiB for 13.
    assert len(wire) <= 9216, (f"tools/list is {len(wire):,} bytes; shorten the descriptions "
                               f"in nl2sql/operations/registry.py and params.py")
