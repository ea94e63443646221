"""Schema and annotation models: the JSON cache contract (see ARCHITECTURE.md, "Cache").

The contract fields are kept as named there; extra fields carry what extraction and annotation
learn (row-count source, enum candidates, fingerprints, annotation runs). Parent references
(column -> table -> database) are private attributes rebuilt after validation, so they are never
serialized and a cache load restores them.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

DescriptionSource = Literal["comment", "llm", "user"]

# Types that are never categorical labels: numbers (a 1-5 rating is an ordinal score), dates and
# times, binary, booleans, structured and network types. Everything else (text, char, varchar,
# Postgres enum types, untyped SQLite columns) is screened.
_NOT_A_LABEL_TYPE = re.compile(
    r"INT|(?<!E)NUM|DEC|REAL|FLOA|DOUB|MONEY|SERIAL|DATE|TIME|INTERVAL|YEAR|BOOL|BIT|BLOB|BYTEA|"
    r"BINARY|JSON|UUID|XML|GEOM|GEOG|POINT|POLYGON|TSVECTOR|INET|CIDR|MACADDR|ARRAY|\[\]|RANGE|"
    r"^\s*(?:MAP|STRUCT|UNION)\b",  # nested types (DuckDB, Spark): not compared to a string
    re.IGNORECASE)


#: A JSON column's keys the schema shows at most; annotation keeps one more, which says that
#: more exist (``ColumnInfo.json_keys``).
MAX_JSON_KEYS = 30


def is_label_type(data_type: str | None) -> bool:
    """True for a type whose values may be categorical labels (text-like): what enum screening
    and the context engine's value index look at."""
    return not _NOT_A_LABEL_TYPE.search(data_type or "")


# ``ARRAY<STRING>`` (Spark) or ``TEXT[]``, ``VARCHAR(20)[3]`` (PostgreSQL, DuckDB): one dimension.
_ARRAY_OF = re.compile(r"^\s*(?:ARRAY\s*<\s*(?P<inner>.+?)\s*>"
                       r"|(?P<element>[^\[\]]+?)\s*\[\s*\d*\s*\])\s*$", re.IGNORECASE)


def label_array_element(data_type: str | None) -> str | None:
    """The element type of a one-dimensional array of labels (``TEXT[]``, ``VARCHAR[]``,
    ``ARRAY<STRING>``): tags, features, categories, screened and indexed element by element;
    None for any other type."""
    found = _ARRAY_OF.match(data_type or "")
    element = found and (found.group("inner") or found.group("element"))
    return element if element and is_label_type(element) else None


def holds_elements(data_type: str | None) -> bool:
    """Whether a value of ``data_type`` holds several labels, each a value a question names:
    a label array (``label_array_element``) or a MySQL ``SET('a','b')`` (``'a,b'``)."""
    return bool(label_array_element(data_type)
                or (data_type or "").lstrip().upper().startswith("SET("))


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _set_private(model: BaseModel, name: str, value: object) -> None:
    """``model.<name> = value`` for a private attribute, straight into pydantic's store when
    it exists (its ``__setattr__`` cost ~1 us per column of a wide schema, twice)."""
    private = model.__pydantic_private__
    if private is None:
        setattr(model, name, value)
    else:
        private[name] = value


class _Model(BaseModel):
    # Extra fields in a cache written by a newer version are kept, not rejected.
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


class EnumValueCount(_Model):
    """One distinct value of a column with how often it occurs (in the table or in a sample)."""

    value: str | None
    count: int


