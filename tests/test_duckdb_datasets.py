"""DuckDB over datasets of several files: a Hive-partitioned folder (what Spark, DuckDB,
pandas and Athena write: ``sales/year=2024/month=1/data_0.parquet``) is one view named after
its folder with its partition columns, and ``files:`` may name a view of several files
(``orders: 'daily/*.csv'``). Before, every partition's ``data_0.parquet`` wanted the view
``data_0`` and annotation stopped."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.db.base import create_connection
from nl2sql.errors import ConfigError, QueryExecutionError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.duckdb import DuckdbSchemaInspector
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.schema.cache import save_db_info


def _context(folder: Path, files: str) -> OpsContext:
    (folder / "dbs.yaml").write_text(f"databases:\n  lake:\n    type: duckdb\n    files: {files}\n")
    ctx = OpsContext(DbConnectionConfigs.load(folder / "dbs.yaml", data_dir=folder / "data",
                                              workspace=folder / "ws"))
    with create_connection(ctx.configs.get("lake")) as connection:
        save_db_info(DbSchemaExtractor(connection).extract("lake"), ctx.data_dir)
    return ctx


def _rows(ctx: OpsContext, query: str, db_id: str = "lake") -> list[list[str]]:
    result = db_execute_sql_op(ctx, db_id, query)
    with (ctx.workspace / result.csv_filename).open(newline="") as handle:
        return list(csv.reader(handle))


def test_a_hive_partitioned_folder_is_one_view_with_its_partitions(tmp_path: Path) -> None:
    import duckdb

    with duckdb.connect() as writer:
        writer.execute(
            "COPY (SELECT i AS id, 2023 + i % 2 AS year, 1 + i % 3 AS month, "
            "['book', 'pen'][1 + i % 2] AS item, i * 1.5 AS amount FROM range(1200) t(i)) "
            f"TO '{tmp_path}/sales' (FORMAT parquet, PARTITION_BY (year, month))")
        expected = writer.execute(
            "SELECT sum(i * 1.5) FROM range(1200) t(i) WHERE 1 + i % 3 = 2 AND 2023 + i % 2 "
            "= 2024").fetchone()[0]
    (tmp_path / "managers.csv").write_text("item,manager\nbook,Anna\npen,Ben\n")
    ctx = _context(tmp_path, "['sales/**/*.parquet', '*.csv']")
    try:
        info = ctx.db_info("lake")
        assert [t.name for t in info.tables] == ["managers", "sales"]
        sales = info.table("sales")
        assert (sales.row_count, sales.row_count_is_estimate) == (1200, False)
        assert {"id", "item", "amount", "year", "month"} == {c.name for c in sales.columns}
        rows = _rows(ctx, "SELECT sum(amount) AS total FROM sales WHERE year = 2024 AND month = 2")
        assert float(rows[1][0]) == pytest.approx(float(expected))
        rows = _rows(ctx, "SELECT m.manager, count(*) AS n FROM sales s JOIN managers m "
                          "USING (item) GROUP BY m.manager ORDER BY m.manager")
        assert rows == [["manager", "n"], ["Anna", "600"], ["Ben", "600"]]
        # still only the configured files: the engine reads nothing else
        with pytest.raises(QueryExecutionError, match="disabled by configuration"):
            ctx.operations("lake").execute_select_query(
                f"SELECT * FROM read_csv('{tmp_path}/dbs.yaml')", _Discard(), validate=False)
    finally:
        ctx.close()


def test_files_may_name_a_view_of_several_files(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``files: {orders: 'daily/*.csv'}``: a file a day is one table; a later file's new
    column is NULL in the earlier ones (read by name); counted as one, estimated when big."""
    daily = tmp_path / "daily"
    daily.mkdir()
    for day in range(1, 4):
        lines = "".join(f"{day * 100 + i},{['north', 'south'][i % 2]}"
                        f"{',' + str(i) if day == 3 else ''}\n" for i in range(50))
        header = "id,region" + (",discount" if day == 3 else "")
        (daily / f"2024-01-0{day}.csv").write_text(f"{header}\n{lines}")
    (daily / "README.md").write_text("not a table")
    ctx = _context(tmp_path, "{orders: 'daily/*', regions: ['daily/2024-01-01.csv']}")
    try:
        info = ctx.db_info("lake")
        assert [t.name for t in info.tables] == ["orders", "regions"]
        assert info.table("orders").row_count == 150
        assert [c.name for c in info.table("orders").columns] == ["id", "region", "discount"]
        assert _rows(ctx, "SELECT count(*) AS n, count(discount) AS d FROM orders") == [
            ["n", "d"], ["150", "50"]]
    finally:
        ctx.close()
    monkeypatch.setattr(DuckdbSchemaInspector, "exact_count_max_file_bytes", 1_000)
    monkeypatch.setattr(DuckdbSchemaInspector, "estimate_sample_bytes", 500)
    with create_connection(ctx.configs.get("lake")) as connection:
        orders = DbSchemaExtractor(connection).extract().table("orders")
    assert orders.row_count_is_estimate and abs(orders.row_count - 150) <= 15


