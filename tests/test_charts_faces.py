"""Charts through their faces: the MCP tool ``csv_chart`` in an in-memory client session
(image content), the agent tool, ``nl2sql-ask --chart`` (a real child process against the
stub model), ``Answer.chart()`` in a notebook run by nbclient, and start-up without matplotlib."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import anyio
import nbformat
import pytest
from mcp import Client
from nbclient import NotebookClient
from PIL import Image
from pydantic_ai import ModelRetry
from stub_openai import MODEL_STRING, StubOpenAI, tool_call

from conftest import IN_CI, build_cache, sqlite_config, write_dbs_yaml
from nl2sql.agents.tools import PinnedDeps, run_operation, tools_for
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.registry import operation

ROOT = Path(__file__).resolve().parent.parent
NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
NOTEBOOK = ROOT / "examples" / "charts.ipynb"
GENRES = ("SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g "
          "ON g.GenreId = t.GenreId GROUP BY g.Name ORDER BY tracks DESC")
BOOK_GENRES = ("SELECT genre, count(*) AS books FROM books GROUP BY genre "
               "ORDER BY books DESC, genre")
MONTHS = ("SELECT strftime('%Y-%m', InvoiceDate) AS month, sum(Total) AS revenue FROM Invoice "
          "GROUP BY month ORDER BY month")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, sqlite_samples: dict[str, Path]) -> Path:
    """Chinook (SQLite) in a dbs.yaml with its schema cache, built once."""
    folder = tmp_path_factory.mktemp("chart_faces")
    shutil.copyfile(sqlite_samples["chinook"], folder / "chinook.sqlite")
    path = write_dbs_yaml(folder, [sqlite_config("chinook", folder / "chinook.sqlite")])
    build_cache(DbConnectionConfigs.load(path).get("chinook"),
                DbConnectionConfigs.load(path).data_dir)
    return folder


@pytest.fixture
def config(tmp_path: Path, template: Path) -> Path:
    folder = tmp_path / "setup"
    shutil.copytree(template, folder)
    path = folder / "dbs.yaml"
    path.write_text(path.read_text().replace(str(template), str(folder)))
    return path


# -- MCP --------------------------------------------------------------------------------------

async def test_csv_chart_answers_a_png_and_one_line(config: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    server = build_server(config, workspace=workspace)
    async with Client(server) as client:
        saved = await client.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": GENRES, "output_file": "genres.csv",
            "nl_query": "How many tracks per genre?"})
        assert not saved.is_error
        result = await client.call_tool("csv_chart", {"csv_file": "genres.csv"})
        line = await client.call_tool("csv_chart", {"csv_file": "genres.csv", "kind": "line",
                                                    "x": "genre"})
        refused = await client.call_tool("csv_chart", {"csv_file": "../outside.csv"})
        bad_y = await client.call_tool("csv_chart", {"csv_file": "genres.csv", "y": "genre"})
        text_only = await client.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": "SELECT Name FROM Artist", "output_file": "names.csv"})
        no_chart = await client.call_tool("csv_chart", {"csv_file": "names.csv"})
    assert not text_only.is_error
    assert not result.is_error
    image, text = result.content
    assert image.type == "image" and image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert Image.open(io.BytesIO(png)).size == (800, 450)
    assert text.type == "text" and "\n" not in text.text
    assert text.text.startswith("Bar chart: tracks per genre (the 12 largest of 25 genre")
    assert text.text.endswith("Saved as genres.chart.png.")
    assert (workspace / "genres.chart.png").read_bytes() != b""
    assert not line.is_error and line.content[1].text.startswith("Line chart")
    assert (workspace / "genres.chart.png").read_bytes() != png  # the line replaced the bar
    assert refused.is_error and "leaves the workspace" in refused.content[0].text
    assert bad_y.is_error and "y must be a numeric column: 'genre'" in bad_y.content[0].text
    assert no_chart.is_error
    assert "No chart for names.csv: no numeric column to plot" in no_chart.content[0].text
    assert not (workspace / "names.chart.png").exists()


MONTHLY_REVENUE = {
    "sqlite": "SELECT date(InvoiceDate, 'start of month') AS month, sum(Total) AS revenue "
              "FROM Invoice GROUP BY 1 ORDER BY 1",
    "postgres": "SELECT date_trunc('month', invoice_date) AS month, sum(total) AS revenue "
                "FROM invoice GROUP BY 1 ORDER BY 1",  # timestamps as COPY writes them
}


async def test_csv_chart_on_each_backend(chinook, make_registry) -> None:  # noqa: ANN001
    """The chinook fixture runs on SQLite and PostgreSQL (conftest's default backends)."""
    registry = make_registry(chinook.config)
    build_cache(chinook.config, registry.data_dir)
    server = build_server(registry.config_path, workspace=registry.workspace)
    async with Client(server) as client:
        saved = await client.call_tool("db_execute_sql", {
            "db_id": chinook.config.db_id, "query": MONTHLY_REVENUE[chinook.backend],
            "output_file": "revenue.csv"})
        assert not saved.is_error, saved.content[0].text
        result = await client.call_tool("csv_chart", {"csv_file": "revenue.csv"})
    assert not result.is_error, result.content[0].text
    image, text = result.content
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (800, 450)
    assert text.text == "Line chart: revenue over month. Saved as revenue.chart.png."


async def test_csv_chart_is_short_in_tools_list(tmp_path: Path) -> None:
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    async with Client(server) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "csv_chart")
    assert set(tool.input_schema["properties"]) == {"csv_file", "kind", "x", "y"}
    assert tool.input_schema["required"] == ["csv_file"]
    assert len(json.dumps(tool.model_dump(exclude_none=True))) < 1400
    assert tool.annotations.read_only_hint is False and tool.annotations.idempotent_hint


