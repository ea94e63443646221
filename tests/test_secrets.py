"""Secrets: the key file, ENC: values, the nl2sql-secrets CLI and its error edge.

Every failure test pins the message shape and checks that no password, key or token leaks into
stderr or the logs. The autouse fixture in conftest points NL2SQL_SECRETS_KEY_FILE into tmp_path.
"""

from __future__ import annotations

import io
import logging
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import text

from conftest import PG_HOST, PG_PORT, REPO_ROOT, pg_execute
from nl2sql.config import secrets
from nl2sql.cli import secrets as cli
from nl2sql.cli.errors import run_cli
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.db.base import create_connection
from nl2sql.errors import ConfigError, Nl2SqlError, NoAnswerError, SecretsError

PASSWORD = "s3cr%t p@ss:/'wörd"

DBS_YAML = """\
# nl2sql databases -- hand-written, with comments that must survive
databases:
  # the shop, read-only role
  shop:
    type: postgres
    host: db.example.com   # production replica
    port: 5432
    dbname: shop
    user: readonly
    password: old-plain-text   # to be encrypted
    schema: public

  # a local file
  local:
    type: sqlite
    path: data/local.db

  warehouse:
    type: postgres
    dbname: wh
    user: analyst
"""


@pytest.fixture(autouse=True)
def _restore_log_levels():
    """configure_logging() (called by the CLI) sets the nl2sql logger level; undo it."""
    logger = logging.getLogger("nl2sql")
    level = logger.level
    yield
    logger.setLevel(level)


@pytest.fixture
def key_file() -> Path:
    return Path(os.environ["NL2SQL_SECRETS_KEY_FILE"])


@pytest.fixture
def key(key_file: Path) -> bytes:
    """A fresh key file made by the library, as `set-key` would."""
    secrets.create_key()
    return key_file.read_bytes().strip()


