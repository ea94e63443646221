"""Facts read from a database's catalogue and kept for a while (its user-defined functions, what
its login may do): the first read waits; after ``seconds`` the old value is still served while a
thread reads it again, so only the first call after start waits for the catalogue (50-200 ms on a
busy MariaDB), never the 10,000th.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
logger = logging.getLogger(__name__)


class CatalogueRead(Generic[T]):
    """``read()``'s value, read again in the background once older than ``seconds``."""

    def __init__(self, read: Callable[[], T], seconds: float, what: str) -> None:
        self._read, self._seconds, self._what = read, seconds, what
        self._value: tuple[float, T] | None = None
        self._lock = threading.Lock()
        self._refreshing = False

    def get(self) -> T:
        with self._lock:
            if self._value is None:  # the first read: every caller waits for it
                self._value = (time.monotonic(), self._read())
            elif time.monotonic() - self._value[0] > self._seconds and not self._refreshing:
                self._refreshing = True
                threading.Thread(target=self._refresh, name=f"nl2sql-{self._what}",
                                 daemon=True).start()
            return self._value[1]

    def known(self) -> T | None:
        """The last value read, without reading (None: never read)."""
        value = self._value
        return value[1] if value is not None else None

    def _refresh(self) -> None:
        try:
            fresh = self._read()
        except Exception as exc:  # noqa: BLE001 - the old value stands; tried again later
            logger.warning("could not read the %s again: %s", self._what, exc)
            fresh = None
            failed = True
        else:
            failed = False
        with self._lock:
            if self._value is not None:
                self._value = (time.monotonic(), self._value[1] if failed else fresh)  # type: ignore[arg-type]
            self._refreshing = False
