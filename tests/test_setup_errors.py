"""Set-up mistakes are one line naming the fix, exit 2, in every command: a broken dbs.yaml (one
place checks it for all of them), a backend whose extra is not installed, an impossible port or
time limit, a folder given as --config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nl2sql.cli import eval as eval_cli
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ConfigError

BIN = Path(sys.executable).parent

#: One broken dbs.yaml per command; each kind of mistake is met by at least one command, and
#: every kind is checked for its message below.
BROKEN = {
    "model": ("model: 12\n", "line 1: 'model' must be a pydantic-ai model string such as "
                             "openai:gpt-4o-mini (got 12); fix it."),
    "agent": ("agent:\n  retries: many\n", "line 2: 'agent:' setting 'retries': input should be "
                                           "a valid integer"),
    "db id": ("databases:\n  bad id!:\n    type: sqlite\n    path: x.db\n",
              "line 2: database 'bad id!': a database id is 1 to 64 letters, digits, '_', '-' "
              "and '.' (not starting with '-' or '.'); rename it, e.g. 'bad_id'."),
    "field": ("databases:\n  shop:\n    type: postgres\n", "line 2: database 'shop': field "
                                                           "'dbname' is required"),
    "yaml": ("databases:\n  shop: [\n", "fix the YAML syntax there."),
    "agent shape": ("agent: 5\n", "line 1: 'agent' must be a mapping of settings such as "
                                  "'retries: 4' (got 5); fix it."),
    "include_sample": ("include_sample: 'no'\n", "'include_sample' must be true or false"),
    # a value of none of a field's forms: the field and its forms, not pydantic's "schema.str"
    "union": ("databases:\n  pg:\n    type: postgres\n    host: h\n    dbname: x\n"
              "    schema: {a: 1}\n", "line 6: database 'pg': field 'schema' should be text or "
                                      "a list of text values; fix it."),
}
COMMANDS = [
    (["annotate-schema", "--all"], "model"),
    (["nl2sql-mcp"], "agent"),
    (["nl2sql-secrets", "rotate-key"], "db id"),
    (["nl2sql-ask", "How many books?", "--model", "openai:gpt-4o-mini"], "agent shape"),
    (["nl2sql-eval", "--set", "bookstore", "--predictions", "p.jsonl"], "field"),
    (["nl2sql-audit", "--json"], "yaml"),
    (["nl2sql-web"], "include_sample"),
]


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True,
                          cwd=cwd, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, **env})


@pytest.mark.parametrize(("argv", "kind"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_a_broken_dbs_yaml_exits_2_with_one_line(tmp_path: Path, argv: list[str],
                                                 kind: str) -> None:
    text, expected = BROKEN[kind]
    config = tmp_path / "dbs.yaml"
    config.write_text(text)
    done = _run([*argv, "--config", str(config)], tmp_path,
                NL2SQL_SECRETS_KEY_FILE=str(tmp_path / "secret.key"))
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: {config}"), \
        done.stderr
    assert expected in done.stderr
    assert config.read_text() == text  # nl2sql-secrets changed nothing


@pytest.mark.parametrize("argv", [c[0] for c in COMMANDS], ids=[c[0][0] for c in COMMANDS])
def test_every_command_reports_a_mistake_in_the_agent_block(tmp_path: Path,
                                                            argv: list[str]) -> None:
    """The ``agent:`` block is checked by every command that reads dbs.yaml, not only by the
    ones that run an agent."""
    config = tmp_path / "dbs.yaml"
    config.write_text("agent:\n  history_tokens: -5\n")
    done = _run([*argv, "--config", str(config)], tmp_path,
                NL2SQL_SECRETS_KEY_FILE=str(tmp_path / "secret.key"))
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"error: {config} line 2: 'agent:' setting 'history_tokens'")
    assert done.stderr.endswith("; fix or remove it.\n"), done.stderr


@pytest.mark.parametrize("kind", BROKEN)
def test_each_mistake_names_the_line_and_the_fix(tmp_path: Path, kind: str) -> None:
    text, expected = BROKEN[kind]
    config = tmp_path / "dbs.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError) as raised:
        DbConnectionConfigs.load(config)
    message = str(raised.value)
    assert message.startswith(str(config)) and expected in message and "\n" not in message


def test_a_db_id_in_hints_never_needs_quoting(tmp_path: Path) -> None:
    for good in ("sales", "sales_2024", "lake.v2", "eu-west", "_tmp", "9lives"):
        (tmp_path / "dbs.yaml").write_text(f"databases:\n  {good}:\n    type: sqlite\n"
                                           f"    path: x.db\n")
        assert good in DbConnectionConfigs.load(tmp_path / "dbs.yaml")
    for bad in ("-rf", ".hidden", "a/b", "it's", "x" * 65, "semi;colon"):
        (tmp_path / "dbs.yaml").write_text(f"databases:\n  \"{bad}\":\n    type: sqlite\n"
                                           f"    path: x.db\n")
        with pytest.raises(ConfigError, match="rename it"):
            DbConnectionConfigs.load(tmp_path / "dbs.yaml")


#: What each extra adds to the base install, blocked at the import boundary: a meta-path finder
#: in the child process raises ModuleNotFoundError for them, as an install without the extra
#: would (checked by hand in a venv with `pip install .` only: the same lines).
_BLOCKER = """
import sys
BLOCKED = {blocked!r}
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, NotInstalled())
sys.argv = {argv!r}
from nl2sql.cli.{module} import main
sys.exit(main())
"""
EXTRAS = ["duckdb", "duckdb_engine", "pyarrow", "pyspark", "grpc", "MySQLdb", "pymysql",
          "matplotlib", "adbc_driver_sqlite"]


@pytest.mark.parametrize(("entry", "extra", "missing"), [
    ("lake:\n    type: duckdb\n    path: lake.duckdb", "duckdb", "pyarrow"),
    ("warehouse:\n    type: spark\n    remote: sc://127.0.0.1:9", "spark", "pyarrow"),
    ("shop:\n    type: mysql\n    dbname: shop", "mysql", "MySQLdb"),
], ids=["duckdb", "spark", "mysql"])
def test_a_backend_without_its_extra_names_the_install_command(
        tmp_path: Path, entry: str, extra: str, missing: str) -> None:
    (tmp_path / "dbs.yaml").write_text(f"databases:\n  {entry}\n")
    db_id = entry.partition(":")[0]
    code = _BLOCKER.format(blocked=EXTRAS, argv=["annotate-schema", db_id], module="annotate")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"error: The {'DuckDB' if extra == 'duckdb' else 'Spark SQL' if extra == 'spark' else 'MySQL'}"
        f" backend (type: {extra}) needs the '{extra}' extra ({missing} is not installed): run "
        f"`pip install -e '.[{extra}]'` in the nl2sql clone.")


def test_annotate_says_a_broken_model_once_and_keeps_the_offline_steps(tmp_path: Path) -> None:
    """An unknown model string is the whole run's mistake: one line, exit 2 (it was an error
    per database and a summary line); each database's offline steps are saved all the same."""
    (tmp_path / "dbs.yaml").write_text("model: no such model\n")
    done = _run(["annotate-schema", "--all", "--data-dir", str(tmp_path / "data")], tmp_path)
    assert done.returncode == 2 and done.stderr == (
        "error: Unknown model 'no such model'. Use a pydantic-ai model string such as "
        "'openai:gpt-4o' with --model / NL2SQL_MODEL.\n")
    assert "LLM steps skipped: the model 'no such model' cannot be used (below)" in done.stdout
    assert (tmp_path / "data" / "database" / "bookstore" / "bookstore.db_info.json").is_file()


