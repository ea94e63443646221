"""One-line rejection messages, each saying what to do instead."""

from __future__ import annotations

from sqlglot.errors import ParseError

from nl2sql.errors import QueryRejectedError

# First words of statements that are not queries, by what they do (for the message).
_WRITES = {"INSERT", "UPDATE", "DELETE", "MERGE", "REPLACE", "UPSERT", "TRUNCATE", "COPY"}
_SCHEMA = {"CREATE", "DROP", "ALTER", "COMMENT", "GRANT", "REVOKE", "REINDEX", "CLUSTER",
           "REFRESH", "SECURITY", "IMPORT", "VACUUM", "ANALYZE", "ANALYSE"}
_TRANSACTION = {"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE"}
_SETTINGS = {"SET", "RESET", "PRAGMA", "DISCARD", "LOAD"}
_ATTACH = {"ATTACH", "DETACH"}
# Other first words of statements in the supported engines (Postgres, SQLite, MySQL, DuckDB,
# Spark): refused as "not a query". Any other unknown first word is a typo, a syntax error.
_OTHER_STATEMENTS = {
    "CALL", "DO", "LISTEN", "NOTIFY", "UNLISTEN", "PREPARE", "EXECUTE", "EXEC", "DEALLOCATE",
    "DECLARE", "FETCH", "MOVE", "CLOSE", "LOCK", "UNLOCK", "CHECKPOINT", "SHOW", "REASSIGN",
    "DESCRIBE", "DESC", "USE", "KILL", "FLUSH", "OPTIMIZE", "REPAIR", "CHECK", "CHECKSUM",
    "INSTALL", "UNINSTALL", "SHUTDOWN", "RESTART", "HANDLER", "RENAME", "XA", "HELP", "PURGE",
    "CACHE", "UNCACHE", "BINLOG", "EXPORT", "FORCE", "SUMMARIZE", "PIVOT", "UNPIVOT", "FROM",
    "MSCK", "ADD", "LIST", "GET", "PUT", "SIGNAL", "RESIGNAL", "REPLACE", "UPSERT"}
STATEMENT_WORDS = frozenset(_WRITES | _SCHEMA | _TRANSACTION | _SETTINGS | _ATTACH
                            | _OTHER_STATEMENTS)


def reject(message: str, sql: str | None = None) -> QueryRejectedError:
    """The error to raise; messages are forced onto one line."""
    return QueryRejectedError(" ".join(message.split()), sql=sql)


def not_a_query(keyword: str) -> str:
    """Message for a statement whose first word is ``keyword``."""
    kw = keyword.upper()
    if kw in _WRITES:
        what = "is a write"
    elif kw in _SCHEMA:
        what = "changes the schema or the database"
    elif kw in _TRANSACTION:
        what = "controls transactions"
    elif kw in _SETTINGS:
        what = "changes settings"
    elif kw in _ATTACH:
        what = "opens or closes other database files"
    else:
        what = "is not a query"
    return f"Only read-only queries are allowed: {kw} {what}; write a SELECT instead."


def unknown_statement(word: str, line: int, col: int, suggestions: list[str]) -> str:
    """Message for a first word that starts no statement at all (a typo such as SELEC)."""
    hint = f" (did you mean {suggestions[0]}?)" if suggestions else ""
    return (f"SQL syntax error at line {line}, column {col}: '{word}' does not start a "
            f"statement{hint}; fix the SQL and retry.")


def write_inside(keyword: str) -> str:
    return (f"Only read-only queries are allowed: {keyword.upper()} inside a query is a write; "
            "use only SELECTs in WITH clauses and subqueries.")


#: What a denied function would do, by its deny-list group, where "side effects" says too little.
_EFFECTS = {"file": "it reads or writes files on the database server",
            "large_object": "it reads or writes server files and large objects",
            "remote_or_dynamic_sql": "it runs SQL text the guard never parsed",
            "runs_sql": "it runs SQL text the guard never parsed",
            "credentials": "it reads credentials, settings or other sessions' SQL",
            "process": "it reads objects of the host process",
            "server_state": "it changes the server's state",
            "changes_state": "it changes the engine's state"}


def denied_function(name: str, effect: str | None = None) -> str:
    why = _EFFECTS.get(effect or "", "it has side effects")
    return f"Function {name} is not allowed ({why}); remove it."


