"""Which saved-query index a workspace uses, and the one a shared store keeps.

With the default store (SQLite files, one machine) a workspace keeps its own index, which also
finds files other programs drop into it (``saved_query_index``, ``saved_query_sync``). With
``store: postgresql://...`` the index is the store's ``saved_query`` table, written as results
are saved and deleted (``record``), so every server sharing the store lists what any of them
saved, and nothing is inferred from folders; files another program writes into such a
workspace are not listed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nl2sql.store.records import IndexedQuery
from nl2sql.store.store import Store
from nl2sql.workspace.saved_query_index import TERM, SavedQueryIndex, indexed_path
from nl2sql.workspace.saved_query_sync import index_fields

if TYPE_CHECKING:
    from nl2sql.store.saved_queries import SavedQueryTable

logger = logging.getLogger(__name__)


def saved_query_index(workspace: Path, store: Store) -> SavedQueryIndex | SharedSavedQueryIndex:
    """The index of ``workspace``: the shared store's, or the workspace's own."""
    if store.shared:
        return SharedSavedQueryIndex(workspace, store.saved_queries)
    return SavedQueryIndex(workspace)


class SharedSavedQueryIndex:
    """The saved queries of ``workspace`` in a shared store (``SavedQueryIndex``'s calls)."""

    def __init__(self, workspace: Path, table: SavedQueryTable) -> None:
        self.workspace = workspace
        self.key = str(workspace.resolve())  # servers sharing the store share this folder
        self.table = table

    def search(self, text: str | None = None, *, limit: int = 50,
               db_id: str | None = None) -> tuple[list[IndexedQuery], int]:
        """Saved queries newest first (matching ``text`` when given; of ``db_id`` only when
        given), and how many matched."""
        terms = None
        if text is not None and text.strip():
            terms = TERM.findall(text)
            if not terms:
                return [], 0
        return self.table.search(self.key, terms, limit=limit, db_id=db_id)

    def find(self, result_id: str) -> IndexedQuery | None:
        return self.table.find(self.key, result_id)

    def record(self, metadata_path: Path, marks: Sequence[int] = ()) -> None:
        """``metadata_path`` was just written, replaced or deleted: its row follows the file.
        Never raises: a result that could not be recorded is logged (and not listed)."""
        path = indexed_path(self.workspace, metadata_path)
        if path is None:
            return
        try:
            self.table.record(self.key, path, index_fields(metadata_path))
        except Exception as exc:  # noqa: BLE001 - recording never fails the save
            logger.warning("saved-query index: %s was not recorded in the store: %s", path, exc)
