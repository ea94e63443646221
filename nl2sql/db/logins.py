"""What the configured login may do: a login that can write or is privileged is reported.

nl2sql's guard and engine layers stop writes on their own, but a read-only login is the one
layer that does not depend on nl2sql being right (with the guard off, a superuser undid the
role drop and wrote through dblink). Each server backend reads its login's privileges from the
catalogue (``DbConnection.read_login_privileges``); the result is said loudly at server start
(stderr), in ``db_list`` and in ``annotate-schema``'s summary, and with
``require_read_only_login: true`` the database is not used at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from nl2sql.errors import LoginNotReadOnlyError


@dataclass(frozen=True)
class LoginPrivileges:
    """The configured login and what it may do beyond reading."""

    user: str
    privileged: tuple[str, ...] = ()  # e.g. "superuser", "SUPER", "FILE"
    writes: tuple[str, ...] = ()  # e.g. "INSERT/UPDATE/DELETE on 12 tables"

    @property
    def read_only(self) -> bool:
        return not self.privileged and not self.writes

    def describe(self) -> str:
        """``login 'x' is privileged (superuser) and can write (...)``; empty when read-only."""
        parts = []
        if self.privileged:
            parts.append(f"is privileged ({few(self.privileged)})")
        if self.writes:
            parts.append(f"can write ({few(self.writes, 3)})")
        return f"login '{self.user}' {' and '.join(parts)}" if parts else ""

    def warning(self, db_id: str) -> str | None:
        """One line for people, or None for a read-only login."""
        if self.read_only:
            return None
        return (f"database '{db_id}': the {self.describe()}; only nl2sql's own checks keep "
                f"it read-only: connect with a read-only login (see docs/security.md).")

    def refusal(self, db_id: str) -> LoginNotReadOnlyError:
        return LoginNotReadOnlyError(
            f"Database '{db_id}' is not used: the {self.describe()}, and "
            f"require_read_only_login is set for it in dbs.yaml; connect with a read-only "
            f"login (docs/security.md gives the GRANTs).", db_id=db_id)


def few(items: tuple[str, ...] | list[str], shown: int = 4, *, sep: str = ", ") -> str:
    """The first ``shown`` items and how many more: a warning stays one readable line."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return sep.join(items[:shown]) + more
