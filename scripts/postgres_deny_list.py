"""Regenerate nl2sql/sql_guard/postgres_functions.py from a PostgreSQL server's catalogue.

The read-only guard's hand list names the functions everyone knows about (pg_sleep, lo_import,
dblink...). This script finds the whole classes the hand list keeps missing, from pg_proc:

* CHANGES_STATE: volatile functions that Postgres marks PARALLEL UNSAFE or RESTRICTED. The
  server marks a function that way when it changes database or session state that a parallel
  worker could not share: sequences, locks, settings, the random seed, large objects, and the
  index maintenance that writes pages without a transaction id (gin_clean_pending_list,
  brin_summarize_new_values, brin_summarize_range, brin_desummarize_range), which a read-only,
  rolled-back transaction does not stop.
* RUNS_SQL: functions that run SQL the guard never parsed, found by their signature: an
  argument of type text/varchar named like a query (query, sql, sqlquery, command, statement),
  an argument of type refcursor, the *_to_xml family (builds and runs SELECTs over a table, a
  schema or the whole database), or a PARALLEL UNSAFE/RESTRICTED function taking text that is
  stable or implemented by a C function named for a query (running SQL through SPI makes a
  function unsafe in workers): query_to_xml, ts_stat, ts_rewrite(tsquery, text),
  cursor_to_xml, crosstab, connectby, ...

Functions that cannot be called from SQL (``internal`` arguments, trigger and handler results)
are left out, and so are the few in KEPT below, each with the reason it is harmless.

Usage (a superuser login; it creates and drops a scratch database with every available
extension installed, so extension functions are found too):

    .venv/bin/python scripts/postgres_deny_list.py "host=127.0.0.1 user=postgres"

then review the diff of nl2sql/sql_guard/postgres_functions.py and run the guard tests.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent.parent / "nl2sql" / "sql_guard" / "postgres_functions.py"

#: In a class but harmless for a read-only query (reads only this session's own state).
KEPT = {
    "random": "the next random number; the session's seed is reset after every call",
    "random_normal": "as random()",
    "currval": "reads this session's last sequence value",
    "lastval": "reads this session's last sequence value",
    "current_query": "the text of the running query",
    "pg_notification_queue_usage": "reads the fill level of the notification queue",
    "pg_get_backend_memory_contexts": "reads this backend's memory statistics",
    "pg_stat_have_stats": "reads whether statistics exist",
    "pg_stat_clear_snapshot": "drops this transaction's statistics snapshot (a cache)",
    "pg_sequence_last_value": "reads a sequence",
    "pg_show_replication_origin_status": "reads replication origin progress",
    "pg_get_viewdef": "reads a view's definition (restricted only because it reads the catalog)",
    "pg_stat_get_progress_info": "reads progress of running maintenance (pg_stat_progress_*)",
    "pg_stat_get_replication_slot": "reads replication slot statistics",
}
#: Statistics of the current transaction (pg_stat_get_xact_*): reads, in any query.
KEPT_PREFIXES = ("pg_stat_get_xact_",)

_NOT_CALLABLE = ("internal", "trigger", "event_trigger", "language_handler", "fdw_handler",
                 "index_am_handler", "table_am_handler", "tsm_handler")

# One row per function name: its classes, a description and its extension (NULL: core).
CATALOGUE_QUERY = """
WITH f AS (
  SELECT p.oid, p.proname, p.provolatile, p.proparallel, p.proargtypes::oid[] AS argtypes,
         coalesce(p.proargnames, '{}') AS argnames, p.prorettype, p.prosrc,
         obj_description(p.oid, 'pg_proc') AS description,
         (SELECT e.extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
          WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
          LIMIT 1) AS extension
  FROM pg_proc p
  WHERE p.prokind IN ('f', 'a', 'w')
    AND p.prorettype NOT IN (SELECT oid FROM pg_type WHERE typname = ANY(%(not_callable)s))
    AND NOT EXISTS (SELECT 1 FROM unnest(p.proargtypes::oid[]) t
                    WHERE t = 'internal'::regtype)
    AND (p.pronamespace = 'pg_catalog'::regnamespace
         OR EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                    AND d.objid = p.oid AND d.deptype = 'e'))
), classified AS (
  SELECT f.*,
    provolatile = 'v' AND proparallel IN ('u', 'r') AS changes_state,
    EXISTS (SELECT 1 FROM unnest(argtypes) WITH ORDINALITY a(t, i)
            WHERE a.t = 'refcursor'::regtype
               OR (a.t IN ('text'::regtype, 'varchar'::regtype)
                   AND (coalesce(argnames[a.i], '') ~* '^(query|sql|sqlquery|source_sql|command|statement|stmt)$'
                        OR (proparallel IN ('u', 'r')
                            AND (provolatile = 's' OR prosrc ~* 'query')))))
      OR proname ~ '_to_xml' AS runs_sql
  FROM f
)
SELECT proname, bool_or(changes_state), bool_or(runs_sql), min(description), min(extension)
FROM classified
WHERE changes_state OR runs_sql
GROUP BY proname
ORDER BY proname
"""


def catalogue_classes(conn: Any) -> dict[str, tuple[str, str, str | None]]:
    """{name: (class, description, extension)} for one connection's database, KEPT left out.

    ``class`` is "runs_sql" or "changes_state" (a function in both is listed as runs_sql).
    """
    rows = conn.execute(CATALOGUE_QUERY, {"not_callable": list(_NOT_CALLABLE)}).fetchall()
    found: dict[str, tuple[str, str, str | None]] = {}
    for name, changes_state, runs_sql, description, extension in rows:
        if name in KEPT or name.startswith(KEPT_PREFIXES):
            continue
        found[name] = ("runs_sql" if runs_sql else "changes_state",
                       " ".join((description or "").split()), extension)
    return found


def _install_every_extension(conn: Any) -> list[str]:
    installed = []
    names = [r[0] for r in conn.execute(
        "SELECT name FROM pg_available_extensions ORDER BY name").fetchall()]
    for name in names:
        try:
            conn.execute(f'CREATE EXTENSION IF NOT EXISTS "{name}" CASCADE')
            installed.append(name)
        except Exception as exc:  # noqa: BLE001 - an extension that does not install is skipped
            print(f"skipped extension {name}: {str(exc).strip()}", file=sys.stderr)
    return installed


def _render(found: dict[str, tuple[str, str, str | None]], version: str,
            extensions: list[str]) -> str:
    def block(kind: str) -> str:
        lines = []
        for name, (cls, description, extension) in sorted(found.items()):
            if cls == kind:
                parts = [description, f"[{extension}]" if extension else ""]
                comment = " ".join(p for p in parts if p)
                lines.append(f'    "{name}",  # {comment}' if comment else f'    "{name}",')
        return "\n".join(lines)

    return f'''"""Postgres functions a read-only query may not call, derived from the server's catalogue.

