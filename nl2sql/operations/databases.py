"""``db_list_op`` / ``db_show_schema_op``: which databases exist and what is in them.

Both read the registry and the annotation cache only, never a database catalog: listing is
instant and works while a database is down.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from nl2sql.errors import (SchemaCacheError, SchemaCacheMissingError, UnknownTableError,
                           did_you_mean)
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.params import DbId, TableNames
from nl2sql._helpers import plural
from nl2sql.schema import formatting
from nl2sql.operations.search import ENV_SCHEMA_TOKEN_CAP, schema_token_cap


class DbSummary(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    db_id: str
    type: str
    description: str | None = None
    table_count: int | None = None  # None: no readable cache
    view_count: int | None = None
    cached: bool  # a schema cache exists and loads
    annotated: bool  # an LLM annotation run has described it
    problem: str | None = None  # why the cache is unusable, with what to do
    #: The login can write or is privileged (checked at server start or at annotation).
    login_warning: str | None = None

    def render(self) -> str:
        if self.cached:
            views = f", {plural(self.view_count or 0, 'view')}" if self.view_count else ""
            state = f"{plural(self.table_count or 0, 'table')}{views}; " + (
                "annotated" if self.annotated else "structure only, not annotated by an LLM")
        else:
            state = self.problem or "no schema cache"
        description = f" — {self.description}" if self.description else ""
        warning = f"\n  WARNING: {self.login_warning}" if self.login_warning else ""
        return f"- {self.db_id} ({self.type}){description}\n  {state}{warning}"


class DbList(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    databases: list[DbSummary]

    def render(self) -> str:
        lines = [f"Databases ({len(self.databases)}; pass a db_id to db_show_schema and "
                 f"db_execute_sql):"]
        lines += [db.render() for db in self.databases]
        return "\n".join(lines)


class DbSchema(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    db_id: str
    schema_sql: str
    tokens: int = 0  # estimated (chars/4)
    #: Set when the schema is over the token cap: what was left out and what to call instead.
    over_cap: str | None = None

    def render(self) -> str:
        return self.over_cap or self.schema_sql


def db_list_op(ctx: OpsContext) -> DbList:
    """Every configured database with its type, description, table count and cache state, and
    a warning for a login that can write or is privileged."""
    return DbList(databases=[_summary(ctx, config.db_id) for config in ctx.configs])


def db_show_schema_op(ctx: OpsContext, db_id: DbId, tables: TableNames = None) -> DbSchema:
    """The annotated schema SQL of ``db_id`` from its cache (tables, columns, keys, enums,
    descriptions, sample rows, example queries), or of the listed ``tables`` only.

    An answer over the token cap (``NL2SQL_SCHEMA_TOKEN_CAP``, default 20,000) is not sent:
    ``render()`` says how big it is and points to ``db_search_schema`` and the table list."""
    info = ctx.db_info(db_id)
    if tables:
        chosen = []
        for name in dict.fromkeys(tables):
            table = info.table(name)
            if table is None:
                hint = did_you_mean(name, [t.name for t in info.tables])
                raise UnknownTableError(
                    f"Database '{db_id}' has no table '{name}'. {hint}Call db_show_schema "
                    f"without tables to list them.", db_id=db_id, table=name)
            chosen.append(table)
        text = formatting.format_tables(info, chosen)
    else:
        text = formatting.format_schema(info)
    tokens = (len(text) + 3) // 4
    cap = schema_token_cap()
    over = None
    if tokens > cap:
        names = [t.name for t in info.tables]
        shown = ", ".join(names[:100]) + (f", ... ({len(names) - 100} more)"
                                          if len(names) > 100 else "")
        over = (f"The schema of '{db_id}' is about {tokens:,} tokens, over the {cap:,}-token "
                f"cap for one answer ({ENV_SCHEMA_TOKEN_CAP}), so it is not shown. Call "
                f"db_search_schema with your question and db_id='{db_id}' for the tables, "
                f"joins and values that matter, or db_show_schema with tables=[...] for "
                f"specific tables. Tables ({len(names)}): {shown}")
    return DbSchema(db_id=db_id, schema_sql=text, tokens=tokens, over_cap=over)


def _summary(ctx: OpsContext, db_id: str) -> DbSummary:
    config = ctx.config(db_id)
    base = {"db_id": db_id, "type": config.type.value, "description": config.description,
            "login_warning": None}
    login = ctx.known_login(db_id)
    if login is not None:  # checked by this process (a login fixed since is not warned of)
        base["login_warning"] = login.warning(db_id)
    try:
        info = ctx.db_info(db_id)
    except SchemaCacheMissingError:
        return DbSummary(**base, cached=False, annotated=False,
                         problem=f"no schema cache yet; run `annotate-schema {db_id}`")
    except SchemaCacheError as exc:
        return DbSummary(**base, cached=False, annotated=False, problem=str(exc))
    views = sum(1 for table in info.tables if table.is_view)
    if login is None:  # else the check made at annotation
        base["login_warning"] = (info.model_extra or {}).get("login_warning")
    return DbSummary(
        **{**base, "description": info.description or config.description},
        table_count=len(info.tables) - views, view_count=views, cached=True,
        annotated=any(run.model for run in info.annotation_runs))
