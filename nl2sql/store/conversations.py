"""Conversations (the ``conversations`` area): one row per answered question, in order, with
what was said and done in it (``messages_json``, pydantic-ai's serialized messages, which
``nl2sql.agents.conversations`` reads) and the answer. A conversation is its first user's: only
they read, list, continue or delete it (an id another user has is refused, so a shared store
never mixes two people's questions and results). A turn is keyed by a request id, so a retried
call does not add the same turn twice; the next turn number is read and written in one ordered
write, so concurrent writers never collide."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select

from nl2sql.errors import StoreError
from nl2sql.schema.models import utc_now
from nl2sql.store.database import Database
from nl2sql.store.records import ConversationSummary, TurnRow
from nl2sql.store.schema import turns


_TURN = (turns.c.seq, turns.c.request_id, turns.c.created_at, turns.c.question, turns.c.db_id,
         turns.c.answer_json, turns.c.messages_json)


class TurnStore:
    """The conversations in ``database``. Cheap to create."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def turns(self, conversation_id: str, *, user: str) -> list[TurnRow]:
        """The turns of ``user``'s conversation ``conversation_id``, oldest first."""
        return self._read(select(*_TURN).where(turns.c.conversation_id == conversation_id,
                                               turns.c.user == user).order_by(turns.c.seq))

    def newest_turns(self, conversation_id: str, *, user: str, count: int,
                     before: int | None = None) -> list[TurnRow]:
        """Up to ``count`` turns of ``user``'s conversation, the newest first; with ``before``,
        only turns numbered below it (the next page back). Read through the primary key: a
        page costs the same however long the conversation is."""
        query = select(*_TURN).where(turns.c.conversation_id == conversation_id,
                                     turns.c.user == user)
        if before is not None:
            query = query.where(turns.c.seq < before)
        return self._read(query.order_by(turns.c.seq.desc()).limit(count))

    def turn_for_request(self, request_id: str, *, user: str) -> TurnRow | None:
        found = self._read(select(*_TURN).where(turns.c.request_id == request_id,
                                                turns.c.user == user))
        return found[0] if found else None

    def list(self, *, user: str) -> list[ConversationSummary]:
        """``user``'s conversations, the most recently continued first."""
        t2, t3 = turns.alias("t2"), turns.alias("t3")
        last_db = (select(t2.c.db_id).where(t2.c.conversation_id == turns.c.conversation_id)
                   .order_by(t2.c.seq.desc()).limit(1).scalar_subquery())
        first = (select(t3.c.question).where(t3.c.conversation_id == turns.c.conversation_id)
                 .order_by(t3.c.seq).limit(1).scalar_subquery())
        query = (select(turns.c.conversation_id, func.count(), func.min(turns.c.created_at),
                        func.max(turns.c.created_at), last_db, first)
                 .where(turns.c.user == user).group_by(turns.c.conversation_id)
                 .order_by(func.max(turns.c.created_at).desc()))
        return self.database.read(lambda connection: [
            ConversationSummary(*row) for row in connection.execute(query)], [])

    def append(self, conversation_id: str, *, user: str, request_id: str, question: str,
               db_id: str | None, answer_json: str | None, messages_json: bytes) -> bool:
        """Add one turn to ``user``'s conversation; False (and nothing written) when
        ``request_id`` is already stored. ``StoreError`` when the id is another user's."""

        def write(connection: Connection) -> bool:
            _refuse_another_users(connection, conversation_id, user)
            if connection.execute(select(turns.c.seq).where(
                    turns.c.request_id == request_id)).first() is not None:
                return False
            seq = connection.execute(select(func.coalesce(func.max(turns.c.seq), 0) + 1).where(
                turns.c.conversation_id == conversation_id)).scalar_one()
            connection.execute(insert(turns).values(
                conversation_id=conversation_id, seq=seq, request_id=request_id,
                created_at=utc_now().isoformat(), question=question, db_id=db_id,
                answer_json=answer_json, messages_json=messages_json, user=user))
            return True

        return self.database.write(write)

    def check_owner(self, conversation_id: str, *, user: str) -> None:
        """``StoreError`` when ``conversation_id`` is another user's (before a turn is asked,
        so that no model request is spent on a turn that cannot be stored)."""
        self.database.read(lambda connection: _refuse_another_users(
            connection, conversation_id, user), None)

    def delete(self, conversation_id: str, *, user: str) -> int:
        """Delete every turn of ``user``'s conversation; how many there were."""
        if not self.database.exists():
            return 0
        return self.database.write(lambda connection: connection.execute(
            delete(turns).where(turns.c.conversation_id == conversation_id,
                                turns.c.user == user)).rowcount)

    def _read(self, query: Any) -> list[TurnRow]:
        return self.database.read(
            lambda connection: [_turn(row._mapping) for row in connection.execute(query)], [])


def _refuse_another_users(connection: Connection, conversation_id: str, user: str) -> None:
    owner = connection.execute(select(turns.c.user).where(
        turns.c.conversation_id == conversation_id).limit(1)).scalar()
    if owner is not None and owner != user:
        raise StoreError(f"Conversation '{conversation_id}' is another user's; continue one of "
                         f"yours (nl2sql-ask --list-conversations) or start one with another id.")


def _turn(row: Mapping[str, Any]) -> TurnRow:
    return TurnRow(**{**row, "messages_json": bytes(row["messages_json"])})
