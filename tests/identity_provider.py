"""A local identity provider for tests: an RSA signing key made in the test, its JWKS served
over HTTP on 127.0.0.1, and bearer JWTs signed with it (PyJWT)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUER = "https://idp.test/realms/nl2sql"
AUDIENCE = "nl2sql"


@dataclass
class IdentityProvider:
    jwks_url: str
    key: rsa.RSAPrivateKey
    kid: str = "test-key-1"
    fetches: list[float] = field(default_factory=list)

    def token(self, name: str, groups: list[str], *, lifetime: float = 300,
              key: rsa.RSAPrivateKey | None = None, **claims: Any) -> str:
        """A signed JWT for ``name`` in ``groups`` (``lifetime`` seconds; negative: expired)."""
        now = int(time.time())
        payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": f"sub-{name}",
                   "preferred_username": name, "groups": groups, "iat": now,
                   "exp": now + int(lifetime), **claims}
        return jwt.encode(payload, key or self.key, algorithm="RS256",
                          headers={"kid": self.kid})

    def oidc_settings(self, **extra: Any) -> dict[str, Any]:
        return {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": self.jwks_url, **extra}


@contextmanager
def identity_provider() -> Iterator[IdentityProvider]:
    """An identity provider whose JWKS is served until the block ends."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    provider = IdentityProvider(jwks_url="", key=key)
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    body = json.dumps({"keys": [{**public, "kid": provider.kid, "use": "sig",
                                 "alg": "RS256"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            provider.fetches.append(time.time())
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    provider.jwks_url = f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
