"""The guard's verdict cache never changes a verdict: the whole corpus, twice through it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from guard_corpus import ALLOWED, DENIED, DIALECTS, cases_for

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import guard, validate_read_only


def _verdict(check, sql: str, dialect: str) -> tuple:  # noqa: ANN001
    try:
        validated = check(sql, dialect)
    except QueryRejectedError as error:
        return ("rejected", type(error), str(error), error.sql)
    return ("accepted", validated.sql, validated.statement_type, validated.is_explain,
            validated.expression.sql(dialect=dialect))


@pytest.fixture
def empty_cache() -> Iterator[None]:
    guard.clear_verdict_cache()
    yield
    guard.clear_verdict_cache()


@pytest.mark.usefixtures("empty_cache")
def test_cached_verdicts_equal_fresh_ones_over_the_whole_corpus() -> None:
    cases = [(dialect, case.sql) for dialect in DIALECTS
             for case in [*cases_for(dialect), *cases_for(dialect, ALLOWED)]]
    assert len(cases) > 300 and len(DENIED) > 100  # the corpus was loaded
    fresh = {key: _verdict(guard._validate, key[1], key[0]) for key in cases}
    assert {v[0] for v in fresh.values()} == {"accepted", "rejected"}
    for _ in range(2):  # first round fills the cache, second reads from it
        for dialect, sql in cases:
            assert _verdict(validate_read_only, sql, dialect) == fresh[(dialect, sql)], sql
    cached = {key for key in cases if len(key[1]) <= guard.VERDICT_CACHE_MAX_CHARS}
    info = guard._cached_verdict.cache_info()
    assert info.hits >= len(cached) and info.currsize <= guard.VERDICT_CACHE_SIZE


@pytest.mark.usefixtures("empty_cache")
def test_a_cached_refusal_is_a_new_error_each_time() -> None:
    errors = []
    for _ in range(2):
        with pytest.raises(QueryRejectedError) as caught:
            validate_read_only("DELETE FROM t", "sqlite")
        errors.append(caught.value)
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[1])
    assert guard._cached_verdict.cache_info().hits == 1


@pytest.mark.usefixtures("empty_cache")
def test_the_cache_is_bounded_and_skips_long_texts() -> None:
    for i in range(guard.VERDICT_CACHE_SIZE + 50):
        validate_read_only(f"SELECT {i}", "sqlite")
    assert guard._cached_verdict.cache_info().currsize == guard.VERDICT_CACHE_SIZE
    guard.clear_verdict_cache()
    long_query = "SELECT " + ", ".join(["1"] * guard.VERDICT_CACHE_MAX_CHARS)
    assert validate_read_only(long_query, "sqlite").sql == long_query
    assert guard._cached_verdict.cache_info().currsize == 0
