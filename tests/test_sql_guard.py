"""Parser layer of the read-only guard, driven by the shared corpus in guard_corpus.py."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import psycopg
import pytest
from conftest import PG_HOST, PG_PORT, PG_USER
from guard_corpus import ALLOWED, DENIED, DIALECTS, EFFECTS, SCHEMA, AllowedCase, Case, cases_for
from sqlglot import exp

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import (
    DENIED_FUNCTION_PREFIXES,
    DENIED_FUNCTIONS,
    ValidatedQuery,
    is_denied_function,
    validate_read_only,
)


def _expand(cases: list) -> list:
    return [pytest.param(dialect, case, id=f"{dialect}:{case.id}")
            for dialect in DIALECTS for case in cases_for(dialect, cases)]


def _rejection(sql: str, dialect: str) -> str:
    with pytest.raises(QueryRejectedError) as caught:
        validate_read_only(sql, dialect)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message
    assert caught.value.model_fixable
    return message


# -- the corpus ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("dialect", "case"), _expand(DENIED))
def test_denied_case_is_rejected_with_its_reason(dialect: str, case: Case) -> None:
    message = _rejection(case.sql, dialect)
    assert case.reason in message


@pytest.mark.parametrize(("dialect", "case"), _expand(ALLOWED))
def test_allowed_case_is_accepted(dialect: str, case: AllowedCase) -> None:
    validated = validate_read_only(case.sql, dialect)
    assert isinstance(validated, ValidatedQuery)
    assert isinstance(validated.expression, exp.Expr)
    assert validated.statement_type == case.statement_type
    assert validated.is_explain == (case.statement_type == "explain")
    # The text is the caller's, never re-rendered: at most trailing ; / whitespace / comments go.
    assert case.sql.startswith(validated.sql)
    assert validated.sql == validated.sql.rstrip(" \t\r\n;")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_corpus_is_large_and_well_formed(dialect: str) -> None:
    denied, allowed = cases_for(dialect), cases_for(dialect, ALLOWED)
    assert len(denied) >= 60 and len(allowed) >= 30
    assert {case.effect for case in denied} <= set(EFFECTS)
    assert len({case.sql for case in denied}) == len(denied), "duplicate denied cases"
    assert not {c.sql for c in denied} & {c.sql for c in allowed}


# -- the deny list ------------------------------------------------------------------------------

def _spellings(name: str, dialect: str) -> list[str]:
    forms = [f"SELECT {name}(1)", f'SELECT "{name}"(1)', f"SELECT {name.upper()}(1)",
             f"SELECT * FROM {name}(1)", f"SELECT a FROM t WHERE {name}(1) IS NULL"]
    if dialect == "postgres":
        forms += [f"SELECT pg_catalog.{name}(1)", f'SELECT "pg_catalog"."{name}"(1)',
                  f"SELECT * FROM pg_catalog.{name}(1)", f"SELECT (1).{name}",
                  f'SELECT (1)."{name}"', f"SELECT t.{name} FROM t"]
    return forms


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_denied_function_is_caught_however_written(dialect: str) -> None:
    names = sorted(DENIED_FUNCTIONS[dialect])
    assert names
    for name in names:
        for sql in _spellings(name, dialect):
            assert f"Function {name} is not allowed" in _rejection(sql, dialect), sql


def test_is_denied_function_matches_names_prefixes_and_qualified_names() -> None:
    assert is_denied_function("PG_SLEEP", "postgres")
    assert is_denied_function('pg_catalog."pg_sleep"', "postgres")
    assert is_denied_function("pg_advisory_xact_lock_shared", "postgres")
    assert is_denied_function("lo_something_new", "postgres")  # by prefix
    assert is_denied_function("load_extension", "sqlite")
    assert not is_denied_function("load_extension", "postgres")
    assert not is_denied_function("pg_sleep", "sqlite")
    assert is_denied_function("pg_sleep", "tsql") and is_denied_function("readfile", "tsql")
    for harmless in ("now", "count", "current_setting", "currval", "generate_series", "lower"):
        assert not is_denied_function(harmless, "postgres"), harmless
    assert all(p == p.lower() for p in DENIED_FUNCTION_PREFIXES["postgres"])
    assert all(n == n.lower() for names in DENIED_FUNCTIONS.values() for n in names)


def _deny_list_script():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "postgres_deny_list.py"
    spec = importlib.util.spec_from_file_location("postgres_deny_list", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.postgres
def test_postgres_deny_list_covers_the_catalogue_classes(pg_server: str) -> None:
    """Every function the catalogue query classes as changing state or running SQL on this
    server is denied; the generated list is current (else: rerun the script it names)."""
    script = _deny_list_script()
    with psycopg.connect(pg_server) as conn:
        found = script.catalogue_classes(conn)
    missing = sorted(name for name in found if not is_denied_function(name, "postgres"))
    assert not missing, f"rerun scripts/postgres_deny_list.py; not denied: {missing}"
    for name in ("gin_clean_pending_list", "brin_summarize_new_values", "brin_summarize_range",
                 "brin_desummarize_range", "setseed", "nextval", "set_config", "lo_import"):
        assert found[name][0] == "changes_state", name
    for name in ("ts_rewrite", "ts_stat", "query_to_xml", "cursor_to_xml", "table_to_xml",
                 "database_to_xml"):
        assert found[name][0] == "runs_sql", name
    for harmless in ("random", "currval", "pg_get_viewdef", "now", "clock_timestamp",
                     "gen_random_uuid", "to_tsquery", "txid_current_if_assigned"):
        assert harmless not in found and not is_denied_function(harmless, "postgres")


# -- messages and returned text -----------------------------------------------------------------

def test_syntax_error_names_line_and_column() -> None:
    message = _rejection("SELECT a,\n  FROM ((", "postgres")
    assert message.startswith("SQL syntax error at line 2, column ")
    assert message.endswith("fix the SQL and retry.")
    assert "TokenType" not in message


def test_unterminated_string_names_line_and_column() -> None:
    message = _rejection("SELECT 1,\n 'abc", "sqlite")
    assert re.match(r"SQL syntax error at line 2, column \d+: unterminated", message)


def test_explain_syntax_error_keeps_original_positions() -> None:
    message = _rejection("EXPLAIN (FORMAT JSON)\nSELECT a,\n  FROM ((", "postgres")
    assert "at line 3, column " in message


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT 1; DELETE FROM t",
     "Only one statement per query is allowed; send the statements one at a time."),
    ("INSERT INTO t VALUES (1)",
     "Only read-only queries are allowed: INSERT is a write; write a SELECT instead."),
    ("SELECT pg_sleep(1)", "Function pg_sleep is not allowed (it has side effects); remove it."),
    ("SELECT pg_read_file('/etc/passwd')", "Function pg_read_file is not allowed (it reads or "
     "writes files on the database server); remove it."),
    ("SELECT pg_read_binary_file_x('/etc/passwd')", "Function pg_read_binary_file_x is not "
     "allowed (it reads or writes files on the database server); remove it."),  # by prefix
])
def test_messages_say_what_to_do(sql: str, message: str) -> None:
    assert _rejection(sql, "postgres") == message


@pytest.mark.parametrize(("sql", "dialect", "fragment"), [
    ("SELECT readfile('/etc/passwd')", "sqlite", "(it reads or writes files"),
    ("SELECT LOAD_FILE('/etc/passwd')", "mysql", "(it reads or writes files"),
    ("SELECT * FROM read_csv('/etc/passwd')", "duckdb", "(it reads or writes files"),
    ("SELECT a FROM t INTO OUTFILE '/tmp/x'", "mysql", "INTO OUTFILE/DUMPFILE writes a file"),
    ("SELECT a INTO DUMPFILE '/tmp/x' FROM t", "mysql", "INTO OUTFILE/DUMPFILE writes a file"),
])
def test_file_access_is_refused_as_file_access(sql: str, dialect: str, fragment: str) -> None:
    """Not "side effects", not a syntax error: the reason a person or model can act on."""
    message = _rejection(sql, dialect)
    assert fragment in message and "syntax error" not in message and "side effects" not in message


@pytest.mark.parametrize("dialect", ["postgres", "sqlite", "mysql", "duckdb", "spark"])
def test_text_that_is_not_unicode_is_refused_in_every_dialect(dialect: str) -> None:
    """A lone surrogate (an undecodable byte of a command line, or a Python caller's string)
    cannot reach any driver: refused first, naming the character, in every dialect."""
    for sql in ("SELECT 'caf\udce9'", "SELECT 1 -- \ud800", "SELECT \"\udfff\" FROM t"):
        message = _rejection(sql, dialect)
        assert "lone surrogate" in message and "U+D" in message, message


@pytest.mark.parametrize(("raw", "expected"), [
    ("SELECT 1", "SELECT 1"),
    ("  SELECT  a\n FROM t ;\n\n", "  SELECT  a\n FROM t"),
    ("SELECT 1;;", "SELECT 1"),
    ("SELECT 'a;' -- c", "SELECT 'a;' -- c"),
    ("select /* x */ 1 ; -- trailing\n", "select /* x */ 1"),
    ("EXPLAIN SELECT 1;\n", "EXPLAIN SELECT 1"),
])
def test_sql_is_the_callers_text_minus_trailing_semicolons(raw: str, expected: str) -> None:
    assert validate_read_only(raw, "postgres").sql == expected
    assert validate_read_only(raw, "sqlite").sql == expected


def test_explain_returns_the_explained_query() -> None:
    validated = validate_read_only("EXPLAIN (FORMAT JSON) SELECT a FROM t UNION SELECT 2",
                                   "postgres")
    assert validated.is_explain and validated.statement_type == "explain"
    assert isinstance(validated.expression, exp.Union)


def test_other_sqlglot_dialects_are_accepted_with_every_deny_list() -> None:
    assert validate_read_only("SELECT 1", "mysql").statement_type == "select"
    assert "load_extension" in _rejection("SELECT load_extension('x')", "tsql")
    with pytest.raises(ValueError):
        validate_read_only("SELECT 1", "no_such_dialect")


def test_deeply_nested_query_is_refused_not_crashed() -> None:
    # sqlglot's recursive parser needs ~20 frames per parenthesis: extreme nesting is refused.
    message = _rejection("SELECT " + "(" * 5000 + "1" + ")" * 5000, "postgres")
    assert "nested too deeply" in message
    nested = "SELECT a FROM t"
    for _ in range(30):
        nested = f"SELECT a FROM ({nested}) AS s"
    assert validate_read_only(nested, "postgres").statement_type == "select"


# -- allowed cases are real SQL: they run on real databases -------------------------------------

def test_allowed_cases_run_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "corpus.db"
    with sqlite3.connect(path) as setup:
        setup.executescript(SCHEMA["sqlite"])
    setup.close()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for case in cases_for("sqlite", ALLOWED):
            sql = validate_read_only(case.sql, "sqlite").sql
            db.execute(sql).fetchall()
    finally:
        db.close()


@pytest.mark.postgres
def test_allowed_cases_run_on_postgres(pg_database) -> None:
    dbname = pg_database(script=SCHEMA["postgres"])
    dsn = f"host={PG_HOST} port={PG_PORT} user={PG_USER} dbname={dbname}"
    with psycopg.connect(dsn) as conn:
        for case in cases_for("postgres", ALLOWED):
            sql = validate_read_only(case.sql, "postgres").sql
            conn.execute("BEGIN READ ONLY")
            try:
                conn.execute(sql).fetchall()
            except psycopg.Error as error:
                pytest.fail(f"{case.sql!r} failed on Postgres: {error}")
            finally:
                conn.rollback()


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_incomplete_clause_message_names_the_clause_not_a_parser_class(dialect):
    with pytest.raises(QueryRejectedError) as info:
        validate_read_only("SELECT * FROM books WHERE", dialect)
    message = str(info.value)
    assert "the WHERE part is incomplete" in message and "<class" not in message
    assert message.startswith("SQL syntax error at line 1")
