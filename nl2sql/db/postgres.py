"""PostgreSQL backend through psycopg 3."""

from __future__ import annotations

from sqlalchemy import URL, Engine, create_engine

from nl2sql.db.base import DbConnection


class PostgresConnection(DbConnection):
    sqlglot_dialect = "postgres"

    def url(self) -> URL:
        config = self.config
        query = {"sslmode": config.sslmode} if config.sslmode else {}
        return URL.create("postgresql+psycopg", username=config.user,
                          password=config.resolve_password(), host=config.host,
                          port=config.port, database=config.dbname, query=query)

    def _create_engine(self) -> Engine:
        schema = self.schema or "public"
        timeout_ms = int(self.config.query_timeout_seconds * 1000)
        # Engine-level read-only: every transaction is read-only unless a caller says otherwise,
        # and no statement runs past the configured time limit.
        options = (f"-c default_transaction_read_only=on -c statement_timeout={timeout_ms} "
                   f"-c search_path={_quote_option(schema)}")
        return create_engine(self.url(), pool_pre_ping=True,
                             connect_args={"options": options, "application_name": "nl2sql"})


def _quote_option(identifier: str) -> str:
    # libpq options are space-separated; a backslash escapes a space inside a value.
    quoted = '"' + identifier.replace('"', '""') + '"'
    return quoted.replace(" ", "\\ ")
