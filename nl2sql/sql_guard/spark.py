"""Spark SQL rules of the parser layer, beyond the shared ones (``checks.py``).

Spark has no read-only mode, so this layer is the strictest of all backends:
- no path-based relation: a table qualified by a data source name (``csv.`/etc/passwd```,
  ``parquet.``, ``json.``, ``text.``, ``binaryFile.``, ``delta.``...) or a table name that
  looks like a path or URL (``/``, ``:``, ``\\``, leading ``.``/``~``);
- in FROM, only the generator table functions (``range``, ``explode``...): anything else
  (``read_files``, ``IDENTIFIER(...)``, a user function) may read files or hide a path;
- no ``TRANSFORM ... USING 'script'`` (it runs a program on the server);
- no schema-qualified function call (a persistent user-defined function runs arbitrary code);
- no table of the ``global_temp`` database: Spark's global temporary views, which any session
  of the server may create (another application's data, or a view made to be read); they
  belong to no configured database (the engine layer refuses the server's own name for it,
  ``spark.sql.globalTempDatabase``, too);
- no ``${`` anywhere: Spark substitutes ``${spark.conf}``, ``${env:NAME}`` and
  ``${system:name}`` into the text before parsing it (the session also turns that off).
The functions on the Spark deny list (``reflect``, ``java_method``...) are refused by the
shared checks.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from nl2sql.sql_guard import messages, spark_functions

#: Data source names Spark accepts in ``format.`path``` (built-in plus common connectors).
DATA_SOURCES = frozenset({
    "csv", "json", "parquet", "orc", "text", "avro", "binaryfile", "delta", "jdbc", "libsvm",
    "image", "xml", "iceberg", "hudi", "noop", "console", "kafka", "socket", "rate",
    "cloudfiles", "hive", "file", "protobuf", "excel", "sequencefile", "textfile", "rcfile",
})
#: Table functions that only generate rows from their arguments (or list the engine's keywords
#: and collations): the reviewed list's table functions, and UNNEST (grammar).
GENERATORS = spark_functions.TABLE | {"unnest"}
_PATH_CHARACTERS = ("/", ":", "\\")

PATH_RELATION = ("Path-based relations (csv.`/path`, parquet.`...`, a table named by a path) "
                 "are not allowed; query a table of the catalog by its name.")
TABLE_FUNCTION = ("Table function {name}() is not allowed in FROM (it may read files or hide a "
                  "table name); query a catalog table, or use range/explode/inline/stack.")
SCRIPT_TRANSFORM = ("TRANSFORM ... USING runs a program on the server and is not allowed; use "
                    "SQL functions instead.")
QUALIFIED_FUNCTION = ("Schema-qualified function {name}() is not allowed (a user-defined "
                      "function may have side effects); use built-in functions.")
#: The database of Spark's global temporary views (``spark.sql.globalTempDatabase``'s default).
GLOBAL_TEMP = "global_temp"
GLOBAL_TEMP_TABLE = ("The {name} database holds Spark's global temporary views, which any session "
                     "of the server may create, and is not part of the configured database; "
                     "query the database's own tables.")
SUBSTITUTION = ("Spark replaces ${...} in a query's text with server settings and environment "
                "variables (credentials among them), so it is not allowed, not even in a string "
                "or comment; write the value itself.")


def check(root: exp.Expr, tokens: list[Token], text: str) -> None:
    """Raise QueryRejectedError for the first Spark-specific construct that is not allowed."""
    if "${" in text:  # variable substitution runs on the raw text, strings and comments too
        raise messages.reject(SUBSTITUTION)
    for node in root.walk():
        if isinstance(node, exp.QueryTransform):
            raise messages.reject(SCRIPT_TRANSFORM)
        if isinstance(node, exp.Table):
            _check_table(node)
            refuse_database(node, GLOBAL_TEMP)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            function = node.expression
            name = function.name if isinstance(function, exp.Anonymous) else function.sql_name()
            raise messages.reject(QUALIFIED_FUNCTION.format(name=name.lower()))
    _check_tokens(tokens)


def refuse_database(table: exp.Table, database: str) -> None:
    """Refuse ``table`` when it is qualified by ``database`` (the global temporary views')."""
    qualifiers = [part.name for part in (table.args.get("catalog"), table.args.get("db"))
                  if part is not None]
    if isinstance(table.this, exp.Identifier) and any(
            q.lower() == database.lower() for q in qualifiers):
        raise messages.reject(GLOBAL_TEMP_TABLE.format(name=database))


def _check_table(table: exp.Table) -> None:
    name = table.this
    if not isinstance(name, exp.Identifier):  # a table function: IDENTIFIER(), read_files()...
        function = name.name if isinstance(name, exp.Anonymous) else (
            name.sql_name() if isinstance(name, exp.Func) else name.sql())
        if function.lower() not in GENERATORS:
            raise messages.reject(TABLE_FUNCTION.format(name=function.lower()))
        return
    parts = [part.name for part in (table.args.get("catalog"), table.args.get("db"), name)
             if part is not None]
    if any(part.lower() in DATA_SOURCES for part in parts[:-1]):
        raise messages.reject(PATH_RELATION)
    if any(ch in part for part in parts for ch in _PATH_CHARACTERS) \
            or any(part.startswith((".", "~")) for part in parts):
        raise messages.reject(PATH_RELATION)


def _check_tokens(tokens: list[Token]) -> None:
    """Backstops on the raw tokens: ``USING '<script>'``, ``format.`path``` and
    ``global_temp.name`` wherever the parser may have put them."""
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if token.token_type == TokenType.USING and following is not None \
                and following.token_type == TokenType.STRING:
            raise messages.reject(SCRIPT_TRANSFORM)
        if token.text.lower() == GLOBAL_TEMP and following is not None \
                and following.token_type == TokenType.DOT \
                and (i == 0 or tokens[i - 1].token_type != TokenType.DOT):
            raise messages.reject(GLOBAL_TEMP_TABLE.format(name=GLOBAL_TEMP))
        if (token.text.lower() in DATA_SOURCES and following is not None
                and following.token_type == TokenType.DOT and i + 2 < len(tokens)
                and any(ch in tokens[i + 2].text for ch in _PATH_CHARACTERS)):
            raise messages.reject(PATH_RELATION)
