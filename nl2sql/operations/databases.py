"""``db_list_op`` / ``db_show_schema_op``: which databases exist and what is in them.

Both read the registry and the annotation cache only, never a database catalog: listing is
instant and works while a database is down.
"""

from __future__ import annotations

from pydantic import BaseModel

from nl2sql.errors import SchemaCacheError, SchemaCacheMissingError
from nl2sql.operations.context import OpsContext
from nl2sql.operations.params import DbId
from nl2sql.text import plural


class DbSummary(BaseModel):
    db_id: str
    type: str
    description: str | None = None
    table_count: int | None = None  # None: no readable cache
    view_count: int | None = None
    cached: bool  # a schema cache exists and loads
    annotated: bool  # an LLM annotation run has described it
    problem: str | None = None  # why the cache is unusable, with what to do

    def render(self) -> str:
        if self.cached:
            views = f", {plural(self.view_count or 0, 'view')}" if self.view_count else ""
            state = f"{plural(self.table_count or 0, 'table')}{views}; " + (
                "annotated" if self.annotated else "structure only, not annotated by an LLM")
        else:
            state = self.problem or "no schema cache"
        description = f" — {self.description}" if self.description else ""
        return f"- {self.db_id} ({self.type}){description}\n  {state}"


class DbList(BaseModel):
    databases: list[DbSummary]

    def render(self) -> str:
        lines = [f"Databases ({len(self.databases)}; pass a db_id to db_show_schema and "
                 f"db_execute_sql):"]
        lines += [db.render() for db in self.databases]
        return "\n".join(lines)


class DbSchema(BaseModel):
    db_id: str
    schema_sql: str

    def render(self) -> str:
        return self.schema_sql


def db_list_op(ctx: OpsContext) -> DbList:
    """Every configured database with its type, description, table count and cache state."""
    return DbList(databases=[_summary(ctx, config.db_id) for config in ctx.configs])


def db_show_schema_op(ctx: OpsContext, db_id: DbId) -> DbSchema:
    """The annotated schema SQL of ``db_id`` from its cache (tables, columns, keys, enums,
    descriptions, sample rows, example queries)."""
    from nl2sql.formatting import format_schema

    return DbSchema(db_id=db_id, schema_sql=format_schema(ctx.db_info(db_id)))


def _summary(ctx: OpsContext, db_id: str) -> DbSummary:
    config = ctx.config(db_id)
    base = {"db_id": db_id, "type": config.type.value, "description": config.description}
    try:
        info = ctx.db_info(db_id)
    except SchemaCacheMissingError:
        return DbSummary(**base, cached=False, annotated=False,
                         problem=f"no schema cache yet; run `annotate-schema {db_id}`")
    except SchemaCacheError as exc:
        return DbSummary(**base, cached=False, annotated=False, problem=str(exc))
    views = sum(1 for table in info.tables if table.is_view)
    return DbSummary(
        **{**base, "description": info.description or config.description},
        table_count=len(info.tables) - views, view_count=views, cached=True,
        annotated=any(run.model for run in info.annotation_runs))
