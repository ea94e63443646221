"""What only MySQL/MariaDB and DuckDB have: native ENUM/SET, comments, index types, the server
flavour, statistics instead of scans; DuckDB over a folder of generated CSV and Parquet files."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import BackendDb, write_dbs_yaml
from test_enums import captured_statements

from nl2sql.annotation.pipeline import annotate_database
from nl2sql.schema.cache import save_db_info
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.db.base import create_connection
from nl2sql.errors import ConfigError, QueryExecutionError
from nl2sql.schema.formatting import format_table
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.enums import EnumScreeningSettings, screen_table
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

MYSQL_SCRIPT = """
CREATE TABLE customers (
    id INT PRIMARY KEY,
    name VARCHAR(80) NOT NULL COMMENT 'Full name as printed on invoices',
    tier ENUM('free', 'pro', 'enterprise') NOT NULL DEFAULT 'free',
    channels SET('email', 'sms', 'push'),
    notes TEXT,
    FULLTEXT INDEX ft_notes (notes),
    UNIQUE INDEX ux_name (name)
) COMMENT = 'People who bought something';
CREATE TABLE orders (
    id INT PRIMARY KEY,
    customer_id INT NOT NULL,
    status VARCHAR(10) NOT NULL,
    code VARCHAR(20) NOT NULL,
    INDEX ix_code (code),
    CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customers (id)
        ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE VIEW pro_customers AS SELECT id, name FROM customers WHERE tier = 'pro';
INSERT INTO customers VALUES (1, 'Ada', 'pro', 'email,sms', 'likes tea'),
                             (2, 'Bob', 'free', NULL, NULL);
INSERT INTO orders SELECT seq, 1 + seq % 2, ELT(1 + seq % 3, 'new', 'paid', 'sent'),
                          CONCAT('C-', seq) FROM seq_1_to_3000;
ANALYZE TABLE orders;
"""


@pytest.fixture
def shop(make_db: Callable[..., BackendDb]) -> DbConnectionConfig:
    return make_db("mysql", "shop", script=MYSQL_SCRIPT).config


def test_mysql_enum_set_comments_indexes_and_views(shop: DbConnectionConfig) -> None:
    with create_connection(shop) as connection:
        info = DbSchemaExtractor(connection).extract()
        dialect_is_mariadb = connection.engine.dialect.is_mariadb
    customers, orders = info.table("customers"), info.table("orders")
    tier, channels = customers.column("tier"), customers.column("channels")
    assert (tier.is_enum, tier.enum_values, tier.enum_decision) == (
        True, ["free", "pro", "enterprise"], "schema")
    assert channels.is_enum and channels.enum_values == ["email", "sms", "push"]
    assert customers.description == "People who bought something"
    assert customers.column("name").description == "Full name as printed on invoices"
    assert customers.column("name").is_unique
    types = {i.name: i.index_type for i in customers.indexes}
    assert types == {"PRIMARY": "BTREE", "ft_notes": "FULLTEXT", "ux_name": "BTREE"}
    (fk,) = orders.foreign_keys
    assert (fk.columns, fk.referenced_table, fk.on_delete, fk.on_update) == (
        ["customer_id"], "customers", "CASCADE", "CASCADE")
    assert (orders.row_count, orders.row_count_is_estimate) == (3000, False)
    view = info.table("pro_customers")
    assert view.is_view and [c.name for c in view.columns] == ["id", "name"]
    assert dialect_is_mariadb  # this machine's server; MySQL 8 takes the other branch
    text = format_table(customers, info.db_type)
    assert "tier ENUM('free','pro','enterprise') NOT NULL,  -- [free, pro, enterprise]" in text


def test_mysql_screening_reads_index_statistics_and_a_bounded_sample(
        shop: DbConnectionConfig) -> None:
    with create_connection(shop) as connection:
        info = DbSchemaExtractor(connection).extract()
        orders = info.table("orders")
        settings = EnumScreeningSettings(sample_threshold_rows=1000, sample_size=500)
        with captured_statements(connection) as statements:
            screen_table(connection, orders, settings)
    code, status = orders.column("code"), orders.column("status")
    # code leads an index whose cardinality (3000) already rules it out: no scan for it
    assert code.distinct_count == 3000 and code.enum_candidates is None
    assert status.is_enum and set(status.enum_values) == {"new", "paid", "sent"}
    assert sum(v.count for v in status.enum_candidates) == 500  # the sample, not the table
    scans = [s for s in statements if "orders" in s and "information_schema" not in s]
    assert scans and all("LIMIT" in s for s in scans)
    assert not any("count(distinct" in s.lower() for s in statements)


def test_mysql_config_keys_and_ssl_passthrough(tmp_path: Path) -> None:
    path = tmp_path / "dbs.yaml"
    path.write_text("databases:\n  sales:\n    type: mysql\n    dbname: sales\n"
                    "    ssl_ca: /etc/ssl/ca.pem\n    ssl_verify_cert: true\n")
    config = DbConnectionConfigs.load(path).get("sales")
    assert (config.port, config.host, config.effective_schema) == (3306, "localhost", None)
    assert config.ssl_options == {"ssl_ca": "/etc/ssl/ca.pem", "ssl_verify_cert": True}
    with create_connection(config) as connection:
        args = connection.connect_args()
        assert (args["ssl"], args["ssl_mode"]) == ({"ca": "/etc/ssl/ca.pem"}, "VERIFY_CA")
        assert args["multi_statements"] is False


# -- DuckDB over a folder of files ----------------------------------------------------------

@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """A folder of CSV and Parquet files written by DuckDB, and a dbs.yaml beside it."""
    import duckdb

    folder = tmp_path / "lake"
    (folder / "exports").mkdir(parents=True)
    with duckdb.connect() as writer:
        writer.execute(
            "CREATE TABLE sales AS SELECT i AS id, ['north','south','east'][1 + i % 3] AS region,"
            " round(i * 1.5, 2) AS amount, DATE '2024-01-01' + (i % 365)::INT AS day "
            "FROM range(1, 120001) AS t(i)")
        writer.execute(f"COPY sales TO '{folder}/exports/sales.parquet' (FORMAT parquet)")
        writer.execute("COPY (SELECT * FROM (VALUES ('north', 'Anna'), ('south', 'Ben'), "
                       "('east', 'Cleo')) AS m(region, manager)) "
                       f"TO '{folder}/exports/managers.csv' (HEADER)")
    write_dbs_yaml(folder, [])
    (folder / "dbs.yaml").write_text(
        "databases:\n  lake:\n    type: duckdb\n"
        "    files: ['exports/*.parquet', 'exports/*.csv']\n")
    return folder


def test_duckdb_files_become_tables_with_counts_and_sampled_enums(lake: Path) -> None:
    registry = DbConnectionConfigs.load(lake / "dbs.yaml")
    config = registry.get("lake")
    assert config.files == [str(lake / "exports" / "*.parquet"), str(lake / "exports" / "*.csv")]
    with create_connection(config) as connection:
        info = DbSchemaExtractor(connection).extract()
        sales = info.table("sales")
        with captured_statements(connection) as statements:
            screen_table(connection, sales)
    assert [t.name for t in info.tables] == ["managers", "sales"]
    assert not sales.is_view and sales.row_count == 120_000
    assert [c.data_type for c in sales.columns] == ["BIGINT", "VARCHAR", "DECIMAL(21,1)", "DATE"]
    region = sales.column("region")
    assert region.is_enum and set(region.enum_values) == {"north", "south", "east"}
    assert sum(v.count for v in region.enum_candidates) == 50_000  # USING SAMPLE, no full scan
    assert any("USING SAMPLE" in s for s in statements)


def test_duckdb_files_export_equals_a_direct_query(lake: Path) -> None:
    import duckdb

    ctx = OpsContext(DbConnectionConfigs.load(lake / "dbs.yaml", workspace=lake / "ws"))
    with create_connection(ctx.configs.get("lake")) as connection:
        save_db_info(DbSchemaExtractor(connection).extract("lake"), ctx.data_dir)
    query = ("SELECT m.manager, count(*) AS n, sum(s.amount) AS total FROM sales s "
             "JOIN managers m USING (region) GROUP BY m.manager ORDER BY m.manager")
    result = db_execute_sql_op(ctx, "lake", query)
    with (ctx.workspace / result.csv_filename).open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    with duckdb.connect() as direct:
        expected = direct.execute(
            query.replace("sales s", f"'{lake}/exports/sales.parquet' s").replace(
                "managers m", f"'{lake}/exports/managers.csv' m")).fetchall()
    assert header == ["manager", "n", "total"]
    assert [(r[0], int(r[1]), float(r[2])) for r in rows] == [
        (m, n, pytest.approx(t)) for m, n, t in expected]
    with pytest.raises(QueryExecutionError, match="disabled by configuration"):
        ctx.operations("lake").execute_select_query(
            "SELECT * FROM read_text('/etc/passwd')", _Discard(), validate=False)


def test_duckdb_file_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  lake:\n    type: duckdb\n    files: ['missing/*.csv']\n")
    config = DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("lake")
    with pytest.raises(ConfigError, match="no file matches .*missing/\\*.csv"):
        create_connection(config).engine  # noqa: B018
    (tmp_path / "dbs.yaml").write_text("databases:\n  lake:\n    type: duckdb\n")
    with pytest.raises(ConfigError, match="'path' or 'files' is required"):
        DbConnectionConfigs.load(tmp_path / "dbs.yaml")


def test_duckdb_csv_options_read_european_files(tmp_path: Path) -> None:
    """``csv_options`` are read_csv's parameters for the database's CSV files: decimals with a
    comma are numbers (the sniffer keeps them text: a sum fails), a type map sets a column's
    type; a parameter read_csv does not take is one line naming csv_options."""
    (tmp_path / "verkauf.csv").write_text("Datum;Artikel;Menge;Preis;PLZ\n"
                                          "01.03.2024;Käse;2;3,50;01067\n"
                                          "02.03.2024;Brot;1;2,25;80331\n")
    (tmp_path / "dbs.yaml").write_text("""databases:
  eu:
    type: duckdb
    files: ['*.csv']
    csv_options: {decimal_separator: ',', delim: ';', types: {PLZ: VARCHAR}, header: true}
  plain:
    type: duckdb
    files: ['*.csv']
  typo:
    type: duckdb
    files: ['*.csv']
    csv_options: {decimal_seperator: ','}
""")
    ctx = OpsContext(DbConnectionConfigs.load(tmp_path / "dbs.yaml", data_dir=tmp_path / "d",
                                              workspace=tmp_path / "ws"))
    try:
        query = "SELECT SUM(Preis * Menge) AS total, MIN(PLZ) AS plz FROM verkauf"
        result = db_execute_sql_op(ctx, "eu", query)
        assert (ctx.workspace / result.csv_filename).read_text() == "total,plz\n9.25,01067\n"
        with pytest.raises(QueryExecutionError, match="No function matches"):
            db_execute_sql_op(ctx, "plain", query)  # what the files give without the options
        with pytest.raises(ConfigError) as raised:
            db_execute_sql_op(ctx, "typo", query)
        assert str(raised.value).startswith("Database 'typo': read_csv refuses its csv_options "
                                            "(Binder Error: Invalid named parameter")
        assert 'did you mean: "decimal_separator"?); fix' in str(raised.value)
        assert "\n" not in str(raised.value)
    finally:
        ctx.close()
    (tmp_path / "dbs.yaml").write_text("databases:\n  eu:\n    type: duckdb\n"
                                       "    files: ['*.csv']\n    csv_options: {'a) x': 1}\n")
    with pytest.raises(ConfigError, match="'csv_options' takes read_csv's parameter names"):
        DbConnectionConfigs.load(tmp_path / "dbs.yaml")


class _Discard:
    def begin(self, columns: object) -> None:
        pass

    def write_rows(self, rows: object) -> None:
        pass


def test_duckdb_big_text_files_are_estimated_not_read_whole(lake: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """count(*) over a CSV reads the whole file: over the size limit the rows are estimated
    from the file's size and first lines, and marked as an estimate; Parquet and small files
    keep exact counts."""
    from nl2sql.schema.formatting import format_schema
    from nl2sql.inspection.duckdb import DuckdbSchemaInspector

    lines = "\n".join(f"{i},customer {i % 97},{i * 3 % 1000}.25" for i in range(1, 40_001))
    (lake / "exports" / "events.csv").write_text("id,customer,amount\n" + lines + "\n")
    monkeypatch.setattr(DuckdbSchemaInspector, "exact_count_max_file_bytes", 200_000)
    monkeypatch.setattr(DuckdbSchemaInspector, "estimate_sample_bytes", 50_000)
    with create_connection(DbConnectionConfigs.load(lake / "dbs.yaml").get("lake")) as connection:
        info = DbSchemaExtractor(connection).extract()
    events, sales, managers = (info.table(n) for n in ("events", "sales", "managers"))
    assert events.row_count_is_estimate and abs(events.row_count - 40_000) < 40_000 * 0.1
    assert (sales.row_count, sales.row_count_is_estimate) == (120_000, False)  # Parquet
    assert (managers.row_count, managers.row_count_is_estimate) == (3, False)
    assert f"-- about {events.row_count:,} rows" in format_schema(info)


def test_mysql_times_and_differences_are_durations_as_mysql_writes_them(
        make_db: Callable[..., BackendDb], make_registry: Callable[..., DbConnectionConfigs]
) -> None:
    """mysqlclient hands a TIME out as Python's timedelta, whose text is '-1 day, 22:30:00'."""
    db = make_db("mysql", "clock", script=(
        "CREATE TABLE shift (id INT PRIMARY KEY, late TIME, worked TIME(6));"
        "INSERT INTO shift VALUES (1, '-01:30:00', '838:59:59.5'), (2, '00:00:00', NULL);"))
    ctx = OpsContext(make_registry(db.config))
    result = db_execute_sql_op(ctx, "clock", "SELECT late, worked, TIMEDIFF('2024-01-01 10:00', "
                               "'2024-01-02 12:30') AS gap FROM shift ORDER BY id")
    assert (ctx.workspace / result.csv_filename).read_text() == (
        "late,worked,gap\n-01:30:00,838:59:59.5,-26:30:00\n00:00:00,,-26:30:00\n")
    assert "| -01:30:00 | 838:59:59.5 | -26:30:00 |" in result.render()


def test_duckdb_intervals_keep_their_months_and_floats_their_digits(tmp_path: Path) -> None:
    """Python's timedelta counts a month as 30 days: age() of 1 year 1 month 17 days was
    '407 days, 0:00:00'."""
    import duckdb

    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  duck:\n    type: duckdb\n    path: empty.duckdb\n")
    ctx = OpsContext(DbConnectionConfigs.load(tmp_path / "dbs.yaml", workspace=tmp_path / "ws"))
    for query, text in [
            ("SELECT age(TIMESTAMP '2024-03-01', TIMESTAMP '2023-01-15') AS d",
             "d\n1 year 1 month 17 days\n"),
            ("SELECT INTERVAL 3 MONTH AS a, INTERVAL (-1) DAY AS b, 2.5::DOUBLE AS x, "
             "NULL::INTERVAL AS n", "a,b,x,n\n3 months,-1 day,2.5,\n"),
            # a FLOAT was its double's digits, 0.10000000149011612, on every path
            ("SELECT 0.1::FLOAT AS f", "f\n0.1\n"),
            ("SELECT 0.1::FLOAT AS f, [1] AS l, 'nan'::FLOAT AS n, 1e20::FLOAT AS big",
             'f,l,n,big\n0.1,[1],NaN,1e+20\n')]:
        result = db_execute_sql_op(ctx, "duck", query)
        assert (ctx.workspace / result.csv_filename).read_text() == text


def test_mysql_bit_values_are_numbers(make_db: Callable[..., BackendDb],
                                      make_registry: Callable[..., DbConnectionConfigs]) -> None:
    """mysqlclient hands a BIT out as bytes: a BIT(1) flag read '\\x01'."""
    db = make_db("mysql", "flags", script=(
        "CREATE TABLE account (id INT PRIMARY KEY, active BIT(1), mask BIT(8), wide BIT(64));"
        "INSERT INTO account VALUES (1, 1, b'101', b'" + "1" * 64 + "'), (2, 0, 0, NULL);"))
    ctx = OpsContext(make_registry(db.config))
    result = db_execute_sql_op(ctx, "flags", "SELECT * FROM account ORDER BY id")
    assert (ctx.workspace / result.csv_filename).read_text() == (
        f"id,active,mask,wide\n1,1,5,{2 ** 64 - 1}\n2,0,0,\n")
    assert result.column_types == ["integer"] * 4
    grouped = db_execute_sql_op(ctx, "flags", "SELECT active, count(*) AS n FROM account "
                                "WHERE active = 1 GROUP BY active")
    assert "| 1 | 1 |" in grouped.render()


def test_mariadb_system_versioned_tables_are_counted(make_db: Callable[..., BackendDb]) -> None:
    """information_schema calls them 'SYSTEM VERSIONED', not 'BASE TABLE': no row count."""
    db = make_db("mysql", "history", script=(
        "CREATE TABLE price (id INT PRIMARY KEY, amount INT) WITH SYSTEM VERSIONING;"
        "INSERT INTO price VALUES (1, 10), (2, 20); UPDATE price SET amount = 11 WHERE id = 1;"))
    with create_connection(db.config) as connection:
        info = DbSchemaExtractor(connection).extract()
    assert info.table("price").row_count == 2


def test_duckdb_float_samples_show_their_own_digits(make_db: Callable[..., BackendDb],
                                                    tmp_path: Path) -> None:
    """A FLOAT column's sample rows showed its double's digits (0.10000000149011612), where a
    query's result shows 0.1."""
    db = make_db("duckdb", "floats", script=(
        "CREATE TABLE reading (id INTEGER PRIMARY KEY, level FLOAT, exact DOUBLE);"
        "INSERT INTO reading VALUES (1, 0.1, 0.1), (2, NULL, 2.5);"))
    result = annotate_database(db.config, tmp_path)
    assert result.db_info.table("reading").sample_data_csv.splitlines() == [
        "id,level,exact", "1,0.1,0.1", "2,,2.5"]


def test_mysql_column_names_with_a_backtick(make_db: Callable[..., BackendDb],
                                            tmp_path: Path) -> None:
    """SQLAlchemy reflected `a``b` for a column named a`b: the schema named a column that does
    not exist, and the table's sample rows failed."""
    db = make_db("mysql", "quoted", script=(
        "CREATE TABLE tick (`i``d` INT PRIMARY KEY, `no``te` VARCHAR(10), INDEX ix (`no``te`));"
        "INSERT INTO tick VALUES (1, 'x');"))
    info = annotate_database(db.config, tmp_path).db_info
    tick = info.table("tick")
    assert [c.name for c in tick.columns] == ["i`d", "no`te"]
    assert tick.primary_key == ["i`d"] and [i.columns for i in tick.indexes
                                            if i.name == "ix"] == [["no`te"]]
    assert tick.sample_data_csv.splitlines() == ["i`d,no`te", "1,x"]


def test_mysql_geometries_are_their_wkt(make_db: Callable[..., BackendDb],
                                        make_registry: Callable[..., DbConnectionConfigs]) -> None:
    """A GEOMETRY value was its storage bytes as hex (\\x000000000101000000...)."""
    shapes = ["POINT(1 2.5)", "LINESTRING(0 0,1 1,2 0.5)",
              "POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))", "MULTIPOINT(1 1,2 2)",
              "MULTILINESTRING((0 0,1 1),(2 2,3 3))",
              "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))",
              "GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))"]
    values = ", ".join(f"({i}, ST_GeomFromText('{shape}'))" for i, shape in enumerate(shapes))
    db = make_db("mysql", "places", script=(
        f"CREATE TABLE place (id INT PRIMARY KEY, shape GEOMETRY);"
        f"INSERT INTO place VALUES {values}, (7, ST_GeomFromText('POINT(-73.98 40.75)', 4326)),"
        f" (8, NULL);"))
    ctx = OpsContext(make_registry(db.config))
    result = db_execute_sql_op(ctx, "places", "SELECT shape, ST_AsText(shape) AS server "
                               "FROM place ORDER BY id")
    with (ctx.workspace / result.csv_filename).open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    assert [row[0] for row in rows[:7]] == [row[1] for row in rows[:7]] == shapes
    # in storage order, x y (MySQL 8's ST_AsText puts latitude first for SRID 4326)
    assert rows[7][0] == "SRID=4326;POINT(-73.98 40.75)" and rows[8] == ["", ""]


def test_bytes_that_are_no_geometry_stay_bytes() -> None:
    from nl2sql.db.mysql_geometry import geometry_text

    for value in (b"", b"\x00\x00\x00\x00\x01\x09\x00\x00\x00",
                  b"\x00\x00\x00\x00\x01\x01\x00\x00\x00" + b"\x00" * 16 + b"extra"):
        assert geometry_text(value) == value
