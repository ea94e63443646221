"""nl2sql-eval compares DECIMAL results by value on every engine: a gold ``SUM`` of a DECIMAL
column (MySQL/MariaDB DECIMAL, PostgreSQL numeric, Spark's Decimal, DuckDB DECIMAL) equals a
prediction computing the same number as a float or with another scale, and a different number is
still wrong. MySQL hands DECIMAL values over as the server's text (the CSV export path keeps
them exact): the scorer reads them back as numbers."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import BACKENDS

from nl2sql.evaluation.inputs import Question
from nl2sql.evaluation.scoring import Scorer
from nl2sql.operations.ops_context import OpsContext

SCHEMA = {
    "default": "CREATE TABLE pay (id int, amount DECIMAL(10, 2), rate DOUBLE PRECISION);\n"
               "INSERT INTO pay VALUES (1, 5.25, 5.25), (2, 7.25, 7.25), (3, 0.10, 0.1)",
    "spark": "CREATE TABLE pay (id int, amount DECIMAL(10, 2), rate DOUBLE);\n"
             "INSERT INTO pay VALUES (1, 5.25, 5.25), (2, 7.25, 7.25), (3, 0.10, 0.1)",
}
GOLD = "SELECT SUM(amount) AS total FROM pay WHERE id < 3"  # DECIMAL 12.50
#: prediction -> right?
PREDICTIONS = {
    "SELECT SUM(rate) FROM pay WHERE id < 3": True,  # float 12.5
    "SELECT 12.5 AS t": True,  # a literal: DECIMAL 12.5 (scale 1), float on SQLite
    "SELECT CAST(SUM(amount) AS DECIMAL(12, 4)) FROM pay WHERE id < 3": True,  # 12.5000
    "SELECT SUM(amount) + 0.01 FROM pay WHERE id < 3": False,  # 12.51
    "SELECT '12.50' AS t": False,  # text is not a number (the gold's own spelling even)
}
GROUPED_GOLD = "SELECT id, amount FROM pay ORDER BY id"
GROUPED_PREDICTIONS = {
    "SELECT id, rate FROM pay ORDER BY id": True,  # 0.10 (DECIMAL) and 0.1 (float)
    "SELECT rate, id FROM pay ORDER BY id": True,  # columns matched by value
    "SELECT id, amount * 10 FROM pay ORDER BY id": False,
}


@pytest.fixture(params=[*BACKENDS, pytest.param("spark", marks=pytest.mark.spark)])
def scorer(request: pytest.FixtureRequest, make_registry: Any) -> Any:
    backend = request.param
    script = SCHEMA["spark" if backend == "spark" else "default"]
    if backend == "spark":
        from conftest import spark_db

        db = spark_db(request, "pay", script=script, query_timeout_seconds=60)
    else:
        db = request.getfixturevalue("make_db")(backend, "pay", script=script)
    ops = OpsContext(make_registry(db.config))
    request.addfinalizer(ops.close)
    return Scorer(ops)


def _question(gold: str) -> Question:
    return Question(id="q1", db_id="pay", question="What was paid?", golds=[gold])


def test_decimal_gold_equals_the_same_number_in_any_numeric_type(scorer: Scorer) -> None:
    question = _question(GOLD)
    for prediction, right in PREDICTIONS.items():
        result = scorer.score(question, prediction)
        assert result.correct is right, (prediction, result.reason, result.gold_rows,
                                         result.predicted_rows)
    # the report shows the gold's value as a number too
    assert scorer.score(question, GOLD).gold_rows == [[12.5]]


def test_decimal_columns_compare_by_value_row_by_row(scorer: Scorer) -> None:
    question = _question(GROUPED_GOLD)
    for prediction, right in GROUPED_PREDICTIONS.items():
        result = scorer.score(question, prediction)
        assert result.correct is right, (prediction, result.reason)
