"""The page in a real browser: ``nl2sql-web`` as a process (the scripted model behind the
OpenAI-compatible stub, five candidates), driven by Playwright through Debian's headless
Chromium. One server, one browser and one harbour site (SQLite and PostgreSQL databases that
are not in the repository, users, an identity provider) for the whole module; each test signs
in in browser contexts of its own. Every request the browser makes is checked to stay on
127.0.0.1 (anything else is aborted and fails the test).

``WEB_SCREENSHOT=docs/img/web.png`` writes the screenshot of docs/web.md (an answer on the
bundled bookstore)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from identity_provider import identity_provider
from stub_openai import MODEL_STRING, StubOpenAI
from mcp_processes import start_serving
from team_servers import call
from test_cancelled_queries import _pg_busy
from test_stopping_signals import _wait
from web_harbour import (BUSIEST, ENDLESS_QUESTION, FLEET, FOLLOW_UP, GENRES, GENRES_SQL,
                         PORTS, CandidateSql, annotate, harbour_script, stub_responder, write_config)

from conftest import (PG_HOST, PG_PORT, PG_USER, _create_database, _drop_database,
                      run_pg_script, stop_process)
from nl2sql.access.users import add_user
from nl2sql.config.bundled import bookstore_script_path
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.store.store import Store

playwright_api = pytest.importorskip("playwright.sync_api")
#: How long a step may take, for actions (the context's default) and for ``expect`` (whose own
#: default is 5 s): a loaded 2-core CI machine took longer than 5 s to start the query.
STEP_MS = 30_000
pytestmark = pytest.mark.slow

NL2SQL_WEB = Path(sys.executable).parent / "nl2sql-web"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1"}


class Site:
    def __init__(self, url: str, tokens: dict[str, str], idp: Any, data_dir: Path,
                 pg_dbname: str) -> None:
        self.url, self.tokens, self.idp = url, tokens, idp
        self.data_dir, self.pg_dbname = data_dir, pg_dbname


@pytest.fixture(scope="module")
def site(pg_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("harbour-site")
    with sqlite3.connect(folder / "harbour.db") as db:
        db.executescript(harbour_script())
    pg_dbname = f"nl2sql_web_{uuid.uuid4().hex[:10]}"
    _create_database(pg_dbname)
    script = CandidateSql()
    try:
        run_pg_script(pg_dbname, harbour_script())
        with identity_provider() as idp, StubOpenAI(responder=stub_responder(script)) as stub:
            config = write_config(folder, {
                "harbour": {"type": "sqlite", "path": "harbour.db"},
                "harbour_pg": {"type": "postgres", "host": PG_HOST, "port": PG_PORT,
                               "user": PG_USER, "dbname": pg_dbname}},
                crew=["harbour", "harbour_pg"], server={"oidc": idp.oidc_settings()})
            configs = DbConnectionConfigs.load(config, workspace=folder / "ws")
            annotate(configs)
            tokens = {"ines": add_user(configs, "ines", ["crew"]),
                      "tomas": add_user(configs, "tomas", ["harbourmasters"])}
            env = {**os.environ, **stub.env(), "NL2SQL_MODEL": MODEL_STRING,
                   "XDG_DATA_HOME": str(folder / "xdg")}
            for name in ("NL2SQL_CONFIG", "NL2SQL_DATA_DIR", "NL2SQL_WORKSPACE"):
                env.pop(name, None)
            process, url = start_serving(
                [str(NL2SQL_WEB), "--port", "0", "--config", str(config), "--workspace",
                 str(folder / "ws")], env, says="nl2sql-web: http://")
            try:
                yield Site(url, tokens, idp, configs.data_dir, pg_dbname)
            finally:
                stop_process(process)
    finally:
        _drop_database(pg_dbname)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        reason = "Debian's chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    playwright_api.expect.set_options(timeout=STEP_MS)
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
    playwright_api.expect.set_options(timeout=None)  # back to Playwright's own default


@pytest.fixture
def open_page(browser: Any, site: Site) -> Iterator[Callable[..., Any]]:
    """A page in a browser context of its own (its own cookies); every request it makes must
    go to 127.0.0.1: others are aborted and fail the test (and the guard must have seen the
    page's own requests, so an empty list is not a guard that never ran)."""
    contexts, outside, local = [], [], []

    def guard(route: Any) -> None:
        url = route.request.url
        if url.startswith(("data:", "about:")) or urlsplit(url).hostname in LOCAL_HOSTS:
            local.append(url)
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    def make(**options: Any) -> Any:
        context = browser.new_context(**options)
        context.set_default_timeout(STEP_MS)
        context.route("**/*", guard)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
    assert outside == [], f"requests left the machine: {outside}"
    assert not contexts or any(url.endswith("/static/app.js") for url in local)


def sign_in(page: Any, site: Site, token: str) -> None:
    page.goto(site.url)
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()


def ask(page: Any, question: str, db_id: str | None = None) -> Any:
    """Ask on the page; the answer's article once its SQL is shown."""
    before = page.locator("article.answer").count()
    if db_id:
        page.get_by_label("Database").select_option(db_id)
    page.get_by_label("Question").fill(question)
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("article.answer").nth(before)
    answer.locator(".sql code").wait_for()
    return answer


def test_sign_in_ask_and_the_history_is_there_after_a_reload(open_page: Any,
                                                             site: Site) -> None:
    expect = playwright_api.expect
    page = open_page(viewport={"width": 1200, "height": 1250})
    sign_in(page, site, site.tokens["ines"])
    expect(page.get_by_text("Signed in as")).to_contain_text("ines")
    answer = ask(page, BUSIEST, "harbour")
    expect(answer.locator(".sql code")).to_contain_text("sum(v.cargo_tonnes) AS tonnes")
    rows = answer.get_by_role("table", name="Result rows")
    expect(rows.get_by_role("row").nth(1)).to_contain_text("Piraeus")
    chart = answer.get_by_role("img")
    expect(chart).to_have_attribute("alt", __import__("re").compile(r"^Bar chart"))
    assert chart.evaluate("img => img.naturalWidth") > 100  # the PNG decoded
    expect(answer.get_by_text("Confidence 80%")).to_be_visible()
    answer.get_by_text("Confidence: 4 of 5 candidates agree").click()
    expect(answer.get_by_role("table", name="The candidates, grouped by the result they "
                                          "gave").get_by_role("row")).to_have_count(6)
    assert "/c/" in page.url
    follow = ask(page, FOLLOW_UP)
    expect(follow.locator(".sql code")).to_contain_text("2025-01-01")
    history = page.locator("aside.history")  # the new conversation is listed at once, once
    expect(history.get_by_role("link", name=BUSIEST)).to_have_attribute(
        "href", urlsplit(page.url).path)
    expect(history).not_to_contain_text("No questions yet")

    page.reload()
    expect(page.locator("article.answer h2")).to_have_text([BUSIEST, FOLLOW_UP])
    expect(page.locator("aside.history")).to_contain_text(BUSIEST)
    conversation = page.url

    other = open_page()  # a second user sees none of it
    sign_in(other, site, site.tokens["tomas"])
    expect(other.locator("aside.history")).not_to_contain_text(BUSIEST)
    other.goto(conversation)
    expect(other.get_by_role("alert")).to_contain_text("You have no conversation")
    expect(other.locator("article.answer")).to_have_count(0)


def test_an_answer_on_the_bundled_bookstore_for_the_docs_screenshot(open_page: Any, site: Site,
                                                                    tmp_path: Path) -> None:
    """docs/img/web.png: a curator asks the bundled sample; the rows are the bookstore's own
    (read here with its script), five candidates behind 80%; the picture stays small."""
    expect = playwright_api.expect
    with sqlite3.connect(":memory:") as db:
        db.executescript(bookstore_script_path().read_text(encoding="utf-8"))
        top = db.execute(GENRES_SQL).fetchall()
    page = open_page(viewport={"width": 1100, "height": 1200})
    sign_in(page, site, site.tokens["tomas"])
    answer = ask(page, GENRES, "bookstore")
    rows = answer.get_by_role("table", name="Result rows").get_by_role("row")
    expect(rows).to_have_count(1 + len(top))
    expect(rows.nth(1)).to_contain_text(f"{top[0][0]}{top[0][1]}")
    chart = answer.get_by_role("img")
    expect(chart).to_have_attribute("alt", __import__("re").compile(r"^Bar chart"))
    assert chart.evaluate("img => img.naturalWidth") > 100
    expect(answer.get_by_text("Confidence 80%")).to_be_visible()
    expect(answer.get_by_role("button", name="Accept")).to_be_enabled()
    shot = tmp_path / "web.png"
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(shot))
    assert 20_000 < shot.stat().st_size < 200_000
    if os.environ.get("WEB_SCREENSHOT"):
        Path(os.environ["WEB_SCREENSHOT"]).write_bytes(shot.read_bytes())