class ColumnInfo(_Model):
    name: str
    data_type: str
    nullable: bool = True
    description: str | None = None
    description_source: DescriptionSource | None = None
    #: The model (its pydantic-ai label) that wrote an "llm" description; ``enum_model``
    #: likewise for an "llm" enum decision (``nl2sql.schema.provenance``).
    description_model: str | None = None
    is_primary_key: bool = False
    is_unique: bool = False
    is_enum: bool = False
    enum_values: list[str] = Field(default_factory=list)
    # Enum screening: candidates with counts, the distinct count it saw, and the decision's origin.
    enum_candidates: list[EnumValueCount] | None = None
    distinct_count: int | None = None
    # "schema": the column's declared type is an enum (MySQL ENUM/SET): never screened.
    enum_decision: Literal["statistics", "llm", "user", "schema"] | None = None
    enum_reasoning: str | None = None
    enum_model: str | None = None
    #: Every distinct value of a text column with a small domain (enum screening read the whole
    #: table and found at most ``domain_max_values``), shown in the schema whether or not the
    #: column is an enum: "the 2 days before Saturday" needs the 7 weekdays in view.
    domain_values: list[str] | None = None
    default: str | None = None
    #: A JSON column's top-level keys in the rows annotation read, most frequent first
    #: (``nl2sql.inspection.json_keys``).
    json_keys: list[str] | None = None
    #: A generated (computed) column's expression, as the database reports it (``net + tax``).
    generated: str | None = None
    #: Holds secrets (a password, a token, a card number: ``nl2sql.schema.secret_columns``):
    #: annotation reads none of its values (samples say ``<withheld>``; no enum screening, no
    #: value index), and the schema says so.
    secret: bool = False

    _table: TableInfo | None = PrivateAttr(default=None)

    @property
    def table(self) -> TableInfo:
        assert self._table is not None, "column is not attached to a table"
        return self._table


class ForeignKeyInfo(_Model):
    name: str | None = None
    columns: list[str]
    referenced_table: str
    referenced_columns: list[str]
    referenced_schema: str | None = None
    on_delete: str | None = None
    on_update: str | None = None


class IndexInfo(_Model):
    name: str | None = None
    columns: list[str]
    is_unique: bool = False
    is_primary: bool = False
    index_type: str | None = None


class CheckInfo(_Model):
    """A CHECK constraint as the database reports its condition (``qty > 0``)."""

    name: str | None = None
    sql: str
    #: The column it allows only a list of strings (``status IN ('new', 'paid')``): they are
    #: that column's enum values, which the schema shows instead of the condition.
    lists_values_of: str | None = None


