"""What nl2sql keeps besides the schema cache: verified answers and proposals, conversations,
users with tokens and the audit log, in SQLite files in the data dir (the default) or one shared
PostgreSQL database (``store: postgresql://...`` in dbs.yaml).

``Store`` (``store.py``) is the interface, one object per face; ``records`` the records it keeps
(importing them loads no SQLAlchemy); ``schema`` the tables and their versioned migrations;
``database`` where an area lives (a SQLite file or the PostgreSQL store). Names load on first
use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nl2sql._helpers import lazy_exports

if TYPE_CHECKING:
    from nl2sql.store.answers import AnswerStore
    from nl2sql.store.audit import AuditLog
    from nl2sql.store.conversations import TurnStore
    from nl2sql.store.records import (AuditRecord, ConversationSummary, IndexedQuery, Outcome,
                                      State, StoredUser, TurnRow, VerifiedAnswer)
    from nl2sql.store.store import Store
    from nl2sql.store.users import UserStore

_WHERE = {"AnswerStore": "answers", "AuditLog": "audit", "TurnStore": "conversations",
          "Store": "store", "UserStore": "users",
          **dict.fromkeys(("AuditRecord", "ConversationSummary", "Outcome", "State",
                           "IndexedQuery", "StoredUser", "TurnRow", "VerifiedAnswer"), "records")}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