GENERATED by scripts/postgres_deny_list.py (do not edit; rerun it and review the diff) from
{version}
with these extensions installed: {", ".join(extensions)}.

CHANGES_STATE: volatile functions marked PARALLEL UNSAFE or RESTRICTED (they change database or
session state: sequences, locks, settings, the random seed, large objects, and index pages
written without a transaction id, which a read-only rolled-back transaction does not undo).
RUNS_SQL: functions that run SQL text (or a cursor, or SELECTs they build) the guard never
parsed. The comments are the catalogue's own descriptions, with the extension in brackets.
"""

CHANGES_STATE: tuple[str, ...] = (
{block("changes_state")}
)

RUNS_SQL: tuple[str, ...] = (
{block("runs_sql")}
)
'''


def main(argv: list[str]) -> int:
    import psycopg

    dsn = argv[1] if len(argv) > 1 else "host=127.0.0.1 user=postgres"
    scratch = f"nl2sql_deny_list_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{scratch}"')
    try:
        with psycopg.connect(f"{dsn} dbname={scratch}", autocommit=True) as conn:
            extensions = _install_every_extension(conn)
            version = conn.execute("SELECT version()").fetchone()[0]  # type: ignore[index]
            found = catalogue_classes(conn)
    finally:
        with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    OUTPUT.write_text(_render(found, version, extensions), encoding="utf-8")
    counts = {kind: sum(1 for c, _, _ in found.values() if c == kind)
              for kind in ("changes_state", "runs_sql")}
    print(f"wrote {OUTPUT} ({counts['changes_state']} changing state, "
          f"{counts['runs_sql']} running SQL)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
