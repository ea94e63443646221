"""A private, throwaway MariaDB server for the tests that must change the server's GLOBAL state.

The shared test server (127.0.0.1:3306) is used by every test, and under pytest-xdist by several
workers at once: a test that sets a global variable there (``SET GLOBAL sql_mode``, a stored
function whose side effect is ``SET GLOBAL max_prepared_stmt_count``) changes what tests running
beside it see. Those tests use this server instead: ``mariadb-install-db`` makes a data folder
in the session's temporary folder, and ``mariadbd`` runs as our child process on a free port of
127.0.0.1 (root without a password, small InnoDB files, no binary log, no fsync: it only lives
for the session). One server per session, so one per xdist worker; stopped at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from spark_server import free_port, log_tail, stop_group  # the same helpers as the Spark server's

#: Server options for both the bootstrap and the server: small and fast, nothing kept.
OPTIONS = ["--innodb-log-file-size=4M", "--innodb-buffer-pool-size=32M",
           "--innodb-flush-method=nosync", "--innodb-doublewrite=0", "--skip-log-bin"]
_SEARCH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin",
                           "/usr/local/mysql/bin"])


def _program(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name, path=_SEARCH)
        if found:
            return found
    return None


def mariadb_unavailable_reason() -> str | None:
    """Why this machine cannot start a private server (None when it can)."""
    if _program("mariadbd") is None or _program("mariadb-install-db", "mysql_install_db") is None:
        return ("MariaDB's server programs (mariadbd, mariadb-install-db) are not installed "
                "(Debian package mariadb-server)")
    return None


class PrivateMariaDB:
    """One ``mariadbd`` process over a fresh data folder; ``start()`` returns when it answers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = 0
        self.log_path = folder / "mariadbd.err"
        self.process: subprocess.Popen[bytes] | None = None
        self._user = pwd.getpwuid(os.getuid()).pw_name  # mariadbd refuses root without --user

    @property
    def address(self) -> dict[str, Any]:
        """Where to connect, as ``mysql_admin`` / ``mysql_config`` take it."""
        return {"host": "127.0.0.1", "port": self.port, "user": "root"}

    def start(self, timeout: float = 120.0) -> None:
        data = self.folder / "data"
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / "install.log", "wb") as log:
            subprocess.run([_program("mariadb-install-db", "mysql_install_db"), "--no-defaults",
                            f"--datadir={data}", f"--user={self._user}", "--skip-test-db",
                            "--auth-root-authentication-method=normal", *OPTIONS],
                           stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           check=True, timeout=timeout)
        for _attempt in range(3):  # a free port may be taken before the server binds it
            self.port = free_port()
            self.process = subprocess.Popen(
                [_program("mariadbd"), "--no-defaults", f"--datadir={data}",
                 f"--user={self._user}", f"--port={self.port}", "--bind-address=127.0.0.1",
                 f"--socket={self.folder / 'mariadbd.sock'}",
                 f"--pid-file={self.folder / 'mariadbd.pid'}", f"--log-error={self.log_path}",
                 *OPTIONS],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                start_new_session=True)
            if self._wait_ready(timeout):
                return
        raise RuntimeError(f"The private MariaDB server did not start; see {self.log_path}:\n"
                           f"{self.log_tail()}")

    def _wait_ready(self, timeout: float) -> bool:
        import pymysql

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            try:
                pymysql.connect(**self.address, connect_timeout=2).close()
                return True
            except pymysql.err.OperationalError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"The private MariaDB server did not answer within {timeout:g} s; "
                           f"see {self.log_path}:\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after 20 s."""
        process, self.process = self.process, None
        stop_group(process)
