"""Which columns hold secrets (passwords, tokens, keys, card numbers), whose values annotation
never reads.

A password hash in the sample rows goes wherever the schema goes: into the model provider's
prompts, the schema cache, the context index and the web page. ``mark_secret_columns`` marks
such columns (``ColumnInfo.secret``) right after extraction, before anything reads values: a
marked column is left out of the sample rows' query (its cells say ``<withheld>``) and out of
enum screening and the value index, and the schema says its values are withheld. The column
itself stays in the schema: "staff without a password" is still a question with an answer.
The runtime marks a cache again when dbs.yaml's patterns changed since it was made
(``nl2sql.schema.cache.load_db_info``), dropping what a new secret column kept.

What counts as a secret: a column of a type that can hold one (text, binary, JSON: not a
number, date, time or true/false) whose name says credential (``password``, ``passwd``,
``pwd``, ``secret``, ``token``, ``salt``, ``api_key``, ``private_key``..., also run together:
``passwordhash``) or a card or social security number, and whatever dbs.yaml's
``secret_columns`` adds (``table.column`` patterns,
``!`` before one that is not a secret).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from fnmatch import fnmatchcase

from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

__all__ = ["WITHHELD", "is_secret_name", "mark_secret_columns"]

#: A secret column's cell in the sample rows (``ColumnInfo.secret``): its values are not read.
WITHHELD = "<withheld>"

#: A name word that says credential, alone.
_WORDS = frozenset({
    "password", "passwd", "pwd", "passcode", "passphrase", "secret", "token", "salt",
    "credential", "credentials", "apikey", "otp", "totp", "ssn", "cvv", "cvc"})
#: What says credential at the start or end of a name word too, for names written as one
#: word (``passwordhash``, ``hashedpassword``, ``userpwd``, ``secretkey``).
_STEMS = ("password", "passwd", "pwd", "passphrase", "passcode", "apikey", "secretkey",
          "privatekey", "accesskey", "accesstoken", "refreshtoken", "authtoken")
#: Two name words in a row that say it (``api_key``, ``passHash``, ``card_number``).
_PAIRS = frozenset({
    ("api", "key"), ("private", "key"), ("secret", "key"), ("access", "key"),
    ("auth", "key"), ("session", "key"), ("signing", "key"), ("encryption", "key"),
    ("pass", "hash"), ("pass", "word"), ("card", "number"), ("card", "no"),
    ("social", "security")})
#: Types whose values are no secret: numbers, dates and times, true/false (``token_count``,
#: ``password_changed_at`` and ``password_expired`` are not).
_NO_SECRET_TYPE = re.compile(
    r"INT|NUM|DEC|REAL|FLOA|DOUB|MONEY|SERIAL|DATE|TIME|INTERVAL|YEAR|BOOL", re.IGNORECASE)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def is_secret_name(name: str, data_type: str | None = None) -> bool:
    """Whether a column so named (and of ``data_type``, when given) holds a secret by the
    built-in rule."""
    if data_type and _NO_SECRET_TYPE.search(data_type):
        return False
    words = [word.lower() for word in _WORD.findall(name)]
    return (any(word in _WORDS or word.startswith(_STEMS) or word.endswith(_STEMS)
                for word in words)
            or any(pair in _PAIRS for pair in zip(words, words[1:])))


def mark_secret_columns(db_info: DbInfo, patterns: Sequence[str] = ()) -> None:
    """Set ``secret`` on every column of ``db_info`` by the built-in rule and ``patterns``
    (dbs.yaml's ``secret_columns``, recorded as ``db_info.secret_columns``), dropping any
    value a marked column kept: an earlier run's enum values, its sample cells."""
    db_info.secret_columns = list(patterns)
    for table in db_info.tables:
        withheld = []
        for column in table.columns:
            column.secret = _is_secret(table, column, patterns)
            if column.secret:
                column.is_enum, column.enum_values, column.enum_candidates = False, [], None
                column.domain_values = column.distinct_count = None
                column.enum_decision = column.enum_reasoning = column.enum_model = None
                column.json_keys = None
                withheld.append(column.name)
        if withheld and table.sample_data_csv:
            table.sample_data_csv = _withheld_cells(table.sample_data_csv, withheld)


def _withheld_cells(sample_csv: str, names: list[str]) -> str:
    """The sample rows with the cells of the columns ``names`` said ``WITHHELD``."""
    rows = list(csv.reader(io.StringIO(sample_csv)))
    if not rows:
        return sample_csv
    positions = [i for i, name in enumerate(rows[0]) if name in names]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(rows[0])
    for row in rows[1:]:
        writer.writerow([WITHHELD if i in positions else cell for i, cell in enumerate(row)])
    return buffer.getvalue()


def _is_secret(table: TableInfo, column: ColumnInfo, patterns: Sequence[str]) -> bool:
    secret = is_secret_name(column.name, column.data_type)
    for pattern in patterns:  # the last pattern that matches decides
        negated = pattern.startswith("!")
        if _matches(pattern.removeprefix("!"), table, column):
            secret = not negated
    return secret


def _matches(pattern: str, table: TableInfo, column: ColumnInfo) -> bool:
    """``pattern`` against ``table.column`` (any table for a pattern without a dot), glob
    wildcards, case ignored."""
    pattern = pattern.lower()
    names = [f"{table.name}.{column.name}".lower()]
    if table.table_name:  # several schemas: the table's own name too
        names.append(f"{table.table_name}.{column.name}".lower())
    if "." not in pattern:
        names = [column.name.lower()]
    return any(fnmatchcase(name, pattern) for name in names)
