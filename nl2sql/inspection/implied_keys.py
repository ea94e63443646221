"""Implied foreign keys: links a database does not declare, inferred at annotation time.

Candidates come from names and types: a column named like another table's single-column key
(``Album.ArtistId`` -> ``Artist.ArtistId``; not a bare ``id`` or ``code``, a table's own), or
``<entity>_id``/``<entity>Id``/``_code``/``_key`` naming a table (``orders.customer_id`` ->
``customers.id``), with compatible types. Each candidate is confirmed by value containment on a
bounded sample: up to ``SAMPLE_ROWS`` non-null values of the column (a ``LIMIT`` read, never a
full scan) looked up in the referenced key (an index seek each). Confirmed links are stored in
``TableInfo.foreign_keys`` beside the declared ones, marked ``inferred: true`` with their
``evidence``; formatting shows them as comments, the context engine joins through them and
``db_get_row_by_id`` follows them.

People decide in ``{data_dir}/database/{db_id}/{db_id}.implied_keys.yaml`` (written once with
the inferred links listed, never overwritten by annotation)::

    confirm:          # always added, whatever the data says
      - Album.ArtistId -> Artist.ArtistId
    remove:           # never added
      - Track.MediaTypeId -> MediaType.MediaTypeId
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from sqlalchemy import case, column, exists, func, select, table
from sqlalchemy.exc import DBAPIError

from nl2sql.schema.cache import atomic_write_text, cache_path
from nl2sql.db.base import DbConnection
from nl2sql.errors import QueryRejectedError
from nl2sql.schema.models import ColumnInfo, DbInfo, ForeignKeyInfo, TableInfo
from nl2sql.schema.words import split_identifier, stem
from nl2sql.sql_guard import validate_read_only
from nl2sql.sql_guard.user_functions import UserFunctions

log = logging.getLogger(__name__)

SAMPLE_ROWS = 2000
#: Share of sampled values that may be missing from the referenced key (orphans happen).
MAX_MISSING_SHARE = 0.02
_KEY_WORDS = {"id", "key", "code", "no", "num", "nbr", "number", "ref"}
_ARROW = re.compile(r"^\s*(.+?)\.([^.]+?)\s*->\s*(.+?)\.([^.]+?)\s*$")
_INTEGER = re.compile(r"INT|SERIAL|NUMBER\(\d+(,\s*0)?\)|^NUMERIC$", re.IGNORECASE)
_TEXT = re.compile(r"CHAR|TEXT|STRING|CLOB|UUID", re.IGNORECASE)


def overrides_path(data_dir: Path, db_id: str) -> Path:
    return cache_path(data_dir, db_id).with_name(f"{db_id}.implied_keys.yaml")


@dataclass(frozen=True)
class Link:
    table: str
    column: str
    referenced_table: str
    referenced_column: str

    def __str__(self) -> str:
        return f"{self.table}.{self.column} -> {self.referenced_table}.{self.referenced_column}"

    @classmethod
    def parse(cls, text: str) -> Link | None:
        match = _ARROW.match(str(text))
        return cls(*match.groups()) if match else None


def is_inferred(fk: ForeignKeyInfo) -> bool:
    return bool((fk.model_extra or {}).get("inferred"))


def _kind(data_type: str) -> str:
    if _INTEGER.search(data_type or ""):
        return "integer"
    if _TEXT.search(data_type or "") or not data_type:
        return "text"
    return (data_type or "").split("(")[0].upper()


def _words(name: str) -> list[str]:
    return [stem(w) for w in split_identifier(name)]


def candidates(info: DbInfo) -> list[Link]:
    """Links suggested by names and types (not yet confirmed by data)."""
    targets: list[tuple[TableInfo, ColumnInfo]] = []
    for target in info.tables:
        if target.is_view:
            continue
        keys = [c for c in target.columns if c.is_primary_key]
        if len(keys) == 1:
            targets.append((target, keys[0]))
    by_column = {}
    by_entity: dict[tuple[str, ...], list[tuple[TableInfo, ColumnInfo]]] = {}
    for target, key in targets:
        by_column.setdefault(key.name.casefold(), []).append((target, key))
        by_entity.setdefault(tuple(_words(target.name.split(".")[-1])), []).append(
            (target, key))
    found: list[Link] = []
    for source in info.tables:
        declared = {c for fk in source.foreign_keys for c in fk.columns}
        single_pk = len(source.primary_key) == 1
        for col in source.columns:
            if col.name in declared or (single_pk and col.is_primary_key):
                continue
            words = _words(col.name)
            # A bare "id" (or "code"...) is the table's own key, even undeclared: not a
            # reference to every other table keyed by "id" whose values happen to cover it.
            generic = len(words) == 1 and words[0] in _KEY_WORDS
            options = [] if generic else list(by_column.get(col.name.casefold(), []))
            if len(words) >= 2 and words[-1] in _KEY_WORDS:
                entity = words[:-1]
                for size in range(len(entity), 0, -1):  # billing_customer_id -> customer
                    options += by_entity.get(tuple(entity[-size:]), [])
            seen = set()
            for target, key in options:
                if target.name == source.name and key.name == col.name:
                    continue
                if (target.name, key.name) in seen or _kind(col.data_type) != _kind(
                        key.data_type):
                    continue
                seen.add((target.name, key.name))
                found.append(Link(source.name, col.name, target.name, key.name))
    return found


def confirm(connection: DbConnection, info: DbInfo, link: Link,
            functions: UserFunctions | None = None) -> str | None:
    """Evidence that the sampled values of ``link``'s column exist in the referenced key, or
    None when they do not (or the column is empty, or the check could reach a user-defined
    function: ``functions``, the catalogue as just read; default: read now)."""
    source, target = info.table(link.table), info.table(link.referenced_table)
    assert source is not None and target is not None
    src = table(source.table_name or source.name, column(link.column),
                schema=source.schema_name or connection.schema)
    ref = table(target.table_name or target.name, column(link.referenced_column),
                schema=target.schema_name or connection.schema)
    sample = (select(src.c[link.column].label("v")).where(src.c[link.column].is_not(None))
              .limit(SAMPLE_ROWS).subquery("sample"))
    distinct = select(sample.c.v).distinct().subquery("d")
    missing = ~exists().where(ref.c[link.referenced_column] == distinct.c.v)
    query = select(func.count(), func.coalesce(func.sum(case((missing, 1), else_=0)), 0)
                   ).select_from(distinct)
    functions = functions or connection.user_functions()
    try:
        for relation in (source, target):  # a view calling one, as for samples and queries
            connection.relation_admission(relation.name)(functions)
        if functions.implicit:  # its `=` or a column's type could reach a user function
            text = str(query.compile(dialect=connection.engine.dialect,
                                     compile_kwargs={"literal_binds": True}))
            connection.query_admission(validate_read_only(text, connection.sqlglot_dialect))(
                functions)
    except QueryRejectedError as exc:
        log.warning("implied key %s not checked: %s", link, exc)
        return None
    try:
        with connection.connect() as conn:
            total, absent = conn.execute(query).one()
    except DBAPIError as exc:
        log.warning("implied key %s not checked: %s", link, str(exc.orig).splitlines()[0])
        return None
    if not total or absent > MAX_MISSING_SHARE * total:
        return None
    return (f"names and types match; {total - absent} of {total} sampled distinct values "
            f"found in {link.referenced_table}.{link.referenced_column}")


def read_overrides(path: Path) -> tuple[set[Link], set[Link]]:
    """``(confirm, remove)`` links of an overrides file (empty when it does not exist)."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return set(), set()
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        log.warning("ignoring %s: %s", path, str(exc).splitlines()[0])
        return set(), set()
    if not isinstance(document, dict):
        log.warning("ignoring %s: expected 'confirm:' and 'remove:' lists", path)
        return set(), set()

    def links(key: str) -> set[Link]:
        parsed = set()
        for item in document.get(key) or []:
            link = Link.parse(item)
            if link is None:
                log.warning("%s: '%s' is not 'table.column -> table.column'", path, item)
            else:
                parsed.add(link)
        return parsed

    return links("confirm"), links("remove")


