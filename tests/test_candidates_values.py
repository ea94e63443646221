"""Candidates agree by value, under nl2sql-eval's rules, though their results are read back
from CSV files: the same number written differently (a DECIMAL's ``12.50``, a float's ``12.5``,
``1e-05`` and ``0.00001``, a PostgreSQL column holding ``NaN``) is one result; text that only
looks like a number (``007``), ``NULL`` against ``''`` and a one-column result's NULL rows
(empty lines in the file) keep results apart; nl2sql-eval, scoring the second SQL against the
first, gives the same verdict. Real databases, a scripted model: each case is three candidates,
the first and third running one SQL and the second the other."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from agent_scripts import CandidateScripts, final
from conftest import BACKENDS, build_cache

import nl2sql
from nl2sql.evaluation.inputs import Question
from nl2sql.evaluation.scoring import Scorer
from nl2sql.operations.ops_context import OpsContext
from nl2sql.workspace.csv_dialect import format_record, format_value
from nl2sql.workspace.csv_values import parse_field, read_values
from nl2sql.workspace.result_compare import normalize, values_equal

SCRIPT = ("CREATE TABLE pay (id int, amount DECIMAL(10, 2), rate {double}, code varchar(10));\n"
          "INSERT INTO pay VALUES (1, 5.25, 5.25, '007'), (2, 7.25, 7.25, '7'), "
          "(3, 0.10, 0.1, '')")
DOUBLE = {"mysql": "DOUBLE", "duckdb": "DOUBLE"}
#: (first SQL, second SQL): the same values, one group.
SAME = [
    ("SELECT SUM(amount) FROM pay WHERE id < 3",  # DECIMAL 12.50
     "SELECT SUM(rate) FROM pay WHERE id < 3"),  # float 12.5
    ("SELECT SUM(amount) FROM pay WHERE id < 3",
     "SELECT CAST(SUM(amount) AS DECIMAL(12, 4)) FROM pay WHERE id < 3"),  # 12.5000
    ("SELECT CAST(3 AS DECIMAL(5, 1))", "SELECT 3"),  # 3.0 and 3
    ("SELECT CAST(0.00001 AS {double})", "SELECT CAST(0.00001 AS DECIMAL(10, 5))"),  # 1e-05
    ("SELECT id, amount FROM pay", "SELECT rate, id FROM pay"),  # 0.10 and 0.1, columns swapped
]
#: (first SQL, second SQL): different values, two groups.
DIFFERENT = [
    ("SELECT code FROM pay WHERE id = 1", "SELECT code FROM pay WHERE id = 2"),  # '007', '7'
    ("SELECT SUM(amount) + 0.01 FROM pay WHERE id < 3", "SELECT SUM(rate) FROM pay WHERE id < 3"),
    ("SELECT 'true'", "SELECT 1"),  # text is not a boolean
    ("SELECT code FROM pay WHERE id = 3", "SELECT NULL"),  # '' is not NULL
    ("SELECT CAST(NULL AS INTEGER) UNION ALL SELECT 5", "SELECT 5"),  # a NULL row is a row
]
#: Only PostgreSQL keeps a NaN in numeric and float columns: a column holding one is numbers too.
POSTGRES_SAME = [
    ("SELECT CAST('NaN' AS float8) UNION ALL SELECT 1.5",
     "SELECT CAST('NaN' AS numeric) UNION ALL SELECT CAST(1.50 AS numeric(5, 2))"),
]


@pytest.fixture(params=BACKENDS)
def pay_ops(request: pytest.FixtureRequest, make_db: Any, make_registry: Any) -> Any:
    backend = request.param
    double = DOUBLE.get(backend, "DOUBLE PRECISION")
    db = make_db(backend, "pay", script=SCRIPT.format(double=double))
    registry = make_registry(db.config)
    build_cache(db.config, registry.data_dir)
    ops = OpsContext(registry)
    request.addfinalizer(ops.close)
    return backend, double, ops


def _groups(ops: OpsContext, first: str, second: str) -> list[int]:
    """The candidates' groups, checked against nl2sql-eval's verdict on the same pair."""
    scripts = CandidateScripts([[final(first)], [final(second)], [final(first)]])
    answer = nl2sql.ask("What was paid?", db_id="pay", model=scripts.model, config=ops,
                        candidates=3)
    assert all(c.error is None for c in answer.candidates), answer.candidates
    groups = sorted(c.group or 0 for c in answer.candidates)
    question = Question(id="q", db_id="pay", question="What was paid?", golds=[first])
    assert Scorer(ops).score(question, second).correct is (groups == [1, 1, 1]), groups
    return groups


def test_the_same_values_written_differently_agree(pay_ops: Any) -> None:
    backend, double, ops = pay_ops
    cases = SAME + (POSTGRES_SAME if backend == "postgres" else [])
    for first, second in cases:
        first, second = first.format(double=double), second.format(double=double)
        assert _groups(ops, first, second) == [1, 1, 1], (first, second)


def test_different_values_do_not_agree(pay_ops: Any) -> None:
    _backend, double, ops = pay_ops
    for first, second in DIFFERENT:
        first, second = first.format(double=double), second.format(double=double)
        assert _groups(ops, first, second) == [1, 1, 2], (first, second)


@pytest.mark.parametrize("text, value", [
    ("12.50", 12.5), ("-0", 0.0), ("1e-05", 0.00001), ("1.5e+15", 1.5e15),
    ("Infinity", math.inf), ("-Infinity", -math.inf), ("NaN", math.nan),
    ("007", "007"), ("+7", "+7"), (" 7", " 7"), ("1E5", "1E5"), (".5", ".5"), ("inf", "inf"),
    ("t", "t"), ("true", "true"), ("2024-01-31", "2024-01-31"), ("1_000", "1_000"),
])
def test_a_field_is_a_number_only_as_the_dialect_writes_numbers(text: str, value: Any) -> None:
    parsed = parse_field(text)
    assert type(parsed) is type(value)
    assert parsed == value or (value != value and parsed != parsed)


@pytest.mark.parametrize("value", [0, -3, 2**70, 12.5, 0.1, 1e-05, 1.5e-07, 1e15, -0.0,
                                   123456789012345.6, math.inf, -math.inf, math.nan,
                                   Decimal("12.50"), Decimal("-0.001"), Decimal("1E+3")])
def test_a_number_read_back_compares_as_the_value_written(value: Any) -> None:
    text = format_value(value)
    assert text is not None
    assert values_equal(normalize(parse_field(text)), normalize(value)), text


def test_nulls_empty_strings_and_quotes_read_back(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    rows = [("", None, 'a,"b"\nc'), (None, "", "12.50"), (None, None, None)]
    path.write_text(format_record(["x", "y", "z"]) + "".join(format_record(r) for r in rows))
    assert read_values(path, 10) == (["x", "y", "z"], [
        ("", None, 'a,"b"\nc'), (None, "", 12.5), (None, None, None)])
    one = tmp_path / "one.csv"
    one.write_text("".join(format_record(r) for r in [["n"], [None], [""], [5], [None]]))
    assert read_values(one, 10) == (["n"], [(None,), ("",), (5.0,), (None,)])
    assert read_values(one, 2)[1] == [(None,), ("",)]
