"""db_list / db_show_schema over real caches (SQLite and Postgres), and csv_head / csv_tail."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from nl2sql.schema.cache import cache_path, save_db_info
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.db.base import create_connection
from nl2sql.errors import SchemaCacheMissingError, UnknownDatabaseError, WorkspacePathError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.schema.models import AnnotationRun
from nl2sql.operations import OpsContext, csv_head_op, csv_tail_op, db_list_op, db_show_schema_op
from nl2sql.operations import csv_files
from nl2sql.operations.csv_files import read_head, read_tail


def build_cache(config, data_dir: Path, **updates: object) -> None:  # noqa: ANN001
    connection = create_connection(config)
    try:
        info = DbSchemaExtractor(connection).extract(config.db_id)
    finally:
        connection.dispose()
    for key, value in updates.items():
        setattr(info, key, value)
    save_db_info(info, data_dir)


@pytest.fixture
def ctx(tmp_path: Path) -> OpsContext:
    return OpsContext(DbConnectionConfigs.load(None, data_dir=tmp_path / "data",
                                               workspace=tmp_path / "workspace"))


# -- db_list / db_show_schema -------------------------------------------------------------

def test_db_list_reads_caches_not_catalogs(chinook, northwind, make_registry,  # noqa: ANN001
                                           tmp_path: Path) -> None:
    registry = make_registry(chinook.config, northwind.config)
    build_cache(chinook.config, registry.data_dir, description="A digital music store.",
                annotation_runs=[AnnotationRun(model="test")])
    ctx = OpsContext(registry)
    listed = {db.db_id: db for db in db_list_op(ctx).databases}
    assert set(listed) == {"chinook", "northwind", "bookstore"}
    music = listed["chinook"]
    assert (music.type, music.table_count, music.cached, music.annotated) == (
        chinook.backend, 11, True, True)
    assert music.description == "A digital music store."
    assert listed["northwind"].cached is False and listed["northwind"].table_count is None
    text = db_list_op(ctx).render()
    assert "chinook (" in text and "11 tables" in text
    assert "annotate-schema northwind" in text
    # The catalog is never read: the list still works with the database gone.
    if chinook.backend == "sqlite":
        chinook.config.path.unlink()
    else:
        from conftest import _drop_database  # noqa: PLC0415

        _drop_database(chinook.pg_dbname)
    ctx.close()
    assert {db.db_id: db for db in db_list_op(OpsContext(registry)).databases}[
        "chinook"].table_count == 11


def test_db_list_structure_only_and_unreadable_cache(northwind,  # noqa: ANN001
                                                     make_registry) -> None:  # noqa: ANN001
    registry = make_registry(northwind.config)
    build_cache(northwind.config, registry.data_dir)
    summary = next(db for db in db_list_op(OpsContext(registry)).databases
                   if db.db_id == "northwind")
    assert summary.cached and not summary.annotated
    assert summary.table_count == (13 if northwind.backend == "sqlite" else 14)
    assert "not annotated" in summary.render()
    cache_path(registry.data_dir, "northwind").write_text("{broken", encoding="utf-8")
    broken = next(db for db in db_list_op(OpsContext(registry)).databases
                  if db.db_id == "northwind")
    assert not broken.cached and "annotate-schema northwind" in (broken.problem or "")


def test_db_show_schema_from_cache(chinook, make_registry) -> None:  # noqa: ANN001
    registry = make_registry(chinook.config)
    ctx = OpsContext(registry)
    with pytest.raises(SchemaCacheMissingError, match="annotate-schema chinook"):
        db_show_schema_op(ctx, "chinook")
    build_cache(chinook.config, registry.data_dir)
    text = db_show_schema_op(ctx, "chinook").render()
    assert "CREATE TABLE" in text
    assert chinook.table("invoice_line") in text and chinook.table("track") in text
    with pytest.raises(UnknownDatabaseError, match="Known databases: bookstore, chinook"):
        db_show_schema_op(ctx, "chinok")


# -- csv_head / csv_tail ------------------------------------------------------------------

def write_csv(path: Path, rows: list[list[str]], *, lineterminator: str = "\r\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator=lineterminator).writerows(rows)


TRICKY = [
    ["plain", "x"],
    ["multi\nline", 'with "quotes"'],
    ["", "trailing newline\n"],
    ['"', '""\n"'],
    ["comma, inside", "crlf\r\nin field"],
    ["ünïcödé ☃", "日本語"],
    ["\n\n\n", "x"],
]


@pytest.mark.parametrize("lineterminator", ["\r\n", "\n"])
@pytest.mark.parametrize("block", [1, 3, 7, 64 * 1024])
def test_tail_handles_quoted_newlines_across_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    lineterminator: str, block: int) -> None:
    monkeypatch.setattr(csv_files, "_BLOCK", block)
    rows = [["id", "a", "b"]] + [[str(i), *TRICKY[i % len(TRICKY)]] for i in range(40)]
    path = tmp_path / "tricky.csv"
    write_csv(path, rows, lineterminator=lineterminator)
    for n in (1, 2, 5, 13, 40, 41, 100):
        assert read_tail(path, n) == rows[1:][-n:], n


def test_tail_matches_random_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_files, "_BLOCK", 16)
    rng = random.Random(7)
    alphabet = ['a', 'b', ',', '"', '\n', '\r', ' ', 'é', '""', '\r\n']
    for trial in range(30):
        rows = [["c1", "c2"]] + [["".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
                                  for _ in range(2)] for _ in range(rng.randrange(0, 25))]
        path = tmp_path / f"r{trial}.csv"
        write_csv(path, rows)
        for n in (1, 3, 10, 30):
            assert read_tail(path, n) == rows[1:][-n:], (trial, n)


@pytest.mark.parametrize(("text", "head", "tail2"), [
    ("a,b\n1,2\n3,4", [["1", "2"], ["3", "4"]], [["1", "2"], ["3", "4"]]),  # no final newline
    ("a,b", [], []),
    ("a,b\n", [], []),
    ("", [], []),
    ('a,b\r\n1,"x\ny"\r\n2,z', [["1", "x\ny"], ["2", "z"]], [["1", "x\ny"], ["2", "z"]]),
    ("a\n\n1\n\n", [[""], ["1"], [""]], [["1"], [""]]),  # blank line: one empty field
    ("\ufeffa,b\n1,2\n", [["1", "2"]], [["1", "2"]]),  # a BOM is not part of the header
])
def test_head_and_tail_edge_cases(tmp_path: Path, text: str, head: list[list[str]],
                                  tail2: list[list[str]]) -> None:
    path = tmp_path / "edge.csv"
    path.write_text(text, encoding="utf-8", newline="")
    columns, rows = read_head(path, 10)
    assert rows == head and (columns == ["a", "b"] or columns == ["a"] or text == "")
    assert read_tail(path, 2) == tail2


def test_tail_reads_only_the_end_of_a_large_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.csv"
    write_csv(path, [["id", "text"]] + [[str(i), "x" * 100] for i in range(200_000)])
    assert path.stat().st_size > 20_000_000
    read_sizes: list[int] = []
    real_open = Path.open

    def counting_open(self: Path, mode: str = "r", *args: object, **kwargs: object):  # noqa: ANN202
        handle = real_open(self, mode, *args, **kwargs)
        if "b" in mode:
            real_read = handle.read

            def read(size: int = -1) -> bytes:
                data = real_read(size)
                read_sizes.append(len(data))
                return data
            handle.read = read  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(Path, "open", counting_open)
    assert read_tail(path, 3) == [["199997", "x" * 100], ["199998", "x" * 100],
                                  ["199999", "x" * 100]]
    assert sum(read_sizes) < 200_000  # a block or two, not 20 MB


def test_head_and_tail_ops(ctx: OpsContext) -> None:
    rows = [["id", "name"]] + [[str(i), f"n{i}"] for i in range(1, 26)]
    write_csv(ctx.workspace / "people.csv", rows)
    head = csv_head_op(ctx, "people.csv", n=3)
    assert head.columns == ["id", "name"] and head.rows == rows[1:4]
    tail = csv_tail_op(ctx, "people.csv", n=3)
    assert tail.columns == ["id", "name"] and tail.rows == rows[-3:]
    assert tail.render().splitlines()[:2] == ["Last 3 rows of people.csv:", "id,name"]
    assert csv_head_op(ctx, "people.csv", n=1000).rows == rows[1:]
    assert csv_tail_op(ctx, "people.csv", n=0).rows == rows[-1:]  # n is clamped to 1..1000


def test_head_and_tail_of_a_header_only_file(ctx: OpsContext) -> None:
    write_csv(ctx.workspace / "empty.csv", [["a", "b"]])
    assert csv_tail_op(ctx, "empty.csv").rows == [] and csv_head_op(ctx, "empty.csv").rows == []
    assert "no data rows" in csv_tail_op(ctx, "empty.csv").render()


@pytest.mark.parametrize("name", ["nope.csv", "../secret.csv", "/etc/hosts", "a/../../secret.csv"])
@pytest.mark.parametrize("op", [csv_head_op, csv_tail_op])
def test_csv_ops_refuse_paths_outside_the_workspace(ctx: OpsContext, name: str,
                                                    op) -> None:  # noqa: ANN001
    ctx.workspace.mkdir(parents=True, exist_ok=True)
    (ctx.workspace.parent / "secret.csv").write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(WorkspacePathError):
        op(ctx, name)
