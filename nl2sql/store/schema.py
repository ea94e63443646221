"""The store's tables (SQLAlchemy Core), by area, and the migrations that bring a database to
them: a ``schema_version`` table holds each area's version, and a database written by a newer
nl2sql is refused in one sentence, never changed.

Areas and where each lives with the SQLite default (with ``store: postgresql://...`` all of them
are tables of that one database):

| area | tables | SQLite file |
|---|---|---|
| ``answers`` | ``verified``, ``proposal`` | ``{data_dir}/verified/{db_id}.sqlite`` (one per database) |
| ``conversations`` | ``turns`` | ``{data_dir}/conversations.sqlite`` |
| ``users`` | ``users`` | ``{data_dir}/users.sqlite`` |
| ``audit`` | ``audit`` | ``{data_dir}/audit.sqlite`` |
| ``saved_queries`` | ``saved_query`` | (none: a local workspace keeps its own index) |

Files written before the store had versions (``verified/{db_id}.sqlite``,
``conversations.sqlite``) are version 1 of their area and are migrated in place on first use.
Times are ISO-8601 text in UTC (as the files before were), so they sort as text on both engines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (Column, Computed, Connection, Index, Integer, LargeBinary, MetaData, Table,
                        Text, UniqueConstraint, inspect, select, text)
from sqlalchemy.dialects import postgresql

from nl2sql._helpers import os_user_name
from nl2sql.errors import StoreError

metadata = MetaData()

schema_version = Table(
    "schema_version", metadata,
    Column("area", Text, primary_key=True),
    Column("version", Integer, nullable=False))

# -- answers: what a person verified, and what a model proposed ----------------------------------
verified = Table(
    "verified", metadata,
    Column("id", Text, primary_key=True),
    Column("db_id", Text),
    Column("question", Text, nullable=False),
    Column("question_key", Text, nullable=False),
    Column("sql", Text, nullable=False),
    Column("tables", Text, nullable=False),  # JSON list of the tables the SQL reads
    Column("schema_fingerprint", Text),
    Column("accepted_by", Text),
    Column("accepted_at", Text, nullable=False),
    Column("stale_reason", Text),  # NULL: served and shown; else why not
    Column("proposed_by", Text),  # when a person confirmed a model's proposal
    Column("proposed_at", Text),
    UniqueConstraint("db_id", "question_key"))

proposal = Table(
    "proposal", metadata,
    Column("id", Text, primary_key=True),
    Column("db_id", Text),
    Column("question", Text, nullable=False),
    Column("question_key", Text, nullable=False),
    Column("sql", Text, nullable=False),
    Column("tables", Text, nullable=False),
    Column("schema_fingerprint", Text),
    Column("proposed_by", Text),
    Column("proposed_at", Text, nullable=False),
    Column("state", Text, nullable=False),  # 'proposed', or 'rejected' by a person
    Column("decided_by", Text),
    Column("decided_at", Text))

# -- conversations ------------------------------------------------------------------------------
turns = Table(
    "turns", metadata,
    Column("conversation_id", Text, primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("request_id", Text, nullable=False, unique=True),
    Column("created_at", Text, nullable=False),
    Column("question", Text, nullable=False),
    Column("db_id", Text),
    Column("answer_json", Text),
    Column("messages_json", LargeBinary, nullable=False),
    Column("user", Text))  # whose conversation it is: only they read or continue it

# -- users and the audit log ----------------------------------------------------------------------
users = Table(
    "users", metadata,
    Column("name", Text, primary_key=True),
    Column("token_hash", Text, nullable=False, unique=True),
    Column("groups", Text, nullable=False),  # JSON list of group names
    Column("created_at", Text, nullable=False))

audit = Table(
    "audit", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", Text, nullable=False),
    Column("user", Text),
    Column("face", Text),
    Column("tool", Text),
    Column("db_id", Text),
    Column("sql", Text),
    Column("row_count", Integer),
    Column("duration_ms", Integer),
    Column("outcome", Text, nullable=False),
    Column("answer_id", Text),
    Index("audit_ts", "ts"),
    Index("audit_user_ts", "user", "ts"),
    Index("audit_db_ts", "db_id", "ts"))

# -- the saved-query index of a shared store (a local workspace keeps its own) -------------------
#: What a saved-query search matches: the question and the SQL as PostgreSQL words (``simple``:
#: no stemming or stop words, as SQLite's FTS5 in a local index), stored with the row so a
#: search never computes them again.
SEARCH_WORDS = ("to_tsvector('simple'::regconfig, coalesce(natural_language_query, '') || ' ' "
                "|| coalesce(sql_query, ''))")

saved_query = Table(
    "saved_query", metadata,
    Column("workspace", Text, primary_key=True),  # the workspace folder's absolute path
    Column("path", Text, primary_key=True),  # its metadata file, relative, '/'-separated
    Column("timestamp", Text),
    Column("db_id", Text),
    Column("row_count", Integer),
    Column("column_count", Integer),
    Column("csv_filename", Text),
    Column("natural_language_query", Text),
    Column("sql_query", Text),
    Column("result_id", Text),
    Column("words", postgresql.TSVECTOR, Computed(SEARCH_WORDS, persisted=True)),
    Index("saved_query_newest", "workspace", "timestamp", "path"),
    Index("saved_query_result", "workspace", "result_id"),
    Index("saved_query_words", "words", postgresql_using="gin"))


def _answers_2(connection: Connection, context: Mapping[str, Any]) -> None:
    """Files before versions: ``verified`` without ``db_id`` and who proposed it; the
    ``proposal`` table (of the first release with proposals) without ``db_id``."""
    for name in ("db_id", "proposed_by", "proposed_at"):
        connection.execute(text(f"ALTER TABLE verified ADD COLUMN {name} TEXT"))
    if inspect(connection).has_table("proposal"):
        connection.execute(text("ALTER TABLE proposal ADD COLUMN db_id TEXT"))
    else:
        proposal.create(connection)
    for table in (verified, proposal):
        connection.execute(table.update().values(db_id=context.get("db_id")))


def _conversations_2(connection: Connection, context: Mapping[str, Any]) -> None:
    """Conversations before they had an owner: the OS account's (the only user a data dir's
    files had)."""
    connection.execute(text('ALTER TABLE turns ADD COLUMN "user" TEXT'))
    connection.execute(turns.update().values(user=os_user_name()))


def _saved_queries_2(connection: Connection, context: Mapping[str, Any]) -> None:
    """The first release searched without stored words (a search computed them per row)."""
    connection.execute(text(f"ALTER TABLE saved_query ADD COLUMN words tsvector "
                            f"GENERATED ALWAYS AS ({SEARCH_WORDS}) STORED"))
    connection.execute(text("CREATE INDEX saved_query_words ON saved_query USING gin (words)"))


@dataclass(frozen=True)
class Area:
    """One area's tables, its version, and how a database of an older version is brought up."""

    name: str
    tables: tuple[Table, ...]
    #: A table that marks a database from before versions (it is version 1 of the area).
    legacy_table: str | None = None
    #: version n -> the step from version n - 1 to n.
    steps: Mapping[int, Callable[[Connection, Mapping[str, Any]], None]] = field(
        default_factory=dict)

    @property
    def version(self) -> int:
        return max(self.steps, default=1)