def test_only_a_curator_has_an_enabled_accept_and_then_the_answer_is_verified(
        open_page: Any, site: Site) -> None:
    expect = playwright_api.expect
    crew = open_page()
    sign_in(crew, site, site.tokens["ines"])
    answer = ask(crew, FLEET, "harbour")
    expect(answer.get_by_role("button", name="Accept")).to_be_disabled()
    answer.get_by_role("button", name="Propose").click()
    expect(answer.get_by_text("Proposed by ines")).to_be_visible()

    master = open_page()
    sign_in(master, site, site.tokens["tomas"])
    master.get_by_role("link", name="Proposals").click()
    proposal = master.locator("li.answer", has_text=FLEET)
    expect(proposal.get_by_role("button", name="Accept")).to_be_enabled()
    proposal.get_by_role("button", name="Accept").click()
    expect(proposal.get_by_text("Verified by tomas")).to_be_visible()

    crew.goto(site.url)  # a new conversation: the same question is now served verified
    again = ask(crew, FLEET, "harbour")
    expect(again.get_by_text("Verified answer", exact=True)).to_be_visible()
    expect(again.get_by_role("button", name="Accept")).to_have_count(0)


def test_the_schema_page_and_an_answer_on_a_phone(open_page: Any, site: Site) -> None:
    expect = playwright_api.expect
    page = open_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    sign_in(page, site, site.tokens["ines"])
    page.get_by_role("link", name="Schema").click()
    expect(page.get_by_role("link", name="harbour_pg")).to_be_visible()
    page.get_by_role("link", name="harbour", exact=True).click()
    metrics = page.get_by_role("table", name="Governed metrics (computed the same way for "
                                             "everyone)")
    expect(metrics).to_contain_text("cargo_tonnage")
    expect(metrics).to_contain_text("voyages_sailed")
    page.locator("summary", has_text="ports").click()
    expect(page.get_by_role("table", name="Sample rows of ports")).to_contain_text("Valletta")
    expect(page.locator("details.table-info summary")).to_have_count(3)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll
    page.get_by_role("link", name="Ask").click()  # an answer fits too: SQL, chart, rows
    answer = ask(page, FLEET, "harbour")
    expect(answer.get_by_role("img")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_wrong_and_expired_tokens_are_refused_and_the_providers_jwt_signs_in(
        open_page: Any, site: Site) -> None:
    expect = playwright_api.expect
    page = open_page()
    page.goto(site.url)
    page.get_by_label("Token").focus()  # by keyboard: type and press Enter
    page.keyboard.type("nl2sql_this-is-not-a-token")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("That token was refused")
    sign_in(page, site, site.idp.token("maria", ["crew"], lifetime=-120))  # expired
    expect(page.get_by_role("alert")).to_contain_text("That token was refused")
    expect(page.get_by_label("Question")).to_have_count(0)
    sign_in(page, site, site.idp.token("maria", ["crew"]))
    expect(page.get_by_text("Signed in as")).to_contain_text("maria")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Token")).to_be_visible()


@pytest.mark.postgres
def test_stop_stops_the_running_query_on_postgres(open_page: Any, site: Site) -> None:
    expect = playwright_api.expect
    page = open_page()
    sign_in(page, site, site.tokens["ines"])
    page.get_by_label("Database").select_option("harbour_pg")
    page.get_by_label("Question").fill(ENDLESS_QUESTION)
    page.get_by_label("Question").press("Control+Enter")  # the keyboard asks too
    expect(page.get_by_role("status")).to_contain_text("Running the query")
    _wait(lambda: _pg_busy(site.pg_dbname) >= 1, within=30)
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_role("status")).to_contain_text("Stopped")
    stopped_in = _wait(lambda: _pg_busy(site.pg_dbname) == 0, within=5)
    assert stopped_in < 5
    def cancelled_ask() -> bool:  # written by the server's audit writer
        asks = [r for r in Store(site.data_dir).audit.read(user="ines") if r.tool == "ask"]
        return bool(asks) and asks[-1].outcome == "cancelled" and asks[-1].face == "web"

    _wait(cancelled_ask, within=10)
    answer = ask(page, FLEET, "harbour")  # the page and the server go on
    expect(answer.locator(".sql code")).to_contain_text("GROUP BY flag")


