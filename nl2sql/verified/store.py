"""The verified answers and proposals of one database: ``{data_dir}/verified/{db_id}.sqlite``.

A file of its own beside the schema cache, so ``annotate-schema`` (which rewrites the cache)
never touches it. Two tables, so that what a model proposes can never be served or shown by
mistake: ``verified`` (what a person accepted; one row per normalised question, a person's
accept of another answer to it replaces it) and ``proposal`` (what a model accepted: listed
until a person confirms or rejects it; never read by serving or the examples). WAL mode and a
busy timeout make concurrent readers and writers (an MCP server, a notebook, the CLI) safe;
each call opens its own connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from nl2sql._helpers import sqlite_store
from nl2sql.schema.models import utc_now

BUSY_TIMEOUT_MS = 30_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS verified (
    id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    question_key TEXT NOT NULL UNIQUE,
    sql TEXT NOT NULL,
    tables TEXT NOT NULL,               -- JSON list of the tables the SQL reads
    schema_fingerprint TEXT,
    accepted_by TEXT,
    accepted_at TEXT NOT NULL,
    stale_reason TEXT                   -- NULL: served and shown; else why not
);
CREATE TABLE IF NOT EXISTS proposal (
    id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    question_key TEXT NOT NULL,
    sql TEXT NOT NULL,
    tables TEXT NOT NULL,
    schema_fingerprint TEXT,
    proposed_by TEXT,
    proposed_at TEXT NOT NULL,
    state TEXT NOT NULL,                -- 'proposed', or 'rejected' by a person
    decided_by TEXT,
    decided_at TEXT
)"""
_COLUMNS = ("id", "question", "question_key", "sql", "tables", "schema_fingerprint",
            "accepted_by", "accepted_at", "stale_reason")
_PROPOSAL_COLUMNS = ("id", "question", "question_key", "sql", "tables", "schema_fingerprint",
                     "proposed_by", "proposed_at", "state", "decided_by", "decided_at")
#: Where an answer is: proposed (by a model; never served), verified (by a person), rejected.
State = Literal["proposed", "verified", "rejected"]


