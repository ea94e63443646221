"""A bearer token -> the caller it names: a user's own token (by its hash, ``users``) or the
identity provider's JWT (``oidc``)."""

from __future__ import annotations

from nl2sql.access.caller import Caller
from nl2sql.access.oidc import JwtValidator
from nl2sql.access.users import user_token_caller
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.store.store import Store


class Authenticator:
    """Names the caller of a bearer token: users in ``store``, ``configs``' identity provider."""

    def __init__(self, configs: DbConnectionConfigs, store: Store) -> None:
        self.configs = configs
        self.store = store
        self._jwt = JwtValidator(configs.server) if configs.server.oidc else None

    @property
    def required(self) -> bool:
        """Every HTTP request needs a caller's token: groups, an identity provider or users
        are configured (users: as the server starts)."""
        return self.configs.server.configured or bool(self.store.users.list())

    def caller(self, token: str) -> Caller | None:
        """The caller ``token`` names, or None (blocking: a store lookup, or the JWKS)."""
        found = user_token_caller(self.store, self.configs, token)
        if found is None and self._jwt is not None and token.count(".") == 2:
            found = self._jwt.caller(token)
        return found
