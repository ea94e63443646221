"""Persistent conversations: each turn's pydantic-ai messages in
``{data_dir}/conversations.sqlite``.

Like a chat-history repository: ``ConversationStore`` appends one turn per answered question
(what was said and done in it, ``agents/history.py``: the run's messages without the context
the model was shown, serialized with pydantic-ai's ``ModelMessagesTypeAdapter``, plus the
``Answer`` fields), and gives back the history for the next question trimmed to a token budget,
oldest turns first. Turns are whole agent runs, so trimming never separates a tool call from its
return. SQLite in WAL mode with a busy timeout; every write is one ``BEGIN IMMEDIATE``
transaction (one writer at a time); a turn is keyed by a request id, so a retried call does not
add the same turn twice.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter

from nl2sql._helpers import sqlite_store
from nl2sql.agents.history import history_tokens, turn_history
from nl2sql.errors import Nl2SqlError
from nl2sql.schema.models import utc_now

FILE_NAME = "conversations.sqlite"
BUSY_TIMEOUT_MS = 10_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    request_id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    question TEXT NOT NULL,
    db_id TEXT,
    answer_json TEXT,
    messages_json BLOB NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
"""


class ConversationNotFoundError(Nl2SqlError):
    """A conversation id with no stored turns."""


@dataclass
class Turn:
    seq: int
    request_id: str
    created_at: str
    question: str
    db_id: str | None
    answer: dict[str, Any] | None
    messages_json: bytes

    def messages(self) -> list[Any]:
        """What was said and done in this turn (a turn stored with its context: without it)."""
        return list(self._messages)

    @cached_property
    def _messages(self) -> list[Any]:
        return turn_history(ModelMessagesTypeAdapter.validate_json(self.messages_json))

    @property
    def tokens(self) -> int:
        """A size estimate of what this turn adds to a prompt (``history_tokens``)."""
        return history_tokens(self._messages)


@dataclass
class ConversationSummary:
    conversation_id: str
    turns: int
    started_at: str
    updated_at: str
    db_id: str | None
    first_question: str


class ConversationStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> ConversationStore:
        return cls(data_dir / FILE_NAME)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite_store(self.path, _SCHEMA, BUSY_TIMEOUT_MS) as conn:
            yield conn

    # -- reading ----------------------------------------------------------------------------
    def turns(self, conversation_id: str) -> list[Turn]:
        if not self.path.is_file():
            return []
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT seq, request_id, created_at, question, db_id, answer_json, "
                "messages_json FROM turns WHERE conversation_id = ? ORDER BY seq",
                (conversation_id,)).fetchall()
        return [Turn(seq, request_id, created, question, db_id,
                     json.loads(answer) if answer else None, bytes(messages))
                for seq, request_id, created, question, db_id, answer, messages in rows]

    def turn_for_request(self, request_id: str) -> Turn | None:
        if not self.path.is_file():
            return None
        with self._connect() as conn:
            row = conn.execute(
                "SELECT seq, request_id, created_at, question, db_id, answer_json, "
                "messages_json FROM turns WHERE request_id = ?", (request_id,)).fetchone()
        if row is None:
            return None
        seq, request_id, created, question, db_id, answer, messages = row
        return Turn(seq, request_id, created, question, db_id,
                    json.loads(answer) if answer else None, bytes(messages))

    def history(self, conversation_id: str, budget_tokens: int) -> list[Any]:
        """The messages of the newest turns that fit ``budget_tokens``, oldest first."""
        return [m for turn in trim_turns(self.turns(conversation_id), budget_tokens)
                for m in turn.messages()]

    def list(self) -> list[ConversationSummary]:
        if not self.path.is_file():
            return []
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT conversation_id, count(*), min(created_at), max(created_at), "
                "(SELECT db_id FROM turns t2 WHERE t2.conversation_id = t.conversation_id "
                " ORDER BY seq DESC LIMIT 1), "
                "(SELECT question FROM turns t3 WHERE t3.conversation_id = t.conversation_id "
                " ORDER BY seq LIMIT 1) "
                "FROM turns t GROUP BY conversation_id ORDER BY max(created_at) DESC").fetchall()
        return [ConversationSummary(*row) for row in rows]

    # -- writing ----------------------------------------------------------------------------
    def append(self, conversation_id: str, *, request_id: str, question: str,
               db_id: str | None, answer: dict[str, Any] | None, messages: list[Any]) -> bool:
        """Add one turn; False (and nothing written) when ``request_id`` is already stored."""
        data = ModelMessagesTypeAdapter.dump_json(messages)
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT 1 FROM turns WHERE request_id = ?",
                                (request_id,)).fetchone():
                    conn.execute("ROLLBACK")
                    return False
                seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE "
                                   "conversation_id = ?", (conversation_id,)).fetchone()[0]
                conn.execute(
                    "INSERT INTO turns (conversation_id, seq, request_id, created_at, question, "
                    "db_id, answer_json, messages_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (conversation_id, seq, request_id, utc_now().isoformat(), question, db_id,
                     json.dumps(answer) if answer is not None else None, data))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return True

    def delete(self, conversation_id: str) -> int:
        """Delete every turn of a conversation; how many there were."""
        if not self.path.is_file():
            return 0
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            count = conn.execute("DELETE FROM turns WHERE conversation_id = ?",
                                 (conversation_id,)).rowcount
            conn.execute("COMMIT")
        return count


def trim_turns(turns: list[Turn], budget_tokens: int) -> list[Turn]:
    """The newest turns whose sizes fit ``budget_tokens``, oldest first (whole turns only, so a
    tool call always stays with its return)."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        if used + turn.tokens > budget_tokens:
            break
        kept.append(turn)
        used += turn.tokens
    return kept[::-1]