@pytest.fixture
def dbs_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "dbs.yaml"
    path.write_text(DBS_YAML, encoding="utf-8")
    path.chmod(0o640)
    return path


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str,
        stdin: str = "") -> tuple[int, str, str]:
    """Run the CLI in-process with ``stdin`` as a pipe (not a TTY)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def yaml_password(path: Path, db_id: str) -> str:
    return DbConnectionConfigs.load(path).get(db_id).password  # type: ignore[return-value]


# -- key file -------------------------------------------------------------------------------

def test_set_key_creates_private_key_file(capsys, monkeypatch, key_file):
    code, out, err = run(capsys, monkeypatch, "set-key")
    assert code == 0, err
    assert str(key_file) in out
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    Fernet(key_file.read_bytes().strip())  # a valid key
    assert isinstance(secrets.load_key(), Fernet)


def test_set_key_refuses_to_overwrite(capsys, monkeypatch, key_file, key):
    code, out, err = run(capsys, monkeypatch, "set-key")
    assert code == 2
    assert out == ""
    assert err == (f"error: A secrets key already exists at {key_file}; keep it, replace it with "
                   f"`nl2sql-secrets rotate-key` (re-encrypts dbs.yaml), or pass --force to "
                   f"overwrite it.\n")
    assert key_file.read_bytes().strip() == key


def test_set_key_force_replaces_and_warns(capsys, monkeypatch, key_file, key):
    code, out, err = run(capsys, monkeypatch, "set-key", "--force")
    assert code == 0
    assert key_file.read_bytes().strip() != key
    assert "can no longer be decrypted" in err and "rotate-key" in err
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_missing_key_file_says_run_set_key(key_file):
    with pytest.raises(SecretsError) as info:
        secrets.load_key()
    assert str(info.value) == (f"No secrets key at {key_file}; run `nl2sql-secrets set-key` to "
                               f"create one, or set NL2SQL_SECRETS_KEY_FILE to your key file.")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_key_file_readable_by_others_is_refused(key_file, key, mode):
    token = secrets.encrypt_value(PASSWORD)
    key_file.chmod(mode)
    expected = (f"Key file {key_file} is readable by group/others (mode {mode:04o}); "
                f"run `chmod 600 {key_file}`.")
    with pytest.raises(SecretsError) as info:
        secrets.load_key()
    assert str(info.value) == expected
    with pytest.raises(SecretsError) as info:
        secrets.reveal(token, db_id="shop")
    assert str(info.value) == expected


def test_key_file_with_garbage_is_refused(key_file):
    key_file.parent.mkdir(parents=True)
    key_file.write_text("not a key\n")
    key_file.chmod(0o600)
    with pytest.raises(SecretsError, match=r"does not hold a valid Fernet key; restore it"):
        secrets.load_key()


# -- values ---------------------------------------------------------------------------------

def test_encrypt_and_reveal_round_trip(key):
    value = secrets.encrypt_value(PASSWORD)
    assert value.startswith("ENC:") and PASSWORD not in value
    assert secrets.is_encrypted(value) and not secrets.is_encrypted(PASSWORD)
    assert secrets.reveal(value, db_id="shop") == PASSWORD
    assert Fernet(key).decrypt(value[4:].encode()).decode() == PASSWORD
    assert secrets.reveal("plain text") == "plain text"  # passes through, no key needed


def test_plain_password_needs_no_key_file(key_file):
    assert not key_file.exists()
    assert secrets.reveal(PASSWORD, db_id="shop") == PASSWORD


def test_wrong_key_message_names_db_and_key_file_but_no_secret(capsys, monkeypatch, key_file,
                                                               key):
    value = secrets.encrypt_value(PASSWORD)
    run(capsys, monkeypatch, "set-key", "--force")
    with pytest.raises(SecretsError) as info:
        secrets.reveal(value, db_id="shop")
    message = str(info.value)
    assert message.startswith(
        f"The password of database 'shop' in dbs.yaml cannot be decrypted with the key in "
        f"{key_file}: wrong key")
    assert "nl2sql-secrets set-db-password shop" in message
    assert PASSWORD not in message and value[4:] not in message and value[4:20] not in message


def test_enc_value_without_key_file(key_file, key):
    value = secrets.encrypt_value(PASSWORD)
    key_file.unlink()
    with pytest.raises(SecretsError) as info:
        secrets.reveal(value, db_id="shop")
    assert str(info.value) == (
        f"The password of database 'shop' in dbs.yaml is encrypted but there is no secrets key "
        f"at {key_file}; restore that key file (or set NL2SQL_SECRETS_KEY_FILE to it), or store "
        f"it again with `nl2sql-secrets set-db-password shop`.")


def test_encrypt_and_decrypt_commands(capsys, monkeypatch, key):
    code, out, err = run(capsys, monkeypatch, "encrypt", stdin=PASSWORD + "\n")
    assert code == 0 and err == ""
    value = out.strip()
    assert value.startswith("ENC:") and PASSWORD not in out
    code, out, err = run(capsys, monkeypatch, "decrypt", stdin=value + "\n")
    assert (code, out, err) == (0, PASSWORD + "\n", "")


def test_decrypt_refuses_a_value_without_prefix(capsys, monkeypatch, key):
    code, out, err = run(capsys, monkeypatch, "decrypt", stdin="gAAAAAB\n")
    assert code == 2 and err.startswith("error: The value does not start with ENC:")


def test_empty_input_is_refused(capsys, monkeypatch, key):
    code, out, err = run(capsys, monkeypatch, "encrypt", stdin="")
    assert code == 2 and out == ""
    assert err.startswith("error: No value was given;")


# -- set-db-password ------------------------------------------------------------------------

def test_set_db_password_changes_only_that_line(capsys, monkeypatch, dbs_yaml, key):
    code, out, err = run(capsys, monkeypatch, "set-db-password", "shop", "--config",
                         str(dbs_yaml), stdin=PASSWORD + "\n")
    assert code == 0, err
    assert out == f"Stored an encrypted password for database 'shop' in {dbs_yaml}.\n"
    before, after = DBS_YAML.splitlines(keepends=True), dbs_yaml.read_text().splitlines(
        keepends=True)
    assert len(after) == len(before)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [9]  # only the password line; every comment and entry byte-for-byte
    assert after[9].startswith("    password: ENC:")
    assert after[9].endswith("   # to be encrypted\n")
    assert stat.S_IMODE(dbs_yaml.stat().st_mode) == 0o640  # the file mode is kept
    config = DbConnectionConfigs.load(dbs_yaml).get("shop")
    assert secrets.is_encrypted(config.password)
    assert config.resolve_password() == PASSWORD
    assert PASSWORD not in dbs_yaml.read_text()


def test_set_db_password_adds_missing_password_line(capsys, monkeypatch, dbs_yaml, key):
    code, _, err = run(capsys, monkeypatch, "set-db-password", "warehouse", "--config",
                       str(dbs_yaml), stdin=PASSWORD + "\n")
    assert code == 0, err
    new_text = dbs_yaml.read_text()
    assert new_text.startswith(DBS_YAML)  # the entry was last: one line appended
    added = new_text[len(DBS_YAML):]
    assert added.startswith("    password: ENC:") and added.count("\n") == 1
    assert DbConnectionConfigs.load(dbs_yaml).get("warehouse").resolve_password() == PASSWORD


def test_set_db_password_uses_nl2sql_config(capsys, monkeypatch, dbs_yaml, key):
    monkeypatch.setenv("NL2SQL_CONFIG", str(dbs_yaml))
    code, _, err = run(capsys, monkeypatch, "set-db-password", "shop", stdin="pw\n")
    assert code == 0, err
    assert secrets.reveal(yaml_password(dbs_yaml, "shop")) == "pw"


def test_set_db_password_unknown_db_suggests_close_name(capsys, monkeypatch, dbs_yaml, key):
    code, _, err = run(capsys, monkeypatch, "set-db-password", "shpo", "--config", str(dbs_yaml),
                       stdin=PASSWORD + "\n")
    assert code == 2  # a usage error, as an unknown database id is in every command
    assert err == (f"error: Unknown database 'shpo' in {dbs_yaml}. Did you mean 'shop'? Known "
                   f"databases: shop, local, warehouse.\n")
    assert dbs_yaml.read_text() == DBS_YAML


def test_set_db_password_refuses_sqlite_entry(capsys, monkeypatch, dbs_yaml, key):
    code, _, err = run(capsys, monkeypatch, "set-db-password", "local", "--config", str(dbs_yaml),
                       stdin="x\n")
    assert code == 2 and "takes no password" in err
    assert dbs_yaml.read_text() == DBS_YAML


def test_set_db_password_without_key_fails_before_reading_password(capsys, monkeypatch,
                                                                   dbs_yaml, key_file):
    code, _, err = run(capsys, monkeypatch, "set-db-password", "shop", "--config", str(dbs_yaml),
                       stdin=PASSWORD + "\n")
    assert code == 2
    assert err.startswith(f"error: No secrets key at {key_file}; run `nl2sql-secrets set-key`")
    assert sys.stdin.read() == PASSWORD + "\n"  # never read
    assert dbs_yaml.read_text() == DBS_YAML


def test_missing_config_file(capsys, monkeypatch, tmp_path, key):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, monkeypatch, "set-db-password", "shop", stdin="x\n")
    assert code == 2
    assert err == ("error: Config file dbs.yaml does not exist; pass --config, set "
                   "NL2SQL_CONFIG, or run from the folder that holds dbs.yaml.\n")


def test_set_db_password_handles_flow_and_quoted_layouts(tmp_path, key):
    path = tmp_path / "dbs.yaml"
    original = ("databases:\n"
                "    a: {type: postgres, dbname: a}\n"
                "    b:\n"
                "        type: postgres\n"
                "        dbname: b\n"
                "        password: \"old # not a comment\"  # real comment\n"
                "    c:\n"
                "        type: postgres\n"
                "        password:\n"
                "        dbname: c\n")
    path.write_text(original)
    for db_id in "abc":
        secrets.set_db_password(path, db_id, f"pw-{db_id}")
    registry = DbConnectionConfigs.load(path)
    assert [registry.get(d).resolve_password() for d in "abc"] == ["pw-a", "pw-b", "pw-c"]
    lines = path.read_text().splitlines()
    assert lines[5].endswith("  # real comment") and "old" not in lines[5]
    assert lines[1].startswith("    a: {type: postgres, dbname: a, password: ENC:")


# -- rotate-key -----------------------------------------------------------------------------

def _encrypted_yaml(path: Path) -> Path:
    for db_id in ("shop", "warehouse"):
        secrets.set_db_password(path, db_id, f"{PASSWORD}-{db_id}")
    return path


def test_rotate_key_re_encrypts_every_value(capsys, monkeypatch, dbs_yaml, key_file, key):
    _encrypted_yaml(dbs_yaml)
    before = {d: yaml_password(dbs_yaml, d) for d in ("shop", "warehouse")}
    code, out, err = run(capsys, monkeypatch, "rotate-key", "--config", str(dbs_yaml))
    assert code == 0, err
    assert "re-encrypted 2 ENC: values" in out
    new_key = key_file.read_bytes().strip()
    assert new_key != key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert not secrets.old_key_file_path().exists()
    for db_id in ("shop", "warehouse"):
        value = yaml_password(dbs_yaml, db_id)
        assert value != before[db_id]
        token = value[4:].encode()
        with pytest.raises(InvalidToken):
            Fernet(key).decrypt(token)  # the old key no longer decrypts it
        assert Fernet(new_key).decrypt(token).decode() == f"{PASSWORD}-{db_id}"
        assert secrets.reveal(value, db_id=db_id) == f"{PASSWORD}-{db_id}"
    # Only the two password lines changed; comments and other entries are intact.
    old_lines = DBS_YAML.splitlines()
    new_lines = dbs_yaml.read_text().splitlines()
    assert [a for a, b in zip(old_lines, new_lines) if a == b] == \
        [line for line in old_lines if "password" not in line]


def test_rotate_key_with_an_undecryptable_value_changes_nothing(capsys, monkeypatch, dbs_yaml,
                                                                key_file, key):
    _encrypted_yaml(dbs_yaml)
    foreign = "ENC:" + Fernet(Fernet.generate_key()).encrypt(b"other").decode()
    text_before = dbs_yaml.read_text().replace(yaml_password(dbs_yaml, "shop"), foreign)
    assert foreign in text_before
    dbs_yaml.write_text(text_before)
    code, _, err = run(capsys, monkeypatch, "rotate-key", "--config", str(dbs_yaml))
    assert code == 2
    assert err.startswith(f"error: {dbs_yaml} line") and "nothing was changed" in err
    assert foreign[4:] not in err
    assert dbs_yaml.read_text() == text_before
    assert key_file.read_bytes().strip() == key


def test_rotate_key_crash_before_yaml_write_keeps_values_readable(monkeypatch, dbs_yaml,
                                                                  key_file, key):
    """A crash after the key was replaced but before dbs.yaml was: `.old` still decrypts."""
    _encrypted_yaml(dbs_yaml)
    text_before = dbs_yaml.read_text()

    def crash(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(secrets, "_write_config", crash)
        with pytest.raises(KeyboardInterrupt):
            secrets.rotate_key(dbs_yaml)
    assert dbs_yaml.read_text() == text_before
    assert key_file.read_bytes().strip() != key
    assert secrets.old_key_file_path().read_bytes().strip() == key
    assert DbConnectionConfigs.load(dbs_yaml).get("shop").resolve_password() == PASSWORD + "-shop"
    # Running it again finishes the job with the kept key.
    assert secrets.rotate_key(dbs_yaml) == 2
    assert not secrets.old_key_file_path().exists()
    assert DbConnectionConfigs.load(dbs_yaml).get("shop").resolve_password() == PASSWORD + "-shop"


# -- no secret anywhere in messages or logs -------------------------------------------------

def test_no_secret_in_any_error_or_log(capsys, monkeypatch, caplog, dbs_yaml, key_file, key):
    caplog.set_level(logging.DEBUG)
    _, _, err = run(capsys, monkeypatch, "-v", "set-db-password", "shop", "--config",
                    str(dbs_yaml), stdin=PASSWORD + "\n")
    value = yaml_password(dbs_yaml, "shop")
    outputs = [err]
    run(capsys, monkeypatch, "set-key", "--force")  # now the stored value is undecryptable
    for args, stdin in [(("decrypt",), value), (("-v", "rotate-key", "--config", str(dbs_yaml)),
                                                ""), (("-v", "decrypt"), value + "x")]:
        code, out, err = run(capsys, monkeypatch, *args, stdin=stdin + "\n")
        assert code == 2 and out == "" and err.startswith("error: ")
        outputs.append(err)
    with pytest.raises(SecretsError) as info:
        DbConnectionConfigs.load(dbs_yaml).get("shop").resolve_password()
    outputs += [str(info.value), caplog.text]
    assert "stored an encrypted password for database 'shop'" in caplog.text  # logs were on
    for output in outputs:
        assert PASSWORD not in output
        assert value not in output and value[4:40] not in output
        assert key.decode() not in output


def test_config_repr_hides_password(dbs_yaml):
    config = DbConnectionConfigs.load(dbs_yaml).get("shop")
    assert "old-plain-text" not in repr(config) and "old-plain-text" not in str(config)


# -- help and the CLI edge ------------------------------------------------------------------

@pytest.mark.parametrize("verb", [None, "set-key", "set-db-password", "encrypt", "decrypt",
                                  "rotate-key"])
def test_every_command_help_has_an_example(capsys, verb):
    args = [verb, "--help"] if verb else ["--help"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    example = out.split("Example:\n", 1)[1]
    assert f"nl2sql-secrets {verb or ''}" in example


def test_usage_error_exits_2(capsys):
    assert cli.main(["no-such-verb"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_run_cli_exit_codes(capsys):
    def fails(argv):
        raise ConfigError("Something is wrong; fix it.")

    def no_answer(argv):
        raise NoAnswerError("No answer after 4 SQL attempts; rephrase the question.")

    def interrupted(argv):
        raise KeyboardInterrupt

    def buggy(argv):
        raise ZeroDivisionError("bug")

    assert run_cli(fails, []) == 2  # a set-up error: every Nl2SqlError's exit code but...
    assert capsys.readouterr().err == "error: Something is wrong; fix it.\n"
    assert run_cli(no_answer, []) == 1  # ... the command's own "no"
    assert capsys.readouterr().err.startswith("error: No answer after 4")
    assert run_cli(interrupted, []) == 130
    assert run_cli(lambda argv: None, []) == 0
    capsys.readouterr()
    # A bug is one line too (issue: every face, one sentence); -v logs its traceback.
    assert run_cli(buggy, []) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: internal error (ZeroDivisionError") and err.count("\n") == 1
    assert "run it again with -v" in err and "Traceback" not in err
    assert issubclass(ConfigError, Nl2SqlError)


def test_configure_logging_writes_to_stderr_only():
    code = ("import logging; from nl2sql.cli.errors import configure_logging; "
            "configure_logging(False); logging.getLogger('nl2sql.x').info('visible'); "
            "logging.getLogger('nl2sql.x').debug('hidden'); logging.getLogger('other').info('quiet')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=60)
    assert result.stdout == ""
    assert "visible" in result.stderr and "hidden" not in result.stderr
    assert "quiet" not in result.stderr


def test_installed_console_script(tmp_path, key_file):
    script = Path(sys.executable).parent / "nl2sql-secrets"
    assert script.is_file(), "reinstall the package: pip install -e ."
    env = {**os.environ, "NL2SQL_SECRETS_KEY_FILE": str(key_file)}
    created = subprocess.run([str(script), "set-key"], capture_output=True, text=True, env=env,
                             timeout=60)
    assert created.returncode == 0 and key_file.is_file()
    encrypted = subprocess.run([str(script), "encrypt"], input=PASSWORD + "\n",
                               capture_output=True, text=True, env=env, timeout=60)
    assert encrypted.returncode == 0 and encrypted.stdout.startswith("ENC:")
    refused = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "secrets.sh"), "set-key"],
                             capture_output=True, text=True, env=env, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: A secrets key already exists")
    assert "Traceback" not in refused.stderr


# -- end to end against the real PostgreSQL server ------------------------------------------

def _hba_auth_method_for_loopback() -> str:
    """The auth method of the first pg_hba rule that matches TCP from 127.0.0.1."""
    import psycopg

    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres") as conn:
        rows = conn.execute("SELECT type, database, user_name, address, auth_method "
                            "FROM pg_hba_file_rules WHERE error IS NULL ORDER BY line_number"
                            ).fetchall()
    for kind, databases, users, address, method in rows:
        if kind in ("host", "hostnossl") and "all" in databases and "all" in users and \
                (address in ("all", "samehost") or str(address).startswith("127.")):
            return method
    return "unknown"


@pytest.fixture
def login_role(pg_server: str):
    name = f"nl2sql_role_{uuid.uuid4().hex[:10]}"
    literal = "'" + PASSWORD.replace("'", "''") + "'"
    pg_execute("postgres", f"CREATE ROLE {name} LOGIN PASSWORD {literal}")
    yield name
    pg_execute("postgres", f"DROP ROLE IF EXISTS {name}")


@pytest.mark.postgres
def test_encrypted_password_reaches_postgres(capsys, monkeypatch, tmp_path, pg_database,
                                             login_role, key):
    dbname = pg_database()
    path = tmp_path / "dbs.yaml"
    path.write_text(f"databases:\n  shop:\n    type: postgres\n    host: {PG_HOST}\n"
                    f"    port: {PG_PORT}\n    dbname: {dbname}\n    user: {login_role}\n")
    code, _, err = run(capsys, monkeypatch, "set-db-password", "shop", "--config", str(path),
                       stdin=PASSWORD + "\n")
    assert code == 0, err
    assert PASSWORD not in path.read_text()
    config = DbConnectionConfigs.load(path).get("shop")
    assert config.password.startswith("ENC:")

    with create_connection(config) as db:
        assert db.url().password == PASSWORD  # decrypted into the connection URL
        with db.connect() as conn:
            assert conn.execute(text("SELECT current_user")).scalar() == login_role
            # libpq's own record of the password it sent with this connection
            assert conn.connection.dbapi_connection.info.password == PASSWORD

    method = _hba_auth_method_for_loopback()
    if method in ("md5", "scram-sha-256", "password"):
        # The server checks passwords: a wrong one must be refused.
        wrong = config.model_copy(update={"password": "wrong-password"})
        with create_connection(wrong) as db, pytest.raises(Exception, match="password"):
            with db.connect():
                pass

    # A wrong key fails in nl2sql, before any connection is attempted.
    run(capsys, monkeypatch, "set-key", "--force")
    with create_connection(config) as db:
        with pytest.raises(SecretsError, match="cannot be decrypted with the key"):
            with db.connect():
                pass
        assert db._engine is None  # no engine, so no connection was ever opened
