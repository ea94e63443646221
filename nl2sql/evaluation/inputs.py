"""Question sets and predictions: JSONL, JSON or CSV files, and the bundled sets.

Questions (ARCHITECTURE.md, "Evaluation files"): ``db_id``, ``question``, ``query`` (gold SQL:
a string, several acceptable golds separated by a line ``--or--``, or a JSON list), optional
``id`` (default: the row number, from 1) and ``category``; BIRD's ``question_id`` and ``SQL``
are read too. Predictions: ``id`` and ``sql``
(matched by id), or ``sql`` alone (matched by row order); a ``.sql``/``.txt`` file holds one
query per line, in question order. Anything malformed is an ``EvaluationInputError`` naming the
file and the line.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from nl2sql.errors import Nl2SqlError, did_you_mean
from nl2sql.config.bundled import question_set_names, question_set_path

GOLD_SEPARATOR = re.compile(r"^[ \t]*--or--[ \t]*$", re.MULTILINE | re.IGNORECASE)
_QUERY_KEYS = ("query", "gold", "gold_sql", "sql", "SQL")
_PREDICTION_KEYS = ("sql", "predicted_sql", "prediction", "query")
_ID_KEYS = ("id", "question_id")  # question_id: BIRD's name


class EvaluationInputError(Nl2SqlError):
    """A question set or predictions file that cannot be read as one."""


class Question(BaseModel):
    id: str
    db_id: str
    question: str
    golds: list[str] = Field(min_length=1)
    category: str | None = None
    #: A metric question: on a database with governed metrics, ``--model`` answers it with
    #: and without them, and the report compares the two.
    metric: bool = False


def split_golds(value: Any) -> list[str]:
    """The acceptable gold queries of one ``query`` value (string, ``--or--`` text, list)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                return split_golds(parsed)
        return [part.strip() for part in GOLD_SEPARATOR.split(text) if part.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [g for v in value for g in split_golds(v)]
    return []


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of a JSONL, JSON (a list of objects) or CSV file."""
    _require_file(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluationInputError(f"{path}: cannot be read ({exc}).") from None
    suffix = path.suffix.lower()
    if suffix == ".csv":
        reader = csv.DictReader(text.splitlines(keepends=True))
        rows = []
        for row in reader:
            if None in row:
                raise EvaluationInputError(f"{path} line {reader.line_num}: more values than "
                                           f"header columns (quote values that hold commas).")
            rows.append((reader.line_num, {k.strip(): v for k, v in row.items() if k}))
        return rows
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvaluationInputError(f"{path} line {exc.lineno}: not valid JSON "
                                       f"({exc.msg}).") from None
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise EvaluationInputError(f"{path}: expected a JSON list of objects.")
        return list(enumerate(data, 1))
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvaluationInputError(f"{path} line {number}: not valid JSON ({exc.msg}); "
                                       f"each line holds one object.") from None
        if not isinstance(record, dict):
            raise EvaluationInputError(f"{path} line {number}: expected a JSON object.")
        records.append((number, record))
    return records


def _require_file(path: Path) -> None:
    if path.is_dir():
        raise EvaluationInputError(f"{path}: a folder; give the file in it (JSONL, JSON or CSV).")
    if not path.is_file():
        raise EvaluationInputError(f"{path}: no such file.")


def _first(record: dict[str, Any], keys: Iterable[str]) -> Any:
    return next((record[k] for k in keys if record.get(k) not in (None, "")), None)


def load_questions(path: str | Path) -> list[Question]:
    path = Path(path)
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for index, (line, record) in enumerate(_records(path), 1):
        where = f"{path} line {line}"
        missing = [k for k in ("db_id", "question") if not str(record.get(k) or "").strip()]
        raw_query = _first(record, _QUERY_KEYS)
        if raw_query is None:
            missing.append("query")
        if missing:
            raise EvaluationInputError(f"{where}: missing {', '.join(missing)} (a question needs "
                                       f"db_id, question and query).")
        golds = split_golds(raw_query)
        if not golds:
            raise EvaluationInputError(f"{where}: query must be SQL text, SQL separated by "
                                       f"'--or--' lines, or a list of SQL strings.")
        given = _first(record, _ID_KEYS)
        qid = str(given if given is not None else index)
        if qid in seen:
            raise EvaluationInputError(f"{where}: id {qid!r} repeats line {seen[qid]}.")
        seen[qid] = line
        category = record.get("category")
        metric = str(record.get("metric") or "").strip().lower()
        if metric not in ("", "true", "false", "1", "0", "yes", "no"):
            raise EvaluationInputError(f"{where}: metric must be true or false (a metric "
                                       f"question), not {record['metric']!r}.")
        questions.append(Question(id=qid, db_id=str(record["db_id"]).strip(),
                                  question=str(record["question"]).strip(), golds=golds,
                                  category=str(category) if category not in (None, "") else None,
                                  metric=metric in ("true", "1", "yes")))
    if not questions:
        raise EvaluationInputError(f"{path}: no questions in the file.")
    return questions


def load_predictions(path: str | Path, questions: list[Question]) -> dict[str, str | None]:
    """Predicted SQL per question id (None: no prediction for it)."""
    path = Path(path)
    if path.suffix.lower() in (".sql", ".txt"):
        _require_file(path)
        lines = path.read_text(encoding="utf-8-sig").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        return _by_order(path, [(n, {"sql": text}) for n, text in enumerate(lines, 1)], questions)
    records = _records(path)
    with_id = [r for _, r in records if _first(r, _ID_KEYS) is not None]
    if not with_id:
        return _by_order(path, records, questions)
    if len(with_id) != len(records):
        line = next(n for n, r in records if _first(r, _ID_KEYS) is None)
        raise EvaluationInputError(f"{path} line {line}: no id, while other lines have one "
                                   f"(give every prediction an id, or none to match by order).")
    known = {q.id for q in questions}
    predictions: dict[str, str | None] = {q.id: None for q in questions}
    seen: dict[str, int] = {}
    for line, record in records:
        qid = str(_first(record, _ID_KEYS))
        if qid not in known:
            hint = did_you_mean(qid, known)
            raise EvaluationInputError(f"{path} line {line}: id {qid!r} is not in the question "
                                       f"set. {hint}".rstrip())
        if qid in seen:
            raise EvaluationInputError(f"{path} line {line}: a second prediction for id {qid!r} "
                                       f"(the first is on line {seen[qid]}).")
        seen[qid] = line
        predictions[qid] = _prediction_sql(path, line, record)
    return predictions


def _prediction_sql(path: Path, line: int, record: dict[str, Any]) -> str | None:
    if not any(k in record for k in _PREDICTION_KEYS):
        raise EvaluationInputError(f"{path} line {line}: no sql field (a prediction has id and "
                                   f"sql).")
    value = _first(record, _PREDICTION_KEYS)
    return str(value).strip() if value is not None and str(value).strip() else None


def _by_order(path: Path, records: list[tuple[int, dict[str, Any]]],
              questions: list[Question]) -> dict[str, str | None]:
    if len(records) != len(questions):
        raise EvaluationInputError(
            f"{path}: {len(records)} predictions without ids for {len(questions)} questions; "
            f"matched by row order they must be as many (or give each an id).")
    return {q.id: _prediction_sql(path, line, record)
            for q, (line, record) in zip(questions, records)}


def bundled_set_path(name: str, backend_of: dict[str, str] | None = None) -> Path:
    """The bundled question set ``name``; for a base set (``chinook``) whose databases are all
    configured with one backend type T, the variant ``<name>_<T>`` when it exists.

    ``backend_of`` maps db_id -> backend type (``{"chinook": "postgres"}``).
    """
    path = question_set_path(name)
    if path is None:
        names = question_set_names()
        hint = did_you_mean(name, names)
        raise EvaluationInputError(f"No bundled question set {name!r}. {hint}Bundled sets: "
                                   f"{', '.join(names)}.")
    if backend_of:
        db_ids = {q.db_id for q in load_questions(path)}
        types = {backend_of.get(db_id) for db_id in db_ids}
        if len(types) == 1 and None not in types:
            variant = question_set_path(f"{name}_{types.pop()}")
            if variant is not None:
                return variant
    return path
