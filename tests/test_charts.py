"""Charts chosen from a result's shape, drawn from real Chinook and Northwind results (saved by
``db_execute_sql`` in a real workspace), as PNG and SVG; the rules one case per line; the row
cap."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image

import nl2sql
from agent_scripts import Script, final
from conftest import build_cache, sqlite_config, write_dbs_yaml
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.charts import Chart, chart_csv
from nl2sql.charts.data import OTHER, TOP_BARS
from nl2sql.charts.labels import schema_of
from nl2sql.charts.table import ENV_CHART_MAX_ROWS, read_table
from nl2sql.errors import ChartError, ConfigError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

ROOT = Path(__file__).resolve().parent.parent
MONTHS = ("SELECT strftime('%Y-%m', InvoiceDate) AS month, count(*) AS invoices FROM Invoice "
          "GROUP BY month ORDER BY month")
GENRES = ("SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g "
          "ON g.GenreId = t.GenreId GROUP BY g.Name ORDER BY tracks DESC")
PRICE_VS_LENGTH = "SELECT t.Name, t.UnitPrice, t.Milliseconds FROM Track t"
ONE_NUMBER = "SELECT count(*) AS tracks FROM Track"
NAMES = "SELECT Name FROM Artist ORDER BY Name"
CATEGORIES = ("SELECT c.CategoryName AS category, sum(d.Quantity) AS units "
              "FROM \"Order Details\" d "
              "JOIN Products p ON p.ProductID = d.ProductID JOIN Categories c "
              "ON c.CategoryID = p.CategoryID GROUP BY c.CategoryName")
ORDERS_PER_MONTH = ("SELECT strftime('%Y-%m', OrderDate) AS month, ShipCountry AS country, "
                    "count(*) AS orders FROM Orders GROUP BY 1, 2")


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory, sqlite_samples: dict[str, Path]) -> OpsContext:
    """Chinook and Northwind with schema caches (Track's length and price described, the price
    with a ``unit``), and a workspace for their results."""
    folder = tmp_path_factory.mktemp("charts")
    for name in ("chinook", "northwind"):
        shutil.copyfile(sqlite_samples[name], folder / f"{name}.sqlite")
    path = write_dbs_yaml(folder, [sqlite_config(n, folder / f"{n}.sqlite")
                                   for n in ("chinook", "northwind")])
    context = OpsContext.load(path, workspace=folder / "ws")
    for config in context.configs:
        build_cache(config, context.data_dir)
    info = load_db_info(context.data_dir, "chinook")
    track = next(t for t in info.tables if t.name == "Track")
    for column in track.columns:
        if column.name == "Milliseconds":
            column.description = "Length of the track in milliseconds."
        if column.name == "UnitPrice":
            column.description = "Price of one track"
            column.unit = "USD"  # type: ignore[attr-defined] - an extra cache field
    save_db_info(info, context.data_dir)
    yield context
    context.close()


def result(ops: OpsContext, db_id: str, sql: str, name: str) -> Path:
    db_execute_sql_op(ops, db_id, sql, output_file=name, overwrite=True)
    return ops.workspace / name


def chart_of(ops: OpsContext, db_id: str, sql: str, name: str, **choices: object) -> Chart:
    db_info, dialect = schema_of(ops, db_id)
    return chart_csv(result(ops, db_id, sql, name), sql=sql, db_info=db_info, dialect=dialect,
                     **choices)  # type: ignore[arg-type]


def assert_drawn(png: bytes, size: tuple[int, int] = (800, 450)) -> None:
    """A PNG of ``size`` with a chart on it: many colours, and ink on a real share of it."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == size
    colours = image.getcolors(maxcolors=size[0] * size[1])  # [(count, (r, g, b)), ...]
    ink = sum(count for count, rgb in colours if sum(rgb) < 600) / (size[0] * size[1])
    assert ink > 0.01, f"almost blank: {ink:.3%} of the pixels are not white"
    assert len(colours) > 20  # text, axes, marks: not a flat image


# -- the five shapes on real results --------------------------------------------------------

