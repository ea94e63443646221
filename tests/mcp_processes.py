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
    process = subprocess.Popen(
        [str(NL2SQL_MCP), "--transport", "http", "--port", "0", "--config", str(config),
         "--workspace", str(workspace), *args],
        env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr],  # type: ignore[union-attr]
                     daemon=True).start()
    seen = []
    try:
        while True:
            line = lines.get(timeout=60)
            seen.append(line)
            if "MCP over streamable HTTP at " in line:
                process.log = lines  # type: ignore[attr-defined]  # the rest of its stderr
                return process, line.split(" at ", 1)[1].split()[0]
    except queue.Empty:
        stop_process(process)
        raise AssertionError(f"no URL within 60 s: {''.join(seen)}") from None