def test_an_impossible_port_is_one_line(tmp_path: Path) -> None:
    done = _run(["nl2sql-mcp", "--transport", "http", "--port", "99999"], tmp_path)
    assert done.returncode == 2 and done.stderr == (
        "nl2sql-mcp: error: argument --port: must be a port number from 0 (any free port) to "
        "65535 (see nl2sql-mcp --help)\n")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1"])
def test_eval_timeout_must_be_finite_and_positive(value: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_cli.main(["--set", "bookstore", "--predictions", "p", f"--timeout={value}"]) == 2
    err = capsys.readouterr().err
    assert err == ("nl2sql-eval: error: argument --timeout: must be a finite number more than 0 "
                   "(see nl2sql-eval --help)\n")


def test_config_may_name_the_folder_of_dbs_yaml(tmp_path: Path) -> None:
    (tmp_path / "dbs.yaml").write_text("model: openai:gpt-4o-mini\n")
    assert DbConnectionConfigs.load(tmp_path).model == "openai:gpt-4o-mini"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError) as raised:
        DbConnectionConfigs.load(empty)
    assert str(raised.value) == (
        f"{empty} is a folder with no dbs.yaml in it; pass the path of the file (--config "
        f"path/to/dbs.yaml) or create {empty / 'dbs.yaml'} from dbs.yaml.example.")


def test_a_dbs_yaml_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    """A file saved in another encoding (a Latin-1 password) is one line naming the line, in
    the commands and in nl2sql-secrets' edits; the byte is not shown (it may be a password's)."""
    from nl2sql.config.secrets import set_db_password

    config = tmp_path / "dbs.yaml"
    config.write_bytes(b"databases:\n  shop:\n    type: postgres\n    dbname: shop\n"
                       b"    password: caf\xe9\n")
    done = _run(["nl2sql-mcp", "--config", str(config)], tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr == f"error: {config} line 5 is not UTF-8 text; save the file as UTF-8.\n"
    with pytest.raises(ConfigError, match="line 5 is not UTF-8 text") as raised:
        set_db_password(config, "shop", "secret")
    assert "xe9" not in str(raised.value) and "caf" not in str(raised.value)
