"""A cap on the memory of nl2sql's own process: its data segment (``RLIMIT_DATA``).

DuckDB runs inside the process of every face that queries it (the MCP server, ``nl2sql-ask``,
``nl2sql-eval``, ``annotate-schema``). Its ``memory_limit`` bounds what its buffer manager holds
(joins, sorts, aggregates), but not a value a function builds whole: with a 5 s time limit,
``SELECT count(*) FROM (SELECT unnest(generate_series(1, 300000000)))`` ran 42 s and reached
14.8 GB, and neither the limit nor an interrupt stopped it. Under the cap such an allocation
fails, DuckDB reports it as out of memory, and the process and its next call go on.
``NL2SQL_MAX_MEMORY`` sets the cap (``4GB`` by default; ``0`` for none). A notebook's process is
the user's: ``nl2sql.ask()`` does not cap it.

DuckDB's ``memory_limit`` must stay well below the cap (``warn_near_cap``): at equal sizes a
list that failed on the cap left DuckDB holding ~750 MB of 1 GB, and the next call's result
could not be formatted.
"""

from __future__ import annotations

import logging
import os
import re
import resource

from nl2sql.errors import ConfigError

logger = logging.getLogger(__name__)

ENV_MAX_MEMORY = "NL2SQL_MAX_MEMORY"
DEFAULT_MAX_MEMORY = 4 << 30
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(I?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"4GB"``, ``"512MiB"``, ``"1073741824"`` -> bytes (units of 1024)."""
    match = _SIZE.match(text)
    if match is None:
        raise ConfigError(f"{ENV_MAX_MEMORY}={text!r} is not a size; write e.g. 4GB, 512MB or "
                          f"0 for no limit.")
    number, unit = float(match.group(1)), match.group(2).upper()
    return int(number * 1024 ** " KMGT".index(unit or " "))


def limit_process_memory() -> int | None:
    """Cap this process's data segment at ``NL2SQL_MAX_MEMORY`` (default 4 GB); returns the
    cap in bytes, or None when there is none."""
    text = os.environ.get(ENV_MAX_MEMORY, "").strip()
    limit = parse_size(text) if text else DEFAULT_MAX_MEMORY
    if limit <= 0:
        return None
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    logger.debug("memory of this process capped at %d bytes (%s)", limit, ENV_MAX_MEMORY)
    return limit


def warn_near_cap(what: str, engine_limit: str, setting: str) -> None:
    """Log a warning when ``engine_limit`` (an engine's own memory limit inside this process,
    e.g. DuckDB's ``memory_limit``) is more than half of this process's cap."""
    cap, _hard = resource.getrlimit(resource.RLIMIT_DATA)
    if cap == resource.RLIM_INFINITY:
        return
    try:
        limit = parse_size(engine_limit)
    except ConfigError:  # a form this does not read (DuckDB's "80%"): not judged
        return
    if limit > cap // 2:
        logger.warning("%s: %s %s is more than half of this process's memory cap (%s, %.1f "
                       "GB): a query that fails on the cap may leave the engine holding the "
                       "memory the next call needs; set %s to at most %.1f GB or raise %s.",
                       what, setting, engine_limit, ENV_MAX_MEMORY, cap / 2**30, setting,
                       cap / 2 / 2**30, ENV_MAX_MEMORY)