def test_invoices_per_month_is_a_line(ops: OpsContext) -> None:
    chart = chart_of(ops, "chinook", MONTHS, "months.csv")
    assert (chart.kind, chart.spec.x, chart.spec.y) == ("line", "month", ("invoices",))
    (series,) = chart.plot.series
    assert len(series.x) == 60 and series.x == sorted(series.x) and sum(series.y) == 412
    assert_drawn(chart.png())


def test_tracks_per_genre_is_a_sorted_bar_with_other(ops: OpsContext) -> None:
    chart = chart_of(ops, "chinook", GENRES, "genres.csv")
    assert (chart.kind, chart.spec.x, chart.spec.y) == ("bar", "genre", ("tracks",))
    (series,) = chart.plot.series
    assert series.x[0] == "Rock" and series.x[-1] == OTHER and len(series.x) == TOP_BARS + 1
    assert series.y[:-1] == sorted(series.y[:-1], reverse=True)
    assert sum(series.y) == 3503  # nothing lost: the 13 smallest genres are in "other"
    assert "the 12 largest of 25 genre values; 13 others summed as 'other'" in chart.describe()
    assert_drawn(chart.png())


def test_unit_price_against_length_is_a_scatter_with_units(ops: OpsContext) -> None:
    chart = chart_of(ops, "chinook", PRICE_VS_LENGTH, "price_length.csv")
    assert (chart.kind, chart.spec.x, chart.spec.y) == ("scatter", "UnitPrice", ("Milliseconds",))
    assert len(chart.plot.series[0].x) == 3503
    assert chart.describe() == "Scatter chart: Milliseconds against UnitPrice."
    assert chart.titles["UnitPrice"].text() == "UnitPrice — Price of one track (USD)"
    assert chart.titles["Milliseconds"].unit == "ms"  # named by the description
    svg = ET.fromstring(chart.svg())
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    texts = " ".join("".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert "Price of one track (USD)" in texts and "(ms)" in texts
    assert_drawn(chart.png())


def test_one_number_is_a_card(ops: OpsContext, tmp_path: Path) -> None:
    chart = chart_of(ops, "chinook", ONE_NUMBER, "count.csv")
    assert chart.kind == "card" and chart.plot.series[0].y == [3503.0]
    assert chart.describe() == "Card chart: tracks."
    assert_drawn(chart.save(tmp_path / "card.png").read_bytes())


def test_a_text_column_alone_is_no_chart_with_the_reason(ops: OpsContext,
                                                         tmp_path: Path) -> None:
    chart = chart_of(ops, "chinook", NAMES, "names.csv")
    assert chart.kind is None and chart.plot is None
    assert chart.reason == "no numeric column to plot: Name is text (a category)."
    assert chart._repr_png_() is None and repr(chart).startswith("No chart: ")
    with pytest.raises(ChartError, match="no numeric column"):
        chart.save(tmp_path / "names.png")
    assert not (tmp_path / "names.png").exists()


def test_northwind_units_per_category_and_orders_per_country(ops: OpsContext) -> None:
    bar = chart_of(ops, "northwind", CATEGORIES, "categories.csv")
    assert bar.kind == "bar" and OTHER not in bar.plot.series[0].x and not bar.notes
    assert len(bar.plot.series[0].x) == 8
    line = chart_of(ops, "northwind", ORDERS_PER_MONTH, "orders.csv")
    assert (line.kind, line.spec.colour) == ("line", "country")
    assert line.reason == line.title == "orders over month by country"
    assert len(line.plot.series) == 8 and "the 8 largest of 21 country values" in line.notes[0]
    assert_drawn(line.png())


def test_overrides_of_kind_x_y_and_colour(ops: OpsContext) -> None:
    path = result(ops, "chinook", PRICE_VS_LENGTH, "price_length.csv")
    bar = chart_csv(path, kind="bar", x="UnitPrice", y="Milliseconds")
    assert (bar.kind, bar.spec.x, bar.spec.y) == ("bar", "UnitPrice", ("Milliseconds",))
    assert "Milliseconds summed per UnitPrice" in bar.notes
    teal = chart_csv(path, colour="teal")
    assert teal.kind == "scatter" and teal.spec.mark_colour == "teal"
    assert_drawn(teal.png())
    with pytest.raises(ChartError, match="neither a column"):
        chart_csv(path, colour="no-such-colour").png()
    with pytest.raises(ChartError, match="Did you mean 'Milliseconds'"):
        chart_csv(path, y="Millisecond")
    with pytest.raises(ChartError, match="y must be a numeric column: 'Name' is category"):
        chart_csv(path, y="Name")
    with pytest.raises(ChartError, match="Unknown chart kind 'pie'"):
        chart_csv(path, kind="pie")


def test_svg_and_png_sizes_and_formats(ops: OpsContext, tmp_path: Path) -> None:
    chart = chart_of(ops, "chinook", GENRES, "genres.csv", width=640, height=360)
    assert_drawn(chart.save(tmp_path / "g.png").read_bytes(), (640, 360))
    root = ET.parse(chart.save(tmp_path / "g.SVG")).getroot()
    assert (root.get("width"), root.get("height")) == ("460.8pt", "259.2pt")  # 640 x 360 px
    assert chart.svg() == chart.svg()  # no date in it: the same chart, the same bytes
    with pytest.raises(ChartError, match=r"\.png or \.svg"):
        chart.save(tmp_path / "g.jpg")


def test_charts_drawn_at_once_keep_their_style(ops: OpsContext) -> None:
    """Concurrent drawings (MCP calls run in threads) each get the SVG style: text as text."""
    path = result(ops, "chinook", GENRES, "genres.csv")
    with ThreadPoolExecutor(4) as pool:
        svgs = list(pool.map(lambda kind: chart_csv(path, kind=kind).svg(), ["bar", "line"] * 4))
    assert all("<text" in svg and "tracks" in svg for svg in svgs)
    assert_drawn(chart_csv(path, kind="scatter", x="genre").png())  # labels on x, not numbers


def test_answer_chart_titles_from_the_registry_ask_used(ops: OpsContext) -> None:
    script = Script([final(PRICE_VS_LENGTH, "Price and length of every track.")])
    answer = nl2sql.ask("Price against length?", db_id="chinook", model=script.model,
                        config=ops)
    chart = answer.chart()  # no config: the registry ask() used, with its descriptions
    assert (chart.kind, chart.title) == ("scatter", "Price against length?")
    assert chart.titles["UnitPrice"].text() == "UnitPrice — Price of one track (USD)"


# -- the rules, one shape per line ------------------------------------------------------------

RULES = [
    # (CSV text, kind, x, y, colour) ; kind None: no chart
    ("year,revenue\n2021,10\n2022,12\n", "line", "year", ("revenue",), None),
    ("day,a,b\n2024-01-01,1,2\n2024-01-02,3,4\n", "line", "day", ("a", "b"), None),
    ("at,n\n2024-01-01 10:00:00+00,1\n2024-01-01 11:00:00+00,2\n", "line", "at", ("n",), None),
    ("CustomerId,total\n1,10.5\n2,3\n", "bar", "CustomerId", ("total",), None),
    ("zip,customers\n01234,5\n02139,7\n", "bar", "zip", ("customers",), None),  # text: 0-led
    ("x,y,kind\n1,2,a\n3,4,b\n", "scatter", "x", ("y",), "kind"),
    # an aggregate per category (it comes first, one row each, few rows): bars, not 3 points
    ("status,orders,revenue\nnew,1213,306729.94\npaid,1230,308000\nshipped,1277,321000.5\n",
     "bar", "status", ("orders",), None),
    ("kind,x,y\na,1,2\na,3,4\nb,5,6\n", "scatter", "x", ("y",), "kind"),  # kind repeats
    ("first,last,spent,average\nFrank,Harris,10.5,10.5\nFrank,Ralston,28,14\nMark,Taylor,5,5\n",
     "bar", "first", ("spent",), None),  # each row named by first and last together
    ("name,x,y\n" + "".join(f"n{i},{i},{i * i}\n" for i in range(TOP_BARS + 2)),  # many rows
     "scatter", "x", ("y",), None),
    ("revenue,orders\n1200.5,12\n", "card", None, ("revenue", "orders"), None),
    ("name,total\nAC/DC,12\n", "card", "name", ("total",), None),
    ("a,b,c\n1,2,3\n4,5,6\n", None, None, (), None),
    ("n\n1\n2\n", None, None, (), None),
    ("name\n\n", None, None, (), None),
    ("a,b,c,d,e\n1,2,3,4,5\n", None, None, (), None),
]


@pytest.mark.parametrize(("text", "kind", "x", "y", "colour"), RULES)
def test_rules(tmp_path: Path, text: str, kind: str | None, x: str | None,
               y: tuple[str, ...], colour: str | None) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text)
    spec = chart_csv(path).spec
    assert (spec.kind, spec.x, spec.y, spec.colour) == (kind, x, y, colour)
    assert spec.reason


