"""PostgreSQL reaches a user-defined function without its name: through an operator (spelled,
``OPERATOR(schema.op)``, or implied by IN, BETWEEN, LIKE, CASE x WHEN, NULLIF, IS DISTINCT FROM,
JOIN USING, NATURAL JOIN), a cast (explicit, or implicit on a column of a user type, also
through a view) or a domain's CHECK. Each probe is refused with the guard on and writes no row
(the function writes one through dblink as its owner); with the guard off the same text writes
the row, so the route is real. A database without such operators and casts is not affected, and
``allowed_functions`` lets them run."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from conftest import pg_config
from test_user_functions import _operations, _rows

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import validate_read_only
from nl2sql.sql_guard.implicit_calls import NO_IMPLICIT_CALLS, ImplicitCalls, operators_in
from nl2sql.sql_guard.user_functions import UserFunctions, check_user_functions

LOG_HIT = """
CREATE EXTENSION dblink;
CREATE TABLE hits (n int);
CREATE FUNCTION public.log_hit() RETURNS int LANGUAGE sql SECURITY DEFINER AS $$
  SELECT length(dblink_exec('host=127.0.0.1 port=5432 user=postgres dbname='
                            || current_database(), 'INSERT INTO hits VALUES (1)')) $$;
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE TABLE feelings (id int, m mood, note text);
INSERT INTO feelings VALUES (1, 'sad', 'a'), (2, 'happy', 'b');
CREATE TABLE plain (id int, name text);
INSERT INTO plain VALUES (1, 'a');
"""
# Operators whose functions write a row: one on built-in types, and ones on a user enum that
# shadow the operators PostgreSQL picks for IN, BETWEEN, LIKE, CASE, JOIN USING...
OPERATORS = LOG_HIT + """
CREATE FUNCTION text_plus(a text, b text) RETURNS text LANGUAGE sql AS
  $$ SELECT a || b || log_hit() $$;
CREATE OPERATOR public.+ (leftarg = text, rightarg = text, function = text_plus);
CREATE FUNCTION mood_eq(a mood, b mood) RETURNS bool LANGUAGE sql AS
  $$ SELECT log_hit() > 0 AND a::text = b::text $$;
CREATE OPERATOR public.= (leftarg = mood, rightarg = mood, function = mood_eq);
CREATE FUNCTION mood_ge(a mood, b mood) RETURNS bool LANGUAGE sql AS $$ SELECT log_hit() > 0 $$;
CREATE OPERATOR public.>= (leftarg = mood, rightarg = mood, function = mood_ge);
CREATE FUNCTION mood_like(a mood, b text) RETURNS bool LANGUAGE sql AS
  $$ SELECT log_hit() > 0 AND a::text LIKE b $$;
