"""Encrypted passwords in dbs.yaml: ``password: ENC:<Fernet token>``.

The key lives in one file (``NL2SQL_SECRETS_KEY_FILE``, default ``~/.config/nl2sql/secret.key``),
mode 0600; a key file that group or others can read is refused. During ``rotate-key`` the
previous keys are kept in ``<keyfile>.old`` until dbs.yaml holds only values encrypted with the
new key, and decryption also tries them, so a crash never strands a value.

No function here logs or puts into an error message a password, a key or a token.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

import yaml
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from nl2sql.backends import BACKENDS
from nl2sql.schema.cache import atomic_write_text
from nl2sql.config.dbs_yaml import (mapping_entry, not_a_mapping_error, read_config_text,
                                    yaml_error)
from nl2sql.errors import ConfigError, SecretsError, UnknownDatabaseError, did_you_mean

logger = logging.getLogger(__name__)

ENV_KEY_FILE = "NL2SQL_SECRETS_KEY_FILE"
DEFAULT_KEY_FILE = "~/.config/nl2sql/secret.key"
PREFIX = "ENC:"


# -- the key file ---------------------------------------------------------------------------

def key_file_path() -> Path:
    return Path(os.environ.get(ENV_KEY_FILE) or DEFAULT_KEY_FILE).expanduser()


def old_key_file_path() -> Path:
    path = key_file_path()
    return path.with_name(path.name + ".old")


def _read_keys(path: Path) -> list[Fernet]:
    """The keys in ``path`` (one per line), after checking that only the owner can read it."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise SecretsError(f"Key file {path} is readable by group/others (mode {mode:04o}); "
                           f"run `chmod 600 {path}`.")
    lines = [line.strip() for line in path.read_text(encoding="ascii", errors="replace")
             .splitlines() if line.strip()]
    try:
        keys = [Fernet(line) for line in lines]
    except ValueError:
        keys = []
    if not keys:
        raise SecretsError(f"Key file {path} does not hold a valid Fernet key; restore it from "
                           f"your backup or create a new one with `nl2sql-secrets set-key`.")
    return keys


def load_key() -> Fernet:
    """The current key; a clear SecretsError when it is missing, unsafe or not a key."""
    path = key_file_path()
    if not path.is_file():
        raise SecretsError(f"No secrets key at {path}; run `nl2sql-secrets set-key` to create "
                           f"one, or set {ENV_KEY_FILE} to your key file.")
    return _read_keys(path)[0]


def _decryption_keys() -> list[Fernet]:
    """The current key, then any keys kept in ``<keyfile>.old`` by an unfinished rotation."""
    keys = [load_key()]
    old = old_key_file_path()
    if old.is_file():
        logger.debug("also trying the keys in %s (unfinished rotate-key)", old)
        keys += _read_keys(old)
    return keys


