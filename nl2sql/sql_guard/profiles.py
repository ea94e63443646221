"""What the guard knows about each backend's SQL, declared once per backend as a class.

As in sqlglot (one class per dialect, facts as class attributes), a backend's profile says which
functions and tables it denies, how its engine reads comments and strings, which extra checks
run and which statements besides queries are reads. A backend's registry entry
(``nl2sql/backends.py``) names its profile; the guard looks it up by the sqlglot dialect.
``GuardProfile`` itself is the strictest: a dialect without a backend gets every deny list and
every extra check, reads comments and strings every way an engine might, and allows no PRAGMA.
Nothing in the guard tests a backend's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import ClassVar

from nl2sql.backends import BACKENDS
from nl2sql.sql_guard import denylist
from nl2sql.sql_guard.allowlist import Allowlist
from nl2sql.sql_guard.duckdb_functions import ALLOWLIST as DUCKDB_FUNCTIONS
from nl2sql.sql_guard.spark_functions import ALLOWLIST as SPARK_FUNCTIONS
from nl2sql.sql_guard import dialect_checks as extra
from nl2sql.sql_guard.dialect_checks import CheckedQuery
from nl2sql.sql_guard.lexing import LexingRules

Check = Callable[[CheckedQuery], None]


class GuardProfile:
    """The strictest rules; each backend's profile below narrows them to its engine."""

    #: Functions a query may not call, grouped by effect (the message and the docs use these).
    denied_functions: ClassVar[Mapping[str, tuple[str, ...]]] = MappingProxyType({
        effect: tuple(sorted({name for groups in (denylist.POSTGRES, denylist.SQLITE,
                                                  denylist.SPARK, denylist.MYSQL,
                                                  denylist.DUCKDB)
                              for name in groups.get(effect, ())}))
        for effect in sorted({effect for groups in (denylist.POSTGRES, denylist.SQLITE,
                                                    denylist.SPARK, denylist.MYSQL,
                                                    denylist.DUCKDB) for effect in groups})})
    #: Name prefixes of denied function families (``lo_``, ``pg_advisory_``...).
    denied_prefixes: ClassVar[tuple[str, ...]] = (
        denylist.POSTGRES_PREFIXES + denylist.SQLITE_PREFIXES + denylist.SPARK_PREFIXES
        + denylist.MYSQL_PREFIXES + denylist.DUCKDB_PREFIXES)
    #: Tables holding credentials (``schema.name`` or a bare name in any schema).
    denied_tables: ClassVar[frozenset[str]] = (
        denylist.POSTGRES_TABLES | denylist.MYSQL_TABLES | denylist.DUCKDB_TABLES
        | denylist.SQLITE_TABLES)
    #: Prefixes of ``schema.name`` of such tables (``performance_schema.events_statements_``).
    denied_table_prefixes: ClassVar[tuple[str, ...]] = denylist.MYSQL_TABLE_PREFIXES
    #: How the engine reads comments and strings (see ``lexing.LexingRules``).
    lexing: ClassVar[LexingRules] = LexingRules()
    #: ``PRAGMA name`` statements that only read (SQLite); none elsewhere.
    read_pragmas: ClassVar[frozenset[str]] = frozenset()
    #: ``t.f`` and ``(x).f`` may call ``f`` (Postgres' attribute notation): checked as calls.
    attribute_calls: ClassVar[bool] = True
    #: Postgres clauses sqlglot cannot parse and that call nothing (``FOR READ ONLY``, the
    #: options of xmlparse/xmlserialize) are dropped from what the parser sees.
    postgres_noop_clauses: ClassVar[bool] = False
    #: The engine's reviewed functions, where it cannot enforce read-only for them itself
    #: (``allowlist.py``): a call of any other is refused, and so is a view that makes one.
    #: The strictest profile runs every backend's allowlist check (``extra_checks``).
    allowlist: ClassVar[Allowlist | None] = None
    #: ``format(fmt, ...)`` reads ``{...}`` fields (DuckDB's fmt) rather than printf's ``%...``:
    #: how the guard reads a format's widths to bound the value (``value_sizes``).
    format_braces: ClassVar[bool] = False
    #: Further checks on the parsed query.
    extra_checks: ClassVar[tuple[Check, ...]] = (
        extra.executable_comments, extra.mysql_user_functions, extra.file_path_tables,
        extra.spark_relations, extra.duckdb_functions, extra.spark_functions,
        extra.secret_settings, extra.secret_variables)

    @classmethod
    def denied_names(cls) -> frozenset[str]:
        return _names(cls)

    @classmethod
    def is_denied_function(cls, name: str) -> bool:
        """True when calling ``name`` (any case, optionally schema-qualified) has side effects."""
        bare = name.rsplit(".", 1)[-1].strip('"`[]').lower()
        return bare in cls.denied_names() or bare.startswith(cls.denied_prefixes)

    @classmethod
    def denied_effect(cls, name: str) -> str | None:
        """The deny-list group of a denied ``name`` ("file", "sleep"...; a later group is the
        more precise one); a name denied by a prefix takes the group of the listed names
        sharing that prefix."""
        bare = name.rsplit(".", 1)[-1].strip('"`[]').lower()
        groups = list(reversed(cls.denied_functions.items()))
        exact = next((effect for effect, names in groups if bare in names), None)
        prefix = next((p for p in cls.denied_prefixes if bare.startswith(p)), None)
        return exact or next((effect for effect, names in groups if prefix and any(
            n.startswith(prefix) for n in names)), None)

    @classmethod
    def is_denied_table(cls, name: str, schema: str | None) -> bool:
        """True when ``schema.name`` holds credentials."""
        bare = name.strip('"`[]').lower()
        qualified = schema.strip("\"`[]").lower() + "." + bare if schema else bare
        return bare in cls.denied_tables or qualified in cls.denied_tables \
            or (schema is not None and qualified.startswith(cls.denied_table_prefixes))