CREATE OPERATOR public.~~ (leftarg = mood, rightarg = text, function = mood_like);
"""
OPERATOR_PROBES = {
    "SELECT 'a'::text + 'b'": "text_plus",
    "SELECT note + note FROM feelings": "text_plus",
    "SELECT note OPERATOR(public.+) 'x' FROM feelings": "text_plus",
    "SELECT 'a'::text+/* c */'b'": "text_plus",
    "SELECT id FROM feelings WHERE m = 'sad'": "mood_eq",
    "SELECT id FROM feelings WHERE m OPERATOR(public.=) 'sad'": "mood_eq",
    "SELECT id FROM feelings WHERE m IN ('sad', 'happy')": "mood_eq",
    "SELECT id FROM feelings WHERE m = ANY (ARRAY['sad'::mood])": "mood_eq",
    "SELECT CASE m WHEN 'sad' THEN 1 ELSE 0 END FROM feelings": "mood_eq",
    "SELECT NULLIF(m, 'sad') FROM feelings": "mood_eq",
    "SELECT m IS DISTINCT FROM 'sad' FROM feelings": "mood_eq",
    "SELECT a.id FROM feelings a JOIN feelings b USING (m)": "mood_eq",
    "SELECT * FROM (SELECT m FROM feelings) a NATURAL JOIN (SELECT m FROM feelings) b": "mood_eq",
    "SELECT id FROM feelings WHERE m BETWEEN 'sad' AND 'happy'": "mood_ge",
    "SELECT id FROM feelings WHERE m LIKE 's%'": "mood_like",
}
# A cast and a domain whose functions write a row.
CASTS = LOG_HIT + """
CREATE FUNCTION mood_text(m mood) RETURNS text LANGUAGE sql AS $$ SELECT 'mood' || log_hit() $$;
CREATE CAST (mood AS text) WITH FUNCTION mood_text(mood) AS IMPLICIT;
CREATE DOMAIN positive AS int CHECK (log_hit() > 0 AND VALUE > 0);
CREATE VIEW feelings_view AS SELECT id, m FROM feelings;
"""
CAST_PROBES = {
    "SELECT 'sad'::mood::text": "the cast from mood to text",
    "SELECT CAST(m AS text) FROM feelings": "the cast from mood to text",
    "SELECT length(m) FROM feelings": "the cast from mood to text",  # implicit, on a column
    "SELECT upper(m) FROM feelings_view": "the cast from mood to text",  # ... through a view
    "SELECT 1::positive": "the check of the domain positive",
    "SELECT CAST(2 AS public.positive)": "the check of the domain positive",
}


def _database(pg_database: Callable[..., str], script: str) -> tuple[str, Callable[[], int]]:
    dbname = pg_database(script=script)

    def hits() -> int:
        with psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={dbname}") as c:
            return c.execute("SELECT count(*) FROM hits").fetchone()[0]

    return dbname, hits


@pytest.fixture
def pg_operators(pg_database) -> Iterator[tuple[str, Any]]:  # noqa: ANN001
    yield _database(pg_database, OPERATORS)


@pytest.fixture
def pg_casts(pg_database) -> Iterator[tuple[str, Any]]:  # noqa: ANN001
    yield _database(pg_database, CASTS)


def _refused_then_runs_without_guard(dbname: str, hits: Callable[[], int], sql: str,
                                     message: str) -> None:
    connection, ops = _operations(pg_config("pgop", dbname))
    try:
        with pytest.raises(QueryRejectedError, match=message) as refused:
            _rows(ops, sql)
        assert "allowed_functions for database 'pgop'" in refused.value.message
        assert "\n" not in refused.value.message
        assert hits() == 0
        _rows(ops, sql, validate=False)  # the engine alone calls the function
        assert hits() >= 1
    finally:
        connection.dispose()


@pytest.mark.parametrize("sql", OPERATOR_PROBES)
def test_user_operator_is_refused_and_writes_nothing(pg_operators, sql: str) -> None:  # noqa: ANN001
    dbname, hits = pg_operators
    function = OPERATOR_PROBES[sql]
    _refused_then_runs_without_guard(dbname, hits, sql, f"operator .*public.{function}")


@pytest.mark.parametrize("sql", CAST_PROBES)
def test_user_cast_or_domain_is_refused_and_writes_nothing(pg_casts, sql: str) -> None:  # noqa: ANN001
    dbname, hits = pg_casts
    _refused_then_runs_without_guard(dbname, hits, sql, CAST_PROBES[sql])


def test_operators_and_casts_run_once_allowed(pg_operators, pg_casts) -> None:  # noqa: ANN001
    for (dbname, hits), probes, allowed in (
            (pg_operators, OPERATOR_PROBES, ["text_plus", "public.mood_eq", "mood_ge",
                                             "public.mood_like"]),
            (pg_casts, CAST_PROBES, ["public.mood_text", "log_hit"])):
        connection, ops = _operations(pg_config("pgop", dbname, allowed_functions=allowed))
        try:
            for sql in probes:
                assert _rows(ops, sql) >= 1
            assert hits() >= 1
        finally:
            connection.dispose()
    dbname, _hits = pg_operators  # one function allowed is not the others
    connection, ops = _operations(pg_config("pgop", dbname, allowed_functions=["text_plus"]))
    try:
        with pytest.raises(QueryRejectedError, match="mood_eq"):
            _rows(ops, "SELECT note + note FROM feelings WHERE m IN ('sad')")
    finally:
        connection.dispose()


def test_tables_without_such_types_and_other_operators_still_run(pg_operators, pg_casts) -> None:  # noqa: ANN001
    """Only what could reach the functions is refused: the casts database's plain table with
    every operator, the operators database's queries that spell none of its operators."""
    connection, ops = _operations(pg_config("pgop", pg_casts[0]))
    try:
        assert _rows(ops, "SELECT id + 1, name || 'x', name LIKE 'a%', id IN (1, 2), "
                          "CAST(id AS text) FROM plain WHERE id BETWEEN 0 AND 5") == 1
        with pytest.raises(QueryRejectedError, match="through feelings"):
            connection.check_relation("feelings")  # samples and row lookups: the same rule
    finally:
        connection.dispose()
    connection, ops = _operations(pg_config("pgop", pg_operators[0]))
    try:
        assert _rows(ops, "SELECT id * 2, note || '+', '=' FROM feelings WHERE id < 2") == 1
        assert _rows(ops, "SELECT -id, 1 -2 FROM plain") == 1  # '-' is not the user '+'
        assert pg_operators[1]() == 0
    finally:
        connection.dispose()


