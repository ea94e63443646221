"""Facts read from a database's catalogue (its user-defined functions), kept while the
catalogue's *version* stays the same: every call reads the version (one cheap statement, on
PostgreSQL in the same round trip as the call's own setup) and the facts are read again, in the
call, only when it moved. So a function created a moment ago is known by the next call, and
nothing read in the background ever changes an answer.

The version must be read before the facts it is passed with: a change between the two then
leaves a newer read under an older version, which the next call reads again (never the other
way round).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class CatalogueRead(Generic[T]):
    """``read(conn)``'s value for the catalogue version it was read at."""

    def __init__(self, read: Callable[[Any], T]) -> None:
        self._read = read
        self._value: tuple[Hashable, T] | None = None
        self._lock = threading.Lock()

    def get(self, version: Hashable, conn: Any = None) -> T:
        """The value for ``version``, read now on ``conn`` (once, whoever else waits) when the
        kept one was read at another version or never."""
        with self._lock:
            if self._value is None or self._value[0] != version:
                self._value = (version, self._read(conn))
            return self._value[1]

    def known(self) -> T | None:
        """The last value read, without reading (None: never read)."""
        value = self._value
        return value[1] if value is not None else None

    def forget(self) -> None:
        """Drop the kept value (the database was closed: its next opening reads again)."""
        with self._lock:
            self._value = None
