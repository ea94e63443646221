"""The function allowlists of DuckDB and Spark (nl2sql/sql_guard/allowlist.py), against the real
engines: every function the running engine knows is either on the reviewed list (and a call of
it passes the guard) or refused by the guard, so a new engine version cannot bring in a function
nobody reviewed; the words the allowlist treats as grammar are no function of the engine; and
ordinary analytical SQL (tests/analytical_corpus.py, the bundled gold queries) still runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import sqlglot
import sqlglot.errors
from analytical_corpus import DUCKDB as DUCKDB_QUERIES
from analytical_corpus import SPARK as SPARK_QUERIES

from conftest import duckdb_db, spark_db
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryRejectedError
from nl2sql.schema.models import DbInfo
from nl2sql.sql_guard import duckdb_functions, profile_for, spark_functions, validate_read_only
from nl2sql.sql_guard.allowlist import Allowlist
from nl2sql.sql_guard.value_sizes import check_value_sizes
from nl2sql.sql_guard.view_reach import allowlist_reach

QUESTIONS = Path(__file__).parent / "data" / "questions"
_NAME = re.compile(r"[a-z_][a-z0-9_]*")


class _Sink:
    def begin(self, columns: Any) -> None:
        self.columns = list(columns)

    def write_rows(self, rows: Any) -> None:
        pass


def _duckdb_catalogue() -> tuple[str, dict[str, set[str]]]:
    import duckdb

    connection = duckdb.connect(config={"autoinstall_known_extensions": False,
                                        "autoload_known_extensions": False})
    rows = connection.execute("SELECT DISTINCT lower(function_name), function_type "
                              "FROM duckdb_functions()").fetchall()
    catalogue: dict[str, set[str]] = {}
    for name, kind in rows:
        if " " not in name:  # IS DISTINCT FROM: an operator, not callable by name
            catalogue.setdefault(name, set()).add(kind)
    return duckdb.__version__, catalogue


def _quoted(name: str, quote: str) -> str:
    return quote + name.replace(quote, quote * 2) + quote


def _calls(name: str, table: bool, quote: str) -> list[str]:
    """How a query can call ``name``: quoted, and plain when it is a plain name."""
    argument = "'threads'" if name == "current_setting" else ""
    spellings = [_quoted(name, quote)] + ([name, name.upper()] if _NAME.fullmatch(name) else [])
    if table:
        return [f"SELECT * FROM {spelled}({argument})" for spelled in spellings]
    return [f"SELECT {spelled}({argument}) AS x" for spelled in spellings]


def _check_catalogue(allowlist: Allowlist, dialect: str, catalogue: dict[str, bool],
                     version: str, reviewed_version: str) -> None:
    """Each name of ``catalogue`` (name -> is only a table function) is admitted and passes the
    guard in every spelling, or is refused in every spelling."""
    profile = profile_for(dialect)
    assert not [n for n in allowlist.admitted if profile.is_denied_function(n)]
    assert not allowlist.syntax & set(catalogue), "a grammar word is a function of the engine"
    assert not allowlist.admitted & set(allowlist.refused)
    if version == reviewed_version:  # the review covers exactly this engine's catalogue
        assert set(catalogue) - allowlist.admitted - set(allowlist.refused) == set(), \
            "new functions: run scripts/function_catalogue.py and review them"
        assert (allowlist.admitted | set(allowlist.refused)) - set(catalogue) == set()
    quote = '"' if dialect == "duckdb" else "`"
    admitted_wrongly, refused_wrongly = [], []
    for name, table in sorted(catalogue.items()):
        for sql in _calls(name, table, quote):
            try:
                validate_read_only(sql, dialect)
            except QueryRejectedError as error:
                if name in allowlist.admitted and "syntax error" not in str(error):
                    refused_wrongly.append((sql, str(error)))
            else:
                if name not in allowlist.admitted:
                    admitted_wrongly.append(sql)
    assert not admitted_wrongly and not refused_wrongly, (admitted_wrongly, refused_wrongly)


def test_every_duckdb_function_is_reviewed_and_judged_by_the_guard() -> None:
    version, catalogue = _duckdb_catalogue()
    tables = {name: kinds <= {"table", "table_macro", "pragma"} for name, kinds in
              catalogue.items()}
    _check_catalogue(duckdb_functions.ALLOWLIST, "duckdb", tables, version,
                     duckdb_functions.ENGINE_VERSION)
    # the findings of issue 28 and the state changers among them
    for name in ("json_execute_serialized_sql", "query", "query_table", "read_blob",
                 "truncate_duckdb_logs", "enable_logging", "checkpoint", "write_log",
                 "duckdb_secrets", "duckdb_settings", "getvariable", "sleep_ms", "pg_sleep"):
        assert name in catalogue and name not in duckdb_functions.ALLOWLIST.admitted, name


@pytest.mark.spark
def test_every_spark_function_is_reviewed_and_judged_by_the_guard(
        spark_server: Any) -> None:
    session = spark_server.session()
    try:
        names = {row[0].lower() for row in session.sql("SHOW SYSTEM FUNCTIONS").collect()}
        version = session.version
    finally:
        session.stop()
    catalogue = {name: name in spark_functions.TABLE for name in names}
    _check_catalogue(spark_functions.ALLOWLIST, "spark", catalogue, version,
                     spark_functions.ENGINE_VERSION)
    for name in ("reflect", "java_method", "try_reflect", "from_avro", "from_protobuf",
                 "xpath", "python_worker_logs"):
        assert name in names and name not in spark_functions.ALLOWLIST.admitted, name


def test_duckdb_built_in_macros_call_only_admitted_functions() -> None:
    """DuckDB's own macros run their definition: an admitted macro must call only admitted
    functions (histogram_values ran query_table on a name given as a string; a table macro
    whose name is also an admitted aggregate is refused in FROM)."""
    import duckdb

    allowlist = duckdb_functions.ALLOWLIST
    connection = duckdb.connect(config={"autoload_known_extensions": False})
    macros = connection.execute(
        "SELECT lower(function_name), function_type, macro_definition FROM duckdb_functions() "
        "WHERE function_type IN ('macro', 'table_macro') AND internal").fetchall()
    engine = sqlglot.Dialect.get_or_raise("duckdb")
    wrong = []
    for name, kind, definition in macros:
        if name not in allowlist.admitted or (kind == "table_macro"
                                              and name in allowlist.table_refused):
            continue
        if allowlist_reach("duckdb", sqlglot.exp.Select(), engine.tokenize(definition),
                           definition) is not None:
            wrong.append(name)
    assert len(macros) > 100 and not wrong, wrong


def test_duckdb_built_in_views_over_refused_functions_are_refused() -> None:
    """DuckDB's own views (pg_catalog.pg_settings over duckdb_settings(), duckdb_logs...):
    each one whose definition calls what the allowlist refuses is refused by name."""
    import duckdb

    connection = duckdb.connect(config={"autoload_known_extensions": False})
    views = connection.execute("SELECT schema_name, view_name, sql FROM duckdb_views() "
                               "WHERE internal").fetchall()
    engine = sqlglot.Dialect.get_or_raise("duckdb")
    reaching = []
    for schema, view, definition in views:
        body = definition[definition.upper().index(" AS ") + 4:]
        try:
            tree = sqlglot.parse_one(body, read="duckdb")
        except sqlglot.errors.ParseError:  # (lambda x: ...): judged by its tokens alone
            tree = sqlglot.exp.Select()
        if allowlist_reach("duckdb", tree, engine.tokenize(body), body) is not None:
            reaching.append((schema, view))
    assert ("pg_catalog", "pg_settings") in reaching and ("main", "duckdb_logs") in reaching
    for schema, view in reaching:
        for sql in (f"SELECT * FROM {schema}.{view}", f'SELECT * FROM "{view}"'):
            with pytest.raises(QueryRejectedError, match=view):
                validate_read_only(sql, "duckdb")


def test_grammar_words_are_not_admitted_when_quoted() -> None:
    """A grammar word quoted is a name: a function of that name needs the allowlist."""
    with pytest.raises(QueryRejectedError, match="not a DuckDB"):
        validate_read_only('SELECT "columns"(1)', "duckdb")
    with pytest.raises(QueryRejectedError, match="not a Spark"):
        validate_read_only("SELECT `unnest`(1)", "spark")


def test_a_name_declared_with_columns_is_no_call_but_a_call_of_that_name_still_is() -> None:
    # summary() is a DuckDB table function the allowlist refuses (no deny list names it)
    validate_read_only("WITH summary(a) AS (SELECT 1) SELECT * FROM summary", "duckdb")
    validate_read_only("SELECT * FROM range(3) AS summary(i)", "duckdb")
    for sql in ("WITH summary(a) AS (SELECT 1) SELECT * FROM summary((SELECT 1))",
                "SELECT * FROM summary((SELECT 1)) AS summary(a)"):
        with pytest.raises(QueryRejectedError, match="summary"):
            validate_read_only(sql, "duckdb")


def test_allowed_functions_add_to_the_allowlist_but_never_pass_the_deny_list() -> None:
    for sql, dialect in (("SELECT net_price(a) FROM t", "spark"),
                         ("SELECT * FROM duckdb_memory()", "duckdb")):
        with pytest.raises(QueryRejectedError, match="net_price|duckdb_memory"):
            validate_read_only(sql, dialect)
        validate_read_only(sql, dialect, allowed_functions=["net_price", "duckdb_memory"])
    for sql, dialect, name in (("SELECT * FROM query('SELECT 1')", "duckdb", "query"),
                               ("SELECT from_avro(b, 'x') FROM t", "spark", "from_avro")):
        with pytest.raises(QueryRejectedError, match=f"Function {name} is not allowed"):
            validate_read_only(sql, dialect, allowed_functions=[name])


# -- ordinary SQL still runs -------------------------------------------------------------------

def _golds(names: tuple[str, ...] = ("bookstore", "chinook", "northwind")) -> list[str]:
    golds = []
    for name in names:
        for line in (QUESTIONS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            query = json.loads(line)["query"]
            golds += query if isinstance(query, list) else [query]
    return golds


@pytest.mark.parametrize("dialect", ["duckdb", "spark"])
def test_every_bundled_gold_query_passes_the_guard(dialect: str) -> None:
    """The bundled gold queries (SQLite) as sqlglot writes them for the engine, and the Spark
    variants of the sets as written; and the bounds of the values they build
    (test_value_sizes.py)."""
    golds = [sqlglot.transpile(gold, read="sqlite", write=dialect)[0] for gold in _golds()]
    if dialect == "spark":
        golds += _golds(("chinook_spark", "northwind_spark"))
    refused = []
    for sql in golds:
        try:
            accepted = validate_read_only(sql, dialect)
            check_value_sizes(accepted.expression, 16 << 20, db_id="gold", dialect=dialect,
                              computed_counts=False)
        except QueryRejectedError as error:
            refused.append((sql, str(error)))
    assert len(golds) >= 80 and not refused, refused


def _run_all(config: Any, db_type: str, queries: list[str]) -> None:
    connection = create_connection(config)
    ops = create_operations(connection, DbInfo(db_id=config.db_id, db_type=db_type))
    try:
        for sql in queries:
            sink = _Sink()
            ops.execute_select_query(sql, sink)
            assert sink.columns, sql
    finally:
        connection.dispose()


def test_analytical_duckdb_sql_runs_through_the_guard(request: pytest.FixtureRequest) -> None:
    _run_all(duckdb_db(request, "chinook", sample="chinook").config, "duckdb", DUCKDB_QUERIES)


@pytest.mark.spark
def test_analytical_spark_sql_runs_through_the_guard(request: pytest.FixtureRequest) -> None:
    db = spark_db(request, "chinook", sample="chinook", query_timeout_seconds=60)
    _run_all(db.config, "spark", SPARK_QUERIES)
