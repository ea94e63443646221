"""The page's data through its JSON twins, in-process (``build_app`` over an ASGI transport):
sign-in, asking with five candidates (a scripted ``FunctionModel``), follow-ups, each user's
own history, accepting (a curator verifies, others propose), the schema with metrics, SQL a
person writes, downloads, the audit, and the one error shape. On a harbour database that is
not in the repository (tests/web_harbour.py)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from web_harbour import (BUSIEST, BUSIEST_OTHER, BUSIEST_SQL, FEES, FEES_SQL, FLEET, FOLLOW_UP,
                         CandidateSql, annotate, function_model, harbour_script, write_config)

from nl2sql.access.audit import flush_all
from nl2sql.access.caller import member
from nl2sql.access.users import add_user
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.verified_answers import accept_answer
from nl2sql.store.store import Store
from nl2sql.web import build_app


@pytest.fixture
def harbour(tmp_path: Path) -> dict[str, Any]:
    """dbs.yaml with the harbour (SQLite) and a second database only curators see; users
    ines (crew) and tomas (harbourmasters, curators); the schema caches."""
    return _harbour(tmp_path)


def _harbour(folder: Path, **top: Any) -> dict[str, Any]:
    with sqlite3.connect(folder / "harbour.db") as db:
        db.executescript(harbour_script())
    with sqlite3.connect(folder / "ledger.db") as db:
        db.executescript("CREATE TABLE fees (id INTEGER PRIMARY KEY, amount REAL);")
    path = write_config(folder, {"harbour": {"type": "sqlite", "path": "harbour.db"},
                                 "ledger": {"type": "sqlite", "path": "ledger.db",
                                            "semantic_model": None}}, crew=["harbour"], **top)
    configs = DbConnectionConfigs.load(path, workspace=folder / "ws")
    annotate(configs)
    tokens = {"ines": add_user(configs, "ines", ["crew"]),
              "tomas": add_user(configs, "tomas", ["harbourmasters"])}
    return {"config": path, "workspace": folder / "ws", "tokens": tokens, "configs": configs}


@pytest.fixture
async def client(harbour: dict[str, Any]) -> AsyncIterator[httpx2.AsyncClient]:
    async with _client(harbour) as http:
        yield http


@asynccontextmanager
async def _client(harbour: dict[str, Any]) -> AsyncIterator[httpx2.AsyncClient]:
    script = CandidateSql()
    app = build_app(harbour["config"], workspace=harbour["workspace"],
                    model=function_model(script))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                  base_url="http://127.0.0.1") as http:
        http.script = script  # type: ignore[attr-defined]
        yield http


def bearer(harbour: dict[str, Any], user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {harbour['tokens'][user]}"}


async def ask(client: httpx2.AsyncClient, headers: dict[str, str], question: str,
              **fields: str) -> list[dict[str, Any]]:
    response = await client.post("/ask", data={"question": question, **fields},
                                 headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


async def test_sign_in_takes_a_users_token_and_refuses_others(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    refused = await client.get("/index.json")
    assert refused.status_code == 401
    assert refused.json() == {"error": "Sign in with your token (your administrator makes one "
                                       "with nl2sql-secrets add-user).", "status": 401}
    page = await client.get("/")
    assert page.status_code == 401 and 'for="token">Token</label>' in page.text
    wrong = await client.post("/signin", data={"token": "nl2sql_not-a-token"})
    assert wrong.status_code == 401 and "That token was refused" in wrong.text
    assert "nl2sql_not-a-token" not in wrong.text
    signed = await client.post("/signin", data={"token": harbour["tokens"]["ines"]})
    assert signed.status_code == 303 and signed.headers["location"] == "/"
    cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    index = await client.get("/index.json")  # the cookie now signs the requests
    assert [db["db_id"] for db in index.json()["databases"]] == ["harbour"]
    await client.post("/signout")
    assert (await client.get("/index.json")).status_code == 401
    # the same users on the MCP endpoint of the same process: a token is needed there too
    assert (await client.post("/mcp", json={})).status_code == 401


async def test_an_answer_with_five_candidates_and_its_history(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    ines = bearer(harbour, "ines")
    events = await ask(client, ines, BUSIEST)
    kinds = [event["event"] for event in events]
    assert kinds[0] == "started" and kinds[-1] == "answer" and "status" in kinds
    said = [event["text"] for event in events if event["event"] == "status"]
    assert any("5 SQL candidates" in text for text in said), said
    assert any("Running the query on database 'harbour'" in text for text in said), said
    answer = events[-1]["answer"]
    assert answer["sql"] == BUSIEST_SQL and answer["confidence"] == 0.8
    assert answer["agreement"] == "4 of 5 candidates agree (80%), 1 other result(s)"
    assert sum(c["sql"] == BUSIEST_OTHER for c in answer["candidates"]) == 1
    result = answer["result"]
    assert result["columns"] == ["port", "tonnes"] and result["rows"][0] == ["Piraeus", "29650"]
    assert result["chart"]["src"].startswith("data:image/png;base64,")
    assert result["chart"]["description"].startswith("Bar chart")
    assert answer["models"] and answer["usage"]["requests"] == 5
    assert "csv_path" not in answer  # no server path in what the page sends
    html = events[-1]["html"]
    assert "Confidence 80%" in html and "<img src=\"data:image/png" in html
    conversation = events[0]["conversation_id"]

    follow = await ask(client, ines, FOLLOW_UP, conversation_id=conversation)
    assert follow[-1]["answer"]["conversation_id"] == conversation
    assert follow[-1]["answer"]["db_id"] == "harbour"  # the conversation's database
    turns = (await client.get(f"/c/{conversation}.json", headers=ines)).json()["turns"]
    assert [t["question"] for t in turns] == [BUSIEST, FOLLOW_UP]
    assert turns[0]["answer"]["result"]["rows"] == result["rows"]
    history = (await client.get("/history.json", headers=ines)).json()["conversations"]
    assert [(c["question"], c["turns"]) for c in history] == [(BUSIEST, 2)]
    # People read the minute in UTC; the exact instant stays in the element for programs.
    page = (await client.get("/history", headers=ines)).text
    shown = re.search(r'<time datetime="([^"]+)">(\d{4}-\d\d-\d\d \d\d:\d\d) UTC</time>', page)
    assert shown and shown.group(1).startswith(shown.group(2).replace(" ", "T"))
    assert history[0]["updated_at"] not in page.replace(shown.group(0), "")

    tomas = bearer(harbour, "tomas")  # another user sees none of it
    assert (await client.get("/history.json", headers=tomas)).json() == {"conversations": []}
    theirs = await client.get(f"/c/{conversation}.json", headers=tomas)
    assert theirs.status_code == 404 and "You have no conversation" in theirs.json()["error"]
    saved = (await client.get("/saved.json", headers=tomas)).json()
    assert saved["saved"] == []


async def test_only_a_curators_accept_verifies_and_the_answer_is_then_served_verified(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    ines, tomas = bearer(harbour, "ines"), bearer(harbour, "tomas")
    answer = (await ask(client, ines, FLEET))[-1]["answer"]
    assert answer["can_curate"] is False and answer["status"] is None
    assert 'disabled aria-describedby' in (await ask(client, ines, FLEET))[-1]["html"]
    proposed = await client.post(f"/answers/{answer['id']}/accept", headers=ines)
    assert proposed.json()["status"]["state"] == "proposed"
    assert "Proposed by ines" in proposed.json()["html"]
    listed = (await client.get("/proposals.json", headers=tomas)).json()["proposals"]
    assert [(p["id"], p["can_curate"]) for p in listed] == [(answer["id"], True)]
    accepted = await client.post(f"/answers/{answer['id']}/accept", headers=tomas)
    assert accepted.json()["status"] == {"state": "verified", "id": answer["id"],
                                         "by": "tomas", "stale_reason": None}
    requests = sum(client.script.asked.values())  # type: ignore[attr-defined]
    again = (await ask(client, ines, FLEET))[-1]
    assert again["answer"]["served_verified"] and again["answer"]["usage"]["requests"] == 0
    assert sum(client.script.asked.values()) == requests  # type: ignore[attr-defined]
    assert "Verified answer" in again["html"]
    verified = (await client.get("/saved.json?q=flag", headers=ines)).json()["verified"]
    assert [v["question"] for v in verified] == [FLEET]


async def test_an_id_reaches_only_what_its_caller_may_see(tmp_path: Path,
                                                         store_url: str | None) -> None:
    """Accept and reject take an id in their path: another user's result (of another group,
    or of the caller's own on the same database), and a verified answer or a proposal on a
    database the caller may not query, are each refused exactly as an unknown id is (so the
    reply does not tell that the id exists), with no server path, and nothing changes. With
    the store in SQLite files and in PostgreSQL (one table of every database's answers, one of
    every workspace's saved results)."""
    harbour = _harbour(tmp_path, **({"store": store_url} if store_url else {}))
    async with _client(harbour) as client:
        await _probe_ids(client, harbour)


async def _probe_ids(client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    harbour["tokens"]["marta"] = add_user(harbour["configs"], "marta", ["crew"])
    ines, marta, tomas = ({**bearer(harbour, user), "Accept": "application/json"}
                          for user in ("ines", "marta", "tomas"))
    hers = (await ask(client, ines, FLEET))[-1]["answer"]
    his = (await ask(client, tomas, BUSIEST, db_id="harbour"))[-1]["answer"]
    proposal = (await ask(client, tomas, FEES, db_id="ledger"))[-1]["answer"]
    ops = OpsContext.load(harbour["config"], workspace=harbour["workspace"])
    try:  # a model's accept over MCP: a proposal on the ledger, waiting for a curator
        accept_answer(ops.for_caller(member("tomas", ["harbourmasters"], ops.configs.server),
                                     "mcp-http"), proposal["id"], curator=False)
    finally:
        ops.close()
    verified = (await ask(client, tomas, FEES, db_id="ledger"))[-1]["answer"]
    made = await client.post(f"/answers/{verified['id']}/accept", headers=tomas)
    assert made.json()["status"]["state"] == "verified", made.text

    unknown = "0123456789ab"
    for caller, theirs in ((ines, [his, proposal, verified]),
                           (marta, [hers, his, proposal, verified])):
        for action in ("accept", "reject"):
            refusal = (await client.post(f"/answers/{unknown}/{action}", headers=caller)).json()
            assert refusal["status"] == 404, refusal
            assert str(harbour["workspace"]) not in refusal["error"]
            for other in theirs:
                reply = await client.post(f"/answers/{other['id']}/{action}", headers=caller)
                assert reply.json() == {
                    **refusal, "error": refusal["error"].replace(unknown, other["id"])}, \
                    (action, other["db_id"], reply.text)
                assert other["sql"] not in reply.text
    assert "among your results" in (await client.post(
        f"/answers/{unknown}/accept", headers=ines)).json()["error"]
    for caller, theirs in ((ines, [his, proposal, verified]), (marta, [hers])):
        for path in ("/results/{}.json", "/download/{}"):  # their result files, by name
            refusal = (await client.get(path.format("unknown.csv"), headers=caller)).json()
            assert refusal["status"] == 404, refusal
            for other in theirs:
                reply = await client.get(path.format(other["csv_file"]), headers=caller)
                assert reply.json() == {**refusal, "error": refusal["error"].replace(
                    "unknown.csv", other["csv_file"])}, (path, reply.text)

    listed = (await client.get("/proposals.json", headers=tomas)).json()["proposals"]
    assert [(p["id"], p["proposed_by"], p["sql"]) for p in listed] == \
        [(proposal["id"], "tomas", FEES_SQL)]
    kept = (await client.get("/saved.json", headers=tomas)).json()["verified"]
    assert [(v["id"], v["accepted_by"]) for v in kept] == [(verified["id"], "tomas")]
    assert (await client.get("/proposals.json", headers=ines)).json()["proposals"] == []


async def test_an_answer_on_a_database_the_user_left_shows_nothing_of_it_since(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    """tomas's conversation keeps his answer on the ledger after he leaves the group that
    grants it, but not what became of it there since (verified, stale and why)."""
    tomas = bearer(harbour, "tomas")
    events = await ask(client, tomas, FEES, db_id="ledger")
    answer, conversation = events[-1]["answer"], events[0]["conversation_id"]
    made = await client.post(f"/answers/{answer['id']}/accept", headers=tomas)
    assert made.json()["status"]["state"] == "verified", made.text
    store = Store.of(harbour["configs"])
    store.answers("ledger").mark(answer["id"], stale_reason="schema drift: fees changed "
                                                             "(column amount removed)")
    turn = (await client.get(f"/c/{conversation}.json", headers=tomas)).json()["turns"][0]
    assert turn["answer"]["status"]["state"] == "stale"  # while he may query the ledger

    stored = store.users.get("tomas")
    assert stored is not None
    store.users.add(stored.model_copy(update={"groups": ["crew"]}), replace=True)
    turn = (await client.get(f"/c/{conversation}.json", headers=tomas)).json()["turns"][0]
    assert turn["answer"]["sql"] == FEES_SQL and turn["answer"]["status"] is None
    page = await client.get(f"/c/{conversation}", headers=tomas)
    assert page.status_code == 200 and "column amount removed" not in page.text


async def test_a_long_conversation_shows_its_newest_questions_and_a_link_back(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    """A conversation's page reads and shows its newest turns only (a page of 45 questions
    would otherwise read 45 results); 'Earlier questions' walks back, 20 at a time."""
    from nl2sql.agents.conversations import ConversationStore
    from nl2sql.web.pages import TURNS_SHOWN

    store = ConversationStore(Store.of(harbour["configs"]), "ines")
    for i in range(1, 46):
        store.append("long", request_id=f"r{i}", question=f"Question {i}?", db_id="harbour",
                     answer=None, messages=[])
    ines = bearer(harbour, "ines")
    seen, before = [], ""
    while True:
        page = (await client.get(f"/c/long.json{before}", headers=ines)).json()
        seen.append([t["question"] for t in page["turns"]])
        if page["earlier"] is None:
            break
        before = f"?before={page['earlier']}"
    assert TURNS_SHOWN == 20 and [len(s) for s in seen] == [20, 20, 5]
    assert seen[0][0] == "Question 26?" and seen[0][-1] == "Question 45?"
    assert seen[2] == [f"Question {i}?" for i in range(1, 6)]
    html = (await client.get("/c/long", headers=ines)).text
    assert 'href="/c/long?before=26">Earlier questions</a>' in html
    assert "Question 45?" in html and "Question 25?" not in html
    assert 'id="ask"' in html and page["later"] is True  # the last page read: the oldest
    oldest = (await client.get("/c/long?before=6", headers=ines)).text
    assert "Earlier questions" not in oldest and "Question 1?" in oldest
    # an earlier page asks no follow-up (it would append under old questions): it links on
    assert 'id="ask"' not in oldest and 'href="/c/long">Later questions</a>' in oldest
    newest = (await client.get("/c/long.json?before=999", headers=ines)).json()
    assert newest["later"] is False and newest["turns"][-1]["question"] == "Question 45?"


async def test_an_error_names_the_servers_files_without_showing_them(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    configs = harbour["configs"]
    (configs.data_dir / "database" / "harbour" / "harbour.db_info.json").unlink()
    ines = bearer(harbour, "ines")
    page = (await client.get("/schema/harbour.json", headers=ines)).json()
    assert "has no schema cache yet (the server's data folder/database/harbour/" \
        in page["error"] and str(configs.data_dir) not in page["error"]
    configs.get("harbour").path.unlink()
    ran = await client.post("/sql", data={"db_id": "harbour", "sql": "SELECT 1"}, headers=ines)
    error = json.loads(ran.text.splitlines()[-1])
    assert error["event"] == "error" and "the server's file" in error["error"], error
    assert str(harbour["config"].parent) not in error["error"]


async def test_schema_pages_list_the_users_tables_columns_samples_and_metrics(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    ines = bearer(harbour, "ines")
    listed = (await client.get("/schema.json", headers=ines)).json()["databases"]
    assert [db["db_id"] for db in listed] == ["harbour"]
    schema = (await client.get("/schema/harbour.json", headers=ines)).json()
    assert [t["name"] for t in schema["tables"]] == ["ports", "vessels", "voyages"]
    voyages = schema["tables"][2]
    assert {"columns": ["vessel_id"], "table": "vessels",
            "referenced_columns": ["vessel_id"]} in voyages["foreign_keys"]
    assert schema["tables"][0]["sample"]["rows"][0] == ["1", "Valletta", "Malta"]
    assert [m["name"] for m in schema["metrics"]] == ["cargo_tonnage", "voyages_sailed"]
    page = await client.get("/schema/harbour", headers=ines)
    assert "cargo_tonnage" in page.text and "<strong>voyages</strong>" in page.text
    found = (await client.get("/schema/harbour.json?q=cargo+per+port",
                              headers=ines)).json()["search"]
    assert "voyages" in [t["name"] for t in found["tables"]]
    other = await client.get("/schema/ledger.json", headers=ines)
    assert other.status_code == 403 and "'ledger' is not open to user 'ines'" in \
        other.json()["error"]


async def test_sql_a_person_writes_runs_through_the_guard_and_downloads(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    ines, tomas = bearer(harbour, "ines"), bearer(harbour, "tomas")
    response = await client.post("/sql", headers=ines, data={
        "db_id": "harbour", "sql": "SELECT name, built_year FROM vessels ORDER BY built_year"})
    result = json.loads(response.text.splitlines()[-1])["result"]
    assert result["row_count"] == 5 and result["result"]["rows"][0] == ["Lanterna", "2001"]
    download = await client.get(f"/download/{result['csv_file']}", headers=ines)
    assert download.status_code == 200 and download.text.startswith("name,built_year")
    # Numbers as every face writes them, right-aligned; the download keeps the exact text.
    sums = await client.post("/sql", headers=ines, data={
        "db_id": "harbour", "sql": "SELECT 'sum' AS what, 0.1 + 0.2 AS total, 2.50 AS price"})
    summed = json.loads(sums.text.splitlines()[-1])
    assert summed["result"]["result"]["rows"] == [["sum", "0.3", "2.5"]]
    assert summed["result"]["result"]["numeric"] == [False, True, True]
    assert '<td class="num">0.3</td>' in summed["html"] and "<td>sum</td>" in summed["html"]
    exact = await client.get(f"/download/{summed['result']['csv_file']}", headers=ines)
    assert exact.text.splitlines()[1] == "sum,0.30000000000000004,2.5"
    # No rows for a misspelt value: the page says which value the column holds.
    empty = json.loads((await client.post("/sql", headers=ines, data={
        "db_id": "harbour", "sql": "SELECT name FROM ports WHERE country = 'Malte'"}
    )).text.splitlines()[-1])
    assert empty["result"]["hint"].endswith("did you mean 'Malta'?")
    assert "<p class=\"note\">&#39;Malte&#39; is not a value of ports.country" in empty["html"]
    theirs = await client.get(f"/download/{result['csv_file']}", headers=tomas)
    assert theirs.status_code == 404  # another user's results folder
    refused = await client.post("/sql", headers=ines, data={"db_id": "harbour",
                                                            "sql": "DELETE FROM vessels"})
    last = json.loads(refused.text.splitlines()[-1])
    assert last["event"] == "error" and "read-only" in last["error"] and last["status"] == 400
    other = await client.post("/sql", headers=ines, data={"db_id": "ledger",
                                                          "sql": "SELECT 1"})
    assert json.loads(other.text.splitlines()[-1])["status"] == 403
    flush_all()
    records = Store(harbour["configs"].data_dir).audit.read()
    web = [(r.user, r.tool, r.outcome) for r in records if r.face == "web"]
    assert ("ines", "db_execute_sql", "ok") in web and ("ines", "csv_download", "ok") in web
    assert ("ines", "db_execute_sql", "refused") in web


async def test_without_a_model_the_page_says_how_to_configure_one(
        harbour: dict[str, Any]) -> None:
    app = build_app(harbour["config"], workspace=harbour["workspace"])
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                  base_url="http://127.0.0.1") as client:
        ines = bearer(harbour, "ines")
        page = await client.get("/", headers=ines)
        assert "No model configured: pass --model" in page.text
        assert '<button type="submit" disabled>Ask</button>' in page.text
        events = await ask(client, ines, FLEET)
        assert events[-1]["event"] == "error" and "set NL2SQL_MODEL" in events[-1]["error"]
        ran = await client.post("/sql", headers=ines, data={"db_id": "harbour",
                                                            "sql": "SELECT count(*) FROM ports"})
        assert json.loads(ran.text.splitlines()[-1])["result"]["row_count"] == 1
        assert (await client.get("/schema/harbour.json", headers=ines)).status_code == 200


async def test_every_page_is_sent_with_a_policy_that_allows_only_this_server(
        client: httpx2.AsyncClient, harbour: dict[str, Any]) -> None:
    page = await client.get("/signin")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    script = await client.get("/static/app.js")
    assert script.status_code == 200 and "fetch(" in script.text
    assert (await client.get("/static/app.css")).status_code == 200
    evil = await client.get("/signin", headers={"Host": "evil.example"})
    assert evil.status_code == 421  # the DNS-rebinding check of nl2sql-mcp
