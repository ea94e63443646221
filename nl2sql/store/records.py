"""The records the store keeps, as the rest of nl2sql sees them (no SQLAlchemy here: the MCP
server's start-up imports these, not the storage)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nl2sql._helpers import one_line
from nl2sql.schema.models import utc_now

#: Where an answer is: proposed (by a model; never served), verified (by a person), rejected.
State = Literal["proposed", "verified", "rejected"]


class VerifiedAnswer(BaseModel):
    """A question and the SQL a person marked as its right answer (``state`` "verified"), or
    that a model proposed ("proposed": never served nor shown as an example until a person
    confirms it; "rejected": a person said no, ``accepted_by``/``accepted_at`` say who and
    when)."""

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
        sql = one_line(self.sql)
        return (f"{self.id} [{self.db_id}; {state}; {when}] {one_line(self.question)}\n"
                f"  SQL: {sql}\n  reads: {', '.join(self.tables) or '?'}")


def _by(user: str | None) -> str:
    return f" by {user}" if user else ""



# -- users and the audit log ----------------------------------------------------------------------
class StoredUser(BaseModel):
    """A user with a token of their own."""

    model_config = ConfigDict(defer_build=True)

    name: str
    token_hash: str = Field(repr=False)
    groups: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utc_now)



#: How a recorded call ended.
Outcome = Literal["ok", "refused", "error", "cancelled"]


class AuditRecord(BaseModel):
    """What ran, for whom, through which face, and how it ended."""

    model_config = ConfigDict(defer_build=True)

    ts: datetime = Field(default_factory=utc_now)
    user: str | None = None
    face: str | None = None  # mcp-stdio, mcp-http, cli, python, web ...
    tool: str | None = None  # the MCP tool, "ask", ...
    db_id: str | None = None
    sql: str | None = None
    row_count: int | None = None
    duration_ms: int | None = None
    outcome: Outcome = "ok"
    answer_id: str | None = None

    @field_validator("user", "face", "tool", "db_id", "sql", "answer_id")
    @classmethod
    def _storable(cls, value: str | None) -> str | None:
        return storable_text(value) if value is not None else None


def storable_text(text: str) -> str:
    """``text`` as every store can keep it: a NUL (PostgreSQL refuses it in text) and a lone
    surrogate (not UTF-8: an undecodable byte of a command line) written as backslash escapes,
    so that the record of an odd call is written like any other, and the records written with
    it too."""
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")



# -- conversations --------------------------------------------------------------------------------
@dataclass
class TurnRow:
    """One stored turn, as stored."""

    seq: int
    request_id: str
    created_at: str
    question: str
    db_id: str | None
    answer_json: str | None
    messages_json: bytes


@dataclass
class ConversationSummary:
    conversation_id: str
    turns: int
    started_at: str
    updated_at: str
    db_id: str | None
    first_question: str


# -- the saved-query index ------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexedQuery:
    """One saved query as an index knows it (``path`` is the metadata file, relative to its
    workspace, ``/``-separated)."""

    path: str
    timestamp: str | None
    db_id: str | None
    row_count: int | None
    column_count: int | None
    csv_filename: str | None
    natural_language_query: str | None
    sql_query: str | None
    result_id: str | None = None
