"""dbt's ``non_additive_dimension``: a balance (or a subscription's value) is read from the
rows at the last (``max``) or first (``min``) date of each period, per account with
``window_groupings``, never summed over the days. nl2sql ignored it and added up every day's
balance: a month's "total balance" thirty times too big, with no word of it. Each query equals
a hand-written one on every backend (SQLite, PostgreSQL, MySQL/MariaDB, DuckDB)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from metrics_samples import MONTH, as_numbers, differs_from_gold, ops_with_model

from conftest import BACKENDS
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op

#: Three accounts' balances, not every account on every day: account 3 has no row on
#: 2024-01-31 (its January ends on the 30th) and none in February before the 10th.
ROWS = [(1, "2024-01-05", 100), (1, "2024-01-31", 150), (1, "2024-02-01", 160),
        (1, "2024-02-29", 90), (2, "2024-01-05", 10), (2, "2024-01-31", 20),
        (2, "2024-02-15", 25), (2, "2024-02-29", 30), (3, "2024-01-02", 500),
        (3, "2024-01-30", 700), (3, "2024-02-10", 650), (3, "2024-02-20", 600)]
SCRIPT = """
CREATE TABLE accounts (account_id INTEGER PRIMARY KEY, region VARCHAR(10));
INSERT INTO accounts VALUES (1, 'north'), (2, 'north'), (3, 'south');
CREATE TABLE balances (account_id INTEGER REFERENCES accounts (account_id),
                       balance_date DATE NOT NULL, balance INTEGER NOT NULL);
INSERT INTO balances VALUES {rows};
""".format(rows=", ".join(f"({a}, '{d}', {b})" for a, d, b in ROWS))

MODEL = """
semantic_models:
  - name: balances
    model: ref('balances')
    defaults: {agg_time_dimension: balance_date}
    entities:
      - {name: account, type: foreign, expr: account_id}
    dimensions:
      - {name: balance_date, type: time, type_params: {time_granularity: day}}
    measures:
      - name: closing_balance
        agg: sum
        expr: balance
        non_additive_dimension: {name: balance_date, window_choice: max,
                                 window_groupings: [account]}
      - name: opening_balance
        agg: sum
        expr: balance
        non_additive_dimension: {name: balance_date, window_choice: min,
                                 window_groupings: [account]}
      - name: last_day_balance
        agg: sum
        expr: balance
        non_additive_dimension: {name: balance_date, window_choice: max}
      - name: day_sum
        agg: sum
        expr: balance
      - name: bad_rule
        agg: sum
        expr: balance
        non_additive_dimension: {name: account_id, window_choice: last}
  - name: accounts
    model: ref('accounts')
    entities:
      - {name: account, type: primary, expr: account_id}
    dimensions:
      - {name: region, type: categorical}
metrics:
  - {name: closing_balance, type: simple, type_params: {measure: closing_balance}}
  - {name: opening_balance, type: simple, type_params: {measure: opening_balance}}
  - {name: last_day_balance, type: simple, type_params: {measure: last_day_balance}}
  - {name: balance_days, type: simple, type_params: {measure: day_sum}}
  - {name: broken, type: simple, type_params: {measure: bad_rule}}
"""


def _gold(backend: str) -> list[tuple[dict[str, object], str]]:
    def month(column: str) -> str:
        return MONTH[backend].format(column)

    per_account = ("b.balance_date = (SELECT {f}(c.balance_date) FROM balances c WHERE "
                   "c.account_id = b.account_id AND " + month("c.balance_date") + " = "
                   + month("b.balance_date") + ")")
    return [
        ({"metrics": ["closing_balance", "opening_balance", "balance_days"],
          "dimensions": ["metric_time__month"]},
         f"SELECT m, SUM(close_b), SUM(open_b), MAX(days) FROM (SELECT {month('b.balance_date')}"
         f" AS m, CASE WHEN {per_account.format(f='MAX')} THEN b.balance END AS close_b, "
         f"CASE WHEN {per_account.format(f='MIN')} THEN b.balance END AS open_b, "
         f"(SELECT SUM(d.balance) FROM balances d WHERE {month('d.balance_date')} = "
         f"{month('b.balance_date')}) AS days FROM balances b) x GROUP BY m"),
        ({"metrics": ["last_day_balance"], "dimensions": ["metric_time__month"]},
         f"SELECT {month('b.balance_date')}, SUM(b.balance) FROM balances b WHERE "
         f"b.balance_date = (SELECT MAX(c.balance_date) FROM balances c WHERE "
         f"{month('c.balance_date')} = {month('b.balance_date')}) "
         f"GROUP BY {month('b.balance_date')}"),
        ({"metrics": ["closing_balance"], "dimensions": ["account__region"]},
         "SELECT a.region, SUM(b.balance) FROM balances b JOIN accounts a ON a.account_id = "
         "b.account_id WHERE b.balance_date = (SELECT MAX(c.balance_date) FROM balances c "
         "WHERE c.account_id = b.account_id) GROUP BY a.region"),
        ({"metrics": ["last_day_balance"]},
         "SELECT SUM(balance) FROM balances WHERE balance_date = "
         "(SELECT MAX(balance_date) FROM balances)"),
        ({"metrics": ["closing_balance"], "dimensions": ["metric_time__month"],
          "where": ["{{ Dimension('account__region') }} = 'north'"]},
         f"SELECT {month('b.balance_date')}, SUM(b.balance) FROM balances b JOIN accounts a ON "
         f"a.account_id = b.account_id WHERE a.region = 'north' AND "
         f"{per_account.format(f='MAX')} GROUP BY {month('b.balance_date')}"),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_balance_is_read_at_each_periods_last_day_not_summed(
        backend: str, make_db: Callable[..., object], tmp_path: Path) -> None:
    config = make_db(backend, "ledger", script=SCRIPT).config  # type: ignore[attr-defined]
    ops = ops_with_model(config, tmp_path, MODEL)
    try:
        listed = metrics_list_op(ops, "ledger")
        assert "broken" not in [m.name for m in listed.metrics]
        assert any("measure 'bad_rule': its non_additive_dimension needs name: one of the time "
                   "dimensions of 'balances' (balance_date)" in p for p in listed.problems)
        failures = [f"{query}: {why}" for query, gold in _gold(backend)
                    if (why := differs_from_gold(ops, "ledger", query, gold))]
        assert not failures, "\n\n".join(failures)
        # January's closing balance: 150 + 20 + 700 (account 3's last day, the 30th)
        january = run_query(ops, "ledger", metrics_query_op(
            ops, "ledger", ["closing_balance"], ["metric_time__month"],
            order_by=["metric_time__month"]).sql_query, timeout=60, max_rows=10)
        assert as_numbers(january.rows)[0][1] == 870
    finally:
        ops.close()
