"""The saved-query index of a shared store (the ``saved_queries`` area, PostgreSQL): one row per
result metadata file, written as nl2sql saves or deletes the result, so every server sharing the
store lists what any of them saved, with no folder to watch. Searched with PostgreSQL's full
text (every word a required prefix, over the question and the SQL), newest first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, delete, func, literal_column, select
from sqlalchemy.dialects.postgresql import insert

from nl2sql.store.database import Database
from nl2sql.store.records import IndexedQuery
from nl2sql.store.schema import saved_query

_COLUMNS = [saved_query.c[name] for name in IndexedQuery.__dataclass_fields__]


class SavedQueryTable:
    """The saved queries of every workspace sharing ``database``. Cheap to create."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def record(self, workspace: str, path: str, values: Mapping[str, Any] | None) -> None:
        """The result whose metadata file is ``path`` in ``workspace`` now has ``values`` (its
        indexed fields), or is gone (None)."""

        def write(connection: Connection) -> None:
            if values is None:
                connection.execute(delete(saved_query).where(
                    saved_query.c.workspace == workspace, saved_query.c.path == path))
                return
            row = {**values, "workspace": workspace, "path": path}
            upsert = insert(saved_query).values(row)
            connection.execute(upsert.on_conflict_do_update(
                index_elements=["workspace", "path"],
                set_={name: upsert.excluded[name] for name in values}))

        self.database.write(write, ordered=False)

    def search(self, workspace: str, terms: list[str] | None, *, limit: int,
               db_id: str | None = None) -> tuple[list[IndexedQuery], int]:
        """Saved queries of ``workspace`` newest first, matching every one of ``terms`` (as a
        word prefix) when given, of ``db_id`` when given; and how many matched."""
        where = [saved_query.c.workspace == workspace]
        if db_id is not None:
            where.append(saved_query.c.db_id == db_id)
        if terms:
            query = " & ".join(f"'{term.casefold()}':*" for term in terms)
            where.append(saved_query.c.words.op("@@")(func.to_tsquery(
                literal_column("'simple'::regconfig"), query)))

        def read(connection: Connection) -> tuple[list[IndexedQuery], int]:
            total = connection.execute(select(func.count()).select_from(saved_query)
                                       .where(*where)).scalar_one()
            rows = connection.execute(select(*_COLUMNS).where(*where).order_by(
                saved_query.c.timestamp.desc(), saved_query.c.path.desc()).limit(max(limit, 0)))
            return [IndexedQuery(*row) for row in rows], total

        return self.database.read(read, ([], 0))

    def find(self, workspace: str, result_id: str) -> IndexedQuery | None:
        """The saved query of ``workspace`` whose metadata has ``"id": result_id`` (the
        newest), or None."""
        query = (select(*_COLUMNS).where(saved_query.c.workspace == workspace,
                                         saved_query.c.result_id == result_id)
                 .order_by(saved_query.c.timestamp.desc()).limit(1))
        return self.database.read(lambda connection: next(
            (IndexedQuery(*row) for row in connection.execute(query)), None), None)