def test_a_database_without_user_operators_or_casts_is_unaffected(pg_database) -> None:  # noqa: ANN001
    """Extensions' operators and casts (pg_trgm's %, citext's casts) are not user-defined:
    the catalogue read lists nothing, and the implicit-call check does not run."""
    dbname = pg_database(script="CREATE EXTENSION pg_trgm; CREATE EXTENSION citext; "
                                "CREATE TABLE t (id int, name citext); "
                                "INSERT INTO t VALUES (1, 'Ab'); "
                                "CREATE FUNCTION twice(x int) RETURNS int LANGUAGE sql "
                                "AS $$ SELECT 2 * x $$")
    connection, ops = _operations(pg_config("plain", dbname))
    try:
        catalogue = connection.user_functions()
        assert catalogue.functions == {"public.twice"}
        assert catalogue.implicit == NO_IMPLICIT_CALLS and not catalogue.implicit
        assert _rows(ops, "SELECT name % 'ab', name = 'AB', name::text, id IN (1) FROM t "
                          "WHERE name LIKE 'a%' AND id BETWEEN 0 AND 2") == 1
    finally:
        connection.dispose()


# -- the check itself ---------------------------------------------------------------------------

@pytest.mark.parametrize(("sql", "operators"), [
    ("SELECT 1 +-2", {"+", "-"}),  # a trailing + or - is its own operator...
    ("SELECT 1 ?-2", {"?-"}),  # ...unless the run holds a non-SQL operator character
    ("SELECT 1 %- 2", {"%-"}),
    ("SELECT 1 <=- 2", {"<=", "-"}),
    ("SELECT a != b, a <> b FROM t", {"<>"}),
    ("SELECT '+' || \"a+b\" FROM t -- + \n", {"||"}),
    ("SELECT 1e+5 * 2", {"*"}),
    ("SELECT $$ @@ $$ @> x FROM t", {"@>"}),
    ("SELECT 1 +/* + */+ 2", {"+"}),
    ("SELECT a OPERATOR(s.===) b FROM t", {"==="}),
])
def test_operator_names_are_read_as_postgres_lexes_them(sql: str, operators: set[str]) -> None:
    from sqlglot.dialects.dialect import Dialect

    tokens = Dialect.get_or_raise("postgres").tokenizer().tokenize(sql)
    assert operators_in(sql, tokens) == operators


def test_allowed_function_with_a_trapped_argument_type_is_refused() -> None:
    """An allowed function that takes a type with a user cast could reach the cast with a
    value of another type (an implicit cast): the cast's function must be allowed too."""
    implicit = ImplicitCalls.from_catalogue([
        ("type", "public", "mood", "public", "mood_text", "the cast from mood to text"),
        ("function type", "public", "f", "public", "mood_text", "the cast from mood to text"),
        ("implicit cast", None, None, "public", "int_text", "the cast from integer to text")])
    catalogue = UserFunctions.from_catalogue([("public", "f")], [], implicit=implicit)
    tree = validate_read_only("SELECT f('x')", "postgres")
    check_user_functions(tree.expression, catalogue, ["f"], db_id="x")  # no text: not checked
    with pytest.raises(QueryRejectedError, match="arguments or result of public.f"):
        check_user_functions(tree.expression, catalogue, ["f", "int_text"], db_id="x",
                             sql=tree.sql)
    with pytest.raises(QueryRejectedError, match="integer to text.*any query"):
        check_user_functions(tree.expression, catalogue, ["f", "mood_text"], db_id="x",
                             sql=tree.sql)
    check_user_functions(tree.expression, catalogue, ["f", "mood_text", "int_text"], db_id="x",
                         sql=tree.sql)