def test_files_that_would_share_a_view_are_one_line(tmp_path: Path) -> None:
    for month in ("jan", "feb"):
        (tmp_path / month).mkdir()
        (tmp_path / month / "orders.csv").write_text("id\n1\n")
    (tmp_path / "feb" / "orders.parquet").write_text("")
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  lake:\n    type: duckdb\n    files: ['*/orders.csv']\n")
    config = DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("lake")
    with pytest.raises(ConfigError) as raised:
        create_connection(config).engine  # noqa: B018
    message = str(raised.value)
    assert f"{tmp_path}/feb/orders.csv and {tmp_path}/jan/orders.csv would both be the view " \
           "'orders'; name a view for each in 'files'" in message and "\n" not in message
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  lake:\n    type: duckdb\n    files: {orders: 'feb/orders.*'}\n")
    config = DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("lake")
    with pytest.raises(ConfigError, match="the view 'orders' would read csv, parquet files "
                                          "together; give each kind its own name"):
        create_connection(config).engine  # noqa: B018
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  lake:\n    type: duckdb\n    files: {notes: 'dbs.*'}\n")
    config = DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("lake")
    with pytest.raises(ConfigError, match="no CSV, Parquet or JSON file for the view 'notes'"):
        create_connection(config).engine  # noqa: B018


class _Discard:
    def begin(self, columns: object) -> None:
        pass

    def write_rows(self, rows: object) -> None:
        pass


