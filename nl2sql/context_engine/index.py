"""The offline index of one database: per-table search documents, stored values, join graph.

Built from the annotation cache (plus the column values annotation collected) and stored as
``{data_dir}/database/{db_id}/{db_id}.context_index.json`` with the table embeddings in
``{db_id}.context_index.npy``. Rebuilds are incremental: a table whose content key (structure
fingerprint, descriptions, enum values, stored values) did not change keeps its entry and its
embedding. The file records the cache it was built from (size and mtime); a missing, unreadable
or stale index is rebuilt from the cache on load, never an error.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nl2sql.schema.cache import atomic_write_text, cache_path
from nl2sql.context_engine.values import value_keys
from nl2sql.schema.words import terms
from nl2sql.schema.formatting import format_schema, format_table_both
from nl2sql.schema.models import DbInfo, TableInfo, is_label_type
from nl2sql.context_engine.graph import foreign_keys
from nl2sql.context_engine.narrow import key_columns, narrow_table
from nl2sql._helpers import gc_paused
from nl2sql.context_engine import embeddings
from nl2sql.context_engine.embeddings import Embedded

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

INDEX_VERSION = 6
MAX_VALUES_PER_COLUMN = 1000
MAX_VALUES_PER_DATABASE = 200_000
MAX_VALUE_LENGTH = 80
#: Values per column read from the database at annotation time (most frequent first).
COLLECTED_VALUES_PER_COLUMN = MAX_VALUES_PER_COLUMN

Values = dict[str, dict[str, list[str]]]  # table -> column -> stored values


def index_path(data_dir: Path, db_id: str) -> Path:
    return cache_path(data_dir, db_id).with_name(f"{db_id}.context_index.json")


def embeddings_path(data_dir: Path, db_id: str) -> Path:
    return cache_path(data_dir, db_id).with_name(f"{db_id}.context_index.npy")


def cache_signature(data_dir: Path, db_id: str) -> str:
    """Size and mtime of the cache file: an index built from another version is stale."""
    stat = cache_path(data_dir, db_id).stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


@dataclass
class TableEntry:
    """What retrieval needs of one table, without loading the cache."""

    name: str
    key: str
    name_terms: list[str]
    doc_terms: list[str]
    embed_text: str
    columns: list[str]
    column_terms: list[list[str]]
    tokens: int
    neighbours: list[str]
    values: dict[str, list[str]] = field(default_factory=dict)
    #: The table's schema SQL, rendered offline: with sample rows, without, and keys only.
    texts: dict[str, str] = field(default_factory=dict)
    #: Per column, each value's lookup keys (``values.value_keys``), computed offline.
    value_keys: dict[str, list[list[str]]] = field(default_factory=dict)
    #: Words of the foreign-key columns of other tables that point here: the roles this
    #: table plays ("bowler", "striker" for ``player``; "manager" for ``emp``).
    role_terms: list[str] = field(default_factory=list)
    #: The tables this one references (its own foreign keys): two or more make a fact table.
    references: list[str] = field(default_factory=list)

    def value_locations(self, prefix: str = "") -> tuple[list[tuple[str, str, str]],
                                                         list[list[str]]]:
        """``(table, column, value)`` of each stored value (table name after ``prefix``) and
        their lookup keys, in the same order."""
        locations, keys = [], []
        table = prefix + self.name
        for column, items in self.values.items():
            locations += [(table, column, value) for value in items]
            keys += self.value_keys.get(column) or [value_keys(v) for v in items]
        return locations, keys


@dataclass
class IndexData:
    db_id: str
    signature: str
    description: str
    tables: list[TableEntry]
    full_tokens: int = 0  # of the whole annotated schema (``format_schema``)
    version: int = INDEX_VERSION
    #: The cache's ``DbInfo.secret_columns`` (dbs.yaml's): built before they changed, stale.
    secret_columns: list[str] = field(default_factory=list)
    #: The ``.npy`` file of the table embeddings a build stored (not a field: not in the JSON).
    _stored_vectors = b""

    def vectors(self) -> np.ndarray:
        """The table embeddings a build made (one row per table, in order), read from the
        ``.npy`` bytes it stored when first asked for."""
        import numpy as np

        return np.load(io.BytesIO(self._stored_vectors), allow_pickle=False)

    def to_json(self) -> str:
        # The fields as they are (``dataclasses.asdict`` deep-copied every list and string:
        # a third of the index build on 1,000 tables); the same JSON text.
        raw: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        names = [f.name for f in fields(TableEntry)]
        raw["tables"] = [{name: getattr(t, name) for name in names} for t in self.tables]
        return json.dumps(raw, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> IndexData:
        raw = json.loads(text)
        if raw.get("version") != INDEX_VERSION:
            raise ValueError("index version changed")
        raw["tables"] = [TableEntry(**t) for t in raw["tables"]]
        return cls(**raw)


# -- values ----------------------------------------------------------------------------------

def usable_value(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if not text or len(text) > MAX_VALUE_LENGTH or not any(map(str.isalpha, text)):
        return None  # numbers, codes of digits and long text are not named in questions
    return text


def values_from_cache(table: TableInfo) -> dict[str, list[str]]:
    """Values the cache itself holds: enum values and candidates, and the sample rows'
    text cells (the fallback when annotation collected none)."""
    found: dict[str, list[str]] = {}
    for column in table.columns:
        if column.secret:
            continue
        seen = list(column.enum_values)
        seen += [v.value for v in column.enum_candidates or [] if v.value is not None]
        seen += column.domain_values or []
        if seen:
            found[column.name] = seen
    if table.sample_data_csv:
        rows = list(csv.reader(io.StringIO(table.sample_data_csv)))
        if rows:
            header = rows[0]
            for row in rows[1:]:
                for name, cell in zip(header, row):
                    column = table.column(name)
                    if (column is not None and not column.is_primary_key
                            and not column.secret and is_label_type(column.data_type)):
                        found.setdefault(name, []).append(cell)
    return found


def _bounded(values: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for column, items in values.items():
        kept: dict[str, None] = {}
        for item in items:
            text = usable_value(item)
            if text is not None:
                kept.setdefault(text, None)
                if len(kept) >= MAX_VALUES_PER_COLUMN:
                    break
        if kept:
            out[column] = list(kept)
    return out


def _within_database_bound(db_id: str,
                           tables_values: list[dict[str, list[str]]]) -> list[dict[str, list[str]]]:
    """Each table's values, at most ``MAX_VALUES_PER_DATABASE`` in all. Over the bound every
    column keeps the same number of its first (most frequent) values, the most that fits (a
    column with fewer keeps all of its own): the rare values of big columns are left out, not
    whole tables (which tables, in name order, were the first to fill the bound)."""
    counts = [len(items) for values in tables_values for items in values.values()]
    if sum(counts) <= MAX_VALUES_PER_DATABASE:
        return tables_values
    low, high = 0, max(counts)  # the largest per-column count whose total fits
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(count, middle) for count in counts) <= MAX_VALUES_PER_DATABASE:
            low = middle
        else:
            high = middle - 1
    log.info("%s: %d stored values over the bound of %d; each column keeps its %d most "
             "frequent", db_id, sum(counts), MAX_VALUES_PER_DATABASE, low)
    return [{column: items[:low] for column, items in values.items() if low}
            for values in tables_values]


# -- building --------------------------------------------------------------------------------

def _neighbours(info: DbInfo) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {t.name: set() for t in info.tables}
    for table in info.tables:
        for fk in foreign_keys(table):
            if fk.referenced_table in found and fk.referenced_table != table.name:
                found[table.name].add(fk.referenced_table)
                found[fk.referenced_table].add(table.name)
    return found


def content_key(table: TableInfo, neighbours: set[str], values: dict[str, list[str]],
                roles: list[str] | None = None) -> str:
    """Everything an entry is made of (the table as cached, its neighbours, its values): an
    entry with the same key is reused as it is by the next build."""
    # The table's JSON as it is, then the rest (a JSON object then an array: unambiguous);
    # not the JSON inside a JSON string, whose escaping cost a fifth of a wide build's entries.
    digest = hashlib.sha256(table.model_dump_json().encode())
    digest.update(json.dumps([sorted(neighbours), values, roles or []], sort_keys=True).encode())
    return digest.hexdigest()[:16]


def embed_text(table: TableInfo) -> str:
    """What a table's embedding is made of: its name's words, the first sentence of its
    description and the words of its first 40 column names."""
    description = (table.description or "").split(".")[0]
    return " ".join([" ".join(terms(table.name)), description,
                     " ".join(" ".join(terms(c.name, expand=False)) for c in table.columns[:40])])


def _entry(table: TableInfo, db_type: str, neighbours: set[str],
           values: dict[str, list[str]], roles: list[str]) -> TableEntry:
    name_terms = terms(table.name)
    doc = list(name_terms) * 3 + list(roles)
    if table.description:
        doc += terms(table.description)
    column_terms = []
    for column in table.columns:
        words = terms(column.name)
        if column.description:
            words += terms(column.description)
        words += [w for v in column.enum_values[:20] for w in terms(v)]
        column_terms.append(words)
        doc += words

    full, whole = format_table_both(table, db_type)
    texts = {"full": full, "whole": whole, "keys": narrow_table(table, key_columns(table))}
    tokens = (len(texts["full"]) + 3) // 4
    key = content_key(table, neighbours, values, roles)
    return TableEntry(name=table.name, key=key, name_terms=name_terms, doc_terms=doc,
                      role_terms=roles,
                      references=sorted({fk.referenced_table for fk in table.foreign_keys
                                         if fk.referenced_table != table.name}),
                      embed_text=embed_text(table), columns=[c.name for c in table.columns],
                      column_terms=column_terms, tokens=tokens, neighbours=sorted(neighbours),
                      values=values, texts=texts,
                      value_keys={c: [value_keys(v) for v in items] for c, items in values.items()})


def role_terms(info: DbInfo) -> dict[str, list[str]]:
    """Per table, the words of other tables' foreign-key columns that reference it, less
    words that name a table or are the table's own ("match.man_of_the_match" -> ``player``:
    "man"; "ball_by_ball.bowler" -> "bowler")."""
    table_words = {t for table in info.tables for t in terms(table.name)}
    roles: dict[str, list[str]] = {}
    for table in info.tables:
        for fk in table.foreign_keys:
            own = set(terms(fk.referenced_table))
            words = [w for c in fk.columns for w in terms(c)
                     if w not in own and w not in table_words and not w.isdigit() and w != "id"]
            if words:
                found = roles.setdefault(fk.referenced_table, [])
                found += [w for w in words if w not in found]
    return roles


def build_index(info: DbInfo, data_dir: Path, *, collected: Values | None = None,
                previous: IndexData | None = None,
                computed: Embedded | None = None) -> IndexData:
    """Build (incrementally) and store the index of ``info`` (see ``_build``)."""
    with gc_paused():
        return _build(info, data_dir, collected=collected, previous=previous,
                      computed=computed)


def _build(info: DbInfo, data_dir: Path, *, collected: Values | None = None,
           previous: IndexData | None = None, computed: Embedded | None = None) -> IndexData:
    """Build (incrementally) and store the index of ``info``; ``collected`` are the values
    annotation read from the database (else the previous index's values are kept for tables
    whose structure did not change, plus what the cache holds); ``computed``: embeddings
    already made (``embeddings_ahead.py``), used for the texts they were made from; the others
    are made here."""
    if previous is None:
        previous = read_index(data_dir, info.db_id, check_signature=False)
    old_entries = {e.name: e for e in previous.tables} if previous else {}
    old_vectors = read_embeddings(data_dir, info.db_id, previous) if previous else {}
    neighbours = _neighbours(info)
    roles = role_terms(info)
    entries: list[TableEntry] = []
    rendered: dict[str, str] = {}  # tables rendered for this build (reused entries were not)
    tables_values = []
    for table in info.tables:
        if collected is not None and table.name in collected:
            raw = {**values_from_cache(table), **collected[table.name]}
        else:
            raw = values_from_cache(table)
            old = old_entries.get(table.name)
            if old is not None and old.values:  # not a column gone or secret since
                raw = {**raw, **{name: items for name, items in old.values.items()
                                 if (column := table.column(name)) is not None
                                 and not column.secret}}
        tables_values.append(_bounded(raw))
    for table, values in zip(info.tables, _within_database_bound(info.db_id, tables_values)):
        old = old_entries.get(table.name)
        role = roles.get(table.name, [])
        if old is not None and old.key == content_key(table, neighbours[table.name], values,
                                                      role):
            entries.append(old)  # unchanged: its words, texts and embedding are reused
        else:
            entries.append(_entry(table, info.db_type, neighbours[table.name], values, role))
            rendered[table.name] = entries[-1].texts["full"]
    if (computed is not None and not old_vectors
            and computed.texts == [e.embed_text for e in entries]):
        stored = computed.npy  # exactly the matrix to store: numpy is not needed here
    else:
        stored = _matrix_file(entries, old_vectors, computed)

    data = IndexData(db_id=info.db_id, signature=cache_signature(data_dir, info.db_id),
                     description=info.description or "", tables=entries,
                     secret_columns=list(info.secret_columns),
                     full_tokens=(len(format_schema(info, rendered=rendered)) + 3) // 4)
    try:
        path = embeddings_path(data_dir, info.db_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(stored)
        tmp.replace(path)
        atomic_write_text(index_path(data_dir, info.db_id), data.to_json())
    except OSError as exc:  # a read-only data dir: the index lives in memory only
        log.warning("context index of %s not saved: %s", info.db_id, exc)
    data._stored_vectors = stored
    return data


def _matrix_file(entries: list[TableEntry], old_vectors: dict[str, Any],
                 computed: Embedded | None) -> bytes:
    """The ``.npy`` file of the entries' embeddings: kept from the previous index, computed
    ahead, or embedded now."""
    import numpy as np

    ready = computed.rows() if computed is not None else {}
    missing = [e for e in entries if e.key not in old_vectors and e.embed_text not in ready]
    fresh = dict(zip([e.key for e in missing],
                     embeddings.embed([e.embed_text for e in missing]))) if missing else {}
    vectors = [old_vectors[e.key] if e.key in old_vectors
               else fresh[e.key] if e.key in fresh else ready[e.embed_text] for e in entries]
    matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 256), np.float32)
    buffer = io.BytesIO()
    np.save(buffer, matrix, allow_pickle=False)
    return buffer.getvalue()


def read_index(data_dir: Path, db_id: str, *, check_signature: bool = True) -> IndexData | None:
    """The stored index, or None when it is missing, unreadable or (checked) stale."""
    try:
        data = IndexData.from_json(index_path(data_dir, db_id).read_text(encoding="utf-8"))
        if check_signature and data.signature != cache_signature(data_dir, db_id):
            return None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return data


def read_embeddings(data_dir: Path, db_id: str, data: IndexData) -> dict[str, Any]:
    """Table key -> embedding row of the stored index (empty when the file does not fit)."""
    import numpy as np

    try:
        matrix = np.load(embeddings_path(data_dir, db_id), allow_pickle=False)
    except (OSError, ValueError):
        return {}
    if matrix.shape[0] != len(data.tables):
        return {}
    return {entry.key: matrix[i] for i, entry in enumerate(data.tables)}