def test_annotation_reaches_no_user_operator_or_cast(pg_operators, pg_casts, tmp_path) -> None:  # noqa: ANN001, ANN001
    """annotate-schema reads tables too: samples, enum screening (a cast to text of each label
    column) and implied-key checks (an ``=`` between two columns of the user type) must not
    call the functions either; the other tables are annotated as before."""
    from conftest import run_pg_script

    from nl2sql.annotation.pipeline import annotate_database

    for dbname, hits in (pg_operators, pg_casts):
        run_pg_script(dbname, "CREATE TABLE moods (mood_id mood PRIMARY KEY); "
                              "INSERT INTO moods VALUES ('sad'), ('happy'); "
                              "CREATE TABLE diary (id int PRIMARY KEY, mood_id mood); "
                              "INSERT INTO diary VALUES (1, 'sad'), (2, 'happy');")
        info = annotate_database(pg_config("pgop", dbname), tmp_path / dbname).db_info
        assert hits() == 0
        assert info.table("plain").sample_data_csv
    assert not info.table("feelings").sample_data_csv  # the casts database: not sampled


# -- DuckDB: a macro named like a built-in takes its place -------------------------------------

@pytest.mark.parametrize(("sql", "macro"), [
    ("SELECT 3 - 1", "main.-"), ("SELECT 'a' LIKE 'b'", "main.~~"),
    ("SELECT 'a' || 'b'", "main.||"), ("SELECT extract(year FROM DATE '2024-01-02')",
                                       "main.date_part")])
def test_duckdb_macro_named_like_a_built_in_is_refused(tmp_path, sql: str, macro: str) -> None:  # noqa: ANN001
    """DuckDB binds operators and syntax to functions by name and a macro of that name comes
    first: the macro runs although the query names none. Refused; with the guard off the
    macro's answer (42) comes back; a query without the operator runs."""
    import duckdb
    from conftest import duckdb_config
    from test_engine_guard import KeepingRowSink

    path = tmp_path / "m.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute(f'CREATE MACRO "{macro.split(".")[1]}"(a, b) AS 42')
    connection, ops = _operations(duckdb_config("lake", path))
    try:
        with pytest.raises(QueryRejectedError, match=f"macro {re.escape(macro)}.*allowed_funct"):
            _rows(ops, sql)
        if macro != "main.date_part":  # a query without the operator runs
            assert _rows(ops, "SELECT 1 * 2") == 1
        sink = KeepingRowSink()
        ops.execute_select_query(sql, sink, validate=False)  # the engine alone: the macro
        assert sink.kept == [(42,)]
    finally:
        connection.dispose()
    name = macro.split(".")[1]
    connection, ops = _operations(duckdb_config("lake", path, allowed_functions=[name]))
    try:
        sink = KeepingRowSink()
        ops.execute_select_query(sql, sink)
        assert sink.kept == [(42,)]
    finally:
        connection.dispose()


def test_routes_created_while_running_are_known_at_the_next_call(pg_database) -> None:  # noqa: ANN001
    """The catalogue's version covers what the read depends on: a domain check added, a
    user cast created, then a table given a column of that type are each refused at once."""
    from conftest import run_pg_script

    dbname, hits = _database(pg_database, LOG_HIT)
    connection, ops = _operations(pg_config("pgop", dbname))
    try:
        assert _rows(ops, "SELECT id FROM plain") == 1
        run_pg_script(dbname, "CREATE DOMAIN positive AS int; "
                              "ALTER DOMAIN positive ADD CHECK (log_hit() > 0)")
        with pytest.raises(QueryRejectedError, match="domain positive"):
            _rows(ops, "SELECT 1::positive")
        run_pg_script(dbname, "CREATE FUNCTION mood_text(m mood) RETURNS text LANGUAGE sql "
                              "AS $$ SELECT 'mood' || log_hit() $$; "
                              "CREATE CAST (mood AS text) WITH FUNCTION mood_text(mood) "
                              "AS IMPLICIT")
        assert _rows(ops, "SELECT id FROM plain") == 1
        run_pg_script(dbname, "ALTER TABLE plain ADD COLUMN m mood DEFAULT 'sad'")
        with pytest.raises(QueryRejectedError, match="cast from mood to text.*through plain"):
            _rows(ops, "SELECT length(m) FROM plain")
        assert hits() == 0
    finally:
        connection.dispose()
