"""The configured users with their own tokens (the ``users`` area): a name, the hash of the
token (never the token), and the groups. Written by ``nl2sql-secrets add-user``/``remove-user``,
read by the HTTP server for each bearer token (``find_by_token_hash``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from nl2sql.errors import StoreError
from nl2sql.store.database import Database
from nl2sql.store.records import StoredUser
from nl2sql.store.schema import users


class UserStore:
    """The users in ``database``. Cheap to create."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(self, user: StoredUser, *, replace: bool = False) -> StoredUser:
        """Store ``user``; with ``replace`` an existing user of that name is replaced (a new
        token), else one is refused (``StoreError``)."""
        row = {"name": user.name, "token_hash": user.token_hash,
               "groups": json.dumps(user.groups), "created_at": user.created_at.isoformat()}

        def write(connection: Any) -> None:
            if replace:
                connection.execute(delete(users).where(users.c.name == user.name))
            connection.execute(insert(users).values(row))

        try:
            self.database.write(write)
        except IntegrityError:
            raise StoreError(f"A user named '{user.name}' already exists; remove it first "
                             f"(nl2sql-secrets remove-user {user.name}) or pick another name."
                             ) from None
        return user

    def remove(self, name: str) -> bool:
        """Remove the user ``name``; False when there is none."""
        return self.database.exists() and self.database.write(
            lambda connection: connection.execute(
                delete(users).where(users.c.name == name)).rowcount > 0)

    def list(self) -> list[StoredUser]:
        """Every user, by name."""
        return self._read(select(users).order_by(users.c.name))

    def get(self, name: str) -> StoredUser | None:
        found = self._read(select(users).where(users.c.name == name))
        return found[0] if found else None

    def find_by_token_hash(self, token_hash: str) -> StoredUser | None:
        """The user whose token has the hash ``token_hash``, or None."""
        found = self._read(select(users).where(users.c.token_hash == token_hash))
        return found[0] if found else None

    def _read(self, query: Any) -> list[StoredUser]:
        return self.database.read(
            lambda connection: [_user(row._mapping) for row in connection.execute(query)], [])


def _user(row: Mapping[str, Any]) -> StoredUser:
    return StoredUser(**{**row, "groups": json.loads(row["groups"])})
