"""A team's load on two servers sharing one PostgreSQL store: USERS users (user tokens and
identity-provider JWTs) x CALLS mixed calls each (``tests/team_servers.py``: listing, queries,
schema, search, saved results, a row by key, and one refused call in ten), every user at once,
each call going to the next server in turn (no sticky sessions). Then every audit record must
be in the store: one per call, per user, the refused ones marked so.

    .venv/bin/python bench/team_load.py [--users 20] [--calls 100]

Needs the PostgreSQL server of the tests (127.0.0.1:5432, user postgres; NL2SQL_TEST_PG_*).
Prints calls/s, latency percentiles and the audit check; exits 1 when a call failed or a record
is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from identity_provider import identity_provider  # noqa: E402 - tests/ is on sys.path
from team_servers import run_load, start_server, stop_server  # noqa: E402

PG = (os.environ.get("NL2SQL_TEST_PG_HOST", "127.0.0.1"),
      os.environ.get("NL2SQL_TEST_PG_PORT", "5432"), os.environ.get("NL2SQL_TEST_PG_USER", "postgres"))
BIN = Path(sys.executable).parent


def _admin(statement: str) -> None:
    host, port, user = PG
    with psycopg.connect(f"host={host} port={port} user={user} dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(statement)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--calls", type=int, default=100, help="calls per user")
    args = parser.parse_args()
    store = f"nl2sql_bench_store_{uuid.uuid4().hex[:8]}"
    _admin(f"CREATE DATABASE {store}")
    folder = Path(tempfile.mkdtemp(prefix="nl2sql-team-load-"))
    servers = []
    try:
        with identity_provider() as idp:
            shutil.copyfile(ROOT / "tests/data/samples/chinook/chinook.sqlite",
                            folder / "chinook.sqlite")
            config = folder / "dbs.yaml"
            host, port, user = PG
            config.write_text(yaml.safe_dump({
                "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
                "store": f"postgresql://{user}@{host}:{port}/{store}",
                "server": {"oidc": idp.oidc_settings(),
                           "groups": {"analysts": {"databases": ["chinook"]}}}}))
            subprocess.run([str(BIN / "annotate-schema"), "chinook", "--config", str(config)],
                           capture_output=True, text=True, check=True)  # offline steps only
            tokens = []
            for n in range(args.users):
                if n % 4 == 3:  # one user in four signs in with the identity provider
                    tokens.append(idp.token(f"jwt{n}", ["analysts"], lifetime=3600))
                    continue
                done = subprocess.run(
                    [str(BIN / "nl2sql-secrets"), "add-user", f"user{n}", "--group", "analysts",
                     "--config", str(config)], capture_output=True, text=True, check=True)
                tokens.append(done.stdout.strip().splitlines()[-1])
            servers = [start_server(config, folder / "ws") for _ in range(2)]
            urls = [url for _, url in servers]
            result = asyncio.run(run_load(urls, tokens, args.calls))
            for process, _ in servers:
                stop_server(process)
            servers = []
        done = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config), "--json"],
                              capture_output=True, text=True, check=True)
        records = done.stdout.splitlines()
        expected = args.users * args.calls
        load = os.getloadavg()
        print(f"{args.users} users x {args.calls} calls over 2 servers (load "
              f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}): {result.calls} calls in "
              f"{result.seconds:.1f} s ({result.calls / result.seconds:.0f} calls/s); latency "
              f"p50 {result.percentile(0.5):.0f} ms, p95 {result.percentile(0.95):.0f} ms, "
              f"p99 {result.percentile(0.99):.0f} ms; {result.refused} refused as planned, "
              f"{len(result.errors)} errors; audit records {len(records)} of {expected}")
        for error in result.errors[:5]:
            print(f"  error: {error}")
        return 0 if not result.errors and len(records) == expected else 1
    finally:
        for process, _ in servers:
            stop_server(process)
        shutil.rmtree(folder, ignore_errors=True)
        _admin(f"DROP DATABASE IF EXISTS {store} WITH (FORCE)")


if __name__ == "__main__":
    raise SystemExit(main())