def write_private_file(path: Path, text: str, *, overwrite: bool) -> None:
    """Write ``text`` with mode 0600 through a temporary file: the target is either absent,
    the old file, or the whole new one. Without ``overwrite`` an existing file is kept."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mktemp only picks a name; O_EXCL makes the create safe, and 0o600 holds from the start.
    tmp = Path(tempfile.mktemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if the file exists: never overwrites a key by accident
    finally:
        tmp.unlink(missing_ok=True)


def create_key(*, force: bool = False) -> Path:
    """Generate a new key file; refuses to replace an existing one unless ``force``."""
    path = key_file_path()
    try:
        write_private_file(path, Fernet.generate_key().decode() + "\n", overwrite=force)
    except FileExistsError:
        raise SecretsError(f"A secrets key already exists at {path}; keep it, replace it with "
                           f"`nl2sql-secrets rotate-key` (re-encrypts dbs.yaml), or pass --force "
                           f"to overwrite it.") from None
    logger.debug("wrote a new key to %s", path)
    return path


# -- values ---------------------------------------------------------------------------------

def is_encrypted(value: object) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def encrypt_value(plain: str) -> str:
    """``ENC:<token>`` for ``plain``, encrypted with the current key."""
    if is_encrypted(plain):
        raise SecretsError("The value is already encrypted (it starts with ENC:); store it as is.")
    return PREFIX + load_key().encrypt(plain.encode("utf-8")).decode("ascii")


def reveal(value: str, *, db_id: str | None = None) -> str:
    """Plain text passes through; an ``ENC:`` value is decrypted with the key file."""
    if not is_encrypted(value):
        return value
    what = (f"The password of database '{db_id}' in dbs.yaml" if db_id
            else "The ENC: value")
    again = (f"store it again with `nl2sql-secrets set-db-password {db_id}`" if db_id
             else "encrypt it again with `nl2sql-secrets encrypt`")
    path = key_file_path()
    if not path.is_file():
        raise SecretsError(f"{what} is encrypted but there is no secrets key at {path}; restore "
                           f"that key file (or set {ENV_KEY_FILE} to it), or {again}.",
                           db_id=db_id)
    token = value[len(PREFIX):].strip().encode("ascii", errors="replace")
    try:
        plain = MultiFernet(_decryption_keys()).decrypt(token)
    except InvalidToken:
        raise SecretsError(f"{what} cannot be decrypted with the key in {path}: wrong key or "
                           f"damaged value; use the key it was encrypted with, or {again}.",
                           db_id=db_id) from None
    logger.debug("decrypted the password of database %r", db_id)
    return plain.decode("utf-8")


# -- dbs.yaml edits: replace scalar spans in the text, so comments and layout stay intact -----

def _compose(path: Path, text: str) -> yaml.MappingNode:
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc) from None
    if not isinstance(node, yaml.MappingNode):
        raise not_a_mapping_error(path)
    return node


def _replace_spans(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _write_config(path: Path, new_text: str, expected: object) -> None:
    """Check that the edit changed exactly what was meant, then replace the file atomically."""
    if yaml.safe_load(new_text) != expected:  # a guard against a span edit gone wrong
        raise ConfigError(f"{path}: could not edit the file safely (unusual YAML layout); "
                          f"edit the password line by hand.")
    atomic_write_text(path, new_text)  # keeps the file's mode


def set_db_password(config_path: Path, db_id: str, plain: str) -> None:
    """Store ``ENC:`` of ``plain`` as the password of ``db_id``, touching nothing else."""
    text = read_config_text(config_path)
    root = _compose(config_path, text)
    found = mapping_entry(root, "databases")
    entries = found[1] if found else None
    entry = mapping_entry(entries, db_id) if entries is not None else None
    if entry is None or not isinstance(entry[1], yaml.MappingNode):
        names = [k.value for k, _ in entries.value] if isinstance(entries, yaml.MappingNode) else []
        hint = did_you_mean(db_id, names)
        raise UnknownDatabaseError(f"Unknown database '{db_id}' in {config_path}. {hint}"
                                   f"Known databases: {', '.join(names) or 'none'}.", db_id=db_id)
    mapping = entry[1]
    kind = mapping_entry(mapping, "type")
    backend = BACKENDS.get(kind[1].value) if kind else None
    if backend is not None and not backend.takes_password:
        raise ConfigError(f"{config_path}: database '{db_id}' is a {backend.label} file and "
                          f"takes no password.")
    value = encrypt_value(plain)
    current = mapping_entry(mapping, "password")
    if current is not None:
        node = current[1]
        start, end = node.start_mark.index, node.end_mark.index
        new = value if start < end or text[start - 1:start].isspace() else " " + value
        edit = (start, end, new)
    elif mapping.flow_style:  # {type: postgres, ...}: add before the closing brace
        close_at = text.rindex("}", 0, mapping.end_mark.index)
        edit = (close_at, close_at, f", password: {value}")
    else:  # a new line after the entry's last line, indented like its first key
        indent = " " * mapping.value[0][0].start_mark.column
        last_end = mapping.value[-1][1].end_mark
        at = last_end.index if last_end.column == 0 else text.find("\n", last_end.index)
        at = len(text) if at == -1 else at + (0 if last_end.column == 0 else 1)
        prefix = "" if at == 0 or text[at - 1] == "\n" else "\n"
        edit = (at, at, f"{prefix}{indent}password: {value}\n")
    expected = yaml.safe_load(text)
    for key, settings in expected["databases"].items():
        if str(key) == db_id:
            settings["password"] = value
    _write_config(config_path, _replace_spans(text, [edit]), expected)
    logger.debug("stored an encrypted password for database %r in %s", db_id, config_path)


def _encrypted_scalars(node: yaml.Node) -> list[yaml.ScalarNode]:
    """Every value (not key) in the document that is an ``ENC:`` string."""
    found: list[yaml.ScalarNode] = []
    if isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            found += _encrypted_scalars(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found += _encrypted_scalars(item)
    elif isinstance(node, yaml.ScalarNode) and is_encrypted(node.value):
        found.append(node)
    return found


def _replace_values(data: object, mapping: dict[str, str]) -> object:
    if isinstance(data, dict):
        return {k: _replace_values(v, mapping) for k, v in data.items()}
    if isinstance(data, list):
        return [_replace_values(v, mapping) for v in data]
    return mapping.get(data, data) if isinstance(data, str) else data


def rotate_key(config_path: Path) -> int:
    """A new key; every ``ENC:`` value in ``config_path`` re-encrypted with it. Returns the count.

    Order, so that a crash at any point leaves every value decryptable from files on disk:
    1. re-encrypt in memory (nothing written if any value fails to decrypt);
    2. ``<keyfile>.old`` <- the current key plus any older kept keys (temp + rename);
    3. key file <- the new key (temp + rename): values still under the old key decrypt
       through ``.old``, which ``reveal`` also tries, and a rerun of rotate-key reads it too;
    4. dbs.yaml <- the re-encrypted text (temp + rename);
    5. ``.old`` removed: only now is no value encrypted with an old key.
    """
    text = read_config_text(config_path)
    nodes = _encrypted_scalars(_compose(config_path, text))
    old_keys = _decryption_keys()  # checks the key file (exists, mode, content) first
    new_key_text = Fernet.generate_key().decode()
    rotator = MultiFernet([Fernet(new_key_text), *old_keys])
    replacements: dict[str, str] = {}
    for node in nodes:
        try:
            token = rotator.rotate(node.value[len(PREFIX):].strip().encode("ascii"))
        except (InvalidToken, UnicodeEncodeError):
            line = node.start_mark.line + 1
            raise SecretsError(f"{config_path} line {line}: an ENC: value cannot be decrypted "
                               f"with the key in {key_file_path()}; nothing was changed; fix "
                               f"or re-enter that value first.") from None
        replacements[node.value] = PREFIX + token.decode("ascii")
    edits = [(n.start_mark.index, n.end_mark.index, replacements[n.value]) for n in nodes]
    new_text = _replace_spans(text, edits)
    expected = _replace_values(yaml.safe_load(text), replacements)

    key_path, old_path = key_file_path(), old_key_file_path()
    kept = key_path.read_text(encoding="ascii")
    if old_path.is_file():
        kept += old_path.read_text(encoding="ascii")
    write_private_file(old_path, kept, overwrite=True)
    write_private_file(key_path, new_key_text + "\n", overwrite=True)
    if nodes:
        _write_config(config_path, new_text, expected)
    old_path.unlink()
    logger.debug("rotated the key in %s; re-encrypted %d values", key_path, len(nodes))
    return len(nodes)
