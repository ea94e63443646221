"""What enum screening measures and its thresholds, shared by the screening code
(``enums.py``) and the per-backend sampling hooks of the schema inspectors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nl2sql.schema.models import EnumValueCount


@dataclass(frozen=True)
class EnumScreeningSettings:
    """Thresholds of enum screening (defaults in parentheses).

    - candidate: at most ``max_values`` (20) distinct non-null values, at most ``max_ratio`` (0.5)
      distinct values per non-null row, no value longer than ``max_value_length`` (64) chars;
    - clear-cut enum without a model: at most ``clear_cut_max_values`` (10) values, at least
      ``clear_cut_min_rows`` (20) non-null rows and at most ``clear_cut_max_ratio`` (0.2)
      distinct values per row, i.e. each value occurs five times or more on average;
    - value domain: a column read whole with at most ``domain_max_values`` (30) distinct values,
      ``domain_max_chars`` (120) characters in all, shows them all in the schema, enum or not
      (weekdays and months, not 29 supplier names);
    - tables above ``sample_threshold_rows`` (100,000) are read through statistics or a sample
      of about ``sample_size`` (50,000) rows.
    """

    max_values: int = 20
    max_ratio: float = 0.5
    max_value_length: int = 64
    clear_cut_max_values: int = 10
    clear_cut_min_rows: int = 20
    clear_cut_max_ratio: float = 0.2
    domain_max_values: int = 30
    domain_max_chars: int = 120
    sample_threshold_rows: int = 100_000
    sample_size: int = 50_000
    sqlite_sample_windows: int = 10


@dataclass
class ColumnStats:
    """What screening saw for one column: values with counts, distinct count, rows looked at."""

    values: list[EnumValueCount] = field(default_factory=list)
    distinct_count: int = 0  # distinct non-null values (a lower bound when sampled)
    non_null_rows: int = 0
    max_length: int = 0
    source: str = "table"  # "table", "sample" or "pg_stats"


@dataclass(frozen=True)
class Relation:
    """One table (or view) of a batched offline step: where it is, which columns are read."""

    key: str  # the caller's name for it (``TableInfo.name``)
    schema: str
    name: str
    columns: Sequence[str]
    order_by: Sequence[str] = ()