class TableInfo(_Model):
    name: str
    schema_name: str | None = None
    #: With several schemas configured, ``name`` is schema-qualified (``sales.orders``, as
    #: queries write it) and this is the table's own name (``orders``); None otherwise.
    table_name: str | None = None
    is_view: bool = False
    description: str | None = None
    description_source: DescriptionSource | None = None
    description_model: str | None = None
    columns: list[ColumnInfo] = Field(default_factory=list)
    foreign_keys: list[ForeignKeyInfo] = Field(default_factory=list)
    indexes: list[IndexInfo] = Field(default_factory=list)
    check_constraints: list[CheckInfo] = Field(default_factory=list)
    row_count: int | None = None
    row_count_is_estimate: bool = False
    sample_data_csv: str | None = None
    #: Why queries cannot read it, as annotation found reading its sample rows (a view or a
    #: row-level security policy reaching a user-defined function dbs.yaml does not allow, a
    #: privilege the login lacks); None when it was read.
    unreadable: str | None = None

    _db: DbInfo | None = PrivateAttr(default=None)

    def model_post_init(self, __context: object) -> None:
        for column in self.columns:
            _set_private(column, "_table", self)

    @property
    def db(self) -> DbInfo:
        database = self.attached_db
        assert database is not None, "table is not attached to a database"
        return database

    @property
    def attached_db(self) -> DbInfo | None:
        """The database this table belongs to, None for a table built on its own (read from
        pydantic's private store: its ``__getattr__`` cost ~3 us per access)."""
        return self.__pydantic_private__["_db"]

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in self.columns if c.is_primary_key]

    @property
    def relation_name(self) -> str:
        """The name inside its schema, for building SQL with ``schema_name`` beside it."""
        return self.table_name or self.name

    def column(self, name: str) -> ColumnInfo | None:
        """The column named ``name`` (exact match first, then case-insensitive), or None."""
        for column in self.columns:
            if column.name == name:
                return column
        lowered = name.lower()
        matches = [c for c in self.columns if c.name.lower() == lowered]
        return matches[0] if len(matches) == 1 else None

    def fingerprint(self) -> str:
        """A hash of the table's structure (not its data or descriptions).

        Annotation compares it with the cached one to send only changed tables to the model.
        """
        structure = {
            "name": self.name,
            "is_view": self.is_view,
            "columns": [[c.name, c.data_type, c.nullable, c.is_primary_key, c.is_unique]
                        for c in self.columns],
            # Implied keys (``inferred: true``) are annotation's, not the database's structure.
            "foreign_keys": [[fk.columns, fk.referenced_table, fk.referenced_columns]
                             for fk in self.foreign_keys
                             if not (fk.model_extra or {}).get("inferred")],
        }
        blob = json.dumps(structure, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


class ExampleQuery(_Model):
    question: str
    sql: str
    row_count: int | None = None
    #: The model that wrote it (examples are always model-written and checked by running).
    model: str | None = None


class StepUsage(_Model):
    """Model usage of one annotation step, from pydantic-ai's ``RunUsage``."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, usage: StepUsage | object) -> None:
        """Add another usage (a ``StepUsage`` or pydantic-ai's ``RunUsage``) to this one."""
        self.requests += usage.requests  # type: ignore[attr-defined]
        self.input_tokens += usage.input_tokens  # type: ignore[attr-defined]
        self.output_tokens += usage.output_tokens  # type: ignore[attr-defined]


class AnnotationRun(_Model):
    started_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime | None = None
    model: str | None = None
    steps: dict[str, StepUsage] = Field(default_factory=dict)
    skipped_steps: list[str] = Field(default_factory=list)


class DbInfo(_Model):
    db_id: str
    db_type: str
    description: str | None = None
    description_source: DescriptionSource | None = None
    description_model: str | None = None
    tables: list[TableInfo] = Field(default_factory=list)
    example_queries: list[ExampleQuery] = Field(default_factory=list)
    schema_name: str | None = None
    extracted_at: datetime = Field(default_factory=utc_now)
    annotation_runs: list[AnnotationRun] = Field(default_factory=list)
    #: dbs.yaml's ``secret_columns`` that the columns' ``secret`` marks follow (changed ones
    #: are applied when the runtime next reads the cache: ``schema.cache.load_db_info``).
    secret_columns: list[str] = Field(default_factory=list)

    _positions: dict[str, int] = PrivateAttr(default_factory=dict)
    _positions_of: list[TableInfo] | None = PrivateAttr(default=None)

    def model_post_init(self, __context: object) -> None:
        self.attach()

    def attach(self) -> None:
        """(Re)build the parent references; call after appending tables or columns."""
        for table in self.tables:
            _set_private(table, "_db", self)
            table.model_post_init(None)

    def table(self, name: str) -> TableInfo | None:
        """The table named ``name`` (exact match first, then case-insensitive), or None."""
        # Exact names from a position map (formatting and indexing a wide schema look up every
        # foreign key's target: a scan each was quadratic), checked against the list itself, so
        # a list changed since the map was built is never answered wrongly.
        tables = self.tables
        private = self.__pydantic_private__  # not pydantic's __getattr__, twice per lookup
        positions = private["_positions"]
        if private["_positions_of"] is not tables or len(positions) != len(tables):
            positions = {}
            for i, table in enumerate(tables):
                positions.setdefault(table.name, i)
            private["_positions"], private["_positions_of"] = positions, tables
        i = positions.get(name)
        if i is not None and i < len(tables) and tables[i].name == name:
            return tables[i]
        for table in self.tables:
            if table.name == name:
                return table
        lowered = name.lower()
        matches = [t for t in self.tables if t.name.lower() == lowered]
        if not matches:  # several schemas: a bare name that only one schema has
            matches = [t for t in self.tables if t.table_name and t.table_name.lower() == lowered]
        return matches[0] if len(matches) == 1 else None

    def fingerprint(self) -> str:
        """A hash of the whole schema's structure (every ``TableInfo.fingerprint()``): what
        answers, examples and verified answers record as the schema they were made with."""
        parts = sorted(f"{t.name}:{t.fingerprint()}" for t in self.tables)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    @property
    def foreign_key_count(self) -> int:
        """Declared foreign keys (implied ones, ``inferred: true``, are counted apart)."""
        return sum(1 for t in self.tables for fk in t.foreign_keys
                   if not (fk.model_extra or {}).get("inferred"))

    @property
    def implied_foreign_key_count(self) -> int:
        return sum(1 for t in self.tables for fk in t.foreign_keys
                   if (fk.model_extra or {}).get("inferred"))

    @property
    def enum_columns(self) -> list[ColumnInfo]:
        return [c for t in self.tables for c in t.columns if c.is_enum]
