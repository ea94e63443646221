"""Who is asking (``Caller``) and what their groups grant them (``Grants``).

A caller is identified once per request by the face that received it: the HTTP server from the
bearer token (a user's own token or an identity provider's JWT), the local faces (CLI, Python,
MCP over stdio) from the operating-system account running them. ``can()`` (``permissions``)
then answers from the caller alone, so no face re-derives a rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from nl2sql._helpers import os_user_name  # noqa: F401 (re-exported: nl2sql.access.identity)
from nl2sql.config.server import ALL_DATABASES, ServerSettings


@dataclass(frozen=True)
class Grants:
    """What a caller's groups allow. ``None``: every database."""

    databases: frozenset[str] | None = frozenset()
    curates: frozenset[str] | None = frozenset()
    #: (db_id or "*", PostgreSQL role) in the order of dbs.yaml's groups: the first that
    #: covers a database is the role its queries take.
    roles: tuple[tuple[str, str], ...] = ()


FULL_ACCESS = Grants(databases=None, curates=None)


def grants_of(groups: Iterable[str], settings: ServerSettings) -> Grants:
    """The union of what ``groups`` grant under ``settings`` (unknown groups grant nothing)."""
    chosen = set(groups)
    databases: set[str] | None = set()
    curates: set[str] | None = set()
    roles: list[tuple[str, str]] = []
    for name, group in settings.groups.items():  # dbs.yaml order: it decides the role
        if name not in chosen:
            continue
        everything = ALL_DATABASES in group.databases
        if databases is not None:
            databases = None if everything else databases | set(group.databases)
        if group.curator and curates is not None:
            curates = None if everything else curates | set(group.databases)
        if group.db_role:
            roles += [(db_id, group.db_role) for db_id in group.databases]
    return Grants(databases=None if databases is None else frozenset(databases),
                  curates=None if curates is None else frozenset(curates), roles=tuple(roles))


@dataclass(frozen=True)
class Caller:
    """The person (or program) a call is made for.

    ``configured``: a configured user (a user token, an identity provider's JWT, or an OS
    account that was added as a user), whose groups decide; otherwise the OS account of a
    local face or the one-user HTTP server, with full access."""

    name: str
    groups: tuple[str, ...] = ()
    grants: Grants = field(default=FULL_ACCESS)
    configured: bool = False

    def describe(self) -> str:
        """``user 'ana' (groups: analysts)`` for messages."""
        groups = f" (groups: {', '.join(self.groups)})" if self.groups else ""
        return f"user '{self.name}'{groups}"


def member(name: str, groups: Iterable[str], settings: ServerSettings) -> Caller:
    """A configured user with ``groups``."""
    groups = tuple(dict.fromkeys(groups))
    return Caller(name=name, groups=groups, grants=grants_of(groups, settings), configured=True)


def os_caller() -> Caller:
    """The OS account with full access: a local face whose account is not a configured user."""
    return Caller(name=os_user_name())
