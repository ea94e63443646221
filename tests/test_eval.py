"""nl2sql-eval on real databases: the bundled sets score 100% with their gold as predictions,
seeded mistakes are scored right, failures are wrong with a reason, broken golds are left out;
inputs, outputs and exit codes of the command."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conftest import SampleDb, spark_config, write_dbs_yaml
from nl2sql.cli.eval import main
from nl2sql.evaluation import (EvalSettings, EvaluationInputError, evaluate, load_predictions,
                               load_questions)
from nl2sql.evaluation.inputs import Question
from nl2sql.operations.ops_context import OpsContext
from nl2sql.config.bundled import question_set_path


def _ops(make_registry, sample: SampleDb) -> OpsContext:
    return OpsContext(make_registry(sample.config))


def _set(sample: SampleDb, name: str) -> str:
    variant = f"{name}_{sample.backend}"
    return variant if question_set_path(variant) else name


def _gold_predictions(path: Path, out: Path) -> Path:
    with out.open("w") as f:
        for q in load_questions(path):
            f.write(json.dumps({"id": q.id, "sql": q.golds[-1]}) + "\n")
    return out


def _assert_gold_scores_100(sample: SampleDb, tmp_path: Path, capsys) -> None:
    name = sample.name
    config = write_dbs_yaml(tmp_path, [sample.config])
    chosen = question_set_path(_set(sample, name))
    predictions = _gold_predictions(chosen, tmp_path / "preds.jsonl")
    out = tmp_path / "out"
    code = main(["--set", name, "--predictions", str(predictions), "--out", str(out),
                 "--config", str(config), "--no-context", "--min-accuracy", "1.0"])
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["questions"] == str(chosen)  # the backend's variant was chosen
    assert report["accuracy"] == 1.0 and report["broken_gold"] == 0
    assert report["correct"] == report["total"] == len(load_questions(chosen))
    assert "all" in capsys.readouterr().out


def test_gold_as_prediction_scores_100_percent_bookstore(bookstore_db, tmp_path, capsys) -> None:
    _assert_gold_scores_100(bookstore_db, tmp_path, capsys)


def test_gold_as_prediction_scores_100_percent_chinook(chinook, tmp_path, capsys) -> None:
    _assert_gold_scores_100(chinook, tmp_path, capsys)


def test_gold_as_prediction_scores_100_percent_northwind(northwind, tmp_path, capsys) -> None:
    _assert_gold_scores_100(northwind, tmp_path, capsys)


# Seeded mistakes on Chinook: id -> (SQLite SQL, Postgres SQL, correct?, reason fragment)
DEFECTS = {
    # chinook-03: customers in Germany
    "chinook-03": ("SELECT COUNT(*) FROM Customer", "SELECT COUNT(*) FROM customer",
                   False, "values differ: gold 4, predicted 59"),  # dropped WHERE
    # chinook-05: average track length in minutes
    "chinook-05": ("SELECT MAX(Milliseconds) / 60000.0 FROM Track",
                   "SELECT MAX(milliseconds) / 60000.0 FROM track", False, "values differ"),
    # chinook-17: Iron Maiden's albums; the join compares the wrong keys
    "chinook-17": ("SELECT al.Title FROM Album al JOIN Artist ar ON ar.ArtistId = al.AlbumId "
                   "WHERE ar.Name = 'Iron Maiden'",
                   "SELECT al.title FROM album al JOIN artist ar ON ar.artist_id = al.album_id "
                   "WHERE ar.name = 'Iron Maiden'", False, "row count differs"),
    # chinook-06: top 5 artists by albums, columns swapped (and named differently)
    "chinook-06": ("SELECT COUNT(*) AS n, ar.Name AS artist FROM Artist ar JOIN Album al ON "
                   "al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY n DESC LIMIT 5",
                   "SELECT COUNT(*) AS n, ar.name AS artist FROM artist ar JOIN album al ON "
                   "al.artist_id = ar.artist_id GROUP BY ar.artist_id ORDER BY n DESC LIMIT 5",
                   True, None),
    # chinook-11: sales support agents, with aliases
    "chinook-11": ("SELECT FirstName AS first, LastName AS last FROM Employee "
                   "WHERE Title = 'Sales Support Agent'",
                   "SELECT first_name AS first, last_name AS last FROM employee "
                   "WHERE title = 'Sales Support Agent'", True, None),
    # chinook-04: rock tracks, as a subquery instead of a join
    "chinook-04": ("SELECT COUNT(*) FROM Track WHERE GenreId IN "
                   "(SELECT GenreId FROM Genre WHERE Name = 'Rock')",
                   "SELECT COUNT(*) FROM track WHERE genre_id IN "
                   "(SELECT genre_id FROM genre WHERE name = 'Rock')", True, None),
    # chinook-23: the gold orders by average, highest first; the prediction does not order
    "chinook-23": ("SELECT BillingCountry, AVG(Total) FROM Invoice GROUP BY BillingCountry",
                   "SELECT billing_country, AVG(total) FROM invoice GROUP BY billing_country",
                   False, "different order"),
    # chinook-09: the gold does not order; the prediction's order differs: right
    "chinook-09": ("SELECT Country FROM Customer GROUP BY Country HAVING COUNT(*) > 5 "
                   "ORDER BY Country DESC",
                   "SELECT country FROM customer GROUP BY country HAVING COUNT(*) > 5 "
                   "ORDER BY country DESC", True, None),
    # chinook-05 is taken; the float rounding difference is on chinook-19 (Brazil's total)
    "chinook-19": ("SELECT SUM(i.Total * 1.0000000001) FROM Invoice i JOIN Customer c "
                   "ON c.CustomerId = i.CustomerId WHERE c.Country = 'Brazil'",
                   "SELECT SUM(i.total * 1.0000000001) FROM invoice i JOIN customer c "
                   "ON c.customer_id = i.customer_id WHERE c.country = 'Brazil'", True, None),
    # chinook-01: a query that never ends, stopped by --timeout
    "chinook-01": ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                   "SELECT COUNT(*) FROM c",
                   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                   "SELECT COUNT(*) FROM c", False, "prediction timed out"),
    # chinook-13: a write, refused by the read-only guard
    "chinook-13": ("DELETE FROM Track WHERE Milliseconds > 300000",
                   "DELETE FROM track WHERE milliseconds > 300000", False,
                   "prediction refused by the read-only guard"),
    # chinook-21: no such column
    "chinook-21": ("SELECT COUNT(DISTINCT Composr) FROM Track",
                   "SELECT COUNT(DISTINCT composr) FROM track", False, "prediction failed"),
}


def test_seeded_mistakes_are_scored_right(chinook: SampleDb, make_registry,
                                          tmp_path: Path) -> None:
    name = _set(chinook, "chinook")
    questions = load_questions(question_set_path(name))
    predictions = {q.id: q.golds[0] for q in questions}
    column = 0 if chinook.backend == "sqlite" else 1
    for qid, defect in DEFECTS.items():
        predictions[qid] = defect[column]
    # a broken gold: left out of the accuracy, reported
    broken = questions[-1].model_copy(update={"golds": ["SELECT nothing FROM no_such_table"]})
    questions[-1] = broken
    report = evaluate(questions, predictions, _ops(make_registry, chinook),
                      EvalSettings(timeout=1.0, context_recall=False))
    by_id = {q.id: q for q in report.questions}
    for qid, (_, _, correct, fragment) in DEFECTS.items():
        result = by_id[qid]
        assert result.correct is correct, (qid, result.reason)
        if fragment:
            assert fragment in result.reason, (qid, result.reason)
    assert by_id[broken.id].broken_gold and by_id[broken.id].correct is None
    assert "broken gold: gold query failed" in by_id[broken.id].reason
    wrong = sum(1 for d in DEFECTS.values() if not d[2])
    assert report.broken_gold == 1 and report.scored == len(questions) - 1
    assert report.correct == report.scored - wrong
    assert report.accuracy == round((report.scored - wrong) / report.scored, 4)
    # the timed-out query did not hold up the rest for long, and the next query worked
    assert by_id["chinook-01"].predicted_seconds < 15
    assert by_id["chinook-02"].correct


def test_several_golds_any_one_matches(chinook: SampleDb, make_registry) -> None:
    questions = [q for q in load_questions(question_set_path(_set(chinook, "chinook")))
                 if q.id == "chinook-10"]
    assert len(questions[0].golds) == 2
    for gold in questions[0].golds:
        report = evaluate(questions, {"chinook-10": gold}, _ops(make_registry, chinook),
                          EvalSettings(context_recall=False))
        assert report.correct == 1


def test_extra_columns_rule_is_switchable(bookstore_db: SampleDb, make_registry) -> None:
    questions = [q for q in load_questions(question_set_path("bookstore"))
                 if q.id == "bookstore-07"]  # authors from Japan: one column
    prediction = {"bookstore-07": "SELECT name, country FROM authors WHERE country = 'Japan'"}
    ops = _ops(make_registry, bookstore_db)
    strict = evaluate(questions, prediction, ops, EvalSettings(context_recall=False))
    assert strict.correct == 0 and "column count differs" in strict.questions[0].reason
    allow = evaluate(questions, prediction, ops,
                     EvalSettings(extra_columns="allow", context_recall=False))
    assert allow.correct == 1


def test_row_cap_makes_a_huge_gold_broken(bookstore_db: SampleDb, make_registry) -> None:
    questions = [q for q in load_questions(question_set_path("bookstore"))
                 if q.id == "bookstore-03"]  # 22 mystery titles
    report = evaluate(questions, {"bookstore-03": questions[0].golds[0]},
                      _ops(make_registry, bookstore_db),
                      EvalSettings(max_rows=10, context_recall=False))
    assert report.broken_gold == 1 and "more than 10 rows" in report.questions[0].reason
    assert report.accuracy is None


# -- inputs ------------------------------------------------------------------------------------

def test_csv_questions_with_or_separator_and_row_order_predictions(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["db_id", "question", "query", "category"])
        writer.writerow(["bookstore", "How many books?", "SELECT COUNT(*) FROM books\n--or--\n"
                         "SELECT COUNT(book_id) FROM books", "count"])
        writer.writerow(["bookstore", "Genres?", '["SELECT DISTINCT genre FROM books"]', ""])
    questions = load_questions(path)
    assert [q.id for q in questions] == ["1", "2"]
    assert questions[0].golds == ["SELECT COUNT(*) FROM books", "SELECT COUNT(book_id) FROM books"]
    assert questions[1].golds == ["SELECT DISTINCT genre FROM books"]
    assert questions[1].category is None
    preds = tmp_path / "p.txt"
    preds.write_text("\nSELECT DISTINCT genre FROM books\n\n")  # trailing blank lines ignored
    assert load_predictions(preds, questions) == {"1": None,
                                                  "2": "SELECT DISTINCT genre FROM books"}


def test_json_list_golds_and_predictions_by_id(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "a", "db_id": "x", "question": "q?",
                                "query": ["SELECT 1", "SELECT 1.0"]}) + "\n\n")
    questions = load_questions(path)
    assert questions[0].golds == ["SELECT 1", "SELECT 1.0"]
    preds = tmp_path / "p.csv"
    preds.write_text("id,sql\na,SELECT 1\n")
    assert load_predictions(preds, questions) == {"a": "SELECT 1"}
    bird = tmp_path / "bird.json"  # BIRD's field names: question_id, SQL
    bird.write_text(json.dumps([{"question_id": 7, "db_id": "x", "question": "q?",
                                 "SQL": "SELECT 2"}]))
    [question] = load_questions(bird)
    assert (question.id, question.golds) == ("7", ["SELECT 2"])


@pytest.mark.parametrize("content, message", [
    ('{"db_id": "x", "question": "q"}\n', "line 1: missing query"),
    ('{"db_id": "x", "question": "q", "query": "SELECT 1"}\nnot json\n', "line 2: not valid JSON"),
    ('{"id": 1, "db_id": "x", "question": "q", "query": "S"}\n'
     '{"id": 1, "db_id": "x", "question": "r", "query": "S"}\n', "id '1' repeats line 1"),
    ('{"db_id": "x", "question": "q", "query": 5}\n', "query must be SQL text"),
    ("", "no questions"),
])
def test_invalid_question_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(content)
    with pytest.raises(EvaluationInputError, match=message):
        load_questions(path)


def test_a_folder_or_a_missing_file_says_which(tmp_path: Path) -> None:
    with pytest.raises(EvaluationInputError, match="a folder; give the file in it"):
        load_questions(tmp_path)
    with pytest.raises(EvaluationInputError, match="no such file"):
        load_questions(tmp_path / "nope.jsonl")


def test_invalid_prediction_files(tmp_path: Path) -> None:
    questions_path = tmp_path / "q.jsonl"
    questions_path.write_text("".join(json.dumps({"id": f"q{i}", "db_id": "x", "question": "?",
                                                  "query": "SELECT 1"}) + "\n" for i in (1, 2)))
    questions = load_questions(questions_path)
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "q3", "sql": "SELECT 1"}) + "\n")
    with pytest.raises(EvaluationInputError, match="'q3' is not in the question set"):
        load_predictions(preds, questions)
    preds.write_text(json.dumps({"id": "q1", "sql": "SELECT 1"}) + "\n" +
                     json.dumps({"id": "q1", "sql": "SELECT 2"}) + "\n")
    with pytest.raises(EvaluationInputError, match="line 2: a second prediction for id 'q1'"):
        load_predictions(preds, questions)
    preds.write_text(json.dumps({"sql": "SELECT 1"}) + "\n")
    with pytest.raises(EvaluationInputError, match="1 predictions without ids for 2 questions"):
        load_predictions(preds, questions)


# -- the command -------------------------------------------------------------------------------

def _bookstore_files(tmp_path: Path) -> tuple[Path, Path]:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "n", "db_id": "bookstore", "question": "How many books?",
                    "query": "SELECT COUNT(*) FROM books", "category": "count"}) + "\n" +
        json.dumps({"id": "g", "db_id": "bookstore", "question": "Mystery titles?",
                    "query": "SELECT title FROM books WHERE genre = 'mystery'"}) + "\n")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "n", "sql": "SELECT COUNT(*) FROM books"}) + "\n" +
                     json.dumps({"id": "g", "sql": "SELECT title FROM books"}) + "\n")
    return questions, preds


def test_cli_exit_codes(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    questions, preds = _bookstore_files(tmp_path)
    assert main([str(questions), "--predictions", str(preds), "--no-context"]) == 0
    out = capsys.readouterr().out
    assert "50.0%" in out and "1 wrong" in out
    report = json.loads((tmp_path / "eval" / "q" / "report.json").read_text())
    assert report["per_category"]["count"]["accuracy"] == 1.0
    assert main([str(questions), "--predictions", str(preds), "--no-context",
                 "--min-accuracy", "0.6"]) == 1
    assert "below --min-accuracy 60.0%" in capsys.readouterr().err
    assert main([str(questions), "--predictions", str(preds), "--no-context",
                 "--min-accuracy", "50%"]) == 0
    capsys.readouterr()
    assert main([str(tmp_path / "missing.jsonl"), "--predictions", str(preds)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["--set", "bookstor", "--predictions", str(preds)]) == 2
    assert "Did you mean 'bookstore'?" in capsys.readouterr().err
    assert main([str(questions)]) == 2  # neither --predictions nor --model
    bad_db = tmp_path / "bad.jsonl"
    bad_db.write_text(json.dumps({"db_id": "shop", "question": "?", "query": "SELECT 1"}) + "\n")
    assert main([str(bad_db), "--predictions", str(preds)]) == 2
    err = capsys.readouterr().err
    assert "database 'shop' is not configured" in err and "Traceback" not in err


def test_context_recall_fields(tmp_path: Path, monkeypatch) -> None:
    """With a schema cache, each question gets the context's tables against the gold's."""
    from nl2sql.config.registry import DbConnectionConfigs
    from nl2sql.annotation.pipeline import annotate_database

    monkeypatch.chdir(tmp_path)
    configs = DbConnectionConfigs.load()
    annotate_database(configs.get("bookstore"), configs.data_dir)
    questions, preds = _bookstore_files(tmp_path)
    report = evaluate(load_questions(questions), load_predictions(preds, load_questions(questions)),
                      OpsContext(configs))
    first = report.questions[0]
    assert first.gold_tables == ["books"] and "books" in first.context_tables
    assert first.table_recall == 1.0 and first.context_error is None
    second = report.questions[1]
    assert second.gold_literals == ["mystery"] and second.value_hints is not None
    assert report.table_recall == 1.0


def test_readme_demo_seeded_chinook_predictions(tmp_path: Path, capsys) -> None:
    """docs/evaluation.md's example: 7 seeded mistakes among 27 Chinook predictions -> 20/27."""
    import shutil

    from conftest import SAMPLE_DATA, sqlite_config

    path = tmp_path / "chinook.sqlite"
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", path)
    config = write_dbs_yaml(tmp_path, [sqlite_config("chinook", path)])
    predictions = Path(__file__).resolve().parent.parent / "docs" / "eval" / \
        "chinook_seeded_predictions.jsonl"
    out = tmp_path / "out"
    assert main(["--set", "chinook", "--predictions", str(predictions), "--timeout", "2",
                 "--config", str(config), "--out", str(out), "--no-context"]) == 0
    printed = capsys.readouterr().out
    assert "│ all          │      20 │     27 │             │   74.1% [55%–87%] │" in printed
    report = json.loads((out / "report.json").read_text())
    assert (report["correct"], report["total"], report["accuracy"]) == (20, 27, 0.7407)
    assert {q["id"] for q in report["questions"] if not q["correct"]} == {
        qid for qid, defect in DEFECTS.items() if not defect[2]}


