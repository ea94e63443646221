"""The ``server:`` block of dbs.yaml: who may use which database (groups) and, optionally, the
identity provider whose bearer JWTs the HTTP server accepts (``oidc:``).

```yaml
server:
  oidc: {issuer: https://idp.example, audience: nl2sql, jwks_url: https://idp.example/jwks.json,
         groups_claim: groups}
  groups:
    analysts: {databases: [chinook]}
    curators: {databases: ["*"], curator: true, db_role: nl2sql_curator}
```

Checked when dbs.yaml is loaded: an unknown key, a group naming a database that is not under
``databases:``, a JWKS address that is not https (but on loopback) are one sentence each.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nl2sql.errors import ConfigError

#: ``databases: ["*"]``: every configured database.
ALL_DATABASES = "*"
#: JWT signature algorithms accepted by default: asymmetric ones only (an HMAC secret would be
#: shared with the identity provider; ``none`` is never accepted).
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                      "ES512", "EdDSA")


class Group(BaseModel):
    """What the members of one group may do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: db_ids the members see and query; ``"*"`` for every configured database.
    databases: tuple[str, ...] = ()
    #: Members' accepts of answers on these databases make verified answers (not proposals).
    curator: bool = False
    #: The role each query of a member takes, so the database's own grants apply
    #: (PostgreSQL ``SET LOCAL ROLE``, MySQL/MariaDB ``SET ROLE``; docs/team.md).
    db_role: str | None = Field(default=None, min_length=1, max_length=63)


class OidcSettings(BaseModel):
    """Bearer JWTs from an identity provider (the HTTP server as an OAuth 2.1 resource server)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    issuer: str  # the ``iss`` every token must carry
    audience: str  # the ``aud`` every token must carry (this server)
    jwks_url: str  # where the provider publishes its signing keys
    groups_claim: str = "groups"  # a claim name, or a dotted path (realm_access.roles)
    username_claim: str = "preferred_username"  # ``sub`` when the token has no such claim
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    #: The public URL of this server's MCP endpoint, advertised to clients as OAuth protected
    #: resource metadata (RFC 9728); optional.
    resource_url: str | None = None
    #: Seconds of clock difference allowed when checking ``exp`` and ``nbf``.
    leeway_seconds: int = Field(default=30, ge=0, le=300)

    @field_validator("jwks_url")
    @classmethod
    def _https(cls, value: str) -> str:
        parts = urlsplit(value)
        loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
            raise ValueError("must be an https:// address (http:// only on 127.0.0.1)")
        return value

    @field_validator("algorithms")
    @classmethod
    def _asymmetric(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        refused = [name for name in value if name.lower() == "none" or name.startswith("HS")]
        if refused or not value:
            raise ValueError("takes asymmetric algorithms only (RS256, ES256, ...)")
        return value


class ServerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    oidc: OidcSettings | None = None
    groups: dict[str, Group] = Field(default_factory=dict)

    @property
    def configured(self) -> bool:
        """Groups or an identity provider are configured: a team server."""
        return bool(self.groups) or self.oidc is not None


def parse_server_settings(value: Any, where: str, databases: list[str]) -> ServerSettings:
    """The ``server:`` block, checked; ``where`` names the file for the message."""
    try:
        settings = ServerSettings.model_validate(value or {})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        if error["type"] == "extra_forbidden":
            raise ConfigError(f"{where}: unknown key 'server.{field}'; remove it or check its "
                              f"spelling (docs/team.md).") from None
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{where}: 'server.{field}' {message[0].lower()}{message[1:]}; see "
                          f"docs/team.md.") from None
    for name, group in settings.groups.items():
        for db_id in group.databases:
            if db_id != ALL_DATABASES and db_id not in databases:
                raise ConfigError(f"{where}: group '{name}' names database '{db_id}', which is "
                                  f"not under 'databases:'; fix the name or add the database.")
    return settings
