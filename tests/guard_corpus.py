"""Allow/deny corpus for the read-only guard, as plain data shared by every guard layer.

The parser layer (``tests/test_sql_guard.py``) asserts each DENIED case is refused with a message
containing ``reason``; the engine layers run the same cases straight against a database built from
``SCHEMA`` with the parser switched off and assert that nothing of ``effect`` survives. ALLOWED
cases must pass the parser and run on that schema (checked against real databases too).

Import from any test module: ``from guard_corpus import ALLOWED, DENIED, SCHEMA, cases_for``.
"""

from __future__ import annotations

from dataclasses import dataclass

DIALECTS = ("postgres", "sqlite")

#: Objects the cases refer to: table t(a, b) with 3 rows; on Postgres t also has columns named
#: by unreserved keywords (update, delete, insert, merge, key), a GIN index t_b_gin and a BRIN
#: index t_a_brin, and there are sequence s,
#: materialized view mv and procedure p (which would delete from t).
SCHEMA = {
    "postgres": (
        "CREATE TABLE t (a integer PRIMARY KEY, b text, update int, delete int, insert int, "
        "merge int, key int);\n"
        "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'x');\n"
        "CREATE INDEX t_b_gin ON t USING gin (to_tsvector('simple', b));\n"
        "CREATE INDEX t_a_brin ON t USING brin (a);\n"
        "CREATE SEQUENCE s;\n"
        "CREATE MATERIALIZED VIEW mv AS SELECT a FROM t;\n"
        "CREATE PROCEDURE p() LANGUAGE sql AS $$ DELETE FROM t $$;\n"
    ),
    "sqlite": (
        "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT);\n"
        "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x');\n"
    ),
}

#: What a denied case would do if nothing stopped it (for the engine-layer assertions). Where a
#: "both" case is not even valid syntax on one engine (FOR UPDATE on SQLite) it simply fails there.
EFFECTS = {
    "write": "changes rows or sequences of existing tables",
    "schema": "creates, drops or alters objects, or rewrites the database (VACUUM, REINDEX...)",
    "multi_statement": "smuggles a second statement after the first",
    "transaction": "ends or opens a transaction (escaping the read-only/rollback wrapper)",
    "setting": "changes a session or server setting (e.g. read-only mode off)",
    "sleep": "blocks for at least one second",
    "file": "reads or writes files on the database server",
    "large_object": "creates, reads or writes large objects (server files via lo_import/export)",
    "remote_sql": "runs SQL text the guard never sees (dblink, query_to_xml, ts_stat...)",
    "index": "writes index pages without a transaction id (GIN pending list, BRIN ranges)",
    "session": "changes session state a later caller on the same connection would inherit",
    "lock": "takes row or advisory locks",
    "attach": "opens another database file",
    "extension": "loads native code",
    "admin": "signals backends, rotates logs, switches WAL and similar server actions",
    "notify": "sends or listens for notifications",
    "none": "harmless at the engine, refused because it is not a plain query",
    "program": "runs a program or JVM method on the server (Spark TRANSFORM, reflect)",
    "credentials": "hands out credentials, settings or other sessions' SQL",
}

MULTI = "Only one statement"
LOCK = "Locking clauses"
INTO = "SELECT ... INTO"
INTO_FILE = "INTO OUTFILE/DUMPFILE writes a file"
SYNTAX = "SQL syntax error"


@dataclass(frozen=True)
class Case:
    """A denied statement: dialect is "postgres", "sqlite" or "both"."""

    dialect: str
    sql: str
    reason: str
    effect: str

    @property
    def id(self) -> str:
        return _case_id(self.sql)


@dataclass(frozen=True)
class AllowedCase:
    """An accepted query and the ``statement_type`` the guard must report."""

    dialect: str
    sql: str
    statement_type: str

    @property
    def id(self) -> str:
        return _case_id(self.sql)


def _case_id(sql: str) -> str:
    readable = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in sql)
    return readable if len(readable) <= 70 else readable[:67] + "..."


def fn(name: str) -> str:
    return f"Function {name} is not allowed"