MULTIPLE_STATEMENTS = ("Only one statement per query is allowed; send the statements one at a "
                       "time.")
EMPTY = "The query is empty; send one SELECT statement."
LEADING_SEMICOLON = "The query starts with ';'; remove it and send one SELECT statement."
NUL_CHARACTER = "The query contains a NUL character; remove it and retry."
NOT_TEXT = ("The query holds U+{code:04X}, a lone surrogate that is not text (no database reads "
            "it); send the query as valid Unicode text.")
TOO_DEEP = "The query is nested too deeply to check; simplify it and retry."
INTO_FILE = ("SELECT ... INTO OUTFILE/DUMPFILE writes a file on the database server and is not "
             "allowed; remove the INTO clause (results are saved for you).")
SELECT_INTO = ("SELECT ... INTO creates a table and is not allowed; remove the INTO clause "
               "(results are saved for you).")
LOCKING = ("Locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed in read-only queries; "
           "remove the FOR ... clause.")
EXPLAIN_ANALYZE = ("EXPLAIN ANALYZE runs the statement and is not allowed; use EXPLAIN without "
                   "ANALYZE.")
EXPLAIN_EMPTY = "EXPLAIN needs a query after it; write EXPLAIN SELECT ..."
UNICODE_NAME = ('Unicode-escaped names (U&"...") are not allowed; write the name with plain '
                'characters.')
BACKSLASH_QUOTE = ("A backslash right before a quote in a string is read differently by "
                   "different server settings; use E'...' escapes or remove the backslash.")
UNPARSABLE = ("SQL syntax error: the query could not be parsed (a call with missing or "
              "malformed arguments?); fix the SQL and retry.")
EXPLAIN_TWICE = "EXPLAIN may appear only once, at the start; remove the inner EXPLAIN."

def parse_error(error: ParseError, incomplete: str | None = None) -> str:
    """sqlglot's first error, from its structured fields: line, column and the token there.

    ``incomplete`` names a clause the parser left without a required part (found on the
    tree, not in sqlglot's wording); otherwise sqlglot's description is used when it is plain
    text, and a description that embeds parser objects is replaced by what the fields say.
    """
    first = error.errors[0] if error.errors else {}
    description = " ".join(str(first.get("description") or "").split())
    near = (first.get("highlight") or "").strip()
    if incomplete:
        description = f"the {incomplete.upper()} part is incomplete"
    elif not description or "<" in description:
        description = "the query ends too early" if not first.get("end_context") \
            else "unexpected text"
    line, col = first.get("line"), first.get("col")
    where = f" at line {line}, column {col}" if line and col else ""
    near_text = f" near '{near}'" if near else ""
    return f"SQL syntax error{where}: {description}{near_text}; fix the SQL and retry."


def token_error(line: int | None, col: int | None) -> str:
    where = f" at line {line}, column {col}" if line and col else ""
    return (f"SQL syntax error{where}: unterminated string, quoted name or comment; "
            "fix the SQL and retry.")



AMBIGUOUS_COMMENT = ("This comment may be read differently by the database than by the "
                     "checker (a backslash, a nested or unclosed /*, a -- without a space, a "
                     "lone carriage return); remove the comment.")
EXECUTABLE_COMMENT = ("Executable comments and optimizer hints (/*! ... */, /*+ ... */) are "
                      "not allowed here: the database runs their text; write the SQL without "
                      "them.")
HINT = ("Optimizer hints (/*+ ... */) are not allowed on this database (or hold comments or "
        "backslashes); remove the hint.")
BACKSLASH_OUTSIDE_STRING = ("A backslash outside a string is not allowed (some databases read "
                            "it as an escape); remove it.")
PARAMETER = ("Parameters and variables ($1, ?, :name, @x) are not allowed: nothing is bound to "
             "them and they can change what the database reads; write the values in the query.")
AMBIGUOUS_WHITESPACE = ("Only plain spaces, tabs and line breaks may separate SQL words; "
                        "replace the other whitespace characters.")
STRING_PREFIX = ("A quote right after a word (E'...', U&'...', b'...', a$tag$...) may be a "
                 "string prefix the database reads differently; put a space before the quote.")
UNCHECKABLE = ("The query's text could not be matched to its words exactly, so it cannot be "
               "checked; write it more plainly (no unusual characters) and retry.")
