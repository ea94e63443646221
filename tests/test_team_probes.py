"""Outside probes of the team server (issue 31): an analyst and a curator over HTTP (a real
``nl2sql-mcp --transport http`` with an identity provider, real MCP client sessions) trying to
reach another user's results, another group's databases, and to make or replace a verified
answer they may not; each refused in one sentence, or a proposal, and nothing of the other
user's reached. Every probe here held when it was written."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from agent_scripts import Script, final
from conftest import SAMPLE_DATA, build_cache, stop_process
from identity_provider import IdentityProvider, identity_provider
from team_servers import client, confirm, start_server, text_of

import nl2sql
from nl2sql.config.registry import DbConnectionConfigs

GROUPS = {"analysts": {"databases": ["chinook"]},
          "chinook_curators": {"databases": ["chinook"], "curator": True},
          "readers": {"databases": ["bookstore"]}}
QUESTION = "How many artists are there?"
RIGHT = "SELECT count(*) AS artists FROM Artist"
SECRET = "NL2SQL-CORA-ONLY"


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[str, IdentityProvider, Path]]:
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    config = tmp_path / "dbs.yaml"
    with identity_provider() as idp:
        config.write_text(yaml.safe_dump({
            "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
            "server": {"oidc": idp.oidc_settings(), "groups": GROUPS}}))
        process, url = start_server(config, tmp_path / "ws")
        try:
            yield url, idp, config
        finally:
            stop_process(process)


def _other_users_names(workspace: Path) -> list[str]:
    """Ways to name cora's result from ana's folder."""
    theirs = "users/cora/cora_only.csv"
    return ["../cora/cora_only.csv", "../cora/cora_only", theirs, f"../../{theirs}",
            str(workspace / theirs), "./../cora/cora_only.csv", "cora/../../cora/cora_only.csv",
            "..%2Fcora%2Fcora_only.csv", "..\\cora\\cora_only.csv",
            "../cora/cora_only.metadata.json",
            "․․/cora/cora_only.csv", "..∕cora∕cora_only.csv", "%2e%2e/cora/cora_only.csv"]


async def test_an_analyst_over_http(team: tuple[str, IdentityProvider, Path],
                                    tmp_path: Path) -> None:
    url, idp, config = team
    ana = idp.token("ana", ["analysts"])
    cora = idp.token("cora", ["chinook_curators", "readers"])
    async with client(url, cora, elicitation_callback=confirm) as session:
        made = await session.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": f"SELECT '{SECRET}' AS s", "nl_query": "cora's",
            "output_file": "cora_only"})
        assert not made.is_error, text_of(made)
        verified = await session.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": RIGHT, "nl_query": QUESTION, "output_file": "artists"})
        assert not verified.is_error
        done = text_of(await session.call_tool("saved_query_accept", {"csv_file": "artists"}))
        assert "is the verified answer" in done.split("\n")[0], done  # cora confirmed it
    assert (tmp_path / "ws" / "users" / "cora" / "cora_only.csv").exists()
    # A model driving the curator's client, which cannot ask her, only proposes: the verified
    # answer she confirmed stays, and the model's SELECT 0 is neither served nor an example.
    async with client(url, cora) as session:
        await session.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": "SELECT 0 AS artists", "nl_query": QUESTION,
            "output_file": "zero"})
        done = text_of(await session.call_tool("saved_query_accept", {"csv_file": "zero"}))
        assert done.startswith("Proposed "), done
    assert [v.sql for v in nl2sql.list_verified(config=str(config))] == [RIGHT]
    no_model = Script([])
    served = nl2sql.ask(QUESTION, config=config, model=no_model.model)
    assert served.source.startswith("verified:") and served.df.iloc[0, 0] == 275
    assert no_model.requests == []

    async with client(url, ana) as session:
        # another user's results, however named, through every tool that reads a file
        for name in _other_users_names(tmp_path / "ws"):
            for tool, arguments in (("csv_head", {"csv_file": name}),
                                    ("csv_tail", {"csv_file": name}),
                                    ("saved_query_get_details", {"csv_file": name}),
                                    ("csv_chart", {"csv_file": name}),
                                    ("saved_query_accept", {"csv_file": name})):
                result = await session.call_tool(tool, arguments)
                text = text_of(result)
                assert result.is_error and SECRET not in text, (tool, name, text)
                assert "\n" not in text.strip() or tool == "saved_query_accept", (tool, text)
        listed = text_of(await session.call_tool("saved_queries_list", {}))
        assert "cora_only" not in listed and SECRET not in listed
        searched = text_of(await session.call_tool("saved_queries_list", {"query": "cora"}))
        assert "cora_only" not in searched
        # writing into another user's folder
        for name in ("../cora/cora_only", "../cora/new", "../../ws_root"):
            result = await session.call_tool("db_execute_sql", {
                "db_id": "chinook", "query": "SELECT 0 AS s", "output_file": name,
                "overwrite": True})
            assert result.is_error, (name, text_of(result))
        assert SECRET in (tmp_path / "ws" / "users" / "cora" / "cora_only.csv").read_text()
        # another group's database, through every tool, resource and prompt
        for tool, arguments in (
                ("db_show_schema", {"db_id": "bookstore"}),
                ("db_search_schema", {"db_id": "bookstore", "query": "books"}),
                ("db_execute_sql", {"db_id": "bookstore", "query": "SELECT 1"}),
                ("db_get_row_by_id", {"db_id": "bookstore", "table": "books", "id": 1}),
                ("metrics_list", {"db_id": "bookstore"}),
                ("db_execute_sql", {"db_id": "BOOKSTORE", "query": "SELECT 1"}),
                ("db_execute_sql", {"db_id": " bookstore", "query": "SELECT 1"})):
            result = await session.call_tool(tool, arguments)
            assert result.is_error, (tool, text_of(result))
            assert "not open to user 'ana'" in text_of(result) or "nknown" in text_of(
                result) or "not configured" in text_of(result), (tool, text_of(result))
        with pytest.raises(Exception) as caught:
            await session.read_resource("db://bookstore/schema")
        assert "not open to user 'ana'" in str(caught.value)
        searched = text_of(await session.call_tool("db_search_schema", {"query": "books"}))
        assert "bookstore" not in searched
        # a verified answer: ana's accept of a wrong answer is a proposal, never served
        wrong = await session.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": "SELECT 0 AS artists", "nl_query": QUESTION,
            "output_file": "artists", "overwrite": True})
        assert not wrong.is_error
        proposed = text_of(await session.call_tool("saved_query_accept",
                                                   {"csv_file": "artists"}))
        assert proposed.startswith("Proposed "), proposed

    async with client(url, cora) as session:
        # a curator of chinook only: her accept on bookstore is a proposal
        ran = await session.call_tool("db_execute_sql", {
            "db_id": "bookstore", "query": "SELECT count(*) AS n FROM books",
            "nl_query": "How many books?", "output_file": "books"})
        assert not ran.is_error, text_of(ran)
        accepted = text_of(await session.call_tool("saved_query_accept",
                                                   {"csv_file": "books"}))
        assert accepted.startswith("Proposed "), accepted

    # an answer id where a file name goes: each of cora's (her results', her verified answer's
    # on chinook, her proposal's on bookstore) is refused as an unknown one, nothing said of it
    theirs = [json.loads(path.read_text())["id"]
              for path in (tmp_path / "ws" / "users" / "cora").glob("*.metadata.json")]
    assert len(theirs) == 4
    async with client(url, ana) as session:
        unknown = await session.call_tool("saved_query_accept", {"csv_file": "0123456789ab"})
        assert unknown.is_error and "does not exist" in text_of(unknown), text_of(unknown)
        for answer_id in theirs:
            result = await session.call_tool("saved_query_accept", {"csv_file": answer_id})
            assert result.is_error and text_of(result) == text_of(unknown).replace(
                "0123456789ab", answer_id), text_of(result)

    verified = nl2sql.list_verified(config=str(config))
    assert [(v.sql, v.accepted_by) for v in verified] == [(RIGHT, "cora")]
    assert sorted((p.proposed_by, p.sql) for p in nl2sql.list_proposed(config=str(config))) == \
        [("ana", "SELECT 0 AS artists"), ("cora", "SELECT 0 AS artists"),
         ("cora", "SELECT count(*) AS n FROM books")]


async def test_a_model_on_a_one_user_http_server_only_proposes(tmp_path: Path) -> None:
    """The one-user server (no users, groups or oidc; a loopback bind): its caller is the
    account running it, yet a model's accept through a client that cannot ask its person is a
    proposal, and it never replaces the verified answer a person made."""
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    config = tmp_path / "dbs.yaml"
    config.write_text(yaml.safe_dump({
        "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}}}))
    registry = DbConnectionConfigs.load(config)
    build_cache(registry.get("chinook"), registry.data_dir)
    person = nl2sql.ask(QUESTION, db_id="chinook", config=str(config),
                        model=Script([final(RIGHT)]).model)
    assert nl2sql.accept(person.id, config=str(config)).state == "verified"
    process, url = start_server(config, tmp_path / "ws")
    try:
        async with client(url, None) as session:
            for output in ("artists", "artists_again"):
                ran = await session.call_tool("db_execute_sql", {
                    "db_id": "chinook", "query": "SELECT 0 AS artists", "nl_query": QUESTION,
                    "output_file": output})
                assert not ran.is_error, text_of(ran)
                done = text_of(await session.call_tool("saved_query_accept",
                                                       {"csv_file": output}))
                assert done.startswith("Proposed "), done
            # the person's answer id, named as the file of the model's result: still theirs
            again = text_of(await session.call_tool("saved_query_accept",
                                                    {"csv_file": person.id}))
            assert "SELECT 0" not in again
    finally:
        stop_process(process)
    assert [v.sql for v in nl2sql.list_verified(config=str(config))] == [RIGHT]
    assert len(nl2sql.list_proposed(config=str(config))) == 2


def test_a_local_user_in_a_group_is_not_served_another_groups_verified_answer(
        tmp_path: Path) -> None:
    """The OS account, once a configured user in a group without chinook, asks chinook's
    verified question with no db id (the Python face): it is neither served (no model request)
    nor shown as an example, and the model is asked on their own database."""
    import os
    import subprocess
    import sys

    from nl2sql.access.caller import os_user_name

    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    config = tmp_path / "dbs.yaml"
    config.write_text(yaml.safe_dump({
        "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
        "server": {"groups": {"readers": {"databases": ["bookstore"]},
                              "curators": {"databases": ["*"], "curator": True}}}}))
    registry = DbConnectionConfigs.load(config)
    for db_id in ("chinook", "bookstore"):
        build_cache(registry.get(db_id), registry.data_dir)
    person = nl2sql.ask(QUESTION, db_id="chinook", config=str(config),
                        model=Script([final(RIGHT)]).model)
    assert nl2sql.accept(person.id, config=str(config)).state == "verified"
    added = subprocess.run(
        [str(Path(sys.executable).parent / "nl2sql-secrets"), "add-user", os_user_name(),
         "--group", "readers", "--config", str(config)],
        capture_output=True, text=True, timeout=60, env={**os.environ})
    assert added.returncode == 0, added.stderr
    books = "SELECT count(*) AS n FROM books"
    script = Script([final(books)])
    answer = nl2sql.ask(QUESTION, config=str(config), model=script.model)
    assert answer.source == "model" and answer.db_id == "bookstore" and answer.sql == books
    assert RIGHT not in str(script.requests)  # not an example either
    with pytest.raises(Exception, match="not open to user"):
        nl2sql.ask(QUESTION, db_id="chinook", config=str(config),
                   model=Script([final(RIGHT)]).model)
    assert RIGHT not in [v.sql for v in nl2sql.list_verified(config=str(config))]
