"""``annotate-schema`` checks a database's governed metrics: each compiles and runs (zero rows),
a broken one is one line (file, metric, reason) without a traceback and the others stay usable,
so is a group-by (a dimension, a table) that does not run, and schema drift names the metrics that read a changed table."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import nl2sql
from nl2sql.cli.annotate import main
from nl2sql.config.bundled import bookstore_script_path, bookstore_semantic_model_path

ANNOTATE = Path(sys.executable).parent / "annotate-schema"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A dbs.yaml with ``shop``: a copy of the bookstore and a semantic model folder holding
    the bookstore's model and a file with broken metrics."""
    with sqlite3.connect(tmp_path / "shop.db") as conn:
        conn.executescript(bookstore_script_path().read_text())
    models = tmp_path / "models"
    models.mkdir()
    (models / "bookstore.yml").write_text(bookstore_semantic_model_path().read_text())
    (models / "broken.yml").write_text("""
metrics:
  - {name: half_ratio, type: ratio, type_params: {numerator: revenue}}
  - {name: price_sum, type: simple, type_params: {measure: price_sum}}
semantic_models:
  - name: priced_books
    model: ref('books')
    entities: [{name: priced_book, type: primary, expr: book_id}]
    measures: [{name: price_sum, agg: sum, expr: list_price}]
    dimensions: [{name: shelf, type: categorical, expr: shelf_code}]
  - name: warehouses
    model: ref('warehouses')
    entities: [{name: warehouse, type: primary, expr: warehouse_id}]
    dimensions: [{name: city, type: categorical}]
""")
    (tmp_path / "dbs.yaml").write_text("databases:\n  shop:\n    type: sqlite\n"
                                       "    path: shop.db\n    semantic_model: models\n")
    return tmp_path / "dbs.yaml"


def test_a_broken_metric_is_one_line_and_the_rest_stay_usable(shop: Path) -> None:
    done = subprocess.run([str(ANNOTATE), "shop", "--config", str(shop)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "  metrics: 10 of 12 compile and run; 2 broken (named below, the others stay " \
           "usable); 2 group-by(s) broken (named below)" in lines
    broken = [line.strip() for line in lines if line.startswith("    ")]
    assert any(line.endswith("broken.yml: metric 'half_ratio': 'type_params.denominator' must "
                             "name a metric (a name or {name: ...})") for line in broken)
    assert any("broken.yml: metric 'price_sum': measure 'price_sum' of 'priced_books': column "
               "'list_price' is not in table 'books'" in line for line in broken)
    # Group-bys are checked too (the metrics run without them): a dimension's column, and a
    # semantic model that only lends dimensions, over a table the database does not have.
    assert any(line.endswith("broken.yml: semantic model 'priced_books': dimension 'shelf': "
                             "column 'shelf_code' is not in table 'books'; fix the semantic "
                             "model (or run annotate-schema if the column is new).")
               for line in broken)
    assert any(line.endswith("broken.yml: Semantic model 'warehouses' reads table "
                             "'warehouses', which is not in the database (or its schema "
                             "cache); fix the semantic model, or run annotate-schema if the "
                             "table is new.") for line in broken)
    assert len(broken) == 4
    usable = [m["name"] for m in nl2sql.metrics("shop", config=shop)]
    assert "revenue" in usable and "half_ratio" not in usable


def test_drift_names_the_metrics_that_read_a_changed_table(shop: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    assert main(["shop", "--config", str(shop)]) == 0
    with sqlite3.connect(shop.parent / "shop.db") as conn:
        conn.execute("ALTER TABLE order_items RENAME COLUMN unit_price TO price")
    capsys.readouterr()
    assert main(["shop", "--config", str(shop), "--check"]) == 1
    check = capsys.readouterr().out
    assert "  Governed metrics reading changed tables:" in check
    assert "  metric revenue reads order_items changed (column unit_price removed; column " \
           "price added)" in check
    assert "metric order_count" not in check  # orders did not change
    assert main(["shop", "--config", str(shop)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "metric 'revenue'" in line)
    assert "column 'unit_price' is not in table 'order_items'" in line
    assert line.endswith("(schema drift: order_items changed (column unit_price removed; "
                         "column price added))")
    assert "metric 'order_count'" not in out  # still runs, on an unchanged table
