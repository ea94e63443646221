"""A team server as real processes: ``nl2sql-mcp --transport http`` with groups and an identity
provider (a local JWKS, tokens signed in the test), probed with a real MCP client over HTTP: who
may connect (401 without a token, with a wrong one, with an expired or foreign JWT) and what
each user sees."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
import yaml
from conftest import SAMPLE_DATA, stop_process
from cryptography.hazmat.primitives.asymmetric import rsa
from identity_provider import IdentityProvider, identity_provider
from team_servers import NL2SQL_MCP, call, client, start_server, status, text_of

GROUPS = {"analysts": {"databases": ["chinook"]},
          "curators": {"databases": ["*"], "curator": True}}


@pytest.fixture
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@pytest.fixture
def team_config(tmp_path: Path, idp: IdentityProvider) -> Path:
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    path = tmp_path / "dbs.yaml"
    path.write_text(yaml.safe_dump({
        "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
        "server": {"oidc": idp.oidc_settings(), "groups": GROUPS}}))
    return path


@pytest.fixture
def team_server(team_config: Path, tmp_path: Path) -> Iterator[str]:
    process, url = start_server(team_config, tmp_path / "ws")
    try:
        yield url
    finally:
        stop_process(process)


async def test_jwt_users_see_their_groups_databases_and_others_get_401(
        team_server: str, idp: IdentityProvider) -> None:
    url = team_server
    ana, cora = idp.token("ana", ["analysts"]), idp.token("cora", ["curators"])
    assert status(url, None) == 401
    assert status(url, "not-a-token-0123456789") == 401
    assert status(url, idp.token("ana", ["analysts"], lifetime=-120)) == 401  # expired
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert status(url, idp.token("mallory", ["curators"], key=other_key)) == 401  # forged
    assert status(url, idp.token("ana", ["analysts"], aud="another-api")) == 401
    assert status(url, idp.token("ana", ["analysts"], iss="https://elsewhere")) == 401
    assert status(url, ana) == 200

    _, listed = await call(url, ana, "db_list")
    assert "- chinook (sqlite)" in listed and "bookstore" not in listed
    refused, message = await call(url, ana, "db_execute_sql", db_id="bookstore",
                                  query="SELECT count(*) FROM books")
    assert refused and "'bookstore' is not open to user 'ana' (groups: analysts)" in message
    ok, ran = await call(url, ana, "db_execute_sql", db_id="chinook",
                         query="SELECT count(*) AS n FROM Artist")
    assert not ok and "275" in ran

    _, listed = await call(url, cora, "db_list")
    assert "chinook" in listed and "bookstore" in listed
    _, saved = await call(url, cora, "saved_queries_list")
    assert "No saved queries" in saved  # ana's result is in her own folder


def test_auth_token_and_users_do_not_mix(team_config: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(NL2SQL_MCP), "--transport", "http", "--port", "0", "--config", str(team_config),
         "--auth-token", "a-long-enough-token-0123"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "is for a one-user server" in done.stderr
    assert "Traceback" not in done.stderr


async def test_only_a_person_who_may_curate_is_asked_to_confirm(
        team_server: str, idp: IdentityProvider) -> None:
    """An analyst's client can ask its person (elicitation), but their accept stays a proposal
    whatever they answer: they are not asked. A curator's model only proposes too; the curator
    is asked and their confirmation verifies it."""
    asked: list[types.ElicitRequestParams] = []

    async def answer(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={})

    for name, group, expected in (("ana", "analysts", "Proposed "),
                                  ("cora", "curators", "is the verified answer")):
        async with client(team_server, idp.token(name, [group]),
                          elicitation_callback=answer) as session:
            await session.call_tool("db_execute_sql", {
                "db_id": "chinook", "query": "SELECT count(*) AS artists FROM Artist",
                "nl_query": "How many artists are there?", "output_file": "artists"})
            accepted = text_of(await session.call_tool("saved_query_accept",
                                                       {"csv_file": "artists"}))
        assert expected in accepted.split("\n")[0], accepted
        assert len(asked) == (name == "cora"), asked  # only the curator was asked
    assert "How many artists are there?" in asked[0].message
