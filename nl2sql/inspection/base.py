"""Backend-neutral schema inspection over SQLAlchemy's batched reflection API.

One ``reflect()`` call runs each ``Inspector.get_multi_*`` method once for the whole schema
(one catalog query per method on Postgres), plus the few catalog queries SQLAlchemy has no
answer for (row counts, the database comment, names of types it does not know). Backend
differences are class attributes and small hooks in ``sqlite.py`` / ``postgres.py``; callers
never test the dialect name.
"""

from __future__ import annotations

import logging
import warnings
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from sqlalchemy import ColumnElement, Connection, FromClause, TableClause, inspect, select
from sqlalchemy.engine.reflection import Inspector, ObjectKind
from sqlalchemy.exc import CompileError, DBAPIError, UnreflectableTableError
from sqlalchemy.types import NullType

from nl2sql.db.base import DbConnection
from nl2sql.errors import ConfigError, QueryRejectedError
from nl2sql.inspection.statistics import ColumnStats, EnumScreeningSettings, Relation
from nl2sql.schema.models import DbInfo, TableInfo

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RowCount:
    """Rows in a table; ``value`` is None when neither a count nor an estimate is available."""

    value: int | None
    is_estimate: bool = False


@dataclass
class ReflectedSchema:
    """Everything reflected from one schema, keyed by table (or view) name.

    Values are SQLAlchemy's reflection dicts (``ReflectedColumn``, ...), with the index dicts
    completed by the backend: every index carries ``is_primary`` and ``index_type`` keys.
    """

    schema: str | None
    tables: list[str]
    views: set[str]
    columns: dict[str, list[dict[str, Any]]]
    primary_keys: dict[str, dict[str, Any]]
    foreign_keys: dict[str, list[dict[str, Any]]]
    indexes: dict[str, list[dict[str, Any]]]
    unique_constraints: dict[str, list[dict[str, Any]]]
    comments: dict[str, str | None]
    row_counts: dict[str, RowCount] = field(default_factory=dict)
    check_constraints: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    database_comment: str | None = None
    #: Several schemas (``schema:`` a list or ``*``): the schemas reflected, and for each
    #: schema-qualified key (``sales.orders``) its ``(schema, table)``.
    schemas: list[str] | None = None
    origins: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """Tables and views, sorted by name."""
        return sorted([*self.tables, *self.views])


@dataclass(frozen=True)
class SomeColumns:
    """A relation the database describes only in part to the login: the columns it holds (a
    column grant, ``GRANT SELECT (a, b) ON t``), as reflection dicts, and which of them are
    the primary key's."""

    columns: list[dict[str, Any]]
    primary_key: list[str]


def warn_left_out(name: str, exc: Exception) -> None:
    """One warning line: table or view ``name`` is left out of the schema, with the
    database's reason."""
    orig = getattr(exc, "orig", None) or getattr(exc.__cause__, "orig", None) or exc
    args = getattr(orig, "args", ())
    if len(args) == 2 and isinstance(args[0], int):  # MySQL drivers: (code, message)
        orig = f"{args[1]} (error {args[0]})"
    reason = (str(orig).strip().splitlines() or [type(exc).__name__])[0]
    log.warning("%s left out of the schema: the database cannot describe it (%s)",
                name, reason)


