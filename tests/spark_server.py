"""A throwaway Spark Connect server for the test session, and loading SQLite data into it.

The server is the one shipped inside the installed ``pyspark`` package (``pyspark[connect]``,
the ``spark`` extra): ``spark-submit --class ...SparkConnectServer``, the class
``sbin/start-connect-server.sh`` starts, run in the foreground as our own child process (its own
process group, so stopping it also stops the JVM it forks). It listens on a free port of
127.0.0.1, keeps its warehouse, Derby/Ivy files and log in one temporary folder, and uses the
in-memory catalog (no Hive metastore), ``local[2]`` and a modest driver heap.
"""

from __future__ import annotations

import datetime
import decimal
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DRIVER_MEMORY = os.environ.get("NL2SQL_TEST_SPARK_MEMORY", "1g")


def spark_unavailable_reason() -> str | None:
    """Why this machine cannot run the test server (None when it can)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed (Spark needs a JDK 17 or 21 on PATH or JAVA_HOME)"
    try:
        import pyspark  # noqa: F401
        from pyspark.sql.connect.session import SparkSession  # noqa: F401
    except ImportError as exc:
        return f"pyspark[connect] is not installed ({exc}); pip install -e '.[spark]'"
    return None


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_group(process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM the process group a server was started in (``start_new_session``), SIGKILL what
    is left after 20 s; nothing when it has already exited."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def log_tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` of a server's log ('' when there is none), for an error message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextmanager
def requests_sent() -> Iterator[list[str]]:
    """The requests this process's Spark Connect clients send while the block runs, in order:
    an ExecutePlan as its command or relation kind (``sql_command``, ``sql``...), an
    AnalyzePlan as ``analyze <what>``."""
    from pyspark.sql.connect.client.core import SparkConnectClient

    sent: list[str] = []
    execute, analyze = SparkConnectClient._execute_and_fetch_as_iterator, \
        SparkConnectClient._analyze

    def counted_execute(self, request, *args, **kwargs):  # noqa: ANN001, ANN202
        plan = request.plan
        sent.append(plan.command.WhichOneof("command_type") if plan.HasField("command")
                    else plan.root.WhichOneof("rel_type"))
        return execute(self, request, *args, **kwargs)

    def counted_analyze(self, method, **kwargs):  # noqa: ANN001, ANN202
        sent.append(f"analyze {method}")
        return analyze(self, method, **kwargs)

    SparkConnectClient._execute_and_fetch_as_iterator = counted_execute  # type: ignore[method-assign]
    SparkConnectClient._analyze = counted_analyze  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        SparkConnectClient._execute_and_fetch_as_iterator = execute  # type: ignore[method-assign]
        SparkConnectClient._analyze = analyze  # type: ignore[method-assign]


#: The server's log: warnings and errors, and the scheduler's jobs (submitted, cancelled).
LOG_CONFIG = """\
rootLogger.level = warn
rootLogger.appenderRef.stdout.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.scheduler.name = org.apache.spark.scheduler.DAGScheduler
logger.scheduler.level = info
"""


class SparkConnectServer:
    """One Spark Connect server process; ``start()`` returns when it answers a query."""

    def __init__(self, folder: Path, *, port: int | None = None,
                 memory: str = DRIVER_MEMORY) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.memory = memory
        self.log_path = folder / "spark-connect.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def remote(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        home = spark_home()
        warehouse = self.folder / "warehouse"
        confs = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.sql.warehouse.dir": str(warehouse),
            "spark.sql.catalogImplementation": "in-memory",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "4",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.jars.ivy": str(self.folder / "ivy"),
            "spark.local.dir": str(self.folder / "local"),
        }
        # The suite is CPU-bound on 2 cores beside the JVM: Spark's INFO log (a line per session
        # access, per code generation, per task) and the JIT's optimizing compiler, whose work
        # the short test queries never pay back, cost 10-30% of the JVM's CPU (three Spark tests:
        # 212-237 s of CPU with both, 167-185 s without; two rounds each). The scheduler's INFO
        # lines stay: jobs submitted and cancelled are what a failed stop test is read from.
        # With the optimizing compiler off the JVM reserves the small code cache of a
        # non-tiered VM (48 MB), which Spark's generated code filled within a few hundred
        # queries: "Out of space in CodeCache for adapters" stopped the SparkContext and every
        # later query failed ("Cannot call methods on a stopped SparkContext"), now and then
        # in nl2sql-eval's Spark test. So the cache gets the tiered VM's size back.
        log_config = self.folder / "log4j2.properties"
        log_config.write_text(LOG_CONFIG)
        java_options = (f"-Dderby.system.home={self.folder} "
                        f"-Dlog4j2.configurationFile={log_config} -XX:TieredStopAtLevel=1 "
                        f"-XX:ReservedCodeCacheSize=240m")
        args = [str(home / "bin" / "spark-submit"), "--class", CONNECT_CLASS,
                "--name", "nl2sql-tests", "--master", "local[2]",
                "--driver-memory", self.memory,
                "--driver-java-options", java_options]
        for key, value in confs.items():
            args += ["--conf", f"{key}={value}"]
        return args

    def start(self, timeout: float = 120.0) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOG_DIR": str(self.folder),
               "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": os.environ.get(
                   "PYSPARK_PYTHON", "python3")}
        env.pop("SPARK_REMOTE", None)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env, cwd=self.folder, start_new_session=True)
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"The Spark Connect server exited with code "
                                   f"{self.process.returncode}; see {self.log_path}:\n"
                                   f"{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                time.sleep(0.5)
                continue
            session = self.session()
            try:
                session.sql("SELECT 1").collect()
                return
            except Exception:  # noqa: BLE001 - not ready yet: retry until the deadline
                time.sleep(0.5)
            finally:
                session.stop()
        raise RuntimeError(f"The Spark Connect server did not answer within {timeout:g} s; "
                           f"see {self.log_path}:\n{self.log_tail()}")

    def session(self) -> Any:
        from pyspark.sql.connect.session import SparkSession

        return SparkSession.builder.remote(self.remote).create()

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def code_cache_full(self) -> bool:
        """Whether the JVM said its code cache was full (it then stops compiling, and an
        adapter it cannot make stops the SparkContext), in any of the server's lives."""
        try:
            return "CodeCache is full" in self.log_path.read_text(errors="replace")
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM the server's process group, SIGKILL what is left after 20 s."""
        process, self.process = self.process, None
        stop_group(process)

    def restart(self, timeout: float = 120.0) -> None:
        """Stop and start again on the same port (the in-memory catalog starts empty)."""
        self.stop()
        self.start(timeout)


