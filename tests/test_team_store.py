"""Two ``nl2sql-mcp --transport http`` processes sharing one PostgreSQL store, as a team runs
them behind a load balancer: users with their own tokens (``nl2sql-secrets add-user``) and an
identity provider's JWT users see only their groups' databases on either server; no token, a
wrong one and an expired JWT get 401; an analyst's accept on one server is a proposal served
nowhere, a curator's accept on the other is then served (no model request); users added or
removed while the servers run are let in or refused at once (no restart); ``nl2sql-audit
--json`` shows every call with its user, tool, database, SQL and outcome, the refused one too;
and many users' mixed calls over both servers all succeed, each with its audit record."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from agent_scripts import Script, final
from conftest import PG_HOST, PG_PORT, PG_USER, SAMPLE_DATA, build_cache
from identity_provider import IdentityProvider, identity_provider
from team_servers import call, client, confirm, run_load, start_server, status, stop_server, text_of

import nl2sql
from nl2sql.config.registry import DbConnectionConfigs

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

BIN = Path(sys.executable).parent
QUESTION = "How many artists are there?"
SQL = "SELECT count(*) AS artists FROM Artist"


def add_user(config: Path, name: str, *groups: str) -> str:
    """``nl2sql-secrets add-user``; the token on its last line."""
    done = subprocess.run([str(BIN / "nl2sql-secrets"), "add-user", name, "--config", str(config),
                           *[arg for group in groups for arg in ("--group", group)]],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip().splitlines()[-1]


def audit(config: Path, *args: str) -> list[dict]:
    done = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config), "--json", *args],
                          capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def team(tmp_path: Path, pg_database) -> Iterator[tuple[Path, IdentityProvider]]:  # noqa: ANN001
    """dbs.yaml for Chinook (SQLite) and the bundled bookstore, groups, an identity provider,
    and a throwaway PostgreSQL database as the shared store."""
    store = pg_database()
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    with identity_provider() as idp:
        config = tmp_path / "dbs.yaml"
        config.write_text(yaml.safe_dump({
            "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
            "store": f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{store}",
            "server": {"oidc": idp.oidc_settings(), "groups": {
                "analysts": {"databases": ["chinook"]},
                "curators": {"databases": ["*"], "curator": True}}}}))
        registry = DbConnectionConfigs.load(config)
        for one in registry:
            build_cache(one, registry.data_dir)
        yield config, idp


async def test_two_servers_one_store_users_groups_curation_and_audit(
        team: tuple[Path, IdentityProvider], tmp_path: Path) -> None:
    config, idp = team
    ana, cora = add_user(config, "ana", "analysts"), add_user(config, "cora", "curators")
    jim = idp.token("jim", ["analysts"])
    first, url_a = start_server(config, tmp_path / "ws")
    second, url_b = start_server(config, tmp_path / "ws")
    try:
        for url in (url_a, url_b):
            assert status(url, None) == 401
            assert status(url, "nl2sql_not-a-token-of-anyone-0123456789abcdef") == 401
            assert status(url, idp.token("jim", ["analysts"], lifetime=-120)) == 401
            assert status(url, ana) == status(url, jim) == 200

        # Each sees their groups' databases, whichever server answers.
        for url, token in ((url_a, ana), (url_b, ana), (url_b, jim)):
            listed = (await call(url, token, "db_list"))[1]
            assert "- chinook (sqlite)" in listed and "bookstore" not in listed
        assert "bookstore" in (await call(url_b, cora, "db_list"))[1]
        refused, message = await call(url_a, ana, "db_execute_sql", db_id="bookstore",
                                      query="SELECT count(*) FROM books")
        assert refused and "not open to user 'ana'" in message
        ok, _ = await call(url_b, jim, "db_execute_sql", db_id="chinook",
                           query="SELECT count(*) AS n FROM Album")
        assert not ok

        # An analyst's accept on the first server is a proposal, served nowhere.
        async with client(url_a, ana) as session:
            ran = await session.call_tool("db_execute_sql", {
                "db_id": "chinook", "query": SQL, "nl_query": QUESTION})
            csv_file = text_of(ran).split(" saved to ")[1].split(" ")[0]
            accepted = text_of(await session.call_tool("saved_query_accept",
                                                       {"csv_file": csv_file}))
        assert accepted.startswith("Proposed ")
        by_model = Script([final("SELECT 275 AS artists")])
        assert nl2sql.ask(QUESTION, config=config, model=by_model.model).source == "model"
        for url, token in ((url_a, ana), (url_b, jim)):  # nor shown as an example by either
            async with client(url, token) as session:
                prompt = await session.get_prompt("ask_database", {"question": QUESTION})
            assert SQL not in prompt.messages[0].content.text

        # A curator's accept on the second server (her model proposes, she confirms when her
        # client asks) is served everywhere, with no model request.
        async with client(url_b, cora, elicitation_callback=confirm) as session:
            ran = await session.call_tool("db_execute_sql", {
                "db_id": "chinook", "query": SQL, "nl_query": QUESTION})
            csv_file = text_of(ran).split(" saved to ")[1].split(" ")[0]
            accepted = text_of(await session.call_tool("saved_query_accept",
                                                       {"csv_file": csv_file}))
        assert "is the verified answer" in accepted and "accepted by cora" in accepted
        no_model = Script([])
        served = nl2sql.ask(QUESTION, config=config, model=no_model.model)
        assert served.source.startswith("verified:") and served.df.iloc[0, 0] == 275
        assert no_model.requests == []
        async with client(url_a, jim) as session:
            prompt = await session.get_prompt("ask_database", {"question": QUESTION})
        assert SQL in prompt.messages[0].content.text  # the first server shows it as an example

        # Users are looked up in the shared store at every request: one added while both
        # servers run is let in by both at once, and one removed is refused by both at once.
        bob = add_user(config, "bob", "analysts")
        assert status(url_a, bob) == status(url_b, bob) == 200
        assert "- chinook (sqlite)" in (await call(url_b, bob, "db_list"))[1]
        secrets = subprocess.run([str(BIN / "nl2sql-secrets"), "remove-user", "bob", "--config",
                                  str(config)], capture_output=True, text=True, timeout=60)
        assert secrets.returncode == 0, secrets.stderr
        assert status(url_a, bob) == status(url_b, bob) == 401
    finally:
        log_a, log_b = stop_server(first), stop_server(second)  # both flush their audit trail
    assert "Traceback" not in log_a + log_b

    records = audit(config, "--user", "ana")
    assert all(r["user"] == "ana" and r["face"] == "mcp-http" for r in records)
    tools = [(r["tool"], r["db_id"], r["outcome"]) for r in records]
    assert ("db_list", None, "ok") in tools
    assert ("db_execute_sql", "bookstore", "refused") in tools
    assert ("saved_query_accept", "chinook", "ok") in tools
    ran = next(r for r in records if r["tool"] == "db_execute_sql" and r["outcome"] == "ok")
    assert ran["sql"] == SQL and ran["row_count"] == 1 and ran["db_id"] == "chinook" \
        and ran["answer_id"] and ran["duration_ms"] >= 0
    assert {r["tool"] for r in audit(config, "--user", "jim")} >= {"db_list", "db_execute_sql",
                                                                   "ask_database"}
    asks = [r for r in audit(config, "--db", "chinook") if r["tool"] == "ask"]
    assert [r["face"] for r in asks] == ["python", "python"] and asks[-1]["sql"] == SQL


async def test_many_users_mixed_calls_over_two_servers_every_call_audited(
        team: tuple[Path, IdentityProvider], tmp_path: Path) -> None:
    config, idp = team
    tokens = [add_user(config, f"user{n}", "analysts") for n in range(3)] + \
        [idp.token("jwt-user", ["analysts"])]
    servers = [start_server(config, tmp_path / "ws") for _ in range(2)]
    try:
        result = await run_load([url for _, url in servers], tokens, calls_per_user=10)
    finally:
        for process, _ in servers:
            stop_server(process)
    assert result.errors == [] and result.calls == 40 and result.refused == 4
    records = audit(config)
    assert len(records) == 40
    assert sorted({r["user"] for r in records}) == ["jwt-user", "user0", "user1", "user2"]
    assert sum(r["outcome"] == "refused" for r in records) == 4
