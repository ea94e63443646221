"""What to add to a database's refusal of a query so that the next try is right: a table the
query names that the schema does not have, and the closest one it does (``sales data`` ->
``sales_data``, a file's view name; ``Customers`` -> ``Customer``).

PostgreSQL, MySQL and SQLite name the missing table without a suggestion; a model then spends a
round trip on ``db_show_schema``. The hint is read off the guard's parse of the query (CTE names
are not tables) and the cached schema, and given only for a name the error itself mentions, so a
refusal for another reason never gets a wrong hint.
"""

from __future__ import annotations

import difflib

from sqlglot import exp

from nl2sql.schema.models import DbInfo


def unknown_tables_hint(db_info: DbInfo, expression: exp.Expr, error: str) -> str:
    """``"'sales data' is not a table of database 'files': did you mean 'sales_data'?"`` for
    each table ``expression`` names that ``db_info`` lacks, ``error`` mentions and one known
    name is close to; ``""`` when there is none."""
    ctes = {cte.alias_or_name.lower() for cte in expression.find_all(exp.CTE)}
    names = [table.name for table in db_info.tables]
    # By the name without its schema too (several schemas: 'public.Order' for 'Orders').
    by_lower = {name.lower(): name for name in names}
    by_lower.update({name.rsplit(".", 1)[-1].lower(): name for name in names
                     if name.rsplit(".", 1)[-1].lower() not in by_lower})
    mentioned = error.lower()
    hints: dict[str, None] = {}
    for table in expression.find_all(exp.Table):
        bare = table.name
        if not bare or bare.lower() in ctes or bare.lower() not in mentioned:
            continue
        qualified = ".".join(part for part in (table.db, bare) if part)
        if db_info.table(qualified) is not None or db_info.table(bare) is not None:
            continue
        close = (difflib.get_close_matches(qualified, names, n=1, cutoff=0.6)
                 or difflib.get_close_matches(bare.lower(), list(by_lower), n=1, cutoff=0.6))
        if close:
            suggestion = close[0] if close[0] in names else by_lower[close[0]]
            hints[f"'{qualified}' is not a table of database '{db_info.db_id}': did you mean "
                  f"'{suggestion}'?"] = None
    return " ".join(hints)
