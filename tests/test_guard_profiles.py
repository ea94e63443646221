"""Each backend's guard facts come from its profile, named by its registry entry; a dialect
without a backend gets the strictest rules (every deny list, every reading of comments and
strings, every extra check), never another engine's."""

from __future__ import annotations

import pytest

from nl2sql.backends import BACKENDS
from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import GuardProfile, profile_for, validate_read_only
from nl2sql.sql_guard.lexing import LexingRules


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_backend_names_its_own_profile(name: str) -> None:
    backend = BACKENDS[name]
    profile = backend.load("guard_profile")
    assert issubclass(profile, GuardProfile) and profile is not GuardProfile
    assert profile_for(backend.sqlglot_dialect) is profile
    assert profile.denied_names() < GuardProfile.denied_names()


def test_a_dialect_without_a_backend_gets_the_strictest_rules() -> None:
    assert profile_for("tsql") is GuardProfile
    assert GuardProfile.lexing == LexingRules()
    assert not GuardProfile.read_pragmas and GuardProfile.attribute_calls
    for sql, reason in [
            ("SELECT pg_sleep(1)", "pg_sleep"), ("SELECT load_extension('x')", "load_extension"),
            ("SELECT 1 AS a /* x /* y */ */", "comment"),  # nesting differs between engines
            ("SELECT 1 AS a -- c\r, 2 AS b", "comment"),  # a lone CR ends -- for some only
            ("SELECT 'a\\' AS s, 1 AS b -- '", "backslash"),  # escape mode unknown
            ("SELECT * FROM read_csv('x.csv')", "read_csv"), ("PRAGMA table_info(t)", "PRAGMA")]:
        with pytest.raises(QueryRejectedError, match=reason):
            validate_read_only(sql, "tsql")


def test_duckdb_does_not_get_postgres_rules() -> None:
    duckdb, postgres = profile_for("duckdb"), profile_for("postgres")
    assert postgres.postgres_noop_clauses and not duckdb.postgres_noop_clauses
    assert duckdb.lexing != postgres.lexing and not duckdb.lexing.string_escapes_pinned
    validate_read_only("SELECT a FROM t FOR READ ONLY", "postgres")
    with pytest.raises(QueryRejectedError):
        validate_read_only("SELECT a FROM t FOR READ ONLY", "duckdb")
    with pytest.raises(QueryRejectedError, match="backslash"):
        validate_read_only("SELECT 'C:\\' AS s, 1 AS x -- '", "duckdb")
    validate_read_only("SELECT 'C:\\' AS s, 1 AS x -- '", "postgres")


def test_functions_dbs_yaml_allows_pass_the_mysql_built_in_check() -> None:
    with pytest.raises(QueryRejectedError, match="not a MySQL built-in"):
        validate_read_only("SELECT shop.net_price(a) FROM t", "mysql")
    validate_read_only("SELECT shop.net_price(a) FROM t", "mysql",
                       allowed_functions=("shop.Net_Price",))
    validate_read_only("SELECT net_price(a) FROM t", "mysql", allowed_functions=["net_price"])
    with pytest.raises(QueryRejectedError, match="sleep"):  # never the deny list
        validate_read_only("SELECT sleep(1)", "mysql", allowed_functions=["sleep"])
    with pytest.raises(QueryRejectedError, match="not a MySQL built-in"):  # verdicts per list
        validate_read_only("SELECT net_price(a) FROM t", "mysql")
