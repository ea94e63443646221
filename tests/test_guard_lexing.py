"""Lexer-differential corpus: the engine must read a query exactly as the guard did.

Each case hides a payload (``987654321 + 1 AS leak``) behind a spelling that some lexer may
read differently: comments (backslash continuation, nesting, ``#``, ``--`` without a space,
a lone carriage return, executable comments and hints), backslashes, every kind of quote,
string prefixes, dollar quoting, Unicode escapes, parameters, unusual whitespace. On every
backend the case runs on the real engine twice: through the guard, where the result may show
the payload's value only when the guard saw the payload as code (else the engine ran something
the guard never checked), and with the guard off, to record what the engine alone does. The
Spark cases with a real payload (``TRANSFORM ... USING`` a shell command, ``reflect`` setting a
JVM property) also assert no file and no property appears.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import spark_db
from guard_corpus import SCHEMA, SPARK_SCHEMA
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel

from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import Nl2SqlError, QueryRejectedError
from nl2sql.schema.models import DbInfo
from nl2sql.sql_guard import validate_read_only

DIALECTS = ("sqlite", "postgres", "mysql", "duckdb", "spark")
PAYLOAD = "987654321 + 1 AS leak"
MARKER = "987654322"
#: Spark's TRANSFORM probe touches this file: one name per process, so a concurrent run's probe
#: never shows in this run's snapshot.
PROBE = Path(tempfile.gettempdir()) / f"nl2sql_lexing_probe_{uuid.uuid4().hex[:10]}"
SPARK_TOUCH = f'TRANSFORM(a) USING "touch {PROBE}" AS (out STRING) FROM t'
SPARK_REFLECT = 'reflect("java.lang.System", "setProperty", "nl2sql.lexing", "x") AS r'


@dataclass(frozen=True)
class LexCase:
    """``sql`` with ``{P}`` standing for the payload; ``refused``: dialects whose guard must
    refuse it whatever the engine does (a spelling no reading may be trusted with)."""

    sql: str
    refused: frozenset[str] = frozenset()
    dialects: tuple[str, ...] = DIALECTS
    payload: str = PAYLOAD

    def text(self) -> str:
        return self.sql.replace("{P}", self.payload)


ALL = frozenset(DIALECTS)


def _cases() -> list[LexCase]:
    c = LexCase
    return [
        # -- line comments -------------------------------------------------------------------
        # Spark continues a -- comment after a backslash-newline; sqlglot does not.
        c("SELECT 1 AS a -- \\\n, 'x' AS s, '\n, {P} -- '", ALL),
        c("SELECT -- \\\n'x' AS s, '\n{P} -- '", ALL),
        c("-- \\\nSELECT 'x' AS s, '\n SELECT {P} -- '", ALL),
        c("SELECT 1 AS a -- first \\\n-- second \\\n, 'x' AS s, '\n, {P} -- '", ALL),
        c("SELECT 1 AS a --\\\n, 'x' AS s, '\n, {P} -- '", ALL),
        c("SELECT 1 AS a -- \\\r\n, 'x' AS s, '\r\n, {P} -- '", ALL),
        c("SELECT 1 AS a -- c \\", ALL),
        # the issue's own form, with a real payload
        c("SELECT -- \\\n'x' AS s, '\n{P} -- '", ALL, ("spark",), SPARK_TOUCH),
        c("SELECT -- \\\n'x' AS s, '\n{P} -- '", ALL, ("spark",), SPARK_REFLECT),
        c("SELECT 1 AS a, -- \\\n'x' AS s, '\n{P} -- '", ALL, ("spark",),
          "java_method(\"java.lang.System\", \"setProperty\", \"nl2sql.lexing\", \"y\") AS r"),
        # a lone carriage return ends a comment for some engines only
        c("SELECT 1 AS a -- c\r, {P}"),
        c("SELECT 1 AS a -- c\r, '\n, {P} -- '"),
        c("SELECT 1 AS a -- c\r\n, {P}"),
        # MySQL needs a blank after --; # is a comment there
        c("SELECT 1 AS a --x\n, {P}"),
        c("SELECT 1 --'\n, {P} -- '"),
        c("SELECT 1 AS a # '\n, {P} -- '"),
        c("SELECT 1 AS a #\n, {P}"),
        c("SELECT 1 AS a --\t\n, {P}"),
        c("SELECT 1 AS a --\x0b'\n, {P} -- '"),
        c("SELECT 1 AS a --\x01'\n, {P} -- '"),
        c("SELECT 1 AS a -- c\x1a\n, {P}"),
        c("EXPLAIN -- \\\nSELECT 'x' AS s, '\n{P} -- '", ALL),
        c("SELECT 1 AS a; -- \\\n, {P}"),
        # -- block comments ------------------------------------------------------------------
        c("SELECT 1 AS a /* /* */ , {P} -- */", frozenset({"duckdb"})),
        c("SELECT 1 AS a /* /* */ */ , {P}", frozenset({"duckdb"})),
        c("SELECT 1 AS a /* , {P}", ALL),
        c("SELECT 1 AS a /*!, {P} */", ALL),
        c("SELECT 1 AS a /*!50000 , {P} */", ALL),
        c("SELECT 1 AS a /*M!, {P} */", ALL),
        c("SELECT /*+ SET_VAR(max_execution_time=1) */ 1 AS a", ALL - {"spark"}),
        c("SELECT /*+ BROADCAST(t) -- \\\n*/ 1 AS a, '\n, {P} -- '", ALL),
        c("SELECT /*+ REPARTITION(1, '*/ 'x' AS s, ') */ {P} -- '", ALL),
        c("SELECT /*+ REPARTITION(1, `*/ 'x' AS s, `) */ {P} -- '", ALL),
        c("SELECT 1 AS a /* \\ */ , {P}", ALL),
        c("SELECT 1 AS a /**/, {P}"),
        c("SELECT 1 AS a/* c */-/* c */-1 AS b"),
        # -- strings and backslashes ---------------------------------------------------------
        c("SELECT '\\' AS s, {P} -- '", frozenset({"duckdb"})),
        c("SELECT 'a\\'' AS s, {P} -- '", frozenset({"duckdb"})),
        c('SELECT "\\" AS s, {P} -- "'),
        c("SELECT '\\\\' AS s, {P}"),
        c("SELECT 'a''b' AS s, {P}"),
        c("SELECT 'a'\n'b' AS s, {P}"),
        c("SELECT E'\\'' AS s, {P} -- '"),
        c("SELECT e'\\'' AS s, {P} -- '"),
        c("SELECT N'\\' AS s, {P} -- '", frozenset({"duckdb"})),
        c("SELECT _utf8mb4'\\' AS s, {P} -- '", frozenset({"duckdb"})),
        c("SELECT r'\\' AS s, {P} -- '"),
        c("SELECT R\"\\\" AS s, {P} -- \""),
        c("SELECT b'\\' AS s, {P} -- '", ALL - {"postgres", "mysql", "spark"}),
        c("SELECT X'41' AS s, {P}"),
        c("SELECT U&'\\0027' AS s, {P} -- '", ALL - {"postgres"}),
        c("SELECT U&'!0027' UESCAPE '!' AS s, {P}", ALL - {"postgres"}),
        c('SELECT 1 AS U&"\\0061", {P}', ALL),
        c("SELECT 1 AS a, $$ ' $$ AS s, {P} -- '"),
        c("SELECT 1 AS a, $x$ ' $x$ AS s, {P} -- '"),
        c("SELECT 1 AS a$x$, ' $x$ AS s, {P} -- '"),
        c("SELECT 1 AS a, `\\` AS s, {P} -- `"),
        c("SELECT 1 AS a, [x'] AS s, {P} -- ']"),
        c("SELECT 1'a' AS s, {P}"),
        # -- outside strings: backslashes, parameters, variables, whitespace -----------------
        c("SELECT \\N AS s, {P}", ALL),
        c("SELECT 1 AS a \\\n, {P}", ALL),
        c("SELECT $a('x) AS s, {P} -- ')", ALL),
        c("SELECT @a('x) AS s, {P} -- ')", ALL),
        c("SELECT :a('x) AS s, {P} -- ')", ALL - {"postgres", "mysql", "duckdb"}),
        c("SELECT $1 AS s, {P}", ALL),
        c("SELECT @x := 1 AS s, {P}", ALL),
        c("SELECT @@version AS s, {P}"),
        c("SELECT 1\u00a0AS a, {P}", ALL),
        c("SELECT 1 AS a\u2028, {P}", ALL),
        c("SELECT a, {P} FROM t ORDER\u00a0BY a", ALL),
        c("SELECT 1 AS a\x0b, {P}"),
        c("SELECT 1 AS a\x1c, {P}", ALL),
        c("SELECT 'a\\\nb' AS s, {P}"),
        c("SELECT 1 AS a, 'x' AS s\n-- c '\n, {P}"),
        c("SELECT 1 AS a /* '*/, {P} -- '"),
        c("SELECT 1 AS a, '/*' AS s, {P} -- */"),
        # plain queries that must keep working
        c("SELECT a, {P} FROM t -- c\n"),
        c("SELECT a, {P} /* c */ FROM t"),
    ]


CASES = _cases()


def _verdict(sql: str, dialect: str) -> exp.Expr | None:
    try:
        return validate_read_only(sql, dialect).expression
    except QueryRejectedError:
        return None


def _sees_payload(tree: exp.Expr | None) -> bool:
    """The guard's (or sqlglot's) tree has the payload as code, not inside a string."""
    return tree is not None and any(
        isinstance(node, exp.Literal) and not node.is_string and node.this == "987654321"
        for node in tree.walk())


def _lenient_tree(sql: str, dialect: str) -> exp.Expr | None:
    """What sqlglot alone makes of the text (the guard's view before its own rules)."""
    try:
        trees = Dialect.get_or_raise(dialect).parse(sql, error_level=ErrorLevel.IGNORE)
    except Exception:  # noqa: BLE001 - the probe only asks whether the payload was visible
        return None
    return next((tree for tree in trees if tree is not None), None)


def test_corpus_size_and_shape() -> None:
    per_dialect = {d: sum(d in case.dialects for case in CASES) for d in DIALECTS}
    assert min(per_dialect.values()) >= 60, per_dialect
    assert len({(case.sql, case.payload) for case in CASES}) == len(CASES)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_guard_refuses_every_spelling_no_reading_can_be_trusted_with(dialect: str) -> None:
    accepted = [case.text() for case in CASES
                if dialect in case.dialects and dialect in case.refused
                and _verdict(case.text(), dialect) is not None]
    assert accepted == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_plain_queries_stay_accepted(dialect: str) -> None:
    for sql in ("SELECT a, 987654321 + 1 AS leak FROM t -- c\n",
                "SELECT a /* c */ FROM t", "SELECT 'it''s' AS s", "SELECT DATE '2024-01-02' AS d",
                "SELECT a FROM t WHERE b = 'x' -- trailing"):
        assert _verdict(sql, dialect) is not None, sql


# -- the real engines -----------------------------------------------------------------------

class _Sink:
    def begin(self, columns: Sequence[str]) -> None:
        self.columns, self.rows = list(columns), []

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += [tuple(row) for row in rows]


@dataclass
class Target:
    dialect: str
    ops: Any
    snapshot: Callable[[], dict]
    restore: Callable[[], None] = lambda: None
    report: dict[str, list[str]] = field(default_factory=dict)


def _run(ops: Any, sql: str, *, validate: bool) -> tuple[str, str]:
    """``refused`` (guard), ``error`` (engine), ``leak`` (the payload's value came back) or
    ``ran``; and the message."""
    sink = _Sink()
    try:
        ops.execute_select_query(sql, sink, validate=validate, timeout_seconds=10)
    except QueryRejectedError as exc:
        return "refused", str(exc)
    except Nl2SqlError as exc:
        assert "\n" not in str(exc) and "Traceback" not in str(exc)
        return "error", str(exc)
    values = {str(value) for row in getattr(sink, "rows", []) for value in row}
    return ("leak" if MARKER in values else "ran"), ""


def _spark_target(request: pytest.FixtureRequest) -> Target:
    server = request.getfixturevalue("spark_server")
    db = spark_db(request, "lexing", script=SPARK_SCHEMA, query_timeout_seconds=20)
    connection = create_connection(db.config)
    request.addfinalizer(connection.dispose)
    admin = server.session()
    request.addfinalizer(admin.stop)

    def snapshot() -> dict:
        return {"rows": db.text_rows("SELECT a, b FROM t ORDER BY a"),
                "jvm": admin.sql("SELECT reflect('java.lang.System', 'getProperty', "
                                 "'nl2sql.lexing')").collect()[0][0],
                "file": PROBE.exists()}

    def restore() -> None:
        admin.sql("SELECT reflect('java.lang.System', 'clearProperty', 'nl2sql.lexing')")\
            .collect()
        PROBE.unlink(missing_ok=True)

    ops = create_operations(connection, DbInfo(db_id="lexing", db_type="spark"))
    return Target("spark", ops, snapshot, restore)


@pytest.fixture(params=[pytest.param(d, marks=pytest.mark.spark) if d == "spark" else d
                        for d in DIALECTS])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    dialect = request.param
    PROBE.unlink(missing_ok=True)
    if dialect == "spark":
        yield _spark_target(request)
        return
    db = request.getfixturevalue("make_db")(dialect, "lexing", script=SCHEMA[dialect])
    connection = create_connection(db.config)
    ops = create_operations(connection, DbInfo(db_id="lexing", db_type=dialect))
    yield Target(dialect, ops, lambda: {"rows": db.text_rows("SELECT a, b FROM t ORDER BY a"),
                                        "file": PROBE.exists()})
    connection.dispose()
    shutil.rmtree(PROBE, ignore_errors=True) if PROBE.is_dir() else PROBE.unlink(missing_ok=True)


def test_every_engine_runs_only_what_the_guard_checked(target: Target) -> None:
    """Guard on: no result shows a payload the guard did not see, nothing changes. Guard off:
    what the engine alone does is recorded (and printed with ``-s``)."""
    dialect, before = target.dialect, target.snapshot()
    unseen, changed, outcomes = [], [], {}
    for case in (case for case in CASES if dialect in case.dialects):
        sql = case.text()
        on, _ = _run(target.ops, sql, validate=True)
        if on == "leak" and not _sees_payload(_verdict(sql, dialect)):
            unseen.append(sql)
        if target.snapshot() != before:
            changed.append(sql)
            target.restore()
        off, _ = _run(target.ops, sql, validate=False)
        off_effect = target.snapshot() != before
        if off_effect:
            target.restore()
        hidden = off == "leak" and not _sees_payload(_lenient_tree(sql, dialect))
        outcomes[sql] = (on, off + ("+effect" if off_effect else "") + (" (hidden)" if hidden
                                                                         else ""))
    assert unseen == [], f"{dialect} ran a payload its guard did not see: {unseen}"
    assert changed == [], f"{dialect}: a side effect through the guard: {changed}"
    assert target.snapshot() == before
    print(f"\n[{dialect}] {len(outcomes)} cases; guard on:",
          _count(v[0] for v in outcomes.values()), "guard off:",
          _count(v[1] for v in outcomes.values()))
    for sql, (on, off) in outcomes.items():
        if "hidden" in off or "effect" in off:
            print(f"  engine alone: {off:<22} guard: {on:<8} {sql!r}")
    if dialect == "spark":  # the bypass is real without the guard: the probe shows it
        assert any("effect" in off for _, off in outcomes.values())


def _count(values: Iterator[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))
