"""Options every nl2sql command shares: where the registry, the caches and the results are,
and how much to log. Flags win over the ``NL2SQL_*`` variables, which win over dbs.yaml."""

from __future__ import annotations

import argparse

from nl2sql.config import ENV_CONFIG, ENV_DATA_DIR, ENV_WORKSPACE


def add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help=f"path of dbs.yaml (default: ${ENV_CONFIG} or ./dbs.yaml)")
    parser.add_argument("--data-dir", help=f"folder of the schema caches and conversations "
                                           f"(default: ${ENV_DATA_DIR})")
    parser.add_argument("--workspace", help=f"folder for result files (default: ${ENV_WORKSPACE})")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