def _template(db_id: str, inferred: list[Link]) -> str:
    lines = [f"# Implied foreign keys of {db_id}: links the database does not declare.",
             "# annotate-schema infers them from names, types and data; list a link under",
             "# 'confirm' to always keep it or under 'remove' to drop it. This file is yours:",
             "# annotation never rewrites it. Inferred at the first annotation:"]
    lines += [f"#   {link}" for link in inferred] or ["#   (none)"]
    lines += ["confirm: []", "remove: []", ""]
    return "\n".join(lines)


def infer_foreign_keys(connection: DbConnection, info: DbInfo,
                       data_dir: Path | None = None) -> list[Link]:
    """Add the confirmed implied links to ``info``'s tables (marked ``inferred``); returns
    them. Declared keys win; the overrides file (when ``data_dir`` is given) is applied and,
    when missing, written with the inferred links listed."""
    confirmed, removed = (read_overrides(overrides_path(data_dir, info.db_id))
                          if data_dir else (set(), set()))
    for table_info in info.tables:  # a re-run starts from the declared keys only
        table_info.foreign_keys = [fk for fk in table_info.foreign_keys if not is_inferred(fk)]
    added: list[Link] = []
    links = [link for link in candidates(info) if link not in removed]
    functions = connection.user_functions() if links else None  # read once for all
    for link in links:
        evidence = confirm(connection, info, link, functions)
        if evidence is None and link not in confirmed:
            continue
        _add(info, link, evidence or "confirmed by a person in the overrides file")
        added.append(link)
    for link in confirmed - set(added):
        if info.table(link.table) and info.table(link.referenced_table):
            _add(info, link, "confirmed by a person in the overrides file")
            added.append(link)
    if data_dir is not None:
        path = overrides_path(data_dir, info.db_id)
        if not path.exists():
            try:
                atomic_write_text(path, _template(info.db_id, added))
            except OSError as exc:
                log.warning("%s not written: %s", path, exc)
    return added


def _add(info: DbInfo, link: Link, evidence: str) -> None:
    source = info.table(link.table)
    assert source is not None
    taken = {tuple(fk.columns) for fk in source.foreign_keys}
    if (link.column,) in taken:
        return
    source.foreign_keys.append(ForeignKeyInfo(
        columns=[link.column], referenced_table=link.referenced_table,
        referenced_columns=[link.referenced_column], inferred=True, evidence=evidence))