def _denied(dialect: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    return [Case(dialect, sql, reason, effect) for sql, reason, effect in rows]


def _allowed(dialect: str, rows: list[tuple[str, str]]) -> list[AllowedCase]:
    return [AllowedCase(dialect, sql, kind) for sql, kind in rows]


DENIED: list[Case] = [
    *_denied("both", [
        # several statements
        ("COMMIT; DROP TABLE t", "COMMIT controls transactions", "multi_statement"),
        # Measured: a plain psycopg execute() runs both statements, escaping BEGIN READ ONLY.
        ("COMMIT; DELETE FROM t WHERE a = 1", "COMMIT controls transactions", "multi_statement"),
        ("ROLLBACK; DELETE FROM t", "ROLLBACK controls transactions", "multi_statement"),
        ("END; INSERT INTO t VALUES (9, 'z')", "END controls transactions", "multi_statement"),
        ("SELECT 1; DELETE FROM t", MULTI, "multi_statement"),
        ("select 1;delete from t", MULTI, "multi_statement"),
        ("SELECT 1;\nDROP TABLE t", MULTI, "multi_statement"),
        ("SELECT 1 /* c */; DELETE FROM t", MULTI, "multi_statement"),
        ("SELECT 1; SELECT 2", MULTI, "multi_statement"),
        ("SELECT '\\'; DELETE FROM t; --'", MULTI, "multi_statement"),
        ("SELECT 1 AS a$$, 2; DELETE FROM t; SELECT 1 AS b$$", MULTI, "multi_statement"),
        ("SELECT 1 -- c\n; DELETE FROM t", MULTI, "multi_statement"),
        ("EXPLAIN SELECT 1; DELETE FROM t", MULTI, "multi_statement"),
        ("SELECT 1; ATTACH DATABASE '/tmp/guard_x.db' AS x", MULTI, "multi_statement"),
        # writes, however they are dressed
        ("INSERT INTO t VALUES (9, 'z')", "INSERT is a write", "write"),
        ("UPDATE t SET b = 'z'", "UPDATE is a write", "write"),
        ("DELETE FROM t", "DELETE is a write", "write"),
        ("/* c */ DELETE FROM t", "DELETE is a write", "write"),
        ("-- c\nDELETE FROM t", "DELETE is a write", "write"),
        ("dElEtE fRoM t", "DELETE is a write", "write"),
        ("  \n\tDELETE FROM t WHERE a = 1", "DELETE is a write", "write"),
        ("DELETE FROM t RETURNING *", "DELETE is a write", "write"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "DELETE is a write", "write"),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
         "DELETE inside a query is a write", "write"),
        ("WITH u AS (UPDATE t SET a = a + 10 RETURNING a) SELECT count(*) FROM u",
         "UPDATE inside a query is a write", "write"),
        ("WITH i AS (INSERT INTO t VALUES (9, 'z') RETURNING a) SELECT * FROM i",
         "INSERT inside a query is a write", "write"),
        ("SELECT * FROM (WITH d AS (DELETE FROM t RETURNING a) SELECT a FROM d) AS s",
         "DELETE inside a query is a write", "write"),
        ("SELECT * INTO new_t FROM t", INTO, "schema"),
        # schema changes and maintenance
        ("CREATE TABLE x (a int)", "CREATE changes the schema", "schema"),
        ("CREATE TEMP TABLE x AS SELECT 1 AS a", "CREATE changes the schema", "schema"),
        ("create temporary view v2 as select 1", "CREATE changes the schema", "schema"),
        ("DROP TABLE t", "DROP changes the schema", "schema"),
        ("ALTER TABLE t ADD COLUMN c int", "ALTER changes the schema", "schema"),
        ("VACUUM", "VACUUM changes the schema", "schema"),
        ("ANALYZE t", "ANALYZE changes the schema", "schema"),
        ("REINDEX t", "REINDEX changes the schema", "schema"),
        # transaction control
        ("BEGIN", "BEGIN controls transactions", "transaction"),
        ("COMMIT", "COMMIT controls transactions", "transaction"),
        ("ROLLBACK", "ROLLBACK controls transactions", "transaction"),
        ("END", "END controls transactions", "transaction"),
        ("SAVEPOINT a", "SAVEPOINT controls transactions", "transaction"),
        ("RELEASE a", "RELEASE controls transactions", "transaction"),
        # locking clauses (SQLite's parser drops them: the token backstop must catch them)
        ("SELECT * FROM t FOR UPDATE", LOCK, "lock"),
        ("SELECT * FROM t FOR NO KEY UPDATE", LOCK, "lock"),
        ("SELECT * FROM t FOR SHARE", LOCK, "lock"),
        ("SELECT * FROM t FOR KEY SHARE", LOCK, "lock"),
        ("SELECT a FROM t WHERE a = 1 FOR UPDATE SKIP LOCKED", LOCK, "lock"),
        ("select * from t for update of t nowait", LOCK, "lock"),
        ("SELECT * FROM (SELECT * FROM t FOR UPDATE) AS s", LOCK, "lock"),
        # EXPLAIN ANALYZE executes what it explains
        ("EXPLAIN ANALYZE DELETE FROM t", "EXPLAIN ANALYZE", "write"),
        ("EXPLAIN DELETE FROM t", "DELETE is a write", "none"),
        ("EXPLAIN EXPLAIN SELECT 1", "EXPLAIN may appear only once", "none"),
        ("EXPLAIN", "EXPLAIN needs a query", "none"),
        # odd input
        ("", "The query is empty", "none"),
        (" ; ", "The query is empty", "none"),
        ("-- just a comment", "The query is empty", "none"),
        (";SELECT 1", "starts with ';'", "none"),
        ("SELECT 1\x00; DELETE FROM t", "NUL character", "multi_statement"),
        # a lone surrogate (an undecodable byte of a command line): no driver can send it
        ("SELECT 'caf\udce9'", "a lone surrogate that is not text", "none"),
        ("SELECT 'unterminated", SYNTAX, "none"),
        ("\uff24\uff25\uff2c\uff25\uff34\uff25 FROM t", "is not a query", "none"),
        ("SHOW search_path", "SHOW is not a query", "none"),
        # a typo is a syntax error with its place, not a refusal
        ("SELEC a FROM t", "SQL syntax error at line 1, column 1: 'SELEC' does not start a "
         "statement (did you mean SELECT?)", "none"),
        ("\n  WTIH x AS (SELECT 1) SELECT * FROM x", "at line 2, column 3: 'WTIH' does not "
         "start a statement (did you mean WITH?)", "none"),
        ("EXPLAIN SELEC 1", "'SELEC' does not start a statement", "none"),
    ]),
    *_denied("postgres", [
        # other sessions' SQL text (credentials in ALTER ROLE ... PASSWORD, others' values)
        ("SELECT count(*) FROM pg_stat_activity", "holds credentials", "none"),
        ("SELECT 1 -- c\r; DELETE FROM t", MULTI, "multi_statement"),
        ("SELECT $q$ ; $q$; DELETE FROM t", MULTI, "multi_statement"),
        ("SELECT 1 /* /* */ ; DELETE FROM t; /* */", SYNTAX, "multi_statement"),
        ("WITH x AS (SELECT 1) INSERT INTO t SELECT a + 10, b FROM t", "INSERT is a write",
         "write"),
        ("MERGE INTO t USING t AS s ON t.a = s.a WHEN MATCHED THEN DELETE", "MERGE is a write",
         "write"),
        ("TRUNCATE t", "TRUNCATE is a write", "write"),
        ("COPY t TO PROGRAM 'id'", "COPY is a write", "file"),
        ("COPY t FROM '/etc/hostname'", "COPY is a write", "file"),
        ("COPY (SELECT 1) TO '/tmp/guard_copy.txt'", "COPY is a write", "file"),
        ("copy t to stdout", "COPY is a write", "none"),
        ("SELECT a INTO TEMP x FROM t", INTO, "schema"),
        ("SELECT * INTO UNLOGGED u FROM t", INTO, "schema"),
        ("REFRESH MATERIALIZED VIEW mv", "REFRESH changes the schema", "schema"),
        ("CLUSTER t USING t_pkey", "CLUSTER changes the schema", "schema"),
        ("COMMENT ON TABLE t IS 'x'", "COMMENT changes the schema", "schema"),
        ("GRANT SELECT ON t TO PUBLIC", "GRANT changes the schema", "schema"),
        ("REVOKE SELECT ON t FROM PUBLIC", "REVOKE changes the schema", "schema"),
        ("SECURITY LABEL ON TABLE t IS 'x'", "SECURITY changes the schema", "schema"),
        ("START TRANSACTION READ WRITE", "START controls transactions", "transaction"),
        ("ABORT", "ABORT controls transactions", "transaction"),
        ("SET default_transaction_read_only = off", "SET changes settings", "setting"),
        ("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET changes settings",
         "setting"),
        ("SET TRANSACTION READ WRITE", "SET changes settings", "setting"),
        ("set statement_timeout to 0", "SET changes settings", "setting"),
        ("RESET ALL", "RESET changes settings", "setting"),
        ("DISCARD ALL", "DISCARD changes settings", "setting"),
        ("LOAD 'auto_explain'", "LOAD changes settings", "extension"),
        ("DO $$ BEGIN DELETE FROM t; END $$", "DO is not a query", "write"),
        ("CALL p()", "CALL is not a query", "write"),
        ("LISTEN c", "LISTEN is not a query", "notify"),
        ("NOTIFY c, 'x'", "NOTIFY is not a query", "notify"),
        ("UNLISTEN *", "UNLISTEN is not a query", "notify"),
        ("PREPARE q AS DELETE FROM t", "PREPARE is not a query", "none"),
        ("EXECUTE q", "EXECUTE is not a query", "none"),
        ("DEALLOCATE ALL", "DEALLOCATE is not a query", "none"),
        ("DECLARE c CURSOR WITH HOLD FOR SELECT * FROM t", "DECLARE is not a query", "none"),
        ("FETCH ALL FROM c", "FETCH is not a query", "none"),
        ("LOCK TABLE t IN ACCESS EXCLUSIVE MODE", "LOCK is not a query", "lock"),
        ("CHECKPOINT", "CHECKPOINT is not a query", "admin"),
        # side-effect functions, however they are written
        ("SELECT pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ('SELECT "pg_sleep"(1)', fn("pg_sleep"), "sleep"),
        ("SELECT pg_catalog.pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ('SELECT "pg_catalog"."pg_sleep"(1)', fn("pg_sleep"), "sleep"),
        ("SELECT * FROM pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ("SELECT * FROM pg_catalog.pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ("SELECT (1).pg_sleep", fn("pg_sleep"), "sleep"),
        ('SELECT (1)."pg_sleep"', fn("pg_sleep"), "sleep"),
        ("SELECT ((1)).pg_sleep", fn("pg_sleep"), "sleep"),
        ("SELECT PG_SLEEP(1)", fn("pg_sleep"), "sleep"),
        ("SELECT Pg_Sleep(1)", fn("pg_sleep"), "sleep"),
        ("SELECT pg_sleep /* c */ (1)", fn("pg_sleep"), "sleep"),
        ("SELECT\fpg_sleep\n(1)", fn("pg_sleep"), "sleep"),
        ("SELECT pg_sleep_for('1 second')", fn("pg_sleep_for"), "sleep"),
        ("SELECT a FROM t WHERE a IN (SELECT 1 FROM pg_sleep(1))", fn("pg_sleep"), "sleep"),
        ("SELECT a FROM t ORDER BY pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ("SELECT sum(a) OVER (ORDER BY pg_sleep(1)) FROM t", fn("pg_sleep"), "sleep"),
        ("VALUES (pg_sleep(1))", fn("pg_sleep"), "sleep"),
        ("SELECT * FROM t, LATERAL pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ("SELECT * FROM ROWS FROM (pg_sleep(1))", fn("pg_sleep"), "sleep"),
        ("WITH w AS (SELECT pg_sleep(1)) SELECT * FROM w", fn("pg_sleep"), "sleep"),
        ("SELECT CASE WHEN a > 0 THEN pg_sleep(1) END FROM t", fn("pg_sleep"), "sleep"),
        ("SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM t", fn("pg_sleep"), "sleep"),
        ("SELECT 1 UNION ALL SELECT 1 FROM pg_sleep(1)", fn("pg_sleep"), "sleep"),
        ("EXPLAIN ANALYZE SELECT pg_sleep(1)", "EXPLAIN ANALYZE", "sleep"),
        ("EXPLAIN SELECT pg_sleep(1)", fn("pg_sleep"), "none"),
        ("EXPLAIN (ANALYZE) DELETE FROM t", "EXPLAIN ANALYZE", "write"),
        ("EXPLAIN (ANALYZE true) DELETE FROM t", "EXPLAIN ANALYZE", "write"),
        ("EXPLAIN (FORMAT JSON, ANALYZE) DELETE FROM t", "EXPLAIN ANALYZE", "write"),
        ("explain analyse delete from t", "EXPLAIN ANALYZE", "write"),
        ("SELECT pg_read_file('/etc/hostname')", fn("pg_read_file"), "file"),
        ("SELECT pg_read_binary_file('/etc/hostname')", fn("pg_read_binary_file"), "file"),
        ("SELECT * FROM pg_ls_dir('.')", fn("pg_ls_dir"), "file"),
        ("SELECT pg_stat_file('postgresql.conf')", fn("pg_stat_file"), "file"),
        ("SELECT lo_import('/etc/passwd')", fn("lo_import"), "large_object"),
        ("SELECT lo_export(1, '/tmp/guard_lo')", fn("lo_export"), "large_object"),
        ("SELECT lo_from_bytea(0, 'x')", fn("lo_from_bytea"), "large_object"),
        ("SELECT lowrite(0, 'x')", fn("lowrite"), "large_object"),
        ("SELECT dblink_exec('dbname=postgres', 'DROP TABLE t')", fn("dblink_exec"),
         "remote_sql"),
        ("SELECT query_to_xml('DELETE FROM t RETURNING a', true, false, '')",
         fn("query_to_xml"), "remote_sql"),
        ("SELECT * FROM ts_stat('SELECT to_tsvector(b) FROM t')", fn("ts_stat"), "remote_sql"),
        ("SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, "
         "(''b''||pg_sleep(1)::text)::tsquery')", fn("ts_rewrite"), "remote_sql"),
        ("SELECT ts_rewrite(to_tsquery('a'), 'SELECT to_tsquery(b), to_tsquery(b) FROM t')",
         fn("ts_rewrite"), "remote_sql"),
        ("SELECT cursor_to_xml('c', 1, false, false, '')", fn("cursor_to_xml"), "remote_sql"),
        ("SELECT query_to_xmlschema('SELECT 1', true, false, '')", fn("query_to_xmlschema"),
         "remote_sql"),
        ("SELECT table_to_xml('t', true, false, '')", fn("table_to_xml"), "remote_sql"),
        ("SELECT schema_to_xml('public', true, false, '')", fn("schema_to_xml"),
         "remote_sql"),
        # index maintenance: page writes without a transaction id (needs the index's owner)
        ("SELECT gin_clean_pending_list('t_b_gin')", fn("gin_clean_pending_list"), "index"),
        ("SELECT brin_summarize_new_values('t_a_brin')", fn("brin_summarize_new_values"),
         "index"),
        ("SELECT brin_summarize_range('t_a_brin', 0)", fn("brin_summarize_range"), "index"),
        ("SELECT brin_desummarize_range('t_a_brin', 0)", fn("brin_desummarize_range"),
         "index"),
        ("SELECT * FROM pg_catalog.gin_clean_pending_list('t_b_gin'::regclass)",
         fn("gin_clean_pending_list"), "index"),
        ("SELECT ('t_a_brin'::regclass).brin_summarize_new_values",
         fn("brin_summarize_new_values"), "index"),
        # session state that outlives the rolled-back transaction
        ("SELECT setseed(0.42)", fn("setseed"), "session"),
        ("SELECT random() FROM t, LATERAL (SELECT setseed(0.42)) AS s", fn("setseed"),
         "session"),
        ("SELECT pg_advisory_lock(1)", fn("pg_advisory_lock"), "lock"),
        ("SELECT pg_try_advisory_xact_lock(1)", fn("pg_try_advisory_xact_lock"), "lock"),
        ("SELECT pg_advisory_lock_shared(1)", fn("pg_advisory_lock_shared"), "lock"),
        ("SELECT set_config('default_transaction_read_only', 'off', false)", fn("set_config"),
         "setting"),
        ("SELECT pg_reload_conf()", fn("pg_reload_conf"), "setting"),
        ("SELECT nextval('s')", fn("nextval"), "write"),
        ("SELECT setval('s', 100)", fn("setval"), "write"),
        ("SELECT txid_current()", fn("txid_current"), "write"),
        ("SELECT pg_notify('c', 'x')", fn("pg_notify"), "notify"),
        ("SELECT pg_cancel_backend(0)", fn("pg_cancel_backend"), "admin"),
        ("SELECT pg_terminate_backend(0)", fn("pg_terminate_backend"), "admin"),
        ("SELECT pg_switch_wal()", fn("pg_switch_wal"), "admin"),
        ("SELECT pg_create_restore_point('x')", fn("pg_create_restore_point"), "admin"),
        # whitespace the backend reads differently from a naive splitter
        ("SELECT 1\u00a0; DELETE FROM t", MULTI, "multi_statement"),
        # spellings Postgres decodes but sqlglot does not
        ('SELECT U&"pg_\\0073leep"(1)', "Unicode-escaped names", "sleep"),
        ('SELECT * FROM U&"lo_\\0069mport"(\'/etc/hostname\')', "Unicode-escaped names",
         "large_object"),
        ('EXPLAIN (U&"\\0061nalyze") SELECT 1', "Unicode-escaped names", "none"),
        ('EXPLAIN ("analyze") SELECT 1', "EXPLAIN ANALYZE", "none"),
        # keywords in the places where they are keywords: still refused
        ("SELECT * FROM t FOR READ ONLY FOR UPDATE", LOCK, "lock"),
        ("SELECT * FROM t FOR KEY SHARE OF t", LOCK, "lock"),
        ("SELECT ARRAY(SELECT a FROM t FOR UPDATE)", LOCK, "lock"),
        ("WITH x AS (SELECT 1) UPDATE t SET b = 'z'", "UPDATE is a write", "write"),
        ("WITH m AS (MERGE INTO t USING t AS s ON t.a = s.a WHEN MATCHED THEN DELETE) "
         "SELECT 1", "MERGE", "write"),
        ("SELECT * FROM t WHERE a = 1 FOR\nUPDATE", LOCK, "lock"),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) "
         "CYCLE n SET is_cycle USING path DELETE FROM t", "DELETE is a write", "write"),
        # ambiguous: a bare alias named delete, or a statement after ")"; write AS delete
        ("SELECT max(a) delete FROM t", "DELETE inside a query is a write", "none"),
    ]),
    *_denied("sqlite", [
        ("SELECT 1 /* /* */ ; DELETE FROM t; /* */", MULTI, "multi_statement"),
        ("SELECT $$ ; DELETE FROM t $$", MULTI, "multi_statement"),
        ("REPLACE INTO t VALUES (1, 'z')", "REPLACE is a write", "write"),
        ("INSERT OR REPLACE INTO t VALUES (1, 'z')", "INSERT is a write", "write"),
        ("UPDATE OR IGNORE t SET b = 'z'", "UPDATE is a write", "write"),
        ("INSERT INTO t DEFAULT VALUES", "INSERT is a write", "write"),
        ("ATTACH DATABASE '/tmp/guard_x.db' AS x", "ATTACH opens or closes", "attach"),
        ("attach '/tmp/guard_x.db' as x", "ATTACH opens or closes", "attach"),
        ("ATTACH 'file:/tmp/guard_x.db?mode=rwc' AS x", "ATTACH opens or closes", "attach"),
        ("DETACH DATABASE x", "DETACH opens or closes", "attach"),
        ("VACUUM INTO '/tmp/guard_x.db'", "VACUUM changes the schema", "file"),
        ("vacuum main into '/tmp/guard_x.db'", "VACUUM changes the schema", "file"),
        ("PRAGMA query_only=OFF", "PRAGMA changes settings", "setting"),
        ("PRAGMA query_only = 0", "PRAGMA changes settings", "setting"),
        ("PRAGMA writable_schema=ON", "PRAGMA changes settings", "setting"),
        ("PRAGMA main.writable_schema = 1", "PRAGMA changes settings", "setting"),
        ("pragma journal_mode=DELETE", "PRAGMA changes settings", "setting"),
        ("PRAGMA trusted_schema=ON", "PRAGMA changes settings", "setting"),
        ("PRAGMA journal_mode", "PRAGMA changes settings", "none"),
        ("PRAGMA optimize", "PRAGMA changes settings", "none"),
        ("PRAGMA table_info = t", "PRAGMA changes settings", "none"),
        ("PRAGMA table_info(t) = 1", "PRAGMA changes settings", "none"),
        ("PRAGMA main.journal_mode(OFF)", "PRAGMA changes settings", "setting"),
        ("PRAGMA table_info(t); DELETE FROM t", MULTI, "multi_statement"),
        ("BEGIN IMMEDIATE", "BEGIN controls transactions", "transaction"),
        ("BEGIN EXCLUSIVE TRANSACTION", "BEGIN controls transactions", "transaction"),
        ("END TRANSACTION", "END controls transactions", "transaction"),
        ("ROLLBACK TO a", "ROLLBACK controls transactions", "transaction"),
        ("CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM t; END",
         "CREATE changes the schema", "schema"),
        ("CREATE VIRTUAL TABLE vt USING fts5(x)", "CREATE changes the schema", "schema"),
        ("CREATE INDEX i ON t (b)", "CREATE changes the schema", "schema"),
        ("ALTER TABLE t RENAME TO u", "ALTER changes the schema", "schema"),
        ("SELECT load_extension('x')", fn("load_extension"), "extension"),
        ("SELECT LOAD_EXTENSION('/tmp/evil.so', 'init')", fn("load_extension"), "extension"),
        ('SELECT "load_extension"(\'x\')', fn("load_extension"), "extension"),
        ("SELECT a FROM t WHERE load_extension('x') IS NULL", fn("load_extension"),
         "extension"),
        ("SELECT main.load_extension('x')", fn("load_extension"), "none"),
        ("SELECT 1 UNION SELECT load_extension('x')", fn("load_extension"), "extension"),
        ("SELECT readfile('/etc/passwd')", fn("readfile"), "file"),
        ("SELECT writefile('/tmp/guard_x', 'y')", fn("writefile"), "file"),
        ("SELECT edit('x')", fn("edit"), "file"),
        ("SELECT * FROM fsdir('/')", fn("fsdir"), "file"),
        ("SELECT fts3_tokenizer('simple')", fn("fts3_tokenizer"), "write"),
        ("SELECT\vload_extension('x')", fn("load_extension"), "none"),
        ("WITH w AS (SELECT writefile('/tmp/guard_x', 'y')) SELECT * FROM w", fn("writefile"),
         "file"),
        ("EXPLAIN QUERY PLAN DELETE FROM t", "DELETE is a write", "none"),
    ]),
]

ALLOWED: list[AllowedCase] = [
    *_allowed("both", [
        ("SELECT 1", "select"),
        ("select * from t", "select"),
        ("SELECT 1;", "select"),
        ("SELECT a FROM t ;  \n", "select"),
        ("SELECT a FROM t; -- done", "select"),
        ("SELECT a, b FROM t WHERE b = 'DELETE FROM t'", "select"),
        ("SELECT 'pg_sleep(1)' AS s", "select"),
        ("SELECT 'load_extension(''x''); DROP TABLE t' AS s", "select"),
        ("SELECT a FROM t WHERE b = 'FOR UPDATE'", "select"),
        ("SELECT b AS \"pg_sleep\", a AS \"delete\" FROM t", "select"),
        ("SELECT a FROM t -- trailing comment", "select"),
        ("-- leading comment\nSELECT a FROM t", "select"),
        ("/* block */ SELECT a /* inline */ FROM t", "select"),
        ("SELECT 1 /* ; DELETE FROM t */", "select"),
        ("SELECT a, row_number() OVER (ORDER BY a) AS rn FROM t", "select"),
        ("SELECT a, sum(a) OVER (PARTITION BY b ORDER BY a ROWS BETWEEN UNBOUNDED PRECEDING "
         "AND CURRENT ROW) FROM t", "select"),
        ("SELECT a, lag(a) OVER w FROM t WINDOW w AS (ORDER BY a)", "select"),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10) "
         "SELECT n FROM c", "select"),
        ("WITH x AS (SELECT a FROM t) SELECT * FROM x", "select"),
        ("SELECT a FROM t UNION SELECT a FROM t", "union"),
        ("SELECT a FROM t INTERSECT SELECT a FROM t", "intersect"),
        ("SELECT a FROM t EXCEPT SELECT 1", "except"),
        ("VALUES (1, 'a'), (2, 'b')", "values"),
        ("SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END FROM t", "select"),
        ("SELECT b, count(*) FROM t GROUP BY b HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 5",
         "select"),
        ("SELECT count(*) FILTER (WHERE a > 1) FROM t", "select"),
        ("SELECT x.a FROM t AS x JOIN t AS y ON x.a = y.a", "select"),
        ("SELECT a FROM t WHERE a IN (SELECT a FROM t) AND EXISTS (SELECT 1 FROM t)", "select"),
        ("SELECT DISTINCT b FROM t ORDER BY b", "select"),
        ("SELECT coalesce(b, 'x'), upper(b), length(b), CAST(a AS TEXT) FROM t", "select"),
        ("SELECT min(a), max(a), avg(a) FROM t", "select"),
        ("SELECT a FROM t ORDER BY a LIMIT 10 OFFSET 1", "select"),
        ("SELECT * FROM t WHERE b LIKE '%;%'", "select"),
        ("SELECT 'it''s; DROP TABLE t'", "select"),
        ("EXPLAIN SELECT a FROM t", "explain"),
        ("-- plan\nEXPLAIN SELECT a FROM t", "explain"),
        ("SELECT substr(b, 1, 2) FROM t", "select"),
        # standard_conforming_strings is pinned on in Postgres: a backslash is a plain
        # character in '...', for the server as for the guard; the tail is one string.
        ("SELECT 'C:\\'", "select"),
        ("SELECT '\\'' ; DELETE FROM t; --'", "select"),
        ("SELECT substr(b, 1, \"update\") FROM t", "select"),
    ]),
    *_allowed("postgres", [
        ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t", "select"),
        ("SELECT percentile_disc(0.9) WITHIN GROUP (ORDER BY a) FROM t", "select"),
        ("SELECT DISTINCT ON (b) b, a FROM t ORDER BY b, a", "select"),
        ("SELECT b, sum(a) FROM t GROUP BY ROLLUP (b)", "select"),
        ("SELECT b, sum(a) FROM t GROUP BY CUBE (b)", "select"),
        ("SELECT b, sum(a) FROM t GROUP BY GROUPING SETS ((b), ())", "select"),
        ("SELECT t.a, x.d FROM t, LATERAL (SELECT t.a * 2 AS d) AS x", "select"),
        ("SELECT t.a, g.n FROM t CROSS JOIN LATERAL generate_series(1, t.a) AS g(n)", "select"),
        ("SELECT '{\"k\": 1}'::jsonb ->> 'k'", "select"),
        ("SELECT '{\"k\": [1, 2]}'::json -> 'k' -> 0", "select"),
        ("SELECT jsonb_build_object('a', a) FROM t", "select"),
        ("SELECT now(), current_user, current_date", "select"),
        ("SELECT current_setting('search_path')", "select"),
        ("SELECT * FROM generate_series(1, 10) AS g(n)", "select"),
        ("SELECT a FROM t WHERE b ~ '^x'", "select"),
        ("SELECT a::text || b FROM t", "select"),
        ("SELECT $$pg_sleep(1); DELETE FROM t$$ AS s", "select"),
        ("SELECT $tag$ ; DROP TABLE t $tag$", "select"),
        ("SELECT E'it\\'s; DELETE FROM t'", "select"),
        ("SELECT 1 /* outer /* nested ; DELETE FROM t */ still a comment */", "select"),
        ("TABLE t", "select"),
        ("(SELECT a FROM t)", "select"),
        ("(SELECT a FROM t) UNION ALL (SELECT 2)", "union"),
        ("EXPLAIN (FORMAT JSON) SELECT a FROM t", "explain"),
        ("EXPLAIN (COSTS OFF, VERBOSE) SELECT a FROM t", "explain"),
        ("EXPLAIN VERBOSE SELECT a FROM t", "explain"),
        ("explain (format yaml) select 1", "explain"),
        ("SELECT a FROM t WHERE a = ANY(ARRAY[1, 2])", "select"),
        ("SELECT array_agg(a ORDER BY a), string_agg(b, ',') FROM t", "select"),
        ("SELECT a FROM t ORDER BY a FETCH FIRST 2 ROWS ONLY", "select"),
        ("SELECT substring(b FROM 1 FOR 1) FROM t", "select"),
        ("SELECT pg_backend_pid(), version(), txid_current_if_assigned()", "select"),
        ("SELECT pg_size_pretty(pg_database_size(current_database()))", "select"),
        ("SELECT interval '1 day', a FROM ONLY t WHERE b IS DISTINCT FROM 'x'", "select"),
        ("SELECT (ROW(1, 2)).f1", "select"),
        ("SELECT a FROM t WHERE b ~ '^\\w+$' AND b <> 'C:\\temp'", "select"),
        ("SELECT U&'d\\0061t', U&'!0061' UESCAPE '!'", "select"),
        ("SELECT count(*) FROM pg_stat_database", "select"),
        # unreserved keywords as names; FOR that is no locking clause
        ("SELECT t.update, t.delete, t.insert, t.merge FROM t", "select"),
        ("SELECT 1 AS insert", "select"),
        ("SELECT a AS update, b AS delete FROM t", "select"),
        ("SELECT update, key FROM t", "select"),
        ("SELECT a, merge FROM t WHERE t.insert IS NULL", "select"),
        ("SELECT count(*) update FROM t", "select"),
        ("SELECT substring(b FROM 1 FOR \"update\") FROM t", "select"),
        ("SELECT substring(b FROM 1 FOR key) FROM t", "select"),
        ("SELECT substring(b FROM 1 FOR 1) FROM t FOR READ ONLY", "select"),
        ("SELECT overlay(b PLACING 'z' FROM 1 FOR 1) FROM t", "select"),
        ("SELECT a FROM t FOR READ ONLY", "select"),
        ("SELECT a FROM (SELECT a FROM t FOR READ ONLY) AS s", "select"),
        ("SELECT xmlparse(content '<a/>')", "select"),
        ("SELECT xmlparse(document '<a/>' preserve whitespace)", "select"),
        ("SELECT xmlserialize(content '<a/>'::xml AS text)", "select"),
        ("SELECT E'C:\\\\', 'a\\b'", "select"),
    ]),
    *_allowed("sqlite", [
        ("SELECT * FROM pragma_table_info('t')", "select"),
        # read-only pragmas are queries as statements too
        ("PRAGMA table_info(t)", "pragma"),
        ("PRAGMA main.table_info('t')", "pragma"),
        ("pragma index_list(t);", "pragma"),
        ("PRAGMA table_list", "pragma"),
        ("PRAGMA foreign_key_list(\"t\")", "pragma"),
        ("SELECT name FROM pragma_table_list", "select"),
        ("SELECT name FROM sqlite_master WHERE type = 'table'", "select"),
        ("SELECT json_extract('{\"k\": 1}', '$.k')", "select"),
        ("SELECT '{\"k\": 1}' ->> '$.k'", "select"),
        ("SELECT value FROM json_each('[1, 2, 3]')", "select"),
        ("SELECT group_concat(b, ',') FROM t", "select"),
        ("SELECT date('now'), datetime('now', '-1 day'), sqlite_version()", "select"),
        ("SELECT typeof(a), iif(a > 1, 'y', 'n'), printf('%d', a) FROM t", "select"),
        ("SELECT [a], `b` FROM t", "select"),
        ("EXPLAIN QUERY PLAN SELECT a FROM t WHERE a = 1", "explain"),
        ("explain query plan select * from t", "explain"),
        ("SELECT a, ntile(2) OVER (ORDER BY a) FROM t", "select"),
        ("SELECT total(a) FROM t", "select"),
        # SQLite ends a -- comment only at \n, so this is one statement there.
        ("SELECT 1 -- c\r; DELETE FROM t", "select"),
    ]),
]


# -- Spark SQL (dialect "spark": not part of "both") ------------------------------------------
#: Objects the Spark cases refer to: table t(a INT, b STRING) with 3 rows in a throwaway
#: database. The engine layer (``tests/test_spark_guard.py``) runs each case wrapped as a
#: subquery with runSQLOnFiles=false and checks rows, tables, files, settings and JVM state.
SPARK_SCHEMA = (
    "CREATE TABLE t (a INT, b STRING) USING parquet;\n"
    "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x');\n"
)
PATH = "Path-based relations"
SCRIPT = "TRANSFORM ... USING"
UDF = "Schema-qualified function"

SPARK_DENIED: list[Case] = _denied("spark", [
    ('SELECT 1; DROP TABLE t', MULTI, 'multi_statement'),
    ("SELECT 1; INSERT INTO t VALUES (9, 'z')", MULTI, 'multi_statement'),
    ('SELECT a FROM t;\nDELETE FROM t', MULTI, 'multi_statement'),
    ('SELECT 1 -- c\n; DROP TABLE t', MULTI, 'multi_statement'),
    ('BEGIN DROP TABLE t; END', 'BEGIN controls transactions', 'multi_statement'),
    ("EXECUTE IMMEDIATE 'DROP TABLE t'", 'EXECUTE is not a query', 'remote_sql'),
    ("INSERT INTO t VALUES (9, 'z')", 'INSERT is a write', 'write'),
    ('INSERT INTO t SELECT * FROM t', 'INSERT is a write', 'write'),
    ('INSERT OVERWRITE TABLE t SELECT * FROM t WHERE a = 1', 'INSERT is a write', 'write'),
    ("WITH x AS (SELECT 9 AS a, 'z' AS b) INSERT INTO t SELECT * FROM x", 'INSERT is a write', 'write'),
    ('FROM t INSERT INTO t SELECT a, b', 'FROM is not a query', 'write'),
    ("UPDATE t SET b = 'z'", 'UPDATE is a write', 'write'),
    ('DELETE FROM t', 'DELETE is a write', 'write'),
    ('MERGE INTO t USING t s ON t.a = s.a WHEN MATCHED THEN DELETE', 'MERGE is a write', 'write'),
    ('TRUNCATE TABLE t', 'TRUNCATE is a write', 'write'),
    ("LOAD DATA LOCAL INPATH '/etc/hosts' INTO TABLE t", 'LOAD changes settings', 'write'),
    ("INSERT OVERWRITE DIRECTORY '/tmp/nl2sql_spark_guard_dir' USING csv SELECT * FROM t", 'INSERT is a write', 'file'),
    ("INSERT OVERWRITE LOCAL DIRECTORY '/tmp/nl2sql_spark_guard_dir' SELECT * FROM t", 'INSERT is a write', 'file'),
    ("CREATE TABLE u USING csv OPTIONS (path '/etc/passwd')", 'CREATE changes the schema or the database', 'file'),
    ("CREATE TEMPORARY VIEW v USING text OPTIONS (path '/etc/passwd')", 'CREATE changes the schema or the database', 'file'),
    ("CREATE OR REPLACE TEMPORARY VIEW v USING csv OPTIONS (path '/etc/hosts')", 'CREATE changes the schema or the database', 'file'),
    ('ADD JAR /tmp/nl2sql_spark_guard.jar', 'ADD JAR is not a query', 'extension'),
    ('ADD FILE /etc/passwd', 'ADD FILE is not a query', 'file'),
    ('ADD ARCHIVE /tmp/nl2sql_spark_guard.zip', 'ADD ARCHIVE is not a query', 'file'),
    ('LIST FILE', 'LIST is not a query', 'none'),
    ('CREATE TABLE u (a INT) USING parquet', 'CREATE changes the schema or the database', 'schema'),
    ('CREATE TABLE u AS SELECT * FROM t', 'CREATE changes the schema or the database', 'schema'),
    ('CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1 AS a', 'CREATE changes the schema or the database', 'schema'),
    ("CREATE TEMPORARY FUNCTION f AS 'org.example.F' USING JAR '/tmp/nl2sql_spark_guard.jar'", 'CREATE changes the schema or the database', 'extension'),
    ('CREATE DATABASE nl2sql_spark_guard_db', 'CREATE changes the schema or the database', 'schema'),
    ('DROP TABLE t', 'DROP changes the schema or the database', 'schema'),
    ('DROP DATABASE nl2sql_spark_guard_db CASCADE', 'DROP changes the schema or the database', 'schema'),
    ('ALTER TABLE t ADD COLUMNS (c INT)', 'ALTER changes the schema or the database', 'schema'),
    ("ALTER TABLE t SET TBLPROPERTIES ('nl2sql' = 'x')", 'ALTER changes the schema or the database', 'schema'),
    ("ALTER TABLE t SET LOCATION '/tmp/nl2sql_spark_guard_dir'", 'ALTER changes the schema or the database', 'schema'),
    ('ALTER TABLE t RENAME TO t2', 'ALTER changes the schema or the database', 'schema'),
    ("COMMENT ON TABLE t IS 'x'", 'COMMENT changes the schema or the database', 'schema'),
    ('MSCK REPAIR TABLE t', 'MSCK REPAIR is not a query', 'schema'),
    ('ANALYZE TABLE t COMPUTE STATISTICS', 'ANALYZE changes the schema or the database', 'schema'),
    ('CACHE TABLE t', 'CACHE is not a query', 'setting'),
    ('CACHE LAZY TABLE c AS SELECT * FROM t', 'CACHE is not a query', 'schema'),
    ('UNCACHE TABLE t', 'UNCACHE is not a query', 'setting'),
    ('CLEAR CACHE', 'does not start a statement', 'setting'),
    ('REFRESH TABLE t', 'REFRESH changes the schema or the database', 'none'),
    ("REFRESH '/tmp'", 'REFRESH changes the schema or the database', 'none'),
    ('SET spark.sql.runSQLOnFiles=true', 'SET changes settings', 'setting'),
    ('SET spark.sql.ansi.enabled = false', 'SET changes settings', 'setting'),
    ('SET', 'SET changes settings', 'none'),
    ('RESET', 'RESET changes settings', 'setting'),
    ('RESET spark.sql.runSQLOnFiles', 'RESET changes settings', 'setting'),
    ('USE default', 'USE is not a query', 'setting'),
    ('USE CATALOG spark_catalog', 'USE is not a query', 'setting'),
    ('DECLARE VARIABLE nl2sql_v INT DEFAULT 1', 'DECLARE is not a query', 'setting'),
    ('SET VAR nl2sql_v = 2', 'SET changes settings', 'setting'),
    ('GRANT SELECT ON t TO someone', 'GRANT changes the schema or the database', 'schema'),
    ("CALL spark_catalog.system.rollback_to_snapshot('t', 1)", 'CALL is not a query', 'write'),
    ('SHOW TABLES', 'SHOW is not a query', 'none'),
    ('DESCRIBE TABLE t', 'DESCRIBE is not a query', 'none'),
    ('EXPLAIN ANALYZE SELECT 1', 'EXPLAIN ANALYZE runs the statement and is not allowed', 'none'),
    ('SELECT * FROM csv.`/etc/passwd`', PATH, 'file'),
    ('SELECT * FROM text.`/etc/passwd`', PATH, 'file'),
    ('SELECT * FROM json.`/etc/hosts`', PATH, 'file'),
    ('SELECT * FROM parquet.`/tmp`', PATH, 'file'),
    ('SELECT * FROM orc.`file:///tmp`', PATH, 'file'),
    ('SELECT * FROM binaryFile.`/etc/passwd`', PATH, 'file'),
    ('SELECT * FROM delta.`/tmp/nl2sql_spark_guard_dir`', PATH, 'file'),
    ('SELECT * FROM `csv`.`/etc/passwd`', PATH, 'file'),
    ('SELECT * FROM CSV.`/etc/passwd`', PATH, 'file'),
    ('SELECT * FROM spark_catalog.text.`/etc/passwd`', PATH, 'file'),
    ('SELECT a FROM t JOIN text.`/etc/passwd` p ON true', PATH, 'file'),
    ('SELECT * FROM (SELECT * FROM text.`/etc/passwd`) x', PATH, 'file'),
    ('WITH p AS (SELECT * FROM text.`/etc/passwd`) SELECT * FROM p', PATH, 'file'),
    ('SELECT (SELECT count(*) FROM text.`/etc/passwd`)', PATH, 'file'),
    ('SELECT a FROM t WHERE a IN (SELECT length(value) FROM text.`/etc/passwd`)', PATH, 'file'),
    ('SELECT * FROM t UNION ALL SELECT 1, value FROM text.`/etc/passwd`', PATH, 'file'),
    ("SELECT * FROM IDENTIFIER('t')", fn('identifier'), 'file'),
    ("SELECT * FROM identifier('text.`/etc/passwd`')", fn('identifier'), 'file'),
    ("SELECT * FROM IDENTIFIER('te' || 'xt.`/etc/passwd`')", fn('identifier'), 'file'),
    ("SELECT IDENTIFIER('a') FROM t", fn('identifier'), 'file'),
    ("SELECT * FROM read_files('/etc/passwd', format => 'text')", fn('read_files'), 'file'),
    ('SELECT * FROM `/etc/passwd`', PATH, 'file'),
    ("SELECT reflect('java.lang.System', 'setProperty', 'nl2sql.guard', 'x')", fn('reflect'), 'setting'),
    ("SELECT java_method('java.lang.System', 'setProperty', 'nl2sql.guard', 'x')", fn('java_method'), 'setting'),
    ("SELECT try_reflect('java.lang.System', 'setProperty', 'nl2sql.guard', 'x')", fn('try_reflect'), 'setting'),
    ("SELECT REFLECT('java.lang.System', 'setProperty', 'nl2sql.guard', 'x')", fn('reflect'), 'setting'),
    ("SELECT `reflect`('java.lang.System', 'setProperty', 'nl2sql.guard', 'x')", fn('reflect'), 'setting'),
    ("SELECT a FROM t WHERE java_method('java.lang.Thread', 'sleep', 1500L) IS NULL", fn('java_method'), 'sleep'),
    ("SELECT reflect('java.lang.Thread', 'sleep', 1500L)", fn('reflect'), 'sleep'),
    ("SELECT TRANSFORM(a, b) USING 'cat' AS (x, y) FROM t", SCRIPT, 'none'),
    ("SELECT TRANSFORM(a) USING 'touch /tmp/nl2sql_spark_guard_probe' AS (x) FROM t", SCRIPT, 'file'),
    ("SELECT transform(a) using 'sh -c id' FROM t", SCRIPT, 'none'),
    ("SELECT xpath('<a><b>1</b></a>', 'a/b/text()')", fn('xpath'), 'none'),
    ("SELECT xpath_string('<a>1</a>', 'a')", fn('xpath_string'), 'none'),
    ("SELECT from_protobuf(b, 'M', '/etc/passwd') FROM t", fn('from_protobuf'), 'file'),
    ("SELECT secret('scope', 'key')", fn('secret'), 'file'),
    ("SELECT http_request(conn => 'c', method => 'GET', path => '/')", fn('http_request'), 'remote_sql'),
    ("SELECT ai_query('endpoint', 'x')", fn('ai_query'), 'remote_sql'),
    ("SELECT from_xml('<a/>', 'b STRING', map('rowValidationXSDPath', "
     "'http://127.0.0.1:9/x.xsd')) AS x", "Option 'rowValidationXSDPath' of from_xml()", 'file'),
    ("SELECT schema_of_xml('<a/>', map('rowValidationXSDPath', '/etc/passwd')) AS x",
     "Option 'rowValidationXSDPath' of schema_of_xml()", 'file'),
    ("SELECT from_xml('<a/>', 'b STRING', str_to_map('rowValidationXSDPath=/etc/passwd')) AS x",
     "must be written map('key', 'value', ...)", 'file'),
    ("SELECT '${env:HOME}' AS x", "replaces ${...}", 'credentials'),
    ("SELECT a FROM t -- ${spark.app.name}", "replaces ${...}", 'credentials'),
    ('SELECT default.f(a) FROM t', UDF, 'extension'),
    ('SELECT spark_catalog.default.f(a) FROM t', UDF, 'extension'),
])
SPARK_ALLOWED: list[AllowedCase] = _allowed("spark", [
    ('SELECT a, b FROM t', 'select'),
    ('SELECT `a`, `b` FROM `t`', 'select'),
    ('SELECT * FROM t TABLESAMPLE (2 ROWS)', 'select'),
    ('SELECT * FROM t TABLESAMPLE (50 PERCENT) REPEATABLE (1)', 'select'),
    ('SELECT b, count(*) AS n FROM t GROUP BY b ORDER BY n DESC LIMIT 1', 'select'),
    ('SELECT transform(array(1, 2), x -> x + 1)', 'select'),
    ('SELECT filter(array(a, 5), x -> x > 1) FROM t', 'select'),
    ('SELECT a, e FROM t LATERAL VIEW explode(array(1, 2)) s AS e', 'select'),
    ('SELECT * FROM range(3)', 'select'),
    ('SELECT * FROM explode(array(1, 2))', 'select'),
    ('SELECT explode(array(1, 2)) AS x', 'select'),
    ("SELECT date_add(current_date(), 1), datediff(DATE'2024-01-02', DATE'2024-01-01')", 'select'),
    ("SELECT date_format(TIMESTAMP'2024-01-02 03:04:05', 'yyyy-MM'), year(current_date())", 'select'),
    ('SELECT a DIV 2, a / 2, a % 2 FROM t', 'select'),
    ("SELECT concat_ws('-', b, b), regexp_extract(b, '(x)', 1), upper(b) FROM t", 'select'),
    ('WITH x AS (SELECT a FROM t) SELECT * FROM x', 'select'),
    ('SELECT a, row_number() OVER (PARTITION BY b ORDER BY a) AS rn FROM t', 'select'),
    ("SELECT * FROM t WHERE b RLIKE '^x' AND b LIKE 'x%'", 'select'),
    ("SELECT named_struct('k', a).k, map('k', a)['k'], array(a)[0] FROM t", 'select'),
    ('SELECT percentile_approx(a, 0.5), collect_list(b), collect_set(b) FROM t', 'select'),
    ("VALUES (1, 'x'), (2, 'y')", 'values'),
    ('SELECT a FROM t UNION ALL SELECT 2', 'union'),
    ('SELECT a FROM t INTERSECT SELECT 1', 'intersect'),
    ('SELECT a FROM t EXCEPT SELECT 1', 'except'),
    ('SELECT /*+ BROADCAST(t) */ a FROM t', 'select'),
    ('SELECT \'it\\\'s\', "a string"', 'select'),
    ('SELECT current_database(), current_catalog(), version()', 'select'),
    ('SELECT a FROM t WHERE b IN (SELECT b FROM t WHERE a > 1)', 'select'),
    ('SELECT try_cast(b AS INT), CAST(a AS STRING), a::STRING FROM t', 'select'),
    ('SELECT x.a FROM t AS x CROSS JOIN range(2) AS r', 'select'),
    ('SELECT b, sum(a) FILTER (WHERE a > 1) FROM t GROUP BY b', 'select'),
    ("SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END, coalesce(b, '-'), nvl(b, '') FROM t", 'select'),
    ('SELECT a FROM t ORDER BY a NULLS LAST LIMIT 2 OFFSET 1', 'select'),
    ('SELECT input_file_name() FROM t', 'select'),
    ('SELECT b, count(DISTINCT a) FROM t GROUP BY ALL', 'select'),
    ("SELECT * FROM t PIVOT (sum(a) FOR b IN ('x', 'y'))", 'select'),
    ('EXPLAIN SELECT a FROM t', 'explain'),
    ('SELECT a FROM t -- the update and delete words in a comment are fine', 'select'),
    ("SELECT 'DROP TABLE t; SET x=1' AS s", 'select'),
    ("SELECT split('a,b', ',')[0], size(split(b, ','))  FROM t", 'select'),
])
DENIED += SPARK_DENIED
ALLOWED += SPARK_ALLOWED


# -- MySQL / MariaDB and DuckDB: their own rows (``own_cases``), not the shared "both" ones ------

CREDENTIALS = "holds credentials"
UDF = "not a MySQL built-in"
FILE_PATH = "Reading a file by its path"
SCHEMA["mysql"] = SCHEMA["duckdb"] = SCHEMA["sqlite"]
DENIED += [
    *_denied("mysql", [
        ("SELECT LOAD_FILE('/etc/passwd')", fn("load_file"), "file"),
        ("SELECT load_file(0x2f6574632f706173737764)", fn("load_file"), "file"),
        ("SELECT a FROM t INTO OUTFILE '/tmp/guard_copy.txt'", INTO_FILE, "file"),
        ("SELECT a FROM t INTO DUMPFILE '/tmp/guard_copy.txt'", INTO_FILE, "file"),
        ("SELECT * FROM t INTO @x, @y", SYNTAX, "session"),
        ("SELECT SLEEP(1)", fn("sleep"), "sleep"),
        ("SELECT a FROM t WHERE SLEEP(1) = 0", fn("sleep"), "sleep"),
        ("SELECT BENCHMARK(100000000, MD5('a'))", fn("benchmark"), "sleep"),
        ("SELECT GET_LOCK('guard', 0)", fn("get_lock"), "lock"),
        ("SELECT RELEASE_LOCK('guard')", fn("release_lock"), "lock"),
        ("SELECT RELEASE_ALL_LOCKS()", fn("release_all_locks"), "lock"),
        ("SELECT a FROM t FOR UPDATE", LOCK, "lock"),
        ("SELECT a FROM t LOCK IN SHARE MODE", LOCK, "lock"),
        ("SET @x = 1", "SET changes settings", "session"),
        ("SELECT LAST_INSERT_ID(5)", fn("last_insert_id"), "session"),
        ("SELECT last_insert_id(a) FROM t", fn("last_insert_id"), "session"),
        ("SELECT FOUND_ROWS()", fn("found_rows"), "session"),
        ("SELECT ROW_COUNT()", fn("row_count"), "session"),
        ("SET SESSION sql_mode = ''", "SET changes settings", "setting"),
        ("SET GLOBAL max_connections = 1", "SET changes settings", "setting"),
        ("SELECT guard_udf(1)", UDF, "write"),
        ("SELECT mysql.guard_udf(1)", UDF, "write"),
        ("HANDLER t OPEN", "HANDLER", "lock"),
        ("LOCK TABLES t READ", "LOCK", "lock"),
        ("DO SLEEP(1)", "DO", "sleep"),
        ("SELECT 1 /*!50000 , SLEEP(1) */", "Executable comments", "sleep"),
        ("SELECT 1 /*M!100000 , SLEEP(1) */", "Executable comments", "sleep"),
        ("SELECT * FROM mysql.user", CREDENTIALS, "none"),
        ("SELECT * FROM mysql.global_priv", CREDENTIALS, "none"),
        ("SELECT User FROM `mysql`.`user`", CREDENTIALS, "none"),
        ("INSERT INTO t VALUES (9, 'z')", "INSERT is a write", "write"),
        ("REPLACE INTO t VALUES (1, 'z')", "REPLACE", "write"),
        ("DELETE FROM t", "DELETE is a write", "write"),
        ("CREATE TABLE guard_new (a int)", "CREATE", "schema"),
        ("DROP TABLE t", "DROP", "schema"),
        ("LOAD DATA INFILE '/etc/passwd' INTO TABLE t", "LOAD", "file"),
        ("SELECT 1; DELETE FROM t", MULTI, "multi_statement"),
        ("COMMIT; DELETE FROM t", "COMMIT controls transactions", "multi_statement"),
        ("START TRANSACTION", "START", "transaction"),
        ("CALL guard_proc()", "CALL", "write"),
    ]),
    *_denied("duckdb", [
        ("SELECT * FROM read_csv('/etc/passwd')", fn("read_csv"), "file"),
        ("SELECT * FROM read_text('/etc/passwd')", fn("read_text"), "file"),
        ("SELECT * FROM '/etc/passwd'", FILE_PATH, "file"),
        ("SELECT * FROM glob('/etc/*')", fn("glob"), "file"),
        ("SELECT '/etc/passwd'.read_text()", fn("read_text"), "file"),
        ("COPY t TO '/tmp/guard_copy.txt'", "COPY", "file"),
        ("ATTACH '/tmp/guard_x.db' AS x", "ATTACH", "attach"),
        ("INSTALL httpfs", "INSTALL", "extension"),
        ("LOAD httpfs", "LOAD", "extension"),
        ("SET threads = 1", "SET changes settings", "setting"),
        ("SET enable_external_access = true", "SET changes settings", "setting"),
        ("RESET lock_configuration", "RESET", "setting"),
        ("SELECT setseed(0.5)", fn("setseed"), "session"),
        ("SELECT * FROM duckdb_secrets()", fn("duckdb_secrets"), "none"),
        ("SELECT * FROM query('DELETE FROM t')", fn("query"), "remote_sql"),
        ("SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 42 AS x'))",
         fn("json_execute_serialized_sql"), "remote_sql"),
        ("SELECT * FROM main.JSON_EXECUTE_SERIALIZED_SQL(json_serialize_sql('SELECT 1'))",
         fn("json_execute_serialized_sql"), "remote_sql"),
        ("SELECT * FROM query_table('t')", fn("query_table"), "remote_sql"),
        ("SELECT * FROM truncate_duckdb_logs()", fn("truncate_duckdb_logs"), "session"),
        ("SELECT * FROM enable_logging()", fn("enable_logging"), "session"),
        ("SELECT write_log('x')", fn("write_log"), "session"),
        ("SELECT * FROM duckdb_settings()", fn("duckdb_settings"), "credentials"),
        ("SELECT * FROM pg_catalog.pg_settings", CREDENTIALS, "credentials"),
        ("SELECT current_setting('http_proxy_password')", "current_setting() may read only",
         "credentials"),
        ("SELECT * FROM duckdb_memory()", "not a DuckDB 2.0.1 built-in that nl2sql admits",
         "credentials"),
        ("INSERT INTO t VALUES (9, 'z')", "INSERT is a write", "write"),
        ("CREATE TEMP TABLE guard_new AS SELECT 1", "CREATE", "schema"),
        ("CHECKPOINT", "CHECKPOINT", "none"),
        ("EXPORT DATABASE '/tmp/guard_x'", "EXPORT", "file"),
        ("SELECT 1; DELETE FROM t", MULTI, "multi_statement"),
        ("PRAGMA threads = 1", "PRAGMA", "setting"),
    ]),
]
ALLOWED += [
    *_allowed("mysql", [
        ("SELECT a, b FROM t ORDER BY a LIMIT 2", "select"),
        ("SELECT `a`, `t`.`b` FROM `t`", "select"),
        ("SELECT DATE_FORMAT(NOW(), '%Y-%m'), IFNULL(b, '-') FROM t", "select"),
        ("SELECT GROUP_CONCAT(b ORDER BY a SEPARATOR ',') FROM t", "select"),
        ("SELECT FIND_IN_SET('x', 'x,y'), FIELD(b, 'x', 'y') FROM t", "select"),
        ("SELECT CONCAT(b, '/*!50000 x */') FROM t", "select"),
        ("SELECT 'it''s', 'a\\b'", "select"),
        ("WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
         "SELECT n FROM r", "select"),
        ("SELECT b, COUNT(*) FROM t GROUP BY b WITH ROLLUP", "select"),
        ("EXPLAIN SELECT a FROM t", "explain"),
        # built-ins sqlglot does not know: spatial, dynamic columns (MariaDB), hashes
        ("SELECT ST_AsText(ST_GeomFromText('POINT(1 2)')) AS p, ST_X(POINT(a, 2)) AS x, "
         "ST_Distance_Sphere(POINT(0, 0), POINT(a, 1)) AS d FROM t", "select"),
        ("SELECT COLUMN_JSON(COLUMN_CREATE('k', a)) AS j, CRC32C(b) AS c FROM t", "select"),
    ]),
    *_allowed("duckdb", [
        ("SELECT a, b FROM t ORDER BY a LIMIT 2", "select"),
        ("SELECT * FROM t USING SAMPLE 2 ROWS", "select"),
        ("SELECT list_value(a, 1), strftime(now(), '%Y') FROM t", "select"),
        ("SELECT b, count(*) FROM t GROUP BY ALL", "select"),
        ("SELECT * EXCLUDE (b) FROM t", "select"),
        ("SELECT current_setting('threads')", "select"),
        ("SELECT a FROM t QUALIFY row_number() OVER (ORDER BY a) = 1", "select"),
        ("EXPLAIN SELECT a FROM t", "explain"),
    ]),
]


def own_cases(dialect: str, cases: list | None = None) -> list:
    """Only the rows written for ``dialect`` itself (MySQL and DuckDB have no "both" rows)."""
    return [case for case in (DENIED if cases is None else cases) if case.dialect == dialect]


def cases_for(dialect: str, cases: list[Case] | list[AllowedCase] | None = None) -> list:
    """The cases of ``cases`` (default: DENIED) that apply to ``dialect``, "both" included."""
    chosen = DENIED if cases is None else cases
    return [case for case in chosen if case.dialect in (dialect, "both")]
