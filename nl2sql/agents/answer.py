"""``Answer``: what ``nl2sql.ask()`` returns, with the result as a pandas DataFrame, and how it
renders in a notebook (the SQL, the explanation, the first rows and its receipt).

The receipt is what made the answer: the context the model was shown (``context``), the
``models``, ``usage``, ``cost_usd``, ``latency_ms``, the ``schema_fingerprint`` of the cache it
was made with, and ``source``: ``"model"``, ``"verified:<id>"`` (a verified answer run again,
no model request) or ``"metric:<names>"`` (a governed metric query: compiled SQL, chosen by
the model or asked for with ``nl2sql.query_metrics()``)."""

from __future__ import annotations

from datetime import tzinfo
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from nl2sql.context_engine.prompt_context import UsedContext
from nl2sql.llm.usage import format_cost
from nl2sql.schema.models import StepUsage
from nl2sql.workspace import column_types
from nl2sql.workspace.csv_dialect import ISO_DATETIME, NUMBER, float_text
from nl2sql.workspace.preview import preview_numbers
from nl2sql.workspace.results import new_result_id, types_beside
from nl2sql.operations.verified_api import accept
from nl2sql.agents.chart_answer import chart_answer

if TYPE_CHECKING:
    from nl2sql.charts import Chart

NOTEBOOK_ROWS = 10
#: How the CSV dialect writes booleans (``csv_dialect``), and back.
_BOOLEANS = {"t": True, "f": False}


class Attempt(BaseModel):
    """One SQL the agent ran and the database's error (None: it ran)."""

    sql: str
    error: str | None = None


class SqlCandidate(BaseModel):
    """One of the answer's SQL candidates: its final SQL (None: it produced none), the error
    that ended it (None: it ran), the result group it fell in (1 = the largest; None: failed),
    its row count, and whether it is the answer."""

    sql: str | None = None
    error: str | None = None
    group: int | None = None
    row_count: int | None = None
    chosen: bool = False
    generator: str | None = None  # the prompt style that produced it
    model: str | None = None