def test_pinned_agent_tool_charts_its_own_results_only(config: Path, tmp_path: Path) -> None:
    ops = OpsContext.load(config, workspace=tmp_path / "ws")
    tool = next(t for t in tools_for("nl2sql") if t.name == "csv_chart")
    try:
        anyio.run(run_operation, operation("db_execute_sql"), ops,
                  {"db_id": "chinook", "query": MONTHS, "output_file": "m.csv"})
        text = anyio.run(partial(tool.function, SimpleNamespace(
            deps=PinnedDeps(ops=ops, db_id="chinook")), csv_file="m.csv"))
        with pytest.raises(ModelRetry, match="not a result of the database bookstore"):
            anyio.run(partial(tool.function, SimpleNamespace(
                deps=PinnedDeps(ops=ops, db_id="bookstore")), csv_file="m.csv"))
    finally:
        ops.close()
    assert text == "Line chart: revenue over month. Saved as m.chart.png."
    assert (tmp_path / "ws" / "m.chart.png").is_file()


# -- nl2sql-ask --chart -----------------------------------------------------------------------

def ask_cli(config: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NL2SQL_CONFIG": str(config), "NL2SQL_WORKSPACE": str(workspace)}
    return subprocess.run([str(NL2SQL_ASK), *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_ask_chart_writes_valid_svg(config: Path, tmp_path: Path,
                                    stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("final_result", sql=MONTHS, explanation="Revenue per month."))
    out = tmp_path / "out.svg"
    done = ask_cli(config, tmp_path / "ws", "Revenue per month?", "--db", "chinook",
                   "--model", MODEL_STRING, "--chart", str(out))
    assert done.returncode == 0, done.stderr
    assert f"chart: Line chart: revenue over month. Saved as {out}." in done.stdout
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "Revenue per month?" in texts and "revenue" in texts  # title, y axis


def test_ask_chart_refuses_other_formats_before_asking(config: Path, tmp_path: Path,
                                                       stub_openai: StubOpenAI) -> None:
    done = ask_cli(config, tmp_path / "ws", "Revenue?", "--model", MODEL_STRING,
                   "--chart", "out.jpg")
    assert done.returncode == 2 and "ending in .png or .svg" in done.stderr
    assert not stub_openai.requests


def test_ask_chart_of_a_shape_without_chart_is_a_note(config: Path, tmp_path: Path,
                                                      stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("final_result", sql="SELECT Name FROM Artist LIMIT 3",
                              explanation="Three artists."))
    done = ask_cli(config, tmp_path / "ws", "Some artists?", "--db", "chinook", "--json",
                   "--model", MODEL_STRING, "--chart", str(tmp_path / "a.png"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["row_count"] == 3  # stdout stays one JSON object
    assert "no chart: no numeric column to plot: Name is text" in done.stderr
    assert not (tmp_path / "a.png").exists()


# -- the notebook -----------------------------------------------------------------------------

def test_the_charts_notebook_shows_charts_offline(tmp_path: Path, stub_openai: StubOpenAI,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NL2SQL_MODEL", MODEL_STRING)
    monkeypatch.setenv("NL2SQL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NL2SQL_WORKSPACE", str(tmp_path / "ws"))
    stub_openai.add(tool_call("final_result", sql=BOOK_GENRES, explanation="Books per genre."))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.get("name") == "stderr"], outputs
    images = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    sizes = [Image.open(io.BytesIO(base64.b64decode(png))).size for png in images]
    assert sizes == [(800, 450), (600, 340)]  # inline PNGs: no script, no URL to fetch
    printed = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    assert "Bar chart: books per genre" in printed
    assert ET.parse(tmp_path / "genres.svg").getroot().tag.endswith("svg")
    data = json.dumps([o.get("data", {}) for o in outputs])
    assert "http://" not in data and "https://" not in data
    assert len(stub_openai.requests) == 1


# -- start-up -------------------------------------------------------------------------------

def test_import_and_server_start_do_not_load_the_charts() -> None:
    """matplotlib (~0.4 s) loads when a chart is drawn; the charts package when one is made."""
    code = ("import sys, nl2sql, nl2sql.mcp.server, nl2sql.operations.registry;"
            "print('matplotlib' in sys.modules, 'nl2sql.charts' in sys.modules);"
            "import nl2sql.charts; print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.split("\n")[:2] == ["False False", "False"]


# -- in a browser ---------------------------------------------------------------------------

def test_chart_svg_shows_in_headless_chromium(tmp_path: Path) -> None:
    """scripts/chart_screenshot.py (which made docs/charts-screenshot.png): the SVG inline in
    a page, opened in headless Chromium, shows the bars."""
    from chart_screenshot import chromium, screenshot

    browser = chromium()
    if browser is None:
        reason = "headless Chromium is not installed (Debian: apt-get install chromium)"
        if IN_CI:
            pytest.fail(f"{reason}; .ci/run installs it.")
        pytest.skip(reason)
    image = Image.open(screenshot(tmp_path / "shot.png", browser)).convert("RGB")
    assert image.size == (800, 900)  # two 800 x 450 charts
    colours = image.getcolors(maxcolors=800 * 900)
    bars = sum(count for count, rgb in colours if rgb == (31, 119, 180))  # matplotlib's C0
    assert bars > 20_000, f"only {bars} pixels of bar colour: the SVG did not render"
