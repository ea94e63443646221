"""A bearer token -> the caller it names: a user's own token (by its hash) or the identity
provider's JWT (``oidc``)."""

from __future__ import annotations

from nl2sql.access.caller import Caller
from nl2sql.access.oidc import JwtValidator
from nl2sql.config.registry import DbConnectionConfigs


class Authenticator:
    """Names the caller of a bearer token under ``configs``' ``server:`` settings."""

    def __init__(self, configs: DbConnectionConfigs) -> None:
        self.settings = configs.server
        self._jwt = JwtValidator(self.settings) if self.settings.oidc else None

    @property
    def required(self) -> bool:
        """Every HTTP request needs a caller's token: groups or an identity provider are
        configured."""
        return self.settings.configured

    def caller(self, token: str) -> Caller | None:
        """The caller ``token`` names, or None (blocking)."""
        if self._jwt is not None and token.count(".") == 2:
            return self._jwt.caller(token)
        return None
