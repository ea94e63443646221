"""``nl2sql-mcp``'s console script: the server's modules imported with the cyclic garbage
collector paused, then what they made frozen out of later collections.

Importing the server (the MCP SDK, pydantic, nl2sql's models) allocates objects that live as
long as the process, and every automatic collection during the imports re-scans all of them:
about 9% of the CPU time to the ``tools/list`` answer (``bench/mcp_cold_start.py``: 0.670 ->
0.610 s, the bare SDK server 0.585 s). Reference counting frees what dies meanwhile; a cycle
made during the imports waits for the next collection. ``gc.freeze()`` then moves what the
imports made to the permanent generation, so the collections while serving skip it.
``nl2sql.cli.mcp`` itself stays free of this: importing it (tests, other code) changes nothing.
"""

from __future__ import annotations

import argparse
import gc


def build_parser() -> argparse.ArgumentParser:
    """The command's options (``nl2sql.cli.mcp``'s parser)."""
    from nl2sql.cli.mcp import build_parser as parser

    return parser()


def main(argv: list[str] | None = None) -> int:
    gc.disable()
    try:
        from nl2sql.cli import mcp
    finally:
        gc.enable()
    gc.freeze()
    return mcp.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
