"""Spark SQL plumbing shared by the Spark backend's modules (no pyspark import here).

- ``SparkRemote``: the ``remote:`` URL of dbs.yaml (``sc://host:port/;token=...;use_ssl=true``)
  with its token resolved (``ENC:`` decrypted; ``${ENV}`` is expanded when dbs.yaml is read) and
  a redacted form for messages and logs;
- ``SparkDialect``: a compile-only SQLAlchemy dialect, so the backend-neutral statement builders
  (samples, enum screening, row lookups, identifier quoting in the annotated schema) render
  Spark SQL: backtick quoting with doubled backticks, ``STRING`` casts, named ``:param`` markers
  (sent as Spark's own query parameters, never spliced into the text) and literal LIMITs;
- ``SparkSqlConnection``: what those builders get from ``SparkConnection.connect()`` in place of
  a SQLAlchemy ``Connection``: ``execute(statement)`` returning a small result object.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import types as sqltypes
from sqlalchemy.engine import default
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import compiler
from sqlalchemy.sql.elements import ClauseElement

from nl2sql.errors import ConfigError, QueryExecutionError
from nl2sql.config import secrets

# -- remote: sc://host:port/;param=value;... -----------------------------------------------

SCHEME = "sc"
DEFAULT_PORT = 15002
_SECRET_PARAMS = {"token"}


@dataclass(frozen=True)
class SparkRemote:
    """A parsed Spark Connect URL; ``params`` keep their order and case."""

    host: str
    port: int
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, url: str, *, db_id: str) -> SparkRemote:
        text = (url or "").strip()
        where = f"database '{db_id}': 'remote'"
        if not text.startswith(f"{SCHEME}://"):
            raise ConfigError(f"{where} must be a Spark Connect URL like sc://host:15002 "
                              f"(optionally /;token=...;use_ssl=true).", db_id=db_id)
        address, _, rest = text[len(SCHEME) + 3:].partition("/")
        try:
            parts = urlsplit(f"//{address}")
            host, port = parts.hostname, parts.port or DEFAULT_PORT
        except ValueError:
            host, port = None, None
        if not host or port is None:
            raise ConfigError(f"{where}: cannot read host and port from '{address}'; write "
                              f"sc://host:port.", db_id=db_id)
        params: list[tuple[str, str]] = []
        for item in rest.split(";"):
            if not item.strip():
                continue
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"{where}: parameter '{key.strip()}' needs a value "
                                  f"(;name=value).", db_id=db_id)
            params.append((key.strip(), value.strip()))
        return cls(host, port, tuple(params))

    def param(self, name: str) -> str | None:
        for key, value in self.params:
            if key.lower() == name.lower():
                return value
        return None

    def with_param(self, name: str, value: str) -> SparkRemote:
        kept = tuple((k, v) for k, v in self.params if k.lower() != name.lower())
        return SparkRemote(self.host, self.port, (*kept, (name, value)))

    def url(self) -> str:
        """The URL pyspark takes (secrets included: never log it)."""
        tail = "".join(f";{key}={value}" for key, value in self.params)
        return f"{SCHEME}://{self.host}:{self.port}/{tail}" if tail else \
            f"{SCHEME}://{self.host}:{self.port}"

    def redacted(self) -> str:
        """The URL for messages: secret parameters shown as ``***``."""
        tail = "".join(f";{key}={'***' if key.lower() in _SECRET_PARAMS else value}"
                       for key, value in self.params)
        return f"{SCHEME}://{self.host}:{self.port}/{tail}" if tail else \
            f"{SCHEME}://{self.host}:{self.port}"


def resolve_remote(remote: str, *, db_id: str, password: str | None = None) -> SparkRemote:
    """``remote`` with its token in plain text: an ``ENC:`` token is decrypted; without a token
    in the URL, ``password`` (the config's ``password``/``password_env``, already resolved)
    becomes the token."""
    parsed = SparkRemote.parse(remote, db_id=db_id)
    token = parsed.param("token")
    if token:
        return parsed.with_param("token", secrets.reveal(token, db_id=db_id))
    if password:
        return parsed.with_param("token", password)
    return parsed


# -- a compile-only SQLAlchemy dialect for Spark SQL ---------------------------------------

class SparkIdentifierPreparer(compiler.IdentifierPreparer):
    def __init__(self, dialect: default.DefaultDialect) -> None:
        super().__init__(dialect, initial_quote="`", escape_quote="`")


class SparkTypeCompiler(compiler.GenericTypeCompiler):
    def visit_string(self, type_: Any, **kw: Any) -> str:
        return "STRING"

    visit_TEXT = visit_VARCHAR = visit_CHAR = visit_NVARCHAR = visit_NCHAR = visit_text = \
        visit_unicode = visit_unicode_text = visit_string


class SparkCompiler(compiler.SQLCompiler):
    def limit_clause(self, select: Any, **kw: Any) -> str:
        # Literal numbers: Spark's LIMIT takes no parameter markers.
        text = ""
        if select._limit_clause is not None:
            text += f"\n LIMIT {int(select._limit)}"
        if select._offset_clause is not None:
            text += f"\n OFFSET {int(select._offset)}"
        return text


class SparkDialect(default.DefaultDialect):
    """Renders statements as Spark SQL; it never opens a connection itself."""

    name = "spark"
    paramstyle = "named"
    positional = False
    statement_compiler = SparkCompiler
    type_compiler_cls = SparkTypeCompiler
    preparer = SparkIdentifierPreparer
    supports_statement_cache = True
    supports_native_boolean = True
    colspecs: dict[Any, Any] = {sqltypes.String: sqltypes.String}


def compile_statement(statement: ClauseElement | str,
                      params: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """Spark SQL text and its named parameters for a SQLAlchemy statement (or plain text)."""
    if isinstance(statement, str):
        return statement, dict(params or {})
    compiled = statement.compile(dialect=SparkDialect())
    values = dict(compiled.params)
    values.update(params or {})
    return str(compiled), values


# -- the connection object handed to backend-neutral code ----------------------------------

class SparkRows:
    """The part of SQLAlchemy's ``Result`` the neutral statement builders use."""

    def __init__(self, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        self.columns = list(columns)
        self.rows = rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)

    def all(self) -> list[tuple[Any, ...]]:
        return list(self.rows)

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def one(self) -> tuple[Any, ...]:
        if len(self.rows) != 1:
            raise ValueError(f"expected one row, got {len(self.rows)}")
        return self.rows[0]

    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None

    def mappings(self) -> SparkRows:
        return SparkRows(self.columns, [dict(zip(self.columns, row)) for row in self.rows])


class SparkSqlConnection:
    """``execute(statement)`` over one Spark Connect session, results fetched whole: only for
    small catalog and sampling queries (results go through ``SparkOperations``' stream)."""

    dialect = SparkDialect()

    def __init__(self, run: Any, session: Any) -> None:
        self._run = run  # (sql, args) -> list of Row, with the connection's error handling
        self.session = session

    def execute(self, statement: ClauseElement | str,
                params: Mapping[str, Any] | None = None) -> SparkRows:
        """Run a statement; Spark's refusal is a SQLAlchemy ``DBAPIError`` (``.orig`` holds the
        one-line reason), so neutral code handles it as it does for every other backend."""
        sql, args = compile_statement(statement, params)
        try:
            rows, columns = self._run(sql, args)
        except QueryExecutionError as exc:
            raise DBAPIError(sql, args, exc) from None
        return SparkRows(columns, rows)

    exec_driver_sql = execute

    def rollback(self) -> None:
        """Nothing to roll back: Spark has no transactions (SQLAlchemy-shaped callers ask)."""
