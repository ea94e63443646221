"""What to add to a database's refusal of a query so that the next try is right: a table or a
column the query names that the schema does not have, and the closest one it does (``sales
data`` -> ``sales_data``, a file's view name; ``Customers`` -> ``Customer``; ``g.GenreName`` ->
``Name`` of ``Genre``); and to an empty result, a compared value the column does not hold
(``status = 'payed'`` -> ``paid``).

PostgreSQL, MySQL and SQLite name a missing table without a suggestion, SQLite and MySQL a
missing column too; a model then spends a round trip on ``db_show_schema``. The hint is read off
the guard's parse of the query (CTE names are not tables; names the query defines, its aliases,
are not columns) and the cached schema, and given only for a name the error itself mentions, so
a refusal for another reason never gets a wrong hint.
"""

from __future__ import annotations

import difflib
import re

from sqlglot import exp

from nl2sql.schema.models import DbInfo, TableInfo


def refused_query_hint(db_info: DbInfo, expression: exp.Expr, error: str) -> str:
    """The tables, else the columns, ``expression`` names that ``db_info`` lacks and ``error``
    mentions, each with the closest known name; else the compared values ``error`` mentions
    that their column does not hold (``""`` when there is none)."""
    return (unknown_tables_hint(db_info, expression, error)
            or unknown_columns_hint(db_info, expression, error)
            or unknown_values_hint(db_info, expression, error))


def keyword_names_hint(expression: exp.Expr, error: str, keywords: frozenset[str],
                       engine: str) -> str:
    """For a syntax error: the names ``expression`` writes unquoted that the engine takes for
    keywords (``keywords``), to be quoted: DuckDB reads ``ORDER BY at`` as the start of ``AT
    TIME ZONE`` and says only "syntax error at or near" the word after it. ``""`` when the
    error is another or no such name is written."""
    if not keywords or "syntax error" not in error.lower():
        return ""
    found = dict.fromkeys(node.name for node in expression.find_all(exp.Identifier)
                          if not node.quoted and node.name.lower() in keywords)
    if not found:
        return ""
    names = ", ".join(f"'{name}'" for name in found)
    quoted = ", ".join(f'"{name}"' for name in found)
    verb = "is a keyword" if len(found) == 1 else "are keywords"
    return (f"{names} {verb} of {engine}, which it may not read as a name where it stands: "
            f"write {quoted} (double quotes) or choose another name.")


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
    hints: dict[str, None] = {}
    for table in expression.find_all(exp.Table):
        bare = table.name
        if (not bare or bare.lower() in ctes or not _mentions(error, bare)
                or _known_table(db_info, table) is not None):
            continue
        qualified = _qualified(table)
        close = (difflib.get_close_matches(qualified, names, n=1, cutoff=0.6)
                 or difflib.get_close_matches(bare.lower(), list(by_lower), n=1, cutoff=0.6))
        if close:
            suggestion = close[0] if close[0] in names else by_lower[close[0]]
            hints[f"'{qualified}' is not a table of database '{db_info.db_id}': did you mean "
                  f"'{suggestion}'?"] = None
    return " ".join(hints)


def unknown_columns_hint(db_info: DbInfo, expression: exp.Expr, error: str) -> str:
    """For each column ``expression`` names that its tables lack, that the query does not
    define itself (an alias, a CTE's or a subquery's column) and that ``error`` mentions:
    ``"'Genre' (g) has no column 'GenreName'; its columns: GenreId, Name."`` when the column is
    qualified by a known table, else the closest column of the tables the query reads. ``""``
    when there is none."""
    by_alias = _tables_by_alias(db_info, expression)
    if not by_alias:
        return ""
    tables = list({id(table): table for table in by_alias.values()}.values())
    columns = {column.name.lower(): (column.name, table) for table in reversed(tables)
               for column in table.columns}
    defined = {alias.alias.lower() for alias in expression.find_all(exp.Alias)} | {
        column.name.lower() for alias in expression.find_all(exp.TableAlias)
        for column in alias.columns}
    hints: dict[str, None] = {}
    for column in expression.find_all(exp.Column):
        name, qualifier = column.name, column.table
        if not name or name.lower() in defined or not _mentions(error, name):
            continue
        owner = by_alias.get(qualifier.lower()) if qualifier else None
        if owner is not None:
            if owner.column(name) is None:
                names = ", ".join(c.name for c in owner.columns[:_MAX_LISTED])
                more = ", ..." if len(owner.columns) > _MAX_LISTED else ""
                via = f" ({qualifier})" if qualifier.lower() != owner.name.lower() else ""
                hints[f"'{owner.name}'{via} has no column '{name}'; its columns: "
                      f"{names}{more}."] = None
            continue
        if qualifier or name.lower() in columns:
            continue
        close = difflib.get_close_matches(name.lower(), list(columns), n=1, cutoff=0.6)
        if close:
            known, table = columns[close[0]]
            hints[f"'{name}' is not a column of the tables the query reads: did you mean "
                  f"'{known}' (of '{table.name}')?"] = None
    return " ".join(hints)