class DbSchemaInspector(ABC):
    """Reflects the structure of the schema of one configured database."""

    #: Object kinds reflected by the ``get_multi_*`` calls.
    reflect_kind: ClassVar[ObjectKind] = ObjectKind.TABLE | ObjectKind.VIEW
    #: Whether the backend stores table/column comments (SQLAlchemy raises otherwise).
    supports_comments: ClassVar[bool] = True
    #: Index access method reported when the reflection says nothing (the backend default).
    default_index_type: ClassVar[str] = "btree"
    #: Reflect columns, indexes and row counts on connections of their own, beside the other
    #: catalog queries (``row_counts`` must then be safe to call on another connection).
    parallel_reflection: ClassVar[bool] = False
    #: Extra keyword arguments for ``get_multi_indexes`` (dialect-specific options).
    index_reflection_kw: ClassVar[dict[str, Any]] = {}
    #: Whether a view can be one the database cannot describe (SQLite and MySQL keep a view
    #: whose table was dropped): each view is then described alone before the batched calls.
    views_may_break: ClassVar[bool] = False

    #: Schemas never listed by ``schema: "*"`` (the catalog's own).
    system_schemas: ClassVar[frozenset[str]] = frozenset({"information_schema"})

    def __init__(self, connection: DbConnection) -> None:
        self.connection = connection
        self._reflecting: str | None = None  # the schema being reflected, when several are
        self._compiled_types: dict[Any, str] = {}  # ``column_type``'s cache

    @property
    def schema(self) -> str | None:
        return self._reflecting or self.connection.schema

    def quote(self, identifier: str) -> str:
        """``identifier`` quoted for this backend's SQL (quotes only when needed)."""
        return self.connection.engine.dialect.identifier_preparer.quote(identifier)

    def qualified_name(self, table: str) -> str:
        """``table`` quoted and, when a schema is configured, schema-qualified."""
        if self.schema is None:
            return self.quote(table)
        return f"{self.quote(self.schema)}.{self.quote(table)}"

    # -- reflection ---------------------------------------------------------------------------
    def reflect(self) -> ReflectedSchema:
        """Reflect the whole schema through one connection."""
        with self.connection.connect() as conn:
            return self.reflect_with(conn)

    def reflect_with(self, conn: Connection) -> ReflectedSchema:
        """Reflect the configured schema (or schemas) through ``conn``."""
        inspector = inspect(conn)
        wanted = self.connection.config.schemas
        if wanted is None:
            reflected = self._reflect_schema(conn, inspector, self.schema)
            if not reflected.names:
                self._explain_empty(inspector)
            return reflected
        schemas = self._resolve_schemas(inspector, wanted)
        self._prepare_schemas(conn)
        parts = []
        for schema in schemas:
            self._reflecting = schema
            try:
                parts.append(self._reflect_schema(conn, inspector, schema))
            finally:
                self._reflecting = None
        return merge_schemas(parts, schemas)

    def _reflect_schema(self, conn: Connection, inspector: Inspector,
                        schema: str | None) -> ReflectedSchema:
        """Reflect one schema (each batched call once)."""
        listed = self._table_names(inspector, schema)
        internal = self._internal_tables(inspector, schema)
        tables = [name for name in listed if name not in internal]
        views = set(self._view_names(inspector))
        if schema is not None and not tables and not views:
            self._check_schema_exists(inspector, schema)
        with warnings.catch_warnings():  # a type it does not know: completed below
            warnings.filterwarnings("ignore", message=r"Did not recognize type")
            unreadable, granted = self._unreadable(
                inspector, schema, self._fragile(inspector, schema, tables, views))
        views -= unreadable
        tables = [name for name in tables if name not in unreadable]
        # What the database cannot describe (or only in part), and its internal tables, are
        # left out of every batched call below.
        only = ({"filter_names": [name for name in [*tables, *sorted(views)]
                                  if name not in granted]}
                if unreadable or internal or granted else {})

        batches = self._batches(inspector, schema, only, tables)
        columns, primary_keys = batches["columns"], batches["primary_keys"]
        for name, some in granted.items():
            columns[name] = some.columns
            primary_keys[name] = {"name": None, "constrained_columns": some.primary_key}
        reflected = ReflectedSchema(
            schema=schema, tables=sorted(tables), views=views, columns=columns,
            primary_keys=primary_keys,
            foreign_keys=batches["foreign_keys"], indexes=batches["indexes"],
            unique_constraints=batches["uniques"], comments=batches["comments"],
            check_constraints=batches["checks"])
        self._complete_types(conn, reflected)
        self._complete_indexes(conn, reflected)
        self._complete_foreign_keys(conn, reflected)
        row_counts = batches["row_counts"]
        reflected.row_counts = (row_counts if row_counts is not None
                                else self.row_counts(conn, self._countable(tables, schema)))
        reflected.database_comment = self.database_comment(conn)
        return reflected

    def _batches(self, inspector: Inspector, schema: str | None, only: dict[str, Any],
                 tables: list[str]) -> dict[str, Any]:
        """Each batched reflection of the schema's relations (``only``: those named), keyed
        by name: ``columns``, ``primary_keys``, ``foreign_keys``, ``uniques``, ``checks``,
        ``comments``, ``indexes``; and ``row_counts`` when counted beside them (else None)."""
        found: dict[str, Any] = {key: {} for key in (
            "columns", "primary_keys", "foreign_keys", "uniques", "checks", "comments",
            "indexes")}
        found["row_counts"] = None
        if only and not only["filter_names"]:
            return found  # nothing left to describe (no filter_names means every table)
        kind = self.reflect_kind

        def by_name(result: dict[tuple[str | None, str], Any]) -> dict[str, Any]:
            return {name: value for (_schema, name), value in result.items()}

        with warnings.catch_warnings():
            # Reflection warns (and skips) on what it cannot represent; the backend hooks
            # below fill the gaps, so the warnings would only be noise.
            warnings.filterwarnings("ignore", message=r"Skipped unsupported reflection")
            warnings.filterwarnings("ignore", message=r"Did not recognize type")
            with ThreadPoolExecutor(max_workers=2) as pool:
                # The biggest catalog queries (columns; indexes and row counts) on connections
                # of their own while this one runs the others: the server works on all of them
                # and the Python side overlaps its waits.
                columns_job = indexes_job = None
                if self.parallel_reflection:
                    columns_job = pool.submit(self._elsewhere, lambda insp, _conn: (
                        insp.get_multi_columns(schema=schema, kind=kind, **only)))
                    indexes_job = pool.submit(self._elsewhere, lambda insp, other: (
                        insp.get_multi_indexes(schema=schema, kind=kind, **only,
                                               **self.index_reflection_kw),
                        self.row_counts(other, self._countable(tables, schema))))
                found["primary_keys"] = by_name(inspector.get_multi_pk_constraint(
                    schema=schema, kind=kind, **only))
                found["foreign_keys"] = by_name(inspector.get_multi_foreign_keys(
                    schema=schema, kind=kind, **only))
                found["uniques"] = by_name(inspector.get_multi_unique_constraints(
                    schema=schema, kind=kind, **only))
                found["checks"] = by_name(self._check_constraints(inspector, schema, kind, only))
                if self.supports_comments:
                    found["comments"] = {name: value.get("text") for name, value in by_name(
                        inspector.get_multi_table_comment(schema=schema, kind=kind,
                                                          **only)).items()}
                if indexes_job is not None:
                    indexes, found["row_counts"] = indexes_job.result()
                else:
                    indexes = inspector.get_multi_indexes(
                        schema=schema, kind=kind, **only, **self.index_reflection_kw)
                found["indexes"] = by_name(indexes)
                found["columns"] = by_name(
                    columns_job.result() if columns_job is not None else
                    inspector.get_multi_columns(schema=schema, kind=kind, **only))
        return found

    def _countable(self, tables: list[str], schema: str | None) -> list[str]:
        """The ``tables`` whose rows may be counted: not one that a query may not read because
        reading it reaches a user-defined function dbs.yaml does not allow (a row-level
        security policy calling one): counting would run it (its row count stays unknown)."""
        if not tables:
            return tables
        functions = self.connection.user_functions()
        if not (functions.views or functions.implicit or functions.refused_views):
            return tables  # nothing a table's reading could reach (``refuse_view``)
        qualifier = schema or self.schema
        countable = []
        for name in tables:
            try:
                self.connection.relation_admission(
                    f"{qualifier}.{name}" if qualifier else name)(functions)
            except QueryRejectedError:
                continue  # the samples' step says why (the same refusal)
            countable.append(name)
        return countable

    def _check_constraints(self, inspector: Inspector, schema: str | None, kind: ObjectKind,
                           only: dict[str, Any]) -> dict[tuple[str | None, str], Any]:
        """The tables' CHECK constraints (``{name, sqltext}``), where the dialect reflects them
        (not every one does: none then)."""
        try:
            return inspector.get_multi_check_constraints(schema=schema, kind=kind, **only)
        except NotImplementedError:
            return {}

    def _elsewhere(self, work: Callable[[Inspector, Connection], T]) -> T:
        """``work`` through a connection of its own (``parallel_reflection``)."""
        with self.connection.connect() as other:
            if self.connection.config.schemas is not None:
                self._prepare_schemas(other)
            return work(inspect(other), other)

    def _check_schema_exists(self, inspector: Inspector, schema: str) -> None:
        # An empty result is ambiguous: a typo in `schema` would otherwise extract nothing.
        existing = inspector.get_schema_names()
        if schema not in existing:
            raise ConfigError(
                f"Database '{self.connection.db_id}' has no schema '{schema}' (it has: "
                f"{', '.join(sorted(existing))}); fix 'schema' in dbs.yaml.",
                db_id=self.connection.db_id)

    def _prepare_schemas(self, conn: Connection) -> None:
        """Before reflecting several schemas (e.g. make foreign keys name their schema)."""

    def _user_schemas(self, inspector: Inspector) -> dict[str, int]:
        """Schema -> number of tables and views, for the schemas that have any."""
        counts = {}
        for schema in inspector.get_schema_names():
            if schema in self.system_schemas or schema.startswith("pg_"):
                continue
            self._reflecting, previous = schema, self._reflecting
            try:
                count = (len(inspector.get_table_names(schema=schema))
                         + len(self._view_names(inspector)))
            finally:
                self._reflecting = previous
            if count:
                counts[schema] = count
        return counts

    def _explain_empty(self, inspector: Inspector) -> None:
        """No tables in the configured schema while others have some: say which (an empty
        database stays a valid, empty result)."""
        others = {name: n for name, n in self._user_schemas(inspector).items()
                  if name != self.schema}
        if not others:
            return
        where = f"schema '{self.schema}'" if self.schema else "its default schema"
        listed = ", ".join(f"{name} ({n})" for name, n in sorted(others.items()))
        first = sorted(others, key=lambda name: (-others[name], name))[0]
        raise ConfigError(
            f"Database '{self.connection.db_id}' has no tables or views in {where}; schemas "
            f"with tables (count): {listed}; set 'schema: {first}' in dbs.yaml (or a list of "
            f"schemas, or '*' for all).", db_id=self.connection.db_id)

    def _resolve_schemas(self, inspector: Inspector, wanted: list[str]) -> list[str]:
        """The configured list (each checked to exist), or for ``*`` every schema with
        tables or views, sorted by name."""
        if wanted == ["*"]:
            return sorted(self._user_schemas(inspector))
        existing = set(inspector.get_schema_names())
        for schema in wanted:
            if schema not in existing:
                self._check_schema_exists(inspector, schema)
        return wanted

    def _table_names(self, inspector: Inspector, schema: str | None) -> list[str]:
        """The schema's tables, as the dialect lists them."""
        return list(inspector.get_table_names(schema=schema))

    def _view_names(self, inspector: Inspector) -> list[str]:
        return list(inspector.get_view_names(schema=self.schema))

    def _internal_tables(self, inspector: Inspector, schema: str | None) -> set[str]:
        """Tables that hold another object's data (SQLite's virtual-table shadow tables), not
        the user's: left out of the schema. None by default."""
        return set()

    def _fragile(self, inspector: Inspector, schema: str | None, tables: list[str],
                 views: set[str]) -> set[str]:
        """The relations the database may be unable to describe, each checked alone before
        the batched calls: the views where ``views_may_break``."""
        return set(views) if self.views_may_break else set()

    def _unreadable(self, inspector: Inspector, schema: str | None,
                    names: set[str]) -> tuple[set[str], dict[str, SomeColumns]]:
        """Of ``names``, those the database cannot describe, left out of the schema with one
        warning each, so that the other tables are still annotated; and those it describes
        only in part (``_some_columns``: a column grant), with the columns the login holds.
        The descriptions are cached by the inspector, so the reflection reuses them."""
        unreadable: set[str] = set()
        granted: dict[str, SomeColumns] = {}
        for name in sorted(names):
            try:
                inspector.get_columns(name, schema=schema)
            except (DBAPIError, UnreflectableTableError) as exc:  # MySQL: the latter
                bind: Connection = inspector.bind  # type: ignore[assignment]
                some = self._some_columns(bind, schema, name, exc)
                if some is not None:
                    log.info("%s: described from the %d column(s) the login may read (a "
                             "column grant)", name, len(some.columns))
                    granted[name] = some
                    continue
                warn_left_out(name, exc)
                unreadable.add(name)
        # Not read, only described: even a LIMIT 0 SELECT of a view can run the functions it
        # calls on MariaDB (one that changes a global variable did), which annotation never
        # does. A view the database describes but cannot read (a MySQL view whose DEFINER was
        # dropped) stays listed; its sample rows are skipped with a warning.
        return unreadable, granted

    def _some_columns(self, conn: Connection, schema: str | None, name: str,
                      refusal: Exception) -> SomeColumns | None:
        """The columns of ``name`` the login holds when the database refused to describe it
        (``refusal``) because the login holds only some (a column grant); None: it cannot be
        described at all (left out). None by default: where the database describes such a
        relation (PostgreSQL does), it never gets here."""
        return None

    def _complete_indexes(self, conn: Connection, reflected: ReflectedSchema) -> None:
        """Add ``is_primary``/``index_type`` to every index; subclasses add missing indexes."""
        for name, indexes in reflected.indexes.items():
            pk_columns = reflected.primary_keys.get(name, {}).get("constrained_columns") or []
            for index in indexes:
                index.setdefault("is_primary", self._backs_primary_key(index, pk_columns))
                index.setdefault("index_type", self._index_type(index))

    def _complete_foreign_keys(self, conn: Connection, reflected: ReflectedSchema) -> None:
        """Fill what the backend's FK reflection misses (nothing by default)."""

    def _backs_primary_key(self, index: dict[str, Any], pk_columns: Sequence[str]) -> bool:
        return False

    def _index_type(self, index: dict[str, Any]) -> str:
        return self.default_index_type

    def native_enum_values(self, column: dict[str, Any]) -> list[str] | None:
        """Values of a column whose declared type is itself an enum (MySQL ``ENUM``/``SET``):
        such a column is an enum without screening. None by default."""
        return None

    def column_type(self, conn: Connection, column: dict[str, Any]) -> str:
        """The backend's spelling of a reflected column's type, e.g. ``VARCHAR(160)``."""
        declared = column.get("declared_type")
        if declared is not None:
            return declared
        type_ = column["type"]
        # A wide schema has few distinct types: compile each once (same class, same
        # attributes: same text; attributes that are objects compare by identity).
        try:
            key: Any = (type(type_), tuple(vars(type_).items()))
            compiled = self._compiled_types.get(key)
        except TypeError:  # an unhashable attribute (a list of enum labels): no caching
            key, compiled = None, None
        if compiled is None:
            try:
                compiled = type_.compile(dialect=conn.dialect)
            except CompileError:  # NullType: no declared type (e.g. some SQLite view columns)
                compiled = ""
            if key is not None:
                self._compiled_types[key] = compiled
        return compiled

    def _complete_types(self, conn: Connection, reflected: ReflectedSchema) -> None:
        # SQLAlchemy reflects types it does not know (Postgres xml, point, composite types...)
        # as NullType, losing the name: ask the catalog for those columns' declared types.
        unknown = {(table, column["name"]): column
                   for table, columns in reflected.columns.items() for column in columns
                   if isinstance(column["type"], NullType)}
        if not unknown:
            return
        tables = sorted({table for table, _name in unknown})
        for key, declared in self._declared_types(conn, tables).items():
            if key in unknown and declared:
                unknown[key]["declared_type"] = declared

    def _declared_types(self, conn: Connection,
                        tables: Sequence[str]) -> dict[tuple[str, str], str]:
        """``(table, column) -> declared type`` for ``tables`` (hand-written catalog SQL)."""
        return {}

    # -- what SQLAlchemy has no API for -----------------------------------------------------
    @abstractmethod
    def row_counts(self, conn: Connection, tables: Sequence[str]) -> dict[str, RowCount]:
        """Row counts of ``tables`` (not views: counting a view runs its query)."""

    def finish(self, conn: Connection, info: DbInfo) -> None:
        """Complete the extracted ``info`` with what the backend knows beyond the reflected
        structure (e.g. table properties, keys a catalog without constraints implies)."""

    def database_comment(self, conn: Connection) -> str | None:
        """The database's own comment, where the backend has one."""
        return None

    def sample_column(self, column: ColumnElement[Any], data_type: str) -> ColumnElement[Any]:
        """How a sample row reads a column of ``data_type`` (as it is, by default)."""
        return column

    # -- enum screening of big tables (``nl2sql.inspection.enums``) ---------------------------
    def planner_stats(self, conn: Connection, schema: str | None, table_name: str,
                      names: list[str], row_count: int,
                      settings: EnumScreeningSettings) -> dict[str, ColumnStats]:
        """Column statistics the database already keeps (no table scan); none by default."""
        return {}

    def sample_source(self, conn: Connection, base: TableClause, table_info: TableInfo,
                      settings: EnumScreeningSettings) -> FromClause:
        """A bounded sample of a big table; by default its first ``sample_size`` rows."""
        return select(*base.c).limit(settings.sample_size).subquery("sample")

    def refuses_for_good(self, exc: DBAPIError, table_info: TableInfo) -> bool:
        """Whether the database refused reading ``table_info`` whole (its sample rows) for as
        long as nobody changes a grant or the relation (no privilege, a broken view), not for
        the moment (a statement timeout, a lost connection, a lock) nor for some of its
        columns only (a column grant: queries of those columns work). Only then is it
        unreadable (``TableInfo.unreadable``). False by default: the backend cannot tell."""
        return False

    #: The function that turns an array into rows in a SELECT list (``unnest``): the elements
    #: of label arrays (tags, features) are screened like a column's values; None: they are not.
    unnest_function: ClassVar[str | None] = None
    #: A JSON column's top-level keys and how many of the rows read hold each, most frequent
    #: first (``nl2sql.inspection.json_keys``): ``{rows}`` is a SELECT of the column as ``j``,
    #: ``{keys}`` how many to return; None: not read here.
    json_keys_sql: ClassVar[str | None] = None

    # -- the offline steps over many tables per statement (``batch_size`` > 0) ---------------
    #: Tables per statement of ``sample_rows_many``/``grouped_counts_many``; 0: no batching
    #: (samples and screening run one statement per table).
    batch_size: ClassVar[int] = 0

    def sample_rows_many(self, conn: Connection, relations: Sequence[Relation],
                         rows: int) -> dict[str, list[tuple[Any, ...]]]:
        """The first ``rows`` rows of each relation, as the per-table query returns them."""
        raise NotImplementedError

    def grouped_counts_many(self, conn: Connection, relations: Sequence[Relation],
                            fetch: int) -> dict[str, dict[str, ColumnStats]]:
        """Enum-screening counts of each relation's columns over the whole table."""
        raise NotImplementedError



