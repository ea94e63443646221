"""Persistent conversations: each turn's pydantic-ai messages, kept by the store
(``{data_dir}/conversations.sqlite`` by default, or the shared PostgreSQL store).

Like a chat-history repository: ``ConversationStore`` appends one turn per answered question
(what was said and done in it, ``agents/history.py``: the run's messages without the context
the model was shown, serialized with pydantic-ai's ``ModelMessagesTypeAdapter``, plus the
``Answer`` fields), and gives back the history for the next question trimmed to a token budget,
oldest turns first, read back from the newest only as far as the budget reaches (the thousandth
turn of a conversation costs what the tenth did). Turns are whole agent runs, so trimming never
separates a tool call from its return; a turn too long to fit whole is condensed to its question
and answer. Storage is ``nl2sql.store`` (``TurnStore``): one writer at
a time, and a turn keyed by a request id, so a retried call does not add the same turn twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter

from nl2sql._helpers import os_user_name
from nl2sql.agents.history import history_tokens, said_and_done, turn_history
from nl2sql.errors import Nl2SqlError
from nl2sql.store.records import ConversationSummary, TurnRow
from nl2sql.store.store import Store

#: Turns read per page when walking a conversation back from its newest turn.
PAGE_TURNS = 16


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

    def condensed(self, note: str = "") -> Turn | None:
        """This turn as its question and the answer's explanation and SQL only (what a
        follow-up needs most), for a history that cannot hold it whole (long result previews,
        many retries); ``note`` before the explanation. None for a turn stored without its
        answer."""
        sql = (self.answer or {}).get("sql")
        if not sql:
            return None
        messages = said_and_done(self.question, sql,
                                 note + (self.answer.get("explanation") or ""))
        return replace(self, messages_json=ModelMessagesTypeAdapter.dump_json(messages))

    def seen_from(self, db_id: str) -> Turn:
        """This turn in the history of a question to ``db_id``: as it is when it was asked of
        that database too; asked of another, condensed, its answer saying which database its
        SQL ran on, so that a follow-up across databases ("And in northwind?") translates it
        instead of taking the other schema's tables for this one's."""
        if not self.db_id or self.db_id == db_id:
            return self
        return self.condensed(f"(On database '{self.db_id}', not '{db_id}': its tables "
                              f"and SQL are that database's.) ") or self


class ConversationStore:
    """``user``'s conversations in ``store`` (``TurnStore``), as pydantic-ai messages."""

    def __init__(self, store: Store, user: str) -> None:
        self.turn_store = store.conversations
        self.user = user

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> ConversationStore:
        """The OS account's conversations in the default store (SQLite files in
        ``data_dir``)."""
        return cls(Store(data_dir), os_user_name())

    # -- reading ----------------------------------------------------------------------------
    def turns(self, conversation_id: str) -> list[Turn]:
        return [_turn(row) for row in self.turn_store.turns(conversation_id, user=self.user)]

    def recent_turns(self, conversation_id: str, budget_tokens: int,
                     at_least: int = 2) -> list[Turn]:
        """The newest turns that fit ``budget_tokens`` (``trim_turns``), and at least the newest
        ``at_least`` whatever their size, oldest first: read from the newest back a page at a
        time, until a turn that does not fit has been read."""
        read: list[Turn] = []  # oldest first
        before = None
        while True:
            page = self.turn_store.newest_turns(conversation_id, user=self.user,
                                                count=PAGE_TURNS, before=before)
            read[:0] = [_turn(row) for row in reversed(page)]
            fitting = len(trim_turns(read, budget_tokens))
            if len(page) < PAGE_TURNS or (fitting < len(read) and len(read) >= at_least):
                return read[max(len(read) - max(fitting, at_least), 0):]
            before = page[-1].seq

    def page(self, conversation_id: str, count: int,
             before: int | None = None) -> tuple[list[Turn], int | None]:
        """Up to ``count`` turns, oldest first, the newest of them just before turn number
        ``before`` (default: the conversation's newest); and the ``before`` of the page of
        turns before them (None: none are left)."""
        rows = self.turn_store.newest_turns(conversation_id, user=self.user, count=count + 1,
                                            before=before)
        earlier = rows[count - 1].seq if len(rows) > count else None
        return [_turn(row) for row in reversed(rows[:count])], earlier

    def turn_for_request(self, request_id: str) -> Turn | None:
        row = self.turn_store.turn_for_request(request_id, user=self.user)
        return _turn(row) if row is not None else None

    def history(self, conversation_id: str, budget_tokens: int) -> list[Any]:
        """The messages of the newest turns that fit ``budget_tokens``, oldest first."""
        return [m for turn in trim_turns(self.recent_turns(conversation_id, budget_tokens),
                                         budget_tokens)
                for m in turn.messages()]

    def list(self) -> list[ConversationSummary]:
        return self.turn_store.list(user=self.user)

    def check_owner(self, conversation_id: str) -> None:
        """``StoreError`` when the conversation is another user's."""
        self.turn_store.check_owner(conversation_id, user=self.user)

    # -- writing ----------------------------------------------------------------------------
    def append(self, conversation_id: str, *, request_id: str, question: str,
               db_id: str | None, answer: dict[str, Any] | None, messages: list[Any]) -> bool:
        """Add one turn; False (and nothing written) when ``request_id`` is already stored."""
        return self.turn_store.append(
            conversation_id, user=self.user, request_id=request_id, question=question,
            db_id=db_id,
            answer_json=json.dumps(answer) if answer is not None else None,
            messages_json=ModelMessagesTypeAdapter.dump_json(messages))

    def delete(self, conversation_id: str) -> int:
        """Delete every turn of a conversation; how many there were."""
        return self.turn_store.delete(conversation_id, user=self.user)


def _turn(row: TurnRow) -> Turn:
    return Turn(row.seq, row.request_id, row.created_at, row.question, row.db_id,
                json.loads(row.answer_json) if row.answer_json else None, row.messages_json)


def trim_turns(turns: list[Turn], budget_tokens: int) -> list[Turn]:
    """The newest turns whose sizes fit ``budget_tokens``, oldest first: each whole (a tool call
    always stays with its return) or, when it does not fit whole, condensed to its question and
    answer (``Turn.condensed``), so that a turn with a long result is not lost to the next
    question; back to the first turn that fits neither way."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        if used + turn.tokens > budget_tokens:
            condensed = turn.condensed()
            if condensed is None or used + condensed.tokens > budget_tokens:
                break
            turn = condensed
        kept.append(turn)
        used += turn.tokens
    return kept[::-1]