class Answer(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str = Field(default_factory=new_result_id)  # also the result metadata's "id"
    question: str
    db_id: str
    sql: str
    explanation: str
    df: Any = Field(default=None, exclude=True, repr=False)  # pandas.DataFrame
    csv_path: str
    row_count: int
    truncated: bool = False
    attempts: list[Attempt] = Field(default_factory=list)
    usage: StepUsage = Field(default_factory=StepUsage)  # requests, input and output tokens
    conversation_id: str | None = None
    # share of the candidates in the chosen result group (None: one candidate)
    confidence: float | None = None
    candidates: list[SqlCandidate] = Field(default_factory=list)
    selection_reason: str | None = None  # why the chosen group won a tie (the selection step)
    cost_usd: float | None = None  # genai-prices for the models used; None when unpriced
    latency_ms: int | None = None  # wall time of the whole answer
    context: UsedContext = Field(default_factory=UsedContext)  # what the model was shown
    models: list[str] = Field(default_factory=list)  # provider:name of the models that answered
    schema_fingerprint: str | None = None  # of the schema cache the answer was made with
    #: "model", "verified:<id>" (a verified answer run again) or "metric:<names>" (compiled
    #: from the semantic model)
    source: str = "model"
    #: The registry ``ask()`` used (its data dir and workspace): what ``accept()`` uses.
    _registry: Any = PrivateAttr(default=None)

    def accept(self, *, config: Any = None) -> Any:
        """Mark this answer right: its SQL is run again (it must still run) and kept as a
        verified answer, reused for the same question and shown first for similar ones.
        ``config``: default the registry ``ask()`` used."""
        return accept(self.id, config=config if config is not None else self._registry)

    def receipt_line(self, *, usage: bool = True) -> str:
        """One line for people: where the answer came from and what it took (``usage``:
        with the requests, tokens and cost, which ``nl2sql-ask`` prints on a line of its own)."""
        if self.source.startswith("verified:"):
            source = "a verified answer, run again on today's data (no model request)"
        elif self.source.startswith("metric:"):
            chosen = f", chosen by model {', '.join(self.models)}" if self.models else \
                " (no model request)"
            source = f"governed metric {self.source.removeprefix('metric:')}{chosen}"
        else:
            source = f"model {', '.join(self.models) or '?'}"
        cost = "" if self.cost_usd is None else f", {format_cost(self.cost_usd)}"
        spent = (f"{self.usage.requests} request(s), "
                 f"{self.usage.input_tokens + self.usage.output_tokens:,} tokens{cost}, "
                 if usage else "")
        latency = "?" if self.latency_ms is None else f"{self.latency_ms:,} ms"
        shown = self.context
        return (f"id {self.id}; source: {source} ({self.source}); {spent}{latency}; "
                f"shown {len(shown.tables)} table(s), "
                f"{len(shown.value_hints)} value hint(s), {len(shown.examples)} example(s), "
                f"{len(shown.glossary)} glossary term(s); schema "
                f"{self.schema_fingerprint or '?'}")

    def to_json_dict(self) -> dict[str, Any]:
        """Every field as JSON values; ``df`` as a list of row objects."""
        import pandas as pd

        data = self.model_dump(mode="json")
        if self.df is None:
            data["df"] = []
            return data
        values = self.df.astype(object).where(self.df.notna(), None)
        for i, kind in enumerate(self.df.dtypes):
            if pd.api.types.is_datetime64_any_dtype(kind):  # as the table writes them
                texts = [text or None for text in _texts(self.df.iloc[:, i])]
                values.isetitem(i, pd.Series(texts, index=values.index, dtype=object))
        data["df"] = values.to_dict(orient="records")
        return data

    def chart(self, kind: str | None = None, x: str | None = None,
              y: str | list[str] | None = None, *, colour: str | None = None,
              title: str | None = None, config: Any = None, **size: int) -> Chart:
        """The result as a chart (``nl2sql.charts``): its kind chosen from the result's shape
        unless ``kind`` / ``x`` / ``y`` / ``colour`` say otherwise; shows in a notebook,
        ``.save("out.png" | "out.svg")``. ``config`` (default: the registry ``ask()`` used)
        finds the annotated schema for axis titles. ``width`` / ``height`` in pixels
        (800 x 450).

        Example:
            >>> nl2sql.ask("Tracks per genre").chart().save("genres.png")
        """
        return chart_answer(self.csv_path, question=self.question, db_id=self.db_id,
                            sql=self.sql, row_count=self.row_count, title=title,
                            config=config if config is not None else self._registry,
                            kind=kind, x=x, y=y, colour=colour, **size)

    def _repr_markdown_(self) -> str:
        lines = [f"**{self.question}** ({self.db_id})", "", "```sql", self.sql.strip(), "```", "",
                 self.explanation, ""]
        lines += markdown_table(self.df, NOTEBOOK_ROWS)
        more = "" if self.row_count <= NOTEBOOK_ROWS else \
            f"first {NOTEBOOK_ROWS} of {self.row_count:,} rows; "
        lines += ["", f"*{more}{self.row_count:,} rows in {self.csv_path}; "
                      f"{len(self.attempts)} attempt(s), {self.usage.requests} model request(s)*"]
        if self.confidence is not None:
            lines += ["", f"**Confidence: {self.agreement_line()}**"]
        lines += ["", f"<sub>{self.receipt_line()}</sub>"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The notebook rendering (Jupyter prefers HTML): the SQL, the explanation, a table of
        the first rows and the counts; every value escaped."""
        more = "" if self.row_count <= NOTEBOOK_ROWS else \
            f"first {NOTEBOOK_ROWS} of {self.row_count:,} rows; "
        table = "" if self.df is None or not len(self.df.columns) else \
            self.df.head(NOTEBOOK_ROWS).to_html(index=False, border=0, na_rep="")
        parts = [f"<p><b>{escape(self.question)}</b> ({escape(self.db_id)})</p>",
                 f"<pre><code class=\"language-sql\">{escape(self.sql.strip())}</code></pre>",
                 f"<p>{escape(self.explanation)}</p>", table,
                 f"<p><i>{more}{self.row_count:,} rows in {escape(str(self.csv_path))}; "
                 f"{len(self.attempts)} attempt(s), {self.usage.requests} model request(s)</i></p>"]
        if self.confidence is not None:
            parts.append(f"<p><b>Confidence: {escape(self.agreement_line())}</b></p>")
        parts.append(f"<p><small>{escape(self.receipt_line())}</small></p>")
        return "\n".join(part for part in parts if part)

    def agreement_line(self) -> str:
        """How many candidates agree: ``3 of 5 candidates agree (60%), 1 other result(s), 1
        failed`` (with one candidate: ``one candidate``)."""
        if self.confidence is None:
            return "one candidate"
        agree = sum(1 for c in self.candidates if c.group == 1)
        failed = sum(1 for c in self.candidates if c.error)
        others = len({c.group for c in self.candidates if c.group not in (None, 1)})
        return (f"{agree} of {len(self.candidates)} candidates agree ({self.confidence:.0%})"
                + (f", {others} other result(s)" if others else "")
                + (f", {failed} failed" if failed else ""))

    def __str__(self) -> str:
        return self._repr_markdown_()


def markdown_table(df: Any, rows: int) -> list[str]:
    """The first ``rows`` rows of a DataFrame as Markdown table lines (none without columns),
    numbers written as the MCP preview writes them (``preview_numbers``)."""
    if df is None or not len(df.columns):
        return []
    head = df.head(rows)
    columns = [_texts(head.iloc[:, i]) for i in range(len(head.columns))]
    cells = preview_numbers([list(row) for row in zip(*columns)])
    lines = ["| " + " | ".join(_cell(str(c)) for c in head.columns) + " |",
             "|" + "---|" * len(head.columns)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in cells]
    return lines


def _texts(column: Any) -> list[str]:
    """A column's cells as text: booleans as the CSV writes them (``t`` / ``f``), datetimes as
    pandas shows them (dates only when every one shown is at midnight), a missing one empty."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(column.dtype):  # as the CSV and the MCP preview write them
        return ["" if pd.isna(v) else "t" if v else "f" for v in column]
    if not pd.api.types.is_datetime64_any_dtype(column.dtype):
        return ["" if pd.isna(v) else _text(v) for v in column]  # None, NaN, <NA>
    present = column.dropna()
    dates = bool((present == present.dt.normalize()).all())
    return ["" if pd.isna(v) else v.strftime("%Y-%m-%d") if dates else str(v) for v in column]


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return float_text(value) if isinstance(value, float) else str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def read_dataframe(csv_path: Path, max_rows: int) -> Any:
    """The first ``max_rows`` rows of a result CSV as a DataFrame, each column of the type the
    database gave it (``column_types`` in the metadata beside the CSV): integers as nullable
    integers, numbers as floats, booleans, dates and timestamps as datetimes, text as text
    however numeric it looks (a zip code); empty cells are missing values. A column of no
    known type (an older result, a PostgreSQL enum) is read by its text: numbers as the CSV
    dialect writes them (a value such as ``01234``, ``1e5`` or ``true`` makes the column
    text), ``t`` / ``f`` as booleans, ISO dates as datetimes. A column whose values do not fit
    its type is read by its text too."""
    import pandas as pd

    df = pd.read_csv(csv_path, nrows=max_rows, keep_default_na=False, na_values=[""],
                     dtype=str)
    types, zone = types_beside(csv_path, len(df.columns))
    for i, column_type in enumerate(types):
        df.isetitem(i, _typed(df.iloc[:, i], column_type, zone))
    return df


def _typed(texts: Any, column_type: str | None, zone: tzinfo | None = None) -> Any:
    """One column, read as text, as ``column_type``; by what its text says when the type is
    None or its values do not fit it. ``zone``: the time zone the database wrote timestamps
    with offsets in."""
    import pandas as pd

    values = texts.dropna()
    is_booleans = bool(len(values)) and bool(values.isin(_BOOLEANS).all())
    try:
        if column_type == column_types.INTEGER:
            return pd.to_numeric(texts).astype("Int64")
        if column_type == column_types.NUMBER:
            return texts.astype("float64")
        if column_type in (column_types.DATE, column_types.TIMESTAMP):
            return _datetimes(texts, zone)
    except (ValueError, TypeError, OverflowError):
        return _typed(texts, None, zone)
    if column_type == column_types.TEXT:
        return _dates(texts, values, zone)
    if column_type == column_types.BINARY:
        return texts
    if is_booleans and column_type in (None, column_types.BOOLEAN):
        kind = "bool" if len(values) == len(texts) else "boolean"  # the latter holds NA
        return texts.map(_BOOLEANS).astype(kind)
    # No known type: numbers only when every value is one the dialect writes.
    if values.str.fullmatch(NUMBER.pattern).all():
        try:
            return pd.to_numeric(texts)
        except ValueError:  # NaN, Infinity
            return texts.astype("float64")
    return _dates(texts, values, zone)


def _dates(texts: Any, values: Any, zone: tzinfo | None) -> Any:
    """ISO dates and timestamps as datetimes (SQLite keeps dates as text), else the text."""
    if len(values) and values.str.fullmatch(ISO_DATETIME.pattern).all():
        try:
            return _datetimes(texts, zone)
        except (ValueError, TypeError, OverflowError):
            pass
    return texts


def _datetimes(texts: Any, zone: tzinfo | None) -> Any:
    """ISO dates and timestamps as datetimes. Timestamps with a UTC offset in ``zone``, the
    time zone the database wrote them in (its session's: PostgreSQL ``timestamptz``), so that
    they read as the CSV writes them whether or not summer time changed the offset; without a
    zone, offsets that differ as the same instants in UTC, which one column can hold."""
    import pandas as pd

    try:
        parsed = pd.to_datetime(texts, format="ISO8601")
    except ValueError:  # offsets that differ
        parsed = pd.to_datetime(texts, format="ISO8601", utc=True)
    if zone is not None and getattr(parsed.dt, "tz", None) is not None:
        return parsed.dt.tz_convert(zone)
    return parsed