class VerifiedAnswer(BaseModel):
    """A question and the SQL a person marked as its right answer (``state`` "verified"), or
    that a model proposed ("proposed": never served nor shown as an example until a person
    confirms it; "rejected": a person said no)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    id: str
    db_id: str
    question: str
    question_key: str
    sql: str
    tables: list[str] = Field(default_factory=list)
    schema_fingerprint: str | None = None
    accepted_by: str | None = None
    accepted_at: datetime = Field(default_factory=utc_now)
    stale_reason: str | None = None
    state: State = "verified"
    proposed_by: str | None = None
    proposed_at: datetime | None = None

    @property
    def stale(self) -> bool:
        return self.stale_reason is not None

    def render(self) -> str:
        if self.state == "verified":
            state = f"STALE: {self.stale_reason}" if self.stale else "verified"
            when = f"accepted {self.accepted_at:%Y-%m-%d %H:%M}{_by(self.accepted_by)}"
        else:
            proposed = self.proposed_at or self.accepted_at
            state, when = self.state, f"proposed {proposed:%Y-%m-%d %H:%M}{_by(self.proposed_by)}"
            if self.state == "rejected":
                when += f", rejected{_by(self.accepted_by)}"
        sql = " ".join(self.sql.split())
        return (f"{self.id} [{self.db_id}; {state}; {when}] {self.question}\n"
                f"  SQL: {sql}\n  reads: {', '.join(self.tables) or '?'}")


def _by(user: str | None) -> str:
    return f" by {user}" if user else ""


def store_path(data_dir: Path, db_id: str) -> Path:
    return data_dir / "verified" / f"{db_id}.sqlite"


class VerifiedStore:
    """The verified answers of ``db_id`` under ``data_dir``. Cheap to create."""

    def __init__(self, data_dir: Path, db_id: str) -> None:
        self.db_id = db_id
        self.path = store_path(data_dir, db_id)

    @contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection | None]:
        if not write and not self.path.exists():
            yield None  # nothing verified yet: no file is created by reading
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite_store(self.path, _SCHEMA, BUSY_TIMEOUT_MS) as db:
            yield db

    def _rows(self, where: str = "1", params: tuple[object, ...] = (),
              limit: int = -1) -> list[VerifiedAnswer]:
        with self._db() as db:
            if db is None:
                return []
            rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM verified WHERE {where} "
                              f"ORDER BY accepted_at DESC LIMIT ?", (*params, limit)).fetchall()
        return [self._answer(row) for row in rows]

    def _answer(self, row: tuple[object, ...]) -> VerifiedAnswer:
        values = dict(zip(_COLUMNS, row))
        values["tables"] = json.loads(str(values["tables"]))
        return VerifiedAnswer(db_id=self.db_id, **values)  # type: ignore[arg-type]

    def _proposal(self, row: tuple[object, ...]) -> VerifiedAnswer:
        values = dict(zip(_PROPOSAL_COLUMNS, row))
        values["tables"] = json.loads(str(values["tables"]))
        decided_by, decided_at = values.pop("decided_by"), values.pop("decided_at")
        return VerifiedAnswer(db_id=self.db_id, accepted_by=decided_by,
                              accepted_at=decided_at or values["proposed_at"],
                              **values)  # type: ignore[arg-type]

    # -- reading ----------------------------------------------------------------------------
    def list(self, *, include_stale: bool = True, limit: int | None = None
             ) -> list[VerifiedAnswer]:
        """Newest first (at most ``limit``); stale ones too unless ``include_stale`` is False."""
        where = "1" if include_stale else "stale_reason IS NULL"
        return self._rows(where, limit=-1 if limit is None else limit)

    def get(self, verified_id: str) -> VerifiedAnswer | None:
        found = self._rows("id = ?", (verified_id,))
        return found[0] if found else None

    def for_question(self, key: str) -> VerifiedAnswer | None:
        """The answer to the question with ``question_key`` ``key``, unless it is stale."""
        found = self._rows("question_key = ? AND stale_reason IS NULL", (key,))
        return found[0] if found else None

    def proposals(self, *, state: State = "proposed") -> list[VerifiedAnswer]:
        """The proposals in ``state`` ("proposed": waiting for a person), newest first."""
        return self._proposals("state = ?", (state,))

    def get_proposal(self, proposal_id: str) -> VerifiedAnswer | None:
        found = self._proposals("id = ?", (proposal_id,))
        return found[0] if found else None

    def _proposals(self, where: str, params: tuple[object, ...]) -> list[VerifiedAnswer]:
        with self._db() as db:
            if db is None:
                return []
            rows = db.execute(f"SELECT {', '.join(_PROPOSAL_COLUMNS)} FROM proposal WHERE "
                              f"{where} ORDER BY proposed_at DESC", params).fetchall()
        return [self._proposal(row) for row in rows]

    # -- writing ----------------------------------------------------------------------------
    def add(self, answer: VerifiedAnswer) -> None:
        """Store ``answer`` as verified (a person accepted it), replacing the verified answer
        with the same id or the same question; a proposal with its id is settled with it."""
        values = answer.model_dump(include=set(_COLUMNS))
        values["tables"] = json.dumps(answer.tables)
        values["accepted_at"] = answer.accepted_at.isoformat()
        with self._db(write=True) as db:
            assert db is not None
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM verified WHERE id = ? OR question_key = ?",
                       (answer.id, answer.question_key))
            db.execute(f"INSERT INTO verified ({', '.join(_COLUMNS)}) VALUES "
                       f"({', '.join('?' * len(_COLUMNS))})", [values[c] for c in _COLUMNS])
            db.execute("DELETE FROM proposal WHERE id = ?", (answer.id,))
            db.execute("COMMIT")

    def propose(self, answer: VerifiedAnswer) -> VerifiedAnswer:
        """Store ``answer`` as a proposal; never touches a verified answer. The stored record:
        a verified answer or a rejected proposal with the same id is left as it is (and
        returned), a waiting proposal with it is replaced."""
        values = answer.model_dump(include=set(_PROPOSAL_COLUMNS))
        values.update(tables=json.dumps(answer.tables), state="proposed", decided_by=None,
                      decided_at=None, proposed_at=(answer.proposed_at or utc_now()).isoformat())
        with self._db(write=True) as db:
            assert db is not None
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("SELECT 1 FROM verified WHERE id = ?", (answer.id,)).fetchone() \
                        or db.execute("SELECT 1 FROM proposal WHERE id = ? AND state <> "
                                      "'proposed'", (answer.id,)).fetchone():
                    db.execute("COMMIT")
                    existing = self.get(answer.id) or self.get_proposal(answer.id)
                    assert existing is not None
                    return existing
                db.execute(f"INSERT OR REPLACE INTO proposal ({', '.join(_PROPOSAL_COLUMNS)}) "
                           f"VALUES ({', '.join('?' * len(_PROPOSAL_COLUMNS))})",
                           [values[c] for c in _PROPOSAL_COLUMNS])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        stored = self.get_proposal(answer.id)
        assert stored is not None
        return stored

    def reject(self, proposal_id: str, *, rejected_by: str | None) -> bool:
        """Mark a waiting proposal rejected (kept, so it is not proposed again); False when
        there is no waiting proposal ``proposal_id``."""
        with self._db() as db:
            return db is not None and db.execute(
                "UPDATE proposal SET state = 'rejected', decided_by = ?, decided_at = ? "
                "WHERE id = ? AND state = 'proposed'",
                (rejected_by, utc_now().isoformat(), proposal_id)).rowcount > 0

    def remove(self, verified_id: str) -> bool:
        with self._db() as db:
            return db is not None and db.execute("DELETE FROM verified WHERE id = ?",
                                                 (verified_id,)).rowcount > 0

    def mark(self, verified_id: str, *, stale_reason: str | None,
             schema_fingerprint: str | None = None) -> None:
        """Mark stale (with the reason) or, with ``stale_reason`` None, checked again on the
        schema ``schema_fingerprint``."""
        with self._db() as db:
            if db is None:
                return
            if stale_reason is None:
                db.execute("UPDATE verified SET stale_reason = NULL, schema_fingerprint = ? "
                           "WHERE id = ?", (schema_fingerprint, verified_id))
            else:
                db.execute("UPDATE verified SET stale_reason = ? WHERE id = ?",
                           (stale_reason, verified_id))