def test_a_column_the_database_typed_as_text_is_a_category(tmp_path: Path) -> None:
    """Zip codes without a leading zero look like numbers: with two number columns that is a
    scatter; the metadata's column types say the zip is text, so it is a bar's labels."""
    path = tmp_path / "r.csv"
    path.write_text("zip,customers\n94110,5\n10001,7\n")
    assert chart_csv(path).spec.kind == "scatter"  # no metadata: by the text
    (tmp_path / "r.metadata.json").write_text(json.dumps({"column_types": ["text", "integer"]}))
    spec = chart_csv(path).spec
    assert (spec.kind, spec.x, spec.y) == ("bar", "zip", ("customers",))


@pytest.mark.parametrize(("choices", "kind", "x", "y"), [
    ({"y": ["a", "b"]}, "line", "day", ("a", "b")),
    ({"y": "b"}, "line", "day", ("b",)),
    ({"x": "region"}, "bar", "region", ("a",)),
    ({"x": "a"}, "scatter", "a", ("b",)),
    ({"kind": "bar"}, "bar", "region", ("a",)),
    ({"kind": "scatter"}, "scatter", "a", ("b",)),
])
def test_choices_fill_the_rest_from_the_shape(tmp_path: Path, choices: dict, kind: str,
                                              x: str, y: tuple[str, ...]) -> None:
    path = tmp_path / "sales.csv"
    path.write_text("day,region,a,b\n2024-01-01,north,1,2\n2024-01-02,south,3,4\n")
    spec = chart_csv(path, **choices).spec
    assert (spec.kind, spec.x, spec.y) == (kind, x, y)