def merge_schemas(parts: list[ReflectedSchema], schemas: list[str]) -> ReflectedSchema:
    """Several schemas' reflections as one, keyed by schema-qualified names (``sales.orders``),
    so equal table names in two schemas never collide; foreign keys name their target the
    same way."""
    merged = ReflectedSchema(schema=None, tables=[], views=set(), columns={}, primary_keys={},
                             foreign_keys={}, indexes={}, unique_constraints={}, comments={},
                             schemas=schemas)
    for part in parts:
        schema = part.schema or ""

        def key(name: str, schema: str = schema) -> str:
            return f"{schema}.{name}"

        for name in part.names:
            merged.origins[key(name)] = (schema, name)
        merged.tables += [key(name) for name in part.tables]
        merged.views |= {key(name) for name in part.views}
        for target, source in ((merged.columns, part.columns),
                               (merged.primary_keys, part.primary_keys),
                               (merged.indexes, part.indexes),
                               (merged.unique_constraints, part.unique_constraints),
                               (merged.comments, part.comments),
                               (merged.row_counts, part.row_counts),
                               (merged.check_constraints, part.check_constraints)):
            target.update({key(name): value for name, value in source.items()})  # type: ignore[attr-defined]
        for name, fks in part.foreign_keys.items():
            merged.foreign_keys[key(name)] = [
                {**fk, "referred_table": f"{fk.get('referred_schema') or schema}."
                                         f"{fk['referred_table']}", "referred_schema": None}
                for fk in fks]
        merged.database_comment = merged.database_comment or part.database_comment
    merged.tables.sort()
    return merged


def create_inspector(connection: DbConnection) -> DbSchemaInspector:
    """The schema inspector of ``connection``'s backend (``nl2sql.backends``)."""
    return connection.config.backend.load("inspector_class")(connection)