def unknown_values_hint(db_info: DbInfo, expression: exp.Expr,
                        error: str | None = None) -> str:
    """For a query that returned no rows: each text it compares a column with (``=``, ``IN``)
    that is not among the column's values the schema cache holds (an enum's, or a small
    domain read whole), with the closest of them: ``"'payed' is not a value of orders.status
    the schema cache knows (new, paid, shipped): did you mean 'paid'?"``. A misspelt value
    returns nothing, and a model reads nothing as the answer. With ``error`` (a refusal:
    PostgreSQL's ``invalid input value for enum mood: "hapy"``), only the texts it mentions.
    ``""`` when there is none."""
    tables = _tables_by_alias(db_info, expression)
    if not tables:
        return ""
    hints: dict[str, None] = {}
    for column, text in _compared_texts(expression):
        if error is not None and not _mentions(error, text):
            continue
        owner = _owner(tables, column)
        info = owner.column(column.name) if owner is not None else None
        if owner is None or info is None:
            continue
        known = info.domain_values or (info.enum_values if info.is_enum else [])
        if not known or text in known:
            continue
        where = f"{owner.name}.{info.name}"
        same = [value for value in known if value.casefold() == text.casefold()]
        if same:
            hints[f"'{text}' is not a value of {where}; '{same[0]}' is (the case "
                  f"differs)."] = None
            continue
        listed = ", ".join(known[:_MAX_LISTED]) + (", ..." if len(known) > _MAX_LISTED else "")
        close = difflib.get_close_matches(text, known, n=1, cutoff=0.6)
        guess = f": did you mean '{close[0]}'?" if close else "."
        hints[f"'{text}' is not a value of {where} the schema cache knows "
              f"({listed}){guess}"] = None
    return " ".join(hints)


def _tables_by_alias(db_info: DbInfo, expression: exp.Expr) -> dict[str, TableInfo]:
    """The known tables ``expression`` reads, by alias (or name), lowercase."""
    found: dict[str, TableInfo] = {}
    for table in expression.find_all(exp.Table):
        info = _known_table(db_info, table)
        if info is not None:
            found.setdefault(table.alias_or_name.lower(), info)
    return found


def _owner(tables: dict[str, TableInfo], column: exp.Column) -> TableInfo | None:
    """The table ``column`` belongs to: by its qualifier, else the one table read that has
    it."""
    if column.table:
        return tables.get(column.table.lower())
    having = {id(t): t for t in tables.values() if t.column(column.name) is not None}
    return next(iter(having.values())) if len(having) == 1 else None


def _compared_texts(expression: exp.Expr) -> list[tuple[exp.Column, str]]:
    """``(column, text)`` for each ``column = 'text'`` (either side), ``column IN ('a',
    ...)`` and test of an array's or a SET's element (``'a' = ANY(column)``,
    ``ARRAY_CONTAINS(column, 'a')``, ``column @> ARRAY['a']``, ``FIND_IN_SET('a', column)``)
    in ``expression``."""
    pairs: list[tuple[exp.Expr, exp.Expr]] = []
    for node in expression.find_all(exp.EQ):
        for column, value in ((node.this, node.expression), (node.expression, node.this)):
            pairs.append((column.this.unnest() if isinstance(column, exp.Any) else column,
                          value))  # 'a' = ANY(column)
    for node in expression.find_all(exp.In):
        pairs += [(node.this, value) for value in node.expressions]
    for node in expression.find_all(exp.ArrayContains, exp.ArrayContainsAll):
        values = (node.expression.expressions if isinstance(node.expression, exp.Array)
                  else [node.expression])
        pairs += [(node.this, value) for value in values]
    for node in expression.find_all(exp.Anonymous):  # MySQL's FIND_IN_SET('a', column)
        if node.name.upper() == "FIND_IN_SET" and len(node.expressions) == 2:
            pairs.append((node.expressions[1], node.expressions[0]))
    return [(column, value.this) for column, value in pairs
            if isinstance(column, exp.Column) and isinstance(value, exp.Literal)
            and value.is_string]


#: Columns listed at most when a table lacks the one a query names.
_MAX_LISTED = 30


def _known_table(db_info: DbInfo, table: exp.Table) -> TableInfo | None:
    return db_info.table(_qualified(table)) or db_info.table(table.name)


def _qualified(table: exp.Table) -> str:
    """``schema.name`` as the query writes it (``name`` alone when unqualified)."""
    return ".".join(part for part in (table.db, table.name) if part)


def _mentions(error: str, name: str) -> bool:
    """``name`` stands in ``error`` as a word (not inside a longer name), any case."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", error, re.IGNORECASE) is not None