PEOPLE = ("SELECT c.FirstName, c.LastName, round(sum(i.Total), 2) AS spent FROM Customer c "
          "JOIN Invoice i ON i.CustomerId = c.CustomerId WHERE c.FirstName IN ('Frank', 'Mark', "
          "'Luis', 'Jack') GROUP BY c.CustomerId ORDER BY spent DESC")


def test_rows_a_first_name_shares_are_bars_of_their_own(ops: OpsContext) -> None:
    """Two Franks and two Marks: each customer is a bar labelled by both names, in the
    result's order of spending; summed per first name, the two Franks (37.62 + 43.62) were one
    bar above the top customer (Luis Rojas, 46.62)."""
    chart = chart_of(ops, "chinook", PEOPLE, "people.csv")
    assert (chart.kind, chart.spec.x, chart.spec.labels) == ("bar", "FirstName", ("LastName",))
    bars = chart.plot.series[0]
    assert bars.x[:2] == ["Luis Rojas", "Frank Ralston"] and bars.y[:2] == [46.62, 43.62]
    assert {"Frank Harris", "Mark Philips", "Mark Taylor"} <= set(bars.x) and len(bars.x) == 6
    assert chart.describe() == "Bar chart: spent per FirstName and LastName."
    svg = chart.svg()
    assert ">Frank Harris<" in svg and ">FirstName, LastName<" in svg


