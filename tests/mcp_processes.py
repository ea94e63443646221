"""``nl2sql-mcp --transport http`` as a real process for tests: started on a free port, its URL
read from the line it prints on stderr."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from conftest import stop_process

NL2SQL_MCP = Path(sys.executable).parent / "nl2sql-mcp"


def start_server(config: Path, workspace: Path, *args: str,
                 env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """``nl2sql-mcp --transport http --port 0`` for ``config``; the process and its URL."""
    return start_serving(
        [str(NL2SQL_MCP), "--transport", "http", "--port", "0", "--config", str(config),
         "--workspace", str(workspace), *args], {**os.environ, **(env or {})},
        says="MCP over streamable HTTP at ")


def start_serving(command: list[str], env: dict[str, str],
                  says: str) -> tuple[subprocess.Popen[str], str]:
    """``command`` started; the process and the first URL of the stderr line that ``says``
    it serves (the rest of its stderr stays readable as ``process.log``)."""
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr],  # type: ignore[union-attr]
                     daemon=True).start()
    seen = []
    try:
        while True:
            line = lines.get(timeout=60)
            seen.append(line)
            if says in line:
                process.log = lines  # type: ignore[attr-defined]  # the rest of its stderr
                return process, next(word for word in line.split()
                                     if word.startswith("http://"))
    except queue.Empty:
        stop_process(process)
        raise AssertionError(f"no URL within 60 s: {''.join(seen)}") from None