#: Roles a person operates; each needs a name a screen reader says (Chromium's own tree).
CONTROL_ROLES = {"button", "link", "textbox", "searchbox", "combobox", "checkbox", "radio",
                 "DisclosureTriangle", "menuitem", "tab", "slider", "spinbutton"}


def test_every_control_on_every_page_has_an_accessible_name(open_page: Any, site: Site) -> None:
    """The accessibility tree Chromium builds (as a screen reader gets it), on each page and
    on an answer: every control has a name."""
    page = open_page()
    sign_in(page, site, site.tokens["tomas"])
    ask(page, FLEET, "harbour")
    cdp = page.context.new_cdp_session(page)
    unnamed: dict[str, list[str]] = {}
    for path in ("", "/schema", "/schema/harbour", "/saved", "/history", "/proposals", "/sql"):
        if path:
            page.goto(site.url.rstrip("/") + path)
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
        controls = [n for n in nodes if not n.get("ignored")
                    and n.get("role", {}).get("value") in CONTROL_ROLES]
        assert controls, f"no controls found on {path or '/'}"
        nameless = [f"{n['role']['value']} #{n.get('backendDOMNodeId')}" for n in controls
                    if not str(n.get("name", {}).get("value", "")).strip()]
        if nameless:
            unnamed[path or "/"] = nameless
    assert unnamed == {}


