"""Verified answers and proposals of one database (the ``answers`` area).

Two tables, so that what a model proposes can never be served or shown by mistake: ``verified``
(what a person accepted; one per normalised question: a person's accept of another answer to it
replaces it) and ``proposal`` (what a model accepted: listed until a person confirms it, which
moves it to ``verified``, or rejects it, which keeps it as rejected so it is not proposed again).
Serving and the examples read ``verified`` only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, delete, desc, insert, or_, select, update

from nl2sql.schema.models import utc_now
from nl2sql.store.database import Database
from nl2sql.store.records import State, VerifiedAnswer
from nl2sql.store.schema import proposal, verified

class AnswerStore:
    """The verified answers and proposals of ``db_id`` in ``database``. Cheap to create."""

    def __init__(self, database: Database, db_id: str) -> None:
        self.database = database
        self.db_id = db_id

    # -- reading ----------------------------------------------------------------------------
    def list(self, *, include_stale: bool = True, limit: int | None = None
             ) -> list[VerifiedAnswer]:
        """Verified answers newest first (at most ``limit``); stale ones too unless
        ``include_stale`` is False."""
        query = self._verified().order_by(desc(verified.c.accepted_at)).limit(limit)
        if not include_stale:
            query = query.where(verified.c.stale_reason.is_(None))
        return self._read(query, self._answer)

    def get(self, verified_id: str) -> VerifiedAnswer | None:
        found = self._read(self._verified().where(verified.c.id == verified_id), self._answer)
        return found[0] if found else None

    def for_question(self, key: str) -> VerifiedAnswer | None:
        """The verified answer to the question with ``question_key`` ``key``, unless stale."""
        found = self._read(self._verified().where(verified.c.question_key == key,
                                                  verified.c.stale_reason.is_(None)),
                           self._answer)
        return found[0] if found else None

    def proposals(self, *, state: State = "proposed") -> list[VerifiedAnswer]:
        """The proposals in ``state`` ("proposed": waiting for a person), newest first."""
        return self._read(self._proposals().where(proposal.c.state == state).order_by(
            desc(proposal.c.proposed_at)), self._proposal)

    def get_proposal(self, proposal_id: str) -> VerifiedAnswer | None:
        found = self._read(self._proposals().where(proposal.c.id == proposal_id),
                           self._proposal)
        return found[0] if found else None

    # -- writing ----------------------------------------------------------------------------
    def add(self, answer: VerifiedAnswer) -> None:
        """Store ``answer`` as verified (a person accepted it), replacing the verified answer
        with the same id or the same question; a proposal with its id is settled with it."""
        row = _row(answer, verified) | {"db_id": self.db_id}

        def write(connection: Connection) -> None:
            connection.execute(delete(verified).where(
                (verified.c.id == answer.id) | ((verified.c.db_id == self.db_id)
                                                & (verified.c.question_key == answer.question_key))))
            connection.execute(insert(verified).values(row))
            connection.execute(delete(proposal).where(proposal.c.id == answer.id))

        self.database.write(write)

    def propose(self, answer: VerifiedAnswer) -> VerifiedAnswer:
        """Store ``answer`` as a proposal; never touches a verified answer. Returns what is
        stored: a verified answer or a rejected proposal with the same id stays as it is (and
        is returned), and so does a waiting proposal someone else made (another person's
        accept of it leaves it theirs); its own proposer's proposal again replaces it."""
        row = _row(answer, proposal) | {
            "db_id": self.db_id, "state": "proposed", "decided_by": None, "decided_at": None,
            "proposed_at": (answer.proposed_at or utc_now()).isoformat()}

        def write(connection: Connection) -> None:
            settled = connection.execute(select(verified.c.id).where(
                verified.c.id == answer.id)).first() or connection.execute(
                select(proposal.c.id).where(proposal.c.id == answer.id, or_(
                    proposal.c.state != "proposed",
                    proposal.c.proposed_by.is_distinct_from(answer.proposed_by)))).first()
            if settled is None:
                connection.execute(delete(proposal).where(proposal.c.id == answer.id))
                connection.execute(insert(proposal).values(row))

        self.database.write(write)
        stored = self.get(answer.id) or self.get_proposal(answer.id)
        assert stored is not None
        return stored

    def reject(self, proposal_id: str, *, rejected_by: str | None) -> bool:
        """Mark a waiting proposal rejected (kept, so it is not proposed again); False when
        there is no waiting proposal ``proposal_id``."""
        return self.database.write(lambda connection: connection.execute(
            update(proposal).where(proposal.c.id == proposal_id, proposal.c.state == "proposed")
            .values(state="rejected", decided_by=rejected_by,
                    decided_at=utc_now().isoformat())).rowcount > 0)

    def remove(self, verified_id: str) -> bool:
        return self.database.exists() and self.database.write(
            lambda connection: connection.execute(
                delete(verified).where(verified.c.id == verified_id)).rowcount > 0)

    def mark(self, verified_id: str, *, stale_reason: str | None,
             schema_fingerprint: str | None = None) -> None:
        """Mark stale (with the reason) or, with ``stale_reason`` None, checked again on the
        schema ``schema_fingerprint``."""
        values: dict[str, Any] = {"stale_reason": stale_reason}
        if stale_reason is None:
            values["schema_fingerprint"] = schema_fingerprint
        if self.database.exists():
            self.database.write(lambda connection: connection.execute(
                update(verified).where(verified.c.id == verified_id).values(values)))

    # -- rows -------------------------------------------------------------------------------
    def _verified(self) -> Any:
        return select(verified).where(verified.c.db_id == self.db_id)

    def _proposals(self) -> Any:
        return select(proposal).where(proposal.c.db_id == self.db_id)

    def _read(self, query: Any, build: Any) -> list[VerifiedAnswer]:
        return self.database.read(
            lambda connection: [build(row._mapping) for row in connection.execute(query)], [])

    def _answer(self, row: Mapping[str, Any]) -> VerifiedAnswer:
        return VerifiedAnswer(**{**row, "tables": json.loads(row["tables"]),
                                 "db_id": self.db_id})

    def _proposal(self, row: Mapping[str, Any]) -> VerifiedAnswer:
        values = {**row, "tables": json.loads(row["tables"]), "db_id": self.db_id}
        decided_by, decided_at = values.pop("decided_by"), values.pop("decided_at")
        return VerifiedAnswer(accepted_by=decided_by,
                              accepted_at=decided_at or values["proposed_at"], **values)


def _row(answer: VerifiedAnswer, table: Table) -> dict[str, Any]:
    """``answer``'s fields that are columns of ``table``, as stored (JSON, ISO times)."""
    values = answer.model_dump(include=set(table.c.keys()))
    values["tables"] = json.dumps(answer.tables)
    for name, value in values.items():
        if isinstance(value, datetime):
            values[name] = value.isoformat()
    return values