class SqliteProfile(GuardProfile):
    # SQLite: most of these exist only when an extension or the sqlite3 shell is loaded,
    # which is exactly when they are dangerous.
    denied_functions = MappingProxyType(denylist.SQLITE)
    denied_prefixes = denylist.SQLITE_PREFIXES
    denied_tables = denylist.SQLITE_TABLES
    denied_table_prefixes = ()
    lexing = LexingRules(line_comment_ends=("\n",), nested_comments=(False,),
                         line_comment_needs_space=(False,), string_escapes_pinned=True)
    read_pragmas = denylist.SQLITE_READ_PRAGMAS
    attribute_calls = False
    extra_checks = ()


class PostgresProfile(GuardProfile):
    denied_functions = MappingProxyType(denylist.POSTGRES)
    denied_prefixes = denylist.POSTGRES_PREFIXES
    denied_tables = denylist.POSTGRES_TABLES
    denied_table_prefixes = ()
    # standard_conforming_strings is pinned on by the connection (db/postgres.py).
    lexing = LexingRules(line_comment_ends=("\r\n",), nested_comments=(True,),
                         line_comment_needs_space=(False,), string_escapes_pinned=True,
                         colon_parameters=False)
    postgres_noop_clauses = True
    extra_checks = (extra.secret_settings,)


class MysqlProfile(GuardProfile):
    denied_functions = MappingProxyType(denylist.MYSQL)
    denied_prefixes = denylist.MYSQL_PREFIXES
    denied_tables = denylist.MYSQL_TABLES
    # the session's sql_mode is pinned by the connection (db/mysql.py: backslashes escape).
    lexing = LexingRules(line_comment_ends=("\n",), nested_comments=(False,),
                         line_comment_needs_space=(True,), hash_comments=True,
                         string_escapes_pinned=True, colon_parameters=False)
    attribute_calls = False
    extra_checks = (extra.executable_comments, extra.mysql_user_functions,
                    extra.secret_variables)


class DuckdbProfile(GuardProfile):
    # The configured files are views already, so no query needs to read a file itself.
    denied_functions = MappingProxyType(denylist.DUCKDB)
    denied_prefixes = denylist.DUCKDB_PREFIXES
    denied_tables = denylist.DUCKDB_TABLES
    lexing = LexingRules(line_comment_ends=("\r\n",), line_comment_needs_space=(False,),
                         colon_parameters=False)
    denied_table_prefixes = ()
    allowlist = DUCKDB_FUNCTIONS
    format_braces = True
    extra_checks = (extra.file_path_tables, extra.duckdb_functions, extra.secret_settings)


class SparkProfile(GuardProfile):
    # Spark has no read-only mode: its list is the strictest of the backends' (spark.py).
    denied_functions = MappingProxyType(denylist.SPARK)
    denied_prefixes = denylist.SPARK_PREFIXES
    denied_tables = frozenset()
    denied_table_prefixes = ()
    # escapedStringLiterals and doubleQuotedIdentifiers are pinned off by the session.
    lexing = LexingRules(line_comment_ends=("\r\n",), nested_comments=(True,),
                         line_comment_needs_space=(False,), string_escapes_pinned=True,
                         hints=True)
    attribute_calls = False
    allowlist = SPARK_FUNCTIONS
    extra_checks = (extra.spark_relations, extra.spark_functions)


@cache
def profile_for(dialect: str) -> type[GuardProfile]:
    """The profile of the backend whose queries are read in ``dialect``; the strictest else."""
    for backend in BACKENDS.values():
        if backend.sqlglot_dialect == dialect.lower():
            return backend.load("guard_profile")
    return GuardProfile


def is_denied_function(name: str, dialect: str) -> bool:
    """True when calling ``name`` in ``dialect`` has side effects (any case, qualified or not)."""
    return profile_for(dialect).is_denied_function(name)


@cache
def _names(profile: type[GuardProfile]) -> frozenset[str]:
    return frozenset(name for names in profile.denied_functions.values() for name in names)


def _by_dialect() -> dict[str, type[GuardProfile]]:
    return {backend.sqlglot_dialect: backend.load("guard_profile")
            for backend in BACKENDS.values()}


#: Per sqlglot dialect of a backend: its denied names, prefixes and each name's effect.
DENIED_FUNCTIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {dialect: profile.denied_names() for dialect, profile in _by_dialect().items()})
DENIED_FUNCTION_PREFIXES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {dialect: profile.denied_prefixes for dialect, profile in _by_dialect().items()})
DENIED_FUNCTION_EFFECTS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    dialect: MappingProxyType({name: effect for effect, names in
                               profile.denied_functions.items() for name in names})
    for dialect, profile in _by_dialect().items()})