# -- loading SQLite tables ------------------------------------------------------------------

_Converter = Callable[[Any], Any] | None


def _spark_type(declared: str) -> tuple[str, _Converter]:
    """The Spark SQL type for a SQLite declared type, and a value converter when needed."""
    text = (declared or "").upper()
    if "INT" in text:
        return "INT", None
    if match := re.match(r"(?:NUMERIC|DECIMAL)\s*\((\d+)\s*,\s*(\d+)\)", text):
        return f"DECIMAL({match[1]},{match[2]})", _decimal
    if "DATETIME" in text or "TIMESTAMP" in text:
        return "TIMESTAMP", _timestamp
    if "DATE" in text:
        return "DATE", _date
    if any(word in text for word in ("NUMERIC", "REAL", "FLOA", "DOUB")):
        return "DOUBLE", _float
    if "BLOB" in text:
        return "BINARY", None
    return "STRING", _text


def _decimal(value: Any) -> decimal.Decimal | None:
    return None if value is None else decimal.Decimal(str(value))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _timestamp(value: Any) -> datetime.datetime | None:
    return None if value in (None, "") else datetime.datetime.fromisoformat(str(value))


def _date(value: Any) -> datetime.date | None:
    return None if value in (None, "") else datetime.date.fromisoformat(str(value)[:10])


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def load_sqlite(session: Any, source: sqlite3.Connection, database: str, *,
                tables: Sequence[str] | None = None, comments: dict[str, str] | None = None,
                threads: int = 4) -> list[str]:
    """Copy the tables of a SQLite database into Spark database ``database`` (created).

    Each table is created with ``CREATE TABLE ... USING parquet`` (types mapped from the
    declared SQLite types, NOT NULL kept, ``comments`` as table comments) and filled with one
    ``insertInto``; tables load in parallel. Spark table names hold only letters, digits and
    ``_``: other characters become ``_`` (Northwind's ``Order Details`` is ``order_details``).
    Returns the Spark table names.
    """
    session.sql(f"CREATE DATABASE IF NOT EXISTS {quote(database)}")
    names = list(tables or [name for (name,) in source.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name")])
    comments = comments or {}
    plans = []
    for name in names:
        columns = source.execute(f'PRAGMA table_info("{name}")').fetchall()
        types = [_spark_type(column[2]) for column in columns]
        ddl = ", ".join(f"{quote(column[1])} {kind}{' NOT NULL' if column[3] else ''}"
                        for column, (kind, _) in zip(columns, types))
        rows = source.execute(f'SELECT * FROM "{name}"').fetchall()
        converters = [conv for _, conv in types]
        if any(converters):
            rows = [tuple(conv(value) if conv else value for conv, value in zip(converters, row))
                    for row in rows]
        plans.append((re.sub(r"\W", "_", name), ddl, rows))

    def load(plan: tuple[str, str, list[tuple[Any, ...]]]) -> None:
        name, ddl, rows = plan
        target = f"{quote(database)}.{quote(name)}"
        comment = comments.get(name)
        comment_sql = f" COMMENT '{comment}'" if comment else ""
        session.sql(f"CREATE TABLE {target} ({ddl}) USING parquet{comment_sql}")
        if rows:
            schema = session.table(target).schema
            session.createDataFrame(rows, schema=schema).write.insertInto(target)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(load, plans))
    return [plan[0] for plan in plans]