@pytest.mark.parametrize(("text", "labels", "bars"), [
    # a category that repeats a little, told apart by the next ones: a bar per row
    ("first,last,city,n\nFrank,Harris,Paris,1\nFrank,Harris,Oslo,2\nMark,Taylor,Rome,3\n",
     ("last", "city"), 3),
    # a dimension (each value on half the rows or more): summed per value, as before
    ("genre,country,n\nRock,US,1\nRock,CA,2\nJazz,US,3\nJazz,CA,4\nPop,US,5\nPop,CA,6\n",
     (), 3),
    # no other column tells the rows apart: summed, as before
    ("first,n\nFrank,1\nFrank,2\nMark,3\n", (), 2),
    ("first,last,n\nFrank,Harris,1\nFrank,Harris,2\nMark,Taylor,3\n", (), 2),
    # no repeats: the category alone
    ("first,last,n\nFrank,Harris,1\nMark,Taylor,3\n", (), 2),
])
def test_bar_labels_join_columns_only_to_tell_rows_apart(tmp_path: Path, text: str,
                                                         labels: tuple[str, ...],
                                                         bars: int) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text)
    for chart in (chart_csv(path), chart_csv(path, kind="bar")):
        assert chart.spec.labels == labels and len(chart.plot.series[0].x) == bars
        assert ("summed per" in chart.describe()) == (bars < text.count("\n") - 1)
    assert chart_csv(path, x=text.split(",")[0]).spec.labels == ()  # the caller's x: as asked


def test_free_text_is_no_chart(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_text("note,n\n" + "".join(f"\"{'word ' * 20}{i}\",{i}\n" for i in range(5)))
    assert read_table(path).column("note").kind == "text"
    assert chart_csv(path).reason.startswith("one numeric column (n)")


# -- bounded ----------------------------------------------------------------------------------

def test_the_row_cap_reads_only_the_first_rows_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i * 2}\n" for i in range(1000)))
    monkeypatch.setenv(ENV_CHART_MAX_ROWS, "100")
    chart = chart_csv(path, total_rows=1000)
    assert chart.kind == "scatter" and len(chart.plot.series[0].x) == 100
    assert chart.notes[0] == f"first 100 of 1,000 rows, the row cap {ENV_CHART_MAX_ROWS}"
    assert not chart_csv(path, max_rows=1000).notes  # the whole file: nothing to say
    monkeypatch.setenv(ENV_CHART_MAX_ROWS, "lots")
    with pytest.raises(ConfigError, match=f"{ENV_CHART_MAX_ROWS} must be a positive number"):
        chart_csv(path)


def test_the_base_install_can_draw() -> None:
    """matplotlib is a base dependency: the csv_chart tool every install lists works (it was an
    extra, and the listed tool failed in the base install)."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "matplotlib" in {Requirement(spec).name for spec in project["dependencies"]}
    assert project["optional-dependencies"]["charts"] == []  # kept: '.[charts]' still installs


def test_a_card_shows_the_number_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "one.csv"
    path.write_text("customer,revenue,orders\nACME Corp,1200.5,12\n")
    svg = chart_csv(path).svg()
    assert all(f">{text}<" in svg for text in ("1,200.5", "12", "ACME Corp", "revenue"))


def test_counts_get_whole_ticks(tmp_path: Path) -> None:
    """A line of counts from 1 to 3 got ticks at 0.5, 1.5, 2.5; whole data, whole ticks."""
    path = tmp_path / "per_month.csv"
    path.write_text("month,orders\n2024-01,1\n2024-02,3\n2024-03,2\n2024-04,1\n2024-05,2\n")
    chart = chart_csv(path)
    assert chart.kind == "line"
    labels = {t.text for t in ET.fromstring(chart.svg()).iter("{http://www.w3.org/2000/svg}text")
              if t.text}
    assert {"0", "1", "2", "3"} <= labels and not any(label in labels for label in
                                                       ("0.5", "1.5", "2.5"))
    path.write_text("month,share\n2024-01,0.25\n2024-02,0.75\n2024-03,0.5\n")
    labels = {t.text for t in ET.fromstring(chart_csv(path).svg()).iter(
        "{http://www.w3.org/2000/svg}text") if t.text}
    assert "0.5" in labels  # fractions keep fractional ticks
