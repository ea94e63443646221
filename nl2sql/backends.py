"""The backend registry: one entry per dbs.yaml ``type``, asked by every place that differs.

An entry holds the facts about a backend that code outside its own modules needs: the sqlglot
dialect (parser guard, deny list), the SQLAlchemy dialect (quoting in the annotated schema),
whether it is a file (paths resolved against dbs.yaml's folder) or a server (password, port),
the default schema, the required config fields, and where its classes live. The classes are
named as ``"module:Class"`` and imported on first use, so ``import nl2sql`` never loads a
driver. Adding a backend is one entry here plus its modules (see docs/contributing.md, "Adding
a backend"); no caller tests the type name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any

from nl2sql._helpers import install_command
from nl2sql.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect


@dataclass(frozen=True)
class Backend:
    """What the rest of nl2sql may know about one backend type."""

    #: The ``type:`` value in dbs.yaml.
    name: str
    #: Human name used in messages ("PostgreSQL").
    label: str
    #: sqlglot dialect: the parser guard reads queries in it; also the key of its deny list.
    sqlglot_dialect: str
    #: SQLAlchemy dialect name (``sqlalchemy.dialects.registry``, or ``"module:Class"``) used
    #: to quote identifiers.
    sqlalchemy_dialect: str
    #: ``"module:Class"`` of the DbConnection, DbOperations and DbSchemaInspector subclasses.
    connection_class: str
    operations_class: str
    inspector_class: str
    #: A local file (no server, no password) rather than a server.
    file_based: bool = False
    #: Config fields holding paths (or lists of glob patterns) relative to dbs.yaml's folder.
    path_fields: tuple[str, ...] = ()
    #: Config fields that must be set; a tuple of alternatives means "at least one of".
    required_fields: tuple[str | tuple[str, ...], ...] = ()
    #: Schema inspected and queried when dbs.yaml names none (None: the connection's default).
    default_schema: str | None = None
    #: Port used when dbs.yaml names none (server backends).
    default_port: int | None = None
    #: Unquoted names fold to lower case (Postgres): mixed-case names must always be quoted.
    folds_unquoted_case: bool = False
    #: Other URL schemes of ``url:`` in dbs.yaml that mean this backend (``mariadb://``).
    url_schemes: tuple[str, ...] = ()
    #: ``"module:Class"`` of what the parser guard knows about the backend's SQL (deny lists,
    #: how its engine reads comments and strings, extra checks). The default is the strictest.
    guard_profile: str = "nl2sql.sql_guard.profiles:GuardProfile"
    #: The extra (pyproject optional dependencies) holding its driver; None: the base install.
    extra: str | None = None
    #: ``"module:Class"`` of how its SQL truncates a timestamp to a grain, shifts a date and
    #: takes a percentile (metric queries); the default is standard ``DATE_TRUNC``, interval
    #: arithmetic and ``PERCENTILE_CONT ... WITHIN GROUP``.
    metric_sql: str = "nl2sql.semantic.metric_sql:MetricSql"
    #: How its SQL tests that an array, or a MySQL ``SET``, holds a value (a value hint's
    #: condition): ``{column}`` and ``{value}`` are SQL text.
    element_test: str = "ARRAY_CONTAINS({column}, {value})"

    @property
    def takes_password(self) -> bool:
        return not self.file_based

    def load(self, which: str) -> Any:
        """The class named by ``connection_class``/``operations_class``/``inspector_class``/
        ``guard_profile``/``metric_sql``; a driver that is not installed is a ConfigError
        naming the extra."""
        module_name, _, attribute = getattr(self, which).partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing = (exc.name or "").partition(".")[0]
            if self.extra is None or not missing or missing == "nl2sql":
                raise
            raise self.missing_driver(missing) from None
        return getattr(module, attribute)

    def missing_driver(self, module: str) -> ConfigError:
        """The one message for a backend whose driver (``module``) is not installed."""
        return ConfigError(f"The {self.label} backend (type: {self.name}) needs the "
                           f"'{self.extra}' extra ({module} is not installed): "
                           f"{install_command(self.extra or self.name)}.")

    def sqlalchemy(self) -> Dialect:
        """An instance of the SQLAlchemy dialect (no driver is imported)."""
        return _sqlalchemy_dialect(self.sqlalchemy_dialect)


@cache
def _sqlalchemy_dialect(name: str) -> Dialect:
    if ":" in name:  # "module:Class": a dialect of our own (compile-only, e.g. Spark SQL)
        module_name, _, attribute = name.partition(":")
        return getattr(importlib.import_module(module_name), attribute)()
    from sqlalchemy.dialects import registry

    return registry.load(name)()


BACKENDS: dict[str, Backend] = {
    "sqlite": Backend(
        name="sqlite", label="SQLite", sqlglot_dialect="sqlite", sqlalchemy_dialect="sqlite",
        connection_class="nl2sql.db.sqlite:SqliteConnection",
        operations_class="nl2sql.db.sqlite:SqliteOperations",
        inspector_class="nl2sql.inspection.sqlite:SqliteSchemaInspector",
        file_based=True, path_fields=("path",), required_fields=("path",),
        guard_profile="nl2sql.sql_guard.profiles:SqliteProfile",
        metric_sql="nl2sql.semantic.metric_sql:SqliteMetricSql"),
    "postgres": Backend(
        name="postgres", label="PostgreSQL", sqlglot_dialect="postgres",
        sqlalchemy_dialect="postgresql",
        connection_class="nl2sql.db.postgres:PostgresConnection",
        operations_class="nl2sql.db.postgres:PostgresOperations",
        inspector_class="nl2sql.inspection.postgres:PostgresSchemaInspector",
        required_fields=("dbname",), default_schema="public", default_port=5432,
        folds_unquoted_case=True, guard_profile="nl2sql.sql_guard.profiles:PostgresProfile",
        element_test="{value} = ANY({column})"),
    "spark": Backend(
        name="spark", label="Spark SQL", sqlglot_dialect="spark",
        sqlalchemy_dialect="nl2sql.db.spark_sql:SparkDialect",
        connection_class="nl2sql.db.spark:SparkConnection",
        operations_class="nl2sql.db.spark:SparkOperations",
        inspector_class="nl2sql.inspection.spark:SparkSchemaInspector",
        required_fields=("remote",), default_port=15002,  # the port lives in `remote`
        guard_profile="nl2sql.sql_guard.profiles:SparkProfile", extra="spark",
        metric_sql="nl2sql.semantic.metric_sql:SparkMetricSql"),
    "mysql": Backend(  # MySQL 8 and MariaDB 10.11+; the flavour is detected on connect
        name="mysql", label="MySQL", sqlglot_dialect="mysql", sqlalchemy_dialect="mysql",
        connection_class="nl2sql.db.mysql:MysqlConnection",
        operations_class="nl2sql.db.mysql:MysqlOperations",
        inspector_class="nl2sql.inspection.mysql:MysqlSchemaInspector",
        required_fields=("dbname",), default_port=3306, url_schemes=("mariadb",),
        guard_profile="nl2sql.sql_guard.profiles:MysqlProfile", extra="mysql",
        metric_sql="nl2sql.semantic.metric_sql:MysqlMetricSql",
        element_test="FIND_IN_SET({value}, {column}) > 0"),
    "duckdb": Backend(  # a .duckdb file and/or CSV/Parquet/JSON files as views
        name="duckdb", label="DuckDB", sqlglot_dialect="duckdb",
        # duckdb_engine's dialect derives from Postgres' and quotes the same way; naming
        # Postgres here keeps the duckdb driver out of processes that only format text.
        sqlalchemy_dialect="postgresql",
        connection_class="nl2sql.db.duckdb:DuckdbConnection",
        operations_class="nl2sql.db.duckdb:DuckdbOperations",
        inspector_class="nl2sql.inspection.duckdb:DuckdbSchemaInspector",
        file_based=True, path_fields=("path", "files"), required_fields=(("path", "files"),),
        guard_profile="nl2sql.sql_guard.profiles:DuckdbProfile", extra="duckdb"),
}

#: The dbs.yaml ``type`` values, one member per registry entry (``DatabaseType.SQLITE``...).
DatabaseType = StrEnum("DatabaseType", {name.upper(): name for name in BACKENDS})  # type: ignore[misc]


def get_backend(name: str | StrEnum) -> Backend:
    """The registry entry of ``name``; a ConfigError naming the known types otherwise."""
    key = str(getattr(name, "value", name))
    try:
        return BACKENDS[key]
    except KeyError:
        raise ConfigError(f"Unknown database type '{key}'. {did_you_mean(key, BACKENDS)}"
                          f"Known types: {', '.join(BACKENDS)}.") from None
