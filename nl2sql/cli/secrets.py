"""``nl2sql-secrets``: manage the secrets key and the encrypted passwords in dbs.yaml, and the
users of a team server (``add-user``, ``remove-user``, ``list-users``).

A thin adapter over ``nl2sql.config.secrets``; secrets are read from a no-echo prompt or from standard
input, never from the command line (it would end up in the shell history).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from nl2sql.config import secrets
from nl2sql.cli.errors import add_version_flag, run_cli
from nl2sql.cli.options import CommandParser, parse_command_line
from nl2sql.config.dbs_yaml import config_file
from nl2sql.config.registry import ENV_CONFIG, DbConnectionConfigs
from nl2sql.errors import ConfigError, SecretsError, UsageError
from nl2sql.access.users import add_user
from nl2sql.store.store import Store

DESCRIPTION = f"""\
Manage the key that encrypts database passwords and the ENC: values in dbs.yaml, and the
users of a team server with their own tokens (docs/team.md).
Key file: ${secrets.ENV_KEY_FILE} (default {secrets.DEFAULT_KEY_FILE}), mode 0600.
Config file: --config, else ${ENV_CONFIG}, else ./dbs.yaml."""

EXAMPLES = {
    None: """\
Example:
  nl2sql-secrets set-key
  nl2sql-secrets set-db-password shop          # prompts without echo
  nl2sql-secrets rotate-key --config ~/nl2sql/dbs.yaml""",
    "set-key": """\
Example:
  nl2sql-secrets set-key
  NL2SQL_SECRETS_KEY_FILE=./secret.key nl2sql-secrets set-key""",
    "set-db-password": """\
Example:
  nl2sql-secrets set-db-password shop                 # prompts twice, without echo
  printf '%s\\n' "$PGPASSWORD" | nl2sql-secrets set-db-password shop --config dbs.yaml""",
    "encrypt": """\
Example:
  nl2sql-secrets encrypt                     # prompts, prints ENC:gAAAA...
  printf '%s\\n' "$PGPASSWORD" | nl2sql-secrets encrypt""",
    "decrypt": """\
Example:
  echo 'ENC:gAAAA...' | nl2sql-secrets decrypt""",
    "rotate-key": """\
Example:
  nl2sql-secrets rotate-key
  nl2sql-secrets rotate-key --config ~/nl2sql/dbs.yaml""",
    "add-user": """\
Example:
  nl2sql-secrets add-user ana --group analysts          # the token is the last line
  TOKEN=$(nl2sql-secrets add-user cora --group curators --group analysts | tail -n 1)""",
    "remove-user": """\
Example:
  nl2sql-secrets remove-user ana""",
    "list-users": """\
