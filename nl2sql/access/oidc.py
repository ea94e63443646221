"""Bearer JWTs from an identity provider (``server: oidc:`` in dbs.yaml): the signature checked
against the provider's published keys (JWKS), then the issuer, the audience, the expiry (and
``nbf``), and the caller's name and groups read from the claims.

PyJWT (the ``team`` extra; the MCP SDK depends on it too) does the checking: ``PyJWKClient``
fetches the JWKS, keeps it 5 minutes, and fetches it again for a key id it does not know (a
key rotation), at most every 30 seconds. Only asymmetric algorithms are accepted. A token that
fails is refused with the reason logged (never the token).
"""

from __future__ import annotations

import logging
from typing import Any

from nl2sql.access.caller import Caller, member
from nl2sql.config.server import OidcSettings, ServerSettings
from nl2sql.errors import ConfigError

log = logging.getLogger(__name__)

#: Seconds the provider's key set is kept before it is fetched again.
JWKS_LIFESPAN_SECONDS = 300


class JwtValidator:
    """Checks the identity provider's bearer tokens and names their callers."""

    def __init__(self, settings: ServerSettings) -> None:
        assert settings.oidc is not None
        try:
            import jwt
        except ImportError:  # pragma: no cover - the MCP SDK depends on PyJWT
            raise ConfigError("server: oidc: needs PyJWT; install it with: "
                              "pip install 'nl2sql[team]'") from None
        self._jwt = jwt
        self.oidc: OidcSettings = settings.oidc
        self.settings = settings
        self._keys = jwt.PyJWKClient(self.oidc.jwks_url, cache_jwk_set=True,
                                     lifespan=JWKS_LIFESPAN_SECONDS, timeout=10)

    def caller(self, token: str) -> Caller | None:
        """The caller ``token`` names, or None when it is not a valid token of the provider
        (blocking: the first call, and a new key id, fetch the JWKS)."""
        jwt = self._jwt
        try:
            key = self._keys.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token, key.key, algorithms=list(self.oidc.algorithms),
                audience=self.oidc.audience, issuer=self.oidc.issuer,
                leeway=self.oidc.leeway_seconds,
                options={"require": ["exp", "iss", "aud"]})
        except jwt.PyJWKClientConnectionError as exc:
            log.warning("oidc: the provider's keys could not be fetched from %s (%s); bearer "
                        "tokens are refused until they can", self.oidc.jwks_url, exc)
            return None
        except jwt.PyJWTError as exc:
            log.info("oidc: a bearer token was refused: %s", exc)
            return None
        name = claims.get(self.oidc.username_claim) or claims.get("sub")
        if not isinstance(name, str) or not name:
            log.info("oidc: a bearer token has neither '%s' nor 'sub'; refused",
                     self.oidc.username_claim)
            return None
        return member(name, groups_in(claims, self.oidc.groups_claim), self.settings)


def groups_in(claims: dict[str, Any], claim: str) -> list[str]:
    """The group names under ``claim``: a claim of that exact name (Auth0's namespaced
    ``https://example.com/groups``), else a dotted path (Keycloak's ``realm_access.roles``); a
    list of names or one name, compared exactly (Keycloak's full group paths, ``/analysts``,
    are named so in dbs.yaml, or its mapper's "Full group path" is switched off)."""
    value: Any = claims.get(claim)
    if value is None and "." in claim:
        value = claims
        for part in claim.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str) and item]