def test_sql_a_person_writes_runs_by_keyboard_and_the_guard_refuses_a_write(
        open_page: Any, site: Site) -> None:
    expect = playwright_api.expect
    page = open_page()
    sign_in(page, site, site.tokens["ines"])
    page.get_by_role("link", name="SQL").click()
    page.get_by_label("Database").select_option("harbour")
    sql = page.get_by_label("SQL", exact=True)
    sql.fill("SELECT name, country FROM ports WHERE country LIKE 'M%' ORDER BY name")
    sql.press("Control+Enter")
    rows = page.get_by_role("table", name="Result rows").get_by_role("row")
    expect(rows).to_have_count(3)  # the header, Malta's and Morocco's ports
    expect(rows.nth(1)).to_contain_text("Tangier")
    expect(rows.nth(2)).to_contain_text("Valletta")
    sql.fill("DELETE FROM ports")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_role("alert")).to_contain_text("read-only")
    sql.fill("SELECT count(*) AS ports FROM ports")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_role("table", name="Result rows").get_by_role("row").nth(1)).to_have_text(
        str(len(PORTS)))


def test_the_controls_wait_for_the_script(open_page: Any, site: Site) -> None:
    """Until app.js runs, Enter in the question and a click on Ask would do nothing (or post the
    form and show raw JSON lines): those controls come disabled and the script enables them.
    (On a loaded machine the browser tests typed before the script ran.)"""
    expect = playwright_api.expect
    page = open_page()
    page.goto(site.url)
    held: list[Any] = []
    page.route("**/static/app.js", lambda route: held.append(route))
    page.get_by_label("Token").fill(site.tokens["ines"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as")).to_contain_text("ines")
    expect(page.get_by_label("Question")).to_be_disabled()
    expect(page.get_by_role("button", name="Ask")).to_be_disabled()
    assert len(held) == 1
    held[0].continue_()
    expect(page.get_by_label("Question")).to_be_editable()
    expect(page.get_by_role("button", name="Ask")).to_be_enabled()


def test_the_mcp_endpoint_serves_the_same_users(site: Site) -> None:
    """A real MCP client at /mcp of the page's process, with a user's token (in a thread of
    its own: Playwright's loop runs in this one)."""
    mcp = site.url.rstrip("/") + "/mcp"

    async def calls() -> tuple[tuple[bool, str], tuple[bool, str]]:
        return (await call(mcp, site.tokens["ines"], "db_list"),
                await call(mcp, site.tokens["ines"], "db_execute_sql", db_id="bookstore",
                           query="SELECT 1"))

    with ThreadPoolExecutor(1) as pool:
        (failed, listed), (refused, message) = pool.submit(asyncio.run, calls()).result(60)
    assert not failed and "harbour_pg" in listed and "bookstore" not in listed
    assert refused and "not open to user 'ines'" in message