def test_a_latin1_csv_says_which_encoding_to_set(tmp_path: Path) -> None:
    """Excel and Windows programs save CSV files in Latin-1: the database "could not connect"
    with DuckDB's first line ("CSV Error on Line: 2"); it names the file and the setting."""
    (tmp_path / "ventes.csv").write_bytes("Nom;Ville;Montant\nCafé du Nord;Orléans;3,50\n"
                                          "Boulangerie;Sète;2,25\n".encode("latin-1"))
    (tmp_path / "dbs.yaml").write_text("databases:\n  fr:\n    type: duckdb\n"
                                       "    files: ['*.csv']\n")
    config = DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("fr")
    with pytest.raises(ConfigError) as raised, create_connection(config) as connection:
        DbSchemaExtractor(connection).extract()
    message = str(raised.value)
    assert message.startswith(f"Database 'fr': {tmp_path / 'ventes.csv'} is not UTF-8 (CSV "
                              "Error on Line: 2)") and "\n" not in message
    assert "add csv_options: {encoding: latin-1}" in message and "Orl" not in message
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  fr:\n    type: duckdb\n    files: ['*.csv']\n"
        "    csv_options: {encoding: latin-1, decimal_separator: ',', delim: ';'}\n")
    ctx = OpsContext(DbConnectionConfigs.load(tmp_path / "dbs.yaml", data_dir=tmp_path / "d",
                                              workspace=tmp_path / "ws"))
    try:
        result = db_execute_sql_op(ctx, "fr", "SELECT Ville, Montant FROM ventes ORDER BY Nom")
        assert (ctx.workspace / result.csv_filename).read_text() == (
            "Ville,Montant\nSète,2.25\nOrléans,3.5\n")
    finally:
        ctx.close()
    # Beside a UTF-8 file (with a byte-order mark, as Excel writes "CSV UTF-8"), the Latin-1
    # one takes its own read_csv parameters over the database's.
    (tmp_path / "people.csv").write_bytes("\ufeffid,name\n1,Zoë\n".encode("utf-8"))
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  fr:\n    type: duckdb\n    csv_options: {decimal_separator: ','}\n"
        "    files:\n      ventes: {files: ventes.csv, csv_options: {encoding: latin-1, "
        "delim: ';'}}\n      people: people.csv\n")
    ctx = OpsContext(DbConnectionConfigs.load(tmp_path / "dbs.yaml", data_dir=tmp_path / "d",
                                              workspace=tmp_path / "ws"))
    try:
        assert _rows(ctx, "SELECT sum(Montant) AS total FROM ventes", "fr") == [
            ["total"], ["5.75"]]
        assert _rows(ctx, "SELECT id, name FROM people", "fr") == [["id", "name"], ["1", "Zoë"]]
    finally:
        ctx.close()
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  fr:\n    type: duckdb\n    files:\n      ventes: {files: ventes.csv, "
        "csv_options: {'enc oding': latin-1}}\n")
    with pytest.raises(ConfigError, match="'csv_options' takes read_csv's parameter names"):
        DbConnectionConfigs.load(tmp_path / "dbs.yaml")


@pytest.mark.parametrize("schema", ['"*"', "[main, crm]"])
def test_a_duckdb_file_with_several_schemas_is_read_whole(tmp_path: Path, schema: str) -> None:
    """``schema: '*'`` (or a list) on a DuckDB file read its default schema alone, silently
    leaving out the others; now each is read, names schema-qualified as on PostgreSQL."""
    import duckdb

    with duckdb.connect(str(tmp_path / "n.duckdb")) as writer:
        writer.execute("CREATE SCHEMA crm; CREATE TABLE crm.accounts AS SELECT i AS id, "
                       "['gold', 'silver'][1 + i % 2] AS tier, MAP {'src': 'web'} AS attrs "
                       "FROM range(40) t(i); CREATE TABLE main.notes (id INTEGER, body TEXT); "
                       "INSERT INTO main.notes VALUES (1, 'hello')")
    (tmp_path / "dbs.yaml").write_text(
        f"databases:\n  n:\n    type: duckdb\n    path: n.duckdb\n    schema: {schema}\n")
    ctx = OpsContext(DbConnectionConfigs.load(tmp_path / "dbs.yaml", data_dir=tmp_path / "data",
                                              workspace=tmp_path / "ws"))
    try:
        with create_connection(ctx.configs.get("n")) as connection:
            info = DbSchemaExtractor(connection).extract("n")
        save_db_info(info, ctx.data_dir)
        assert [t.name for t in info.tables] == ["crm.accounts", "main.notes"]
        assert info.table("crm.accounts").row_count == 40
        assert _rows(ctx, "SELECT count(*) AS n FROM crm.accounts WHERE tier = 'gold'",
                     "n") == [["n"], ["20"]]
        # a bare name is looked up in each schema, as with PostgreSQL's search_path
        assert _rows(ctx, "SELECT count(*) AS n FROM accounts JOIN notes ON notes.id = 1",
                     "n") == [["n"], ["40"]]
    finally:
        ctx.close()
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  n:\n    type: duckdb\n    path: n.duckdb\n    schema: [crm, nope]\n")
    with pytest.raises(ConfigError, match="has no schema 'nope' \\(it has: crm, main\\)"), \
            create_connection(DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("n")) as conn:
        DbSchemaExtractor(conn).extract("n")
