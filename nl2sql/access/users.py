"""Users with tokens of their own: made by ``nl2sql-secrets add-user``, kept in the store as a
name, the SHA-256 of the token and the groups (never the token itself).

A token is 32 random bytes (``secrets.token_urlsafe``) after the prefix ``nl2sql_``, which tells
it apart from an identity provider's JWT and makes a leaked one easy to find in logs and code.
With that much randomness a plain SHA-256 is the right hash (a slow password hash protects
guessable secrets; this is not one), and a lookup by hash takes the same time whatever the
token.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from nl2sql.access.caller import Caller, member, os_user_name
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ConfigError, UsageError
from nl2sql.store.records import StoredUser
from nl2sql.store.store import Store

TOKEN_PREFIX = "nl2sql_"
#: A user name: what a person would type; no spaces, quotes or control characters.
_USER_NAME = re.compile(r"[\w.@+-]{1,64}")


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_user(configs: DbConnectionConfigs, name: str, groups: list[str]) -> str:
    """Store the user ``name`` in ``groups`` with a new token; the token (shown once)."""
    if not _USER_NAME.fullmatch(name):
        raise UsageError(f"'{name}' cannot be a user name; use 1-64 letters, digits and . @ + "
                         f"- _ (for example the person's login).")
    known = configs.server.groups
    unknown = [group for group in groups if group not in known]
    if unknown:
        listed = ", ".join(known) or "none yet: add 'server: groups:' to dbs.yaml"
        raise ConfigError(f"No group '{unknown[0]}' in {configs.config_path or 'dbs.yaml'} "
                          f"(server: groups:); known groups: {listed}.")
    token = new_token()
    Store.of(configs).users.add(StoredUser(name=name, token_hash=token_hash(token),
                                           groups=list(dict.fromkeys(groups))))
    return token


def user_token_caller(store: Store, configs: DbConnectionConfigs, token: str) -> Caller | None:
    """The user whose own token ``token`` is, or None."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    stored = store.users.find_by_token_hash(token_hash(token))
    return member(stored.name, stored.groups, configs.server) if stored else None


def local_caller(configs: DbConnectionConfigs, store: Store | None = None) -> Caller:
    """The OS account running a local face: a configured user's groups when its name is one,
    else full access."""
    name = os_user_name()
    stored = (store or Store.of(configs)).users.get(name)
    return member(name, stored.groups, configs.server) if stored else Caller(name=name)
