"""The comparison rules of execution accuracy, as a table of one-line cases (no database)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from nl2sql.workspace.result_compare import OrderSpec, compare_results
from nl2sql.workspace.result_order import order_spec
from nl2sql.evaluation.report import wilson_interval

UNORDERED = OrderSpec()
ORDERED_BY_ROWS = OrderSpec(ordered=True, key_columns=None)

# (gold rows, predicted rows, order, extra-columns rule, equal?)
CASES = [
    ("same rows", [(1, "a"), (2, "b")], [(1, "a"), (2, "b")], UNORDERED, "strict", True),
    ("row order ignored", [(1, "a"), (2, "b")], [(2, "b"), (1, "a")], UNORDERED, "strict", True),
    ("duplicates count", [(1,), (1,), (2,)], [(1,), (2,), (2,)], UNORDERED, "strict", False),
    ("missing duplicate", [(1,), (1,)], [(1,)], UNORDERED, "strict", False),
    ("swapped columns", [(1, "a"), (2, "b")], [("a", 1), ("b", 2)], UNORDERED, "strict", True),
    ("columns paired per row", [(1, "a"), (2, "b")], [("b", 1), ("a", 2)], UNORDERED, "strict",
     False),
    ("int equals float", [(3,)], [(3.0,)], UNORDERED, "strict", True),
    ("int equals Decimal", [(Decimal("32.50"),)], [(32.5,)], UNORDERED, "strict", True),
    ("float noise", [(0.30000000000000004,)], [(0.3,)], UNORDERED, "strict", True),
    ("within 1e-6 relative", [(1_000_000.0,)], [(1_000_000.5,)], UNORDERED, "strict", True),
    ("beyond 1e-6 relative", [(1.0,)], [(1.00001,)], UNORDERED, "strict", False),
    ("rounded to 2 places is different", [(6.559986868,)], [(6.56,)], UNORDERED, "strict",
     False),
    ("bool is a number", [(1,)], [(True,)], UNORDERED, "strict", True),
    ("NULLs equal", [(None, 1)], [(None, 1)], UNORDERED, "strict", True),
    ("NULL is not 0", [(None,)], [(0,)], UNORDERED, "strict", False),
    ("NULL is not ''", [(None,)], [("",)], UNORDERED, "strict", False),
    ("number is not text", [(2023,)], [("2023",)], UNORDERED, "strict", False),
    ("text is case sensitive", [("Rock",)], [("rock",)], UNORDERED, "strict", False),
    ("date equals its ISO text", [(dt.date(2024, 1, 31),)], [("2024-01-31",)], UNORDERED,
     "strict", True),
    ("timestamp equals its ISO text", [(dt.datetime(2024, 1, 31, 10, 0),)],
     [("2024-01-31 10:00:00",)], UNORDERED, "strict", True),
    ("bytes by content", [(b"\x00\x01",)], [(memoryview(b"\x00\x01"),)], UNORDERED, "strict",
     True),
    ("extra column strict", [(1,), (2,)], [(1, "x"), (2, "y")], UNORDERED, "strict", False),
    ("extra column allowed", [(1,), (2,)], [("x", 1), ("y", 2)], UNORDERED, "allow", True),
    ("allowed extra but gold column missing", [(1, "a")], [(1, "b", "c")], UNORDERED, "allow",
     False),
    ("fewer columns", [(1, "a")], [(1,)], UNORDERED, "allow", False),
    ("both empty", [], [], UNORDERED, "strict", True),
    ("empty vs rows", [], [(1,)], UNORDERED, "strict", False),
    ("ordered: same order", [(1,), (2,)], [(1,), (2,)], ORDERED_BY_ROWS, "strict", True),
    ("ordered: other order", [(1,), (2,)], [(2,), (1,)], ORDERED_BY_ROWS, "strict", False),
    ("ordered by key: ties in any order", [("a", 5), ("b", 5), ("c", 1)],
     [("b", 5), ("a", 5), ("c", 1)], OrderSpec(True, (1,)), "strict", True),
    ("ordered by key: keys out of order", [("a", 5), ("c", 1)], [("c", 1), ("a", 5)],
     OrderSpec(True, (1,)), "strict", False),
    ("ordered, swapped columns", [("a", 5), ("c", 1)], [(5, "a"), (1, "c")],
     OrderSpec(True, (1,)), "strict", True),
    ("identical columns pair either way", [(1, 1), (2, 2)], [(2, 2), (1, 1)], UNORDERED,
     "strict", True),
]


@pytest.mark.parametrize("gold, pred, order, extra, equal",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_comparison_rules(gold, pred, order, extra, equal) -> None:
    outcome = compare_results(gold, pred, order=order, extra_columns=extra,
                              gold_columns=len(gold[0]) if gold else 1,
                              pred_columns=len(pred[0]) if pred else 1)
    assert outcome.equal is equal, outcome.reason
    assert (outcome.reason is None) is equal


def test_reasons_say_what_differs() -> None:
    assert "row count differs: gold 2, predicted 1" in compare_results(
        [(1,), (2,)], [(1,)]).reason
    assert "column count differs: gold 1, predicted 2" in compare_results(
        [(1,)], [(1, 2)]).reason
    assert "different order" in compare_results([(1,), (2,)], [(2,), (1,)],
                                                order=ORDERED_BY_ROWS).reason
    assert compare_results([(1,), (2,)], [(1,), (3,)]).reason == \
        "values differ: gold 1, 2, predicted 1, 3"
    reason = compare_results([(1, "a"), (2, "b")], [(1, "a"), (3, "b")]).reason
    assert reason == "no predicted column holds the values of gold column 1 (1, 2)"


def test_rows_differ_reason_names_rows() -> None:
    reason = compare_results([(1, "a"), (2, "b")], [(1, "a"), (2, "c")]).reason
    assert reason and "no predicted column" in reason  # column 2 values differ as a multiset
    reason = compare_results([(1, "a"), (2, "b")], [(1, "b"), (2, "a")]).reason
    assert reason and "rows differ" in reason and "(1, 'a')" in reason


def test_large_results_compare_fast() -> None:
    gold = [(i, f"name {i}", i * 0.1) for i in range(50_000)]
    pred = [(c, a, b) for a, b, c in reversed(gold)]
    assert compare_results(gold, pred).equal


ORDER_CASES = [
    ("SELECT name, n FROM t ORDER BY n DESC", ["name", "n"], OrderSpec(True, (1,))),
    ("SELECT name AS x, COUNT(*) AS n FROM t GROUP BY 1 ORDER BY 2", ["x", "n"],
     OrderSpec(True, (1,))),
    ("SELECT t.name, t.ms FROM t ORDER BY t.ms DESC, t.name", ["name", "ms"],
     OrderSpec(True, (1, 0))),
    ("SELECT name FROM t GROUP BY name ORDER BY COUNT(*) DESC LIMIT 3", ["name"],
     OrderSpec(True, None)),
    ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", ["a"], OrderSpec(True, (0,))),
    ("SELECT a FROM (SELECT a FROM t ORDER BY a) s", ["a"], OrderSpec()),
    ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", ["a"], OrderSpec()),
    ("SELECT a FROM t WHERE a IN (SELECT a FROM u ORDER BY a LIMIT 2)", ["a"], OrderSpec()),
    ("SELECT * FROM t ORDER BY b", ["a", "b"], OrderSpec(True, (1,))),
    ("not sql at all (", ["a"], OrderSpec()),
]


@pytest.mark.parametrize("sql, columns, expected", [c for c in ORDER_CASES],
                         ids=[c[0][:40] for c in ORDER_CASES])
def test_order_spec_reads_the_outermost_query(sql, columns, expected) -> None:
    assert order_spec(sql, "sqlite", columns) == expected


def test_wilson_interval() -> None:
    low, high = wilson_interval(20, 25)
    assert (low, high) == (0.6087, 0.9114)
    assert wilson_interval(0, 0) is None
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(0, 10)[0] == 0.0


def test_many_interchangeable_columns_are_paired_quickly() -> None:
    import time

    gold = [tuple([i % 2] * 9 + [i]) for i in range(2000)]
    pred = [(row[-1], *row[:-1]) for row in gold]
    started = time.perf_counter()
    assert compare_results(gold, pred).equal
    wrong = [(row[0] + 1, *row[1:]) for row in pred]
    assert not compare_results(gold, wrong).equal
    assert time.perf_counter() - started < 5
