"""Label arrays (``TEXT[]`` tags, Pagila's ``film.special_features``): annotation screens their
elements as a column's values (enum values, domain, the value index), the schema lists them as
elements, and a question naming one gets a hint written as the dialect finds an element
(``'x' = ANY(t.c)``, ``ARRAY_CONTAINS(t.c, 'x')``) that runs and finds the rows. On PostgreSQL,
DuckDB (unnest) and Spark (explode), a table read whole and one read through its first rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import duckdb_config, mysql_db, pg_config, spark_db
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.context_engine.engine import ContextEngine
from nl2sql.inspection.statistics import EnumScreeningSettings
from nl2sql.annotation.pipeline import AnnotateOptions
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.schema.formatting import format_schema
from nl2sql.schema.models import label_array_element

FEATURES = ("Trailers", "Commentaries", "Deleted Scenes", "Behind the Scenes")


def _script(array_type: str, array: Callable[[list[str]], str]) -> str:
    rows = []
    for i in range(1, 201):
        features = [FEATURES[i % 4]] + ([FEATURES[(i + 1) % 4]] if i % 3 else [])
        rows.append(f"({i}, 'Film {i}', {array(features)}, {array(['t' + str(i)])})")
    return (f"CREATE TABLE film (film_id integer PRIMARY KEY, title text, "
            f"special_features {array_type}, codes {array_type});\n"
            f"INSERT INTO film VALUES {', '.join(rows)};")


@pytest.fixture(params=["postgres", "duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def films(request: pytest.FixtureRequest, tmp_path: Path,
          make_registry: Callable[..., DbConnectionConfigs]) -> Iterator[OpsContext]:
    quoted = lambda items: ", ".join("'" + item + "'" for item in items)  # noqa: E731
    if request.param == "postgres":
        script = _script("text[]", lambda items: f"ARRAY[{quoted(items)}]")
        config: DbConnectionConfig = pg_config(
            "films", request.getfixturevalue("pg_database")(script=script))
    elif request.param == "spark":
        script = _script("ARRAY<STRING>", lambda items: f"array({quoted(items)})").replace(
            "integer PRIMARY KEY, title text", "INT, title STRING").replace(
            "codes ARRAY<STRING>);", "codes ARRAY<STRING>) USING parquet;")
        config = spark_db(request, "films", script=script).config
    else:
        import duckdb
        path = tmp_path / "films.duckdb"
        with duckdb.connect(str(path)) as conn:
            conn.execute(_script("VARCHAR[]", lambda items: f"[{quoted(items)}]"))
        config = duckdb_config("films", path)
    registry = make_registry(config)
    ops = OpsContext(registry)
    yield ops
    ops.close()


def _annotate(ops: OpsContext, **settings: int) -> None:
    options = AnnotateOptions(enums=EnumScreeningSettings(**settings)) if settings else None
    annotate_database(ops.config("films"), ops.data_dir, options=options)


def _count(ops: OpsContext, condition: str) -> int:
    result = db_execute_sql_op(ops, "films", f"SELECT count(*) AS n FROM film WHERE {condition}")
    return int((ops.workspace_root / result.csv_filename).read_text().split()[1])


@pytest.mark.parametrize("big", [False, True], ids=["whole table", "first rows"])
def test_the_elements_of_a_label_array_are_its_values(films: OpsContext, big: bool) -> None:
    _annotate(films, **({"sample_threshold_rows": 50, "sample_size": 120} if big else {}))
    info = films.db_info("films")
    features = info.table("film").column("special_features")
    assert label_array_element(features.data_type)
    assert features.is_enum and sorted(features.enum_values) == sorted(FEATURES)
    assert (features.domain_values is None) == big  # a domain is read from the whole table
    codes = info.table("film").column("codes")  # 200 distinct elements: no enum, no domain
    assert not codes.is_enum and codes.domain_values is None
    line = next(line for line in format_schema(info).splitlines()
                if line.lstrip().startswith("special_features"))
    listed = line.split("-- elements [")[1].rstrip("]").split(", ")
    assert sorted(listed) == sorted(FEATURES)

    context = ContextEngine(films.registry).context(
        "How many films have deleted scenes?", db_id="films")
    hint = next(h for h in context.value_hints if h.value == "Deleted Scenes")
    condition = hint.render().split("  -- ")[0]
    assert condition == ("'Deleted Scenes' = ANY(film.special_features)"
                         if films.config("films").type == "postgres"
                         else "ARRAY_CONTAINS(film.special_features, 'Deleted Scenes')")
    expected = sum(1 for i in range(1, 201)
                   if "Deleted Scenes" in (FEATURES[i % 4], FEATURES[(i + 1) % 4] if i % 3
                                           else None))
    assert _count(films, condition) == expected > 0
    # A misspelt element finds nothing: the result says which elements the column holds.
    typo = condition.replace("Deleted Scenes", "Deleted Scene")
    result = db_execute_sql_op(films, "films", f"SELECT title FROM film WHERE {typo}")
    assert result.row_count == 0
    assert result.hint == ("'Deleted Scene' is not a value of film.special_features the schema "
                           f"cache knows ({', '.join(features.enum_values)}): did you mean "
                           "'Deleted Scenes'?")


def test_a_mysql_set_column_is_tested_element_by_element(
        request: pytest.FixtureRequest, make_registry: Callable[..., DbConnectionConfigs]) -> None:
    """A SET holds ``'Trailers,Deleted Scenes'``: ``= 'Trailers'`` finds none of those rows
    (the hint the model was given), ``FIND_IN_SET('Trailers', ...) > 0`` all."""
    rows = ", ".join(f"({i}, 'Film {i}', '{FEATURES[i % 4]},{FEATURES[(i + 1) % 4]}')"
                     for i in range(1, 41))
    db = mysql_db(request, "films", script=(
        "CREATE TABLE film (film_id int PRIMARY KEY, title varchar(40), special_features "
        "SET('Trailers','Commentaries','Deleted Scenes','Behind the Scenes'));\n"
        f"INSERT INTO film VALUES {rows}"))
    ops = OpsContext(make_registry(db.config))
    try:
        _annotate(ops)
        assert "-- elements [Trailers, Commentaries, Deleted Scenes, Behind the Scenes]" in \
            format_schema(ops.db_info("films"))
        context = ContextEngine(ops.registry).context("films with trailers", db_id="films")
        condition = context.value_hints[0].render().split("  -- ")[0]
        assert condition == "FIND_IN_SET('Trailers', film.special_features) > 0"
        assert _count(ops, condition) == 20
        assert _count(ops, "film.special_features = 'Trailers'") == 0
        result = db_execute_sql_op(ops, "films", "SELECT title FROM film WHERE "
                                   "FIND_IN_SET('Trailer', special_features) > 0")
        assert result.row_count == 0 and "did you mean 'Trailers'?" in (result.hint or "")
    finally:
        ops.close()
