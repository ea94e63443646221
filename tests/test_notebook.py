"""examples/ask.ipynb runs top to bottom (nbclient, a real kernel) against the local
OpenAI-compatible stub: what a person sees in Jupyter, where an event loop already runs."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from stub_openai import MODEL_STRING, StubOpenAI, tool_call

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "ask.ipynb"
GENRES = "SELECT genre, count(*) AS books FROM books GROUP BY genre ORDER BY books DESC, genre"


def test_the_example_notebook_runs(tmp_path: Path, stub_openai: StubOpenAI,
                                   monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("NL2SQL_MODEL", MODEL_STRING)
    monkeypatch.setenv("NL2SQL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NL2SQL_WORKSPACE", str(tmp_path / "ws"))
    stub_openai.add(tool_call("final_result", sql=GENRES, explanation="Books per genre."))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [{**o.get("data", {}), "text": o.get("text", "")} for cell in notebook.cells[2:]
               for o in cell.outputs if "data" in o or o.get("name") == "stdout"]
    streams = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
               if o.get("name") == "stderr"]
    assert not streams, streams  # no warnings or logs in a person's notebook
    rendered = outputs[0]
    assert "```sql" in rendered["text/markdown"] and GENRES in rendered["text/markdown"]
    assert "| genre | books |" in rendered["text/markdown"]
    assert "<table" in outputs[1]["text/html"]  # answer.df
    printed = outputs[2]["text"]
    assert GENRES in printed and str(tmp_path / "ws") in printed and "error" not in printed
    assert len(stub_openai.requests) == 1