Example:
  nl2sql-secrets list-users --config ~/nl2sql/dbs.yaml""",
}


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = CommandParser(prog="nl2sql-secrets", description=DESCRIPTION,
                                     epilog=EXAMPLES[None], formatter_class=formatter)
    add_version_flag(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    parser.add_argument("--config", help=f"path of dbs.yaml (default: ${ENV_CONFIG} or ./dbs.yaml)")
    # SUPPRESS: a subcommand's --config only counts when given, so it never hides the global one.
    config_flag = argparse.ArgumentParser(add_help=False)
    config_flag.add_argument("--config", default=argparse.SUPPRESS,
                             help=f"path of dbs.yaml (default: ${ENV_CONFIG} or ./dbs.yaml)")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="COMMAND")

    def verb(name: str, summary: str, **kwargs: object) -> argparse.ArgumentParser:
        return verbs.add_parser(name, help=summary, description=summary, epilog=EXAMPLES[name],
                                formatter_class=formatter, **kwargs)  # type: ignore[arg-type]

    set_key = verb("set-key", "Create a new secrets key file (mode 0600).")
    set_key.add_argument("--force", action="store_true",
                         help="overwrite an existing key: values encrypted with it become "
                              "unreadable (use rotate-key to replace a key safely)")
    set_password = verb("set-db-password", "Encrypt a password and store it as ENC: in "
                        "dbs.yaml for one database, leaving the rest of the file as it is.",
                        parents=[config_flag])
    set_password.add_argument("db_id", help="the database entry under 'databases:'")
    verb("encrypt", "Read a value (prompt or stdin) and print it as ENC:<token>.")
    verb("decrypt", "Read an ENC: value (prompt or stdin) and print it in plain text.")
    verb("rotate-key", "Create a new key and re-encrypt every ENC: value in dbs.yaml with it.",
         parents=[config_flag])
    add_user = verb("add-user", "Add a user of the team server with a new token of their own "
                    "(printed once, on the last line; only its hash is stored).",
                    parents=[config_flag])
    add_user.add_argument("name", help="the user's name (what the audit log shows)")
    add_user.add_argument("--group", action="append", required=True, metavar="GROUP",
                          help="a group under 'server: groups:' in dbs.yaml; repeatable")
    remove_user = verb("remove-user", "Remove a user: their token stops working at once.",
                       parents=[config_flag])
    remove_user.add_argument("name", help="the user's name")
    verb("list-users", "List the users with their groups (never a token).", parents=[config_flag])
    return parser


def config_path(flag: str | None) -> Path:
    """flag > $NL2SQL_CONFIG > ./dbs.yaml, which must exist and be valid: it is checked as
    every command checks it before a value in it is changed."""
    path, _ = config_file(flag)
    if not path.is_file():
        raise ConfigError(f"Config file {path} does not exist; pass --config, set "
                          f"{ENV_CONFIG}, or run from the folder that holds dbs.yaml.")
    DbConnectionConfigs.load(path)
    return path


def read_secret(prompt: str, *, confirm: bool = False) -> str:
    """A no-echo prompt in a terminal, else one line of standard input."""
    if sys.stdin.isatty():
        value = getpass.getpass(prompt)
        if confirm and value and getpass.getpass("Again: ") != value:
            raise SecretsError("The two entries differ; nothing was changed; try again.")
    else:
        value = sys.stdin.readline().rstrip("\r\n")
    if not value:
        raise SecretsError("No value was given; type it at the prompt or pipe it to standard "
                           "input.")
    return value


def _run(argv: list[str] | None) -> int:
    args = parse_command_line(build_parser(), argv)
    match args.verb:
        case "set-key":
            path = secrets.create_key(force=args.force)
            if args.force:
                print(f"warning: replaced the key in {path}; ENC: values encrypted with the "
                      f"previous key can no longer be decrypted (next time use "
                      f"`nl2sql-secrets rotate-key`).", file=sys.stderr)
            print(f"Created a new secrets key in {path} (mode 0600); back it up: without it "
                  f"the ENC: values cannot be decrypted.")
        case "set-db-password":
            path = config_path(args.config)
            secrets.load_key()  # fail on a missing key before asking for the password
            plain = read_secret(f"Password for database '{args.db_id}': ", confirm=True)
            secrets.set_db_password(path, args.db_id, plain)
            print(f"Stored an encrypted password for database '{args.db_id}' in {path}.")
        case "encrypt":
            secrets.load_key()
            print(secrets.encrypt_value(read_secret("Value to encrypt: ")))
        case "decrypt":
            value = read_secret("ENC: value to decrypt: ").strip()
            if not secrets.is_encrypted(value):
                raise SecretsError("The value does not start with ENC:; paste the whole "
                                   "ENC:... value from dbs.yaml.")
            print(secrets.reveal(value))
        case "rotate-key":
            path = config_path(args.config)
            count = secrets.rotate_key(path)
            print(f"Created a new key in {secrets.key_file_path()} and re-encrypted {count} "
                  f"ENC: value{'s' if count != 1 else ''} in {path}.")
        case "add-user" | "remove-user" | "list-users":
            _users(args)
    return 0


def _users(args: argparse.Namespace) -> None:
    configs = DbConnectionConfigs.load(config_path(args.config))
    store = Store.of(configs)
    if args.verb == "add-user":
        token = add_user(configs, args.name, args.group)
        print(f"Added user '{args.name}' (groups: {', '.join(args.group)}) to "
              f"{store.describe()}. Their token, shown only now (send it as "
              f"'Authorization: Bearer <token>'):")
        print(token)
    elif args.verb == "remove-user":
        if not store.users.remove(args.name):
            raise UsageError(f"No user '{args.name}' in {store.describe()}; list them with "
                             f"nl2sql-secrets list-users.")
        print(f"Removed user '{args.name}'; their token no longer works.")
    else:
        users = store.users.list()
        if not users:
            print(f"No users in {store.describe()}; add one with nl2sql-secrets add-user NAME "
                  f"--group GROUP.")
        for user in users:
            print(f"{user.name}\tgroups: {', '.join(user.groups) or '-'}\tadded "
                  f"{user.created_at:%Y-%m-%d %H:%M}")


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)


if __name__ == "__main__":
    sys.exit(main())