AREAS = {area.name: area for area in (
    Area("answers", (verified, proposal), legacy_table="verified", steps={2: _answers_2}),
    Area("conversations", (turns,), legacy_table="turns", steps={2: _conversations_2}),
    Area("users", (users,)),
    Area("audit", (audit,)),
    Area("saved_queries", (saved_query,), steps={2: _saved_queries_2}),
)}


def prepare(connection: Connection, area: Area, where: str, **context: Any) -> None:
    """Bring ``area``'s tables in the database behind ``connection`` (inside its write
    transaction) to the code's version; refuse a newer one. ``context``: what a step needs
    (the ``db_id`` of a per-database file)."""
    schema_version.create(connection, checkfirst=True)
    current = connection.execute(select(schema_version.c.version).where(
        schema_version.c.area == area.name)).scalar()
    if current is None:
        if area.legacy_table and inspect(connection).has_table(area.legacy_table):
            current = 1
        else:
            metadata.create_all(connection, tables=list(area.tables), checkfirst=True)
            current = area.version
        connection.execute(schema_version.insert().values(area=area.name, version=current))
    if current > area.version:
        raise StoreError(
            f"The store {where} holds {area.name} at schema version {current}, written by a "
            f"newer nl2sql (this one knows version {area.version}); upgrade nl2sql, or point "
            f"'store:' in dbs.yaml elsewhere.")
    for version in range(current + 1, area.version + 1):
        area.steps[version](connection, context)
    if current != area.version:
        connection.execute(schema_version.update().where(
            schema_version.c.area == area.name).values(version=area.version))