def test_a_wrong_answer_is_explained_against_the_closest_gold(bookstore_db: SampleDb,
                                                               make_registry) -> None:
    """The first gold has another column count; the second has the prediction's columns and
    rows in another order: that is what the reason names."""
    question = Question(id="g", db_id="bookstore", question="Genres, alphabetically?", golds=[
        "SELECT genre, count(*) AS books FROM books GROUP BY genre",
        "SELECT genre FROM books GROUP BY genre ORDER BY genre"])
    report = evaluate([question], {"g": "SELECT genre FROM books GROUP BY genre ORDER BY genre "
                                        "DESC"},
                      _ops(make_registry, bookstore_db), EvalSettings(context_recall=False))
    result = report.questions[0]
    assert result.correct is False
    assert result.reason.startswith("matches none of the 2 golds; closest is gold 2: same rows "
                                    "in a different order"), result.reason
    assert "column count" not in result.reason and result.gold_columns == ["genre"]


@pytest.mark.spark
@pytest.mark.slow
def test_nl2sql_eval_scores_a_question_set_on_spark(spark_server, spark_chinook, tmp_path: Path,
                                                    capsys) -> None:
    """A question on a Spark database crashed nl2sql-eval (NotImplementedError: the runner
    created each database's SQLAlchemy engine, and Spark has none). Chinook on the test Spark
    server: ``--set chinook`` picks the Spark variant; its golds as predictions are right, the
    seeded mistakes (and a prediction in SQLite's dialect) are wrong with their reasons."""
    config = write_dbs_yaml(tmp_path, [spark_config("chinook", spark_server.remote,
                                                    spark_chinook, query_timeout_seconds=60)])
    chosen = question_set_path("chinook_spark")
    predictions = {q.id: q.golds[-1] for q in load_questions(chosen)}
    # Spark's own readings: a recursive CTE stops at 100 levels (an error, not a time-out),
    # and a column outside GROUP BY is an error where SQLite picks a row
    defects = {qid: d for qid, d in DEFECTS.items() if qid not in ("chinook-01", "chinook-06")}
    predictions.update({qid: defect[0] for qid, defect in defects.items()})
    predictions["chinook-08"] = "SELECT strftime('%Y', InvoiceDate) AS year, SUM(Total) " \
                                "FROM Invoice GROUP BY year"
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in predictions.items()))
    out = tmp_path / "out"
    code = main(["--set", "chinook", "--predictions", str(path), "--out", str(out),
                 "--config", str(config), "--no-context"])
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["questions"] == str(chosen)
    by_id = {q["id"]: q for q in report["questions"]}
    for qid, (_, _, correct, fragment) in defects.items():
        assert by_id[qid]["correct"] is correct, (qid, by_id[qid]["reason"])
        assert fragment is None or fragment in by_id[qid]["reason"], (qid, by_id[qid]["reason"])
    assert by_id["chinook-08"]["correct"] is False
    assert "strftime" in by_id["chinook-08"]["reason"]
    wrong = {qid for qid, q in by_id.items() if not q["correct"]}
    assert wrong == {qid for qid, d in defects.items() if not d[2]} | {"chinook-08"}
    assert (report["total"], report["broken_gold"]) == (27, 0)
    assert report["correct"] == 27 - len(wrong)
