"""Reading dbs.yaml: where the file is, its top level checked in one place (``read_document``),
YAML problems as one line with the line number, and lookups in the composed node tree (for line
numbers). Shared by the registry (``config``) and the password tools (``secrets``), so neither
imports the other's module for them; every command reads dbs.yaml through them, so each reports
the same mistakes the same way (exit 2).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError,
                      field_validator)

from nl2sql.config.agent_settings import AgentSettings
from nl2sql.errors import ConfigError

ENV_CONFIG = "NL2SQL_CONFIG"
CONFIG_NAME = "dbs.yaml"


def yaml_error(path: Path, exc: yaml.YAMLError) -> ConfigError:
    """Broken YAML in ``path`` as one line naming the line and the problem."""
    mark = getattr(exc, "problem_mark", None)
    line = f" line {mark.line + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or "invalid YAML"
    return ConfigError(f"{path}{line}: {problem}; fix the YAML syntax there.")


def read_config_text(path: Path) -> str:
    """dbs.yaml's text; ``ConfigError`` naming the line when it is not UTF-8 (a file saved in
    another encoding, a Latin-1 password)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path} line {line} is not UTF-8 text; save the file as "
                          f"UTF-8.") from None  # the byte not shown: it may be a password's


def not_a_mapping_error(path: Path) -> ConfigError:
    return ConfigError(f"{path}: expected a mapping with a 'databases:' key at the top.")


def config_file(flag: str | Path | None) -> tuple[Path, bool]:
    """(the dbs.yaml to read, whether the caller named it): ``flag`` > ``NL2SQL_CONFIG`` >
    ``./dbs.yaml``. A named folder means the dbs.yaml in it; a named file must exist."""
    named = flag or os.environ.get(ENV_CONFIG)
    if not named:
        return Path(CONFIG_NAME), False
    path = Path(named).expanduser()
    if path.is_dir():
        if not (path / CONFIG_NAME).is_file():
            raise ConfigError(f"{path} is a folder with no {CONFIG_NAME} in it; pass the path of "
                              f"the file (--config path/to/{CONFIG_NAME}) or create "
                              f"{path / CONFIG_NAME} from dbs.yaml.example.")
        path = path / CONFIG_NAME
    elif not path.is_file():
        fix = "fix --config" if flag else f"unset {ENV_CONFIG}"
        raise ConfigError(f"Config file {path} does not exist; create it from dbs.yaml.example "
                          f"or {fix}.")
    return path, True


class DbsDocument(BaseModel):
    """The top level of dbs.yaml; ``databases`` entries are checked by the registry
    (``DbConnectionConfig``)."""

    model_config = ConfigDict(extra="forbid")

    databases: Any = None
    data_dir: StrictStr | None = None
    workspace: StrictStr | None = None
    model: StrictStr | None = None
    agent: AgentSettings = Field(default_factory=AgentSettings)
    include_sample: StrictBool = True
    #: Groups and identity providers, checked against the databases by ``config.server``.
    server: Any = None
    #: The shared store's PostgreSQL URL; None: SQLite files in the data dir (``nl2sql.store``).
    store: StrictStr | None = None

    @field_validator("store")
    @classmethod
    def _postgresql_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        scheme, slashes, _ = value.partition("://")
        if scheme not in STORE_SCHEMES or not slashes:
            raise ValueError("not a PostgreSQL URL")
        return value

    @field_validator("agent", mode="before")
    @classmethod
    def _empty_agent(cls, value: Any) -> Any:
        return {} if value is None else value  # ``agent:`` with nothing under it


#: What each top-level value must be, for the message when it is not.
_EXPECTED = {"data_dir": "a folder path", "workspace": "a folder path",
             "model": "a pydantic-ai model string such as openai:gpt-4o-mini",
             "include_sample": "true or false",
             "agent": "a mapping of settings such as 'retries: 4'",
             "store": "a PostgreSQL URL such as postgresql://nl2sql@db-host/nl2sql (or left out "
                      "for SQLite files in the data dir)"}
#: What ``store:`` may start with, and the SQLAlchemy driver it is opened with.
STORE_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
STORE_DRIVER = "postgresql+psycopg"
#: Keys whose value is not repeated in a message (a URL may hold a password).
_SECRET_KEYS = {"store"}


def read_document(path: Path) -> tuple[DbsDocument, yaml.Node | None]:
    """dbs.yaml's top level, checked: YAML syntax, duplicate database ids, unknown keys,
    ``${VAR}`` references and each key's value, every mistake one ``ConfigError`` naming the
    file, the line and the fix."""
    text = read_config_text(path)
    try:
        node = yaml.compose(text)
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc) from None
    if document is None:
        return DbsDocument(), None
    if not isinstance(document, dict):
        raise not_a_mapping_error(path)
    _refuse_duplicate_keys(node, path)
    unknown = set(document) - set(DbsDocument.model_fields)
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key '{sorted(unknown)[0]}'; allowed keys "
                          f"are {', '.join(sorted(DbsDocument.model_fields))}.")
    document = {key: interpolate(value, str(path), key) if key != "databases" else value
                for key, value in document.items()}
    try:
        return DbsDocument.model_validate(document), node
    except ValidationError as exc:
        raise _document_error(exc, path, node) from None


def _document_error(exc: ValidationError, path: Path, node: yaml.Node | None) -> ConfigError:
    error = exc.errors()[0]
    key, *inner = [str(part) for part in error["loc"]]
    entry = mapping_entry(node, key)
    if inner and entry is not None:
        entry = mapping_entry(entry[1], inner[0]) or entry
    where = f"{path} line {entry[0].start_mark.line + 1}" if entry else str(path)
    if key == "agent" and inner:
        message = str(error["msg"]).removeprefix("Value error, ")
        return ConfigError(f"{where}: 'agent:' setting '{'.'.join(inner)}': "
                           f"{message[0].lower()}{message[1:]}; fix or remove it.")
    got = "" if key in _SECRET_KEYS else f" (got {error.get('input')!r})"
    return ConfigError(f"{where}: '{key}' must be {_EXPECTED.get(key, 'something else')}"
                       f"{got}; fix it.")


def _refuse_duplicate_keys(node: yaml.Node | None, path: Path) -> None:
    """PyYAML keeps the last of two equal keys silently; a second entry for a db_id is a typo
    that would hide the first, so it is refused."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key_node, value_node in node.value:
        if key_node.value == "databases" and isinstance(value_node, yaml.MappingNode):
            seen: set[str] = set()
            for db_key, _ in value_node.value:
                if db_key.value in seen:
                    raise ConfigError(f"{path} line {db_key.start_mark.line + 1}: database "
                                      f"'{db_key.value}' is defined twice; keep one entry.")
                seen.add(db_key.value)


def mapping_entry(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    """(key node, value node) of ``key`` in a composed YAML mapping, or None."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                return key_node, value_node
    return None


# -- values: ${ENV_VAR} interpolation and the url: form ---------------------------------------

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\$")


def interpolate(value: Any, where: str, field: str) -> Any:
    """``${NAME}`` in a string value replaced by the environment variable NAME (``$$`` is a
    literal ``$``), in lists and mappings too. An unset variable is a ConfigError naming the
    variable and the field, never a value (the value may be a secret)."""
    if isinstance(value, str):
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name is None:
                return "$"
            if name not in os.environ:
                raise ConfigError(f"{where}: environment variable {name} (used in field "
                                  f"'{field}') is not set; export it or change the field.")
            return os.environ[name]

        return _REFERENCE.sub(replace, value)
    if isinstance(value, list):
        return [interpolate(item, where, field) for item in value]
    if isinstance(value, dict):
        return {key: interpolate(item, where, f"{field}.{key}") for key, item in value.items()}
    return value


def backend_named(name: str, backends: Mapping[str, Any]) -> Any | None:
    """The backend a URL scheme names: a type name wins over an alias (``url_schemes``), an
    alias over a SQLAlchemy dialect name (DuckDB's dialect is Postgres'): ``postgresql`` is
    Postgres, ``duckdb`` DuckDB, ``mariadb`` MySQL. None when none does."""
    ranked = [[b for b in backends.values() if name == b.name],
              [b for b in backends.values() if name in getattr(b, "url_schemes", ())],
              [b for b in backends.values() if name == b.sqlalchemy_dialect]]
    return next((found[0] for found in ranked if found), None)


def url_settings(url: str, where: str, backends: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a ``url:`` value (``postgresql://user@host:5432/db?sslmode=require``).

    The scheme picks the type through the backend registry: a backend's ``type`` name, its
    SQLAlchemy dialect name, or one of its ``url_schemes`` (a ``+driver`` suffix is ignored).
    File backends take the path (``sqlite:///data/shop.db``: relative to dbs.yaml's folder,
    ``sqlite:////abs/shop.db``: absolute). Messages never repeat the URL (it may hold a
    password)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ValueError:  # a port that is not a number (not quoted: it may be a misplaced
        raise ConfigError(  # password, as in scheme://user:secret/db without the '@host')
            f"{where}: field 'url' has a port that is not a number (or a password without "
            f"'@host' after it); write it as scheme://user:password@host:5432/dbname."
        ) from None
    except ArgumentError:
        raise ConfigError(f"{where}: field 'url' is not a database URL; write it as "
                          f"scheme://user@host:port/dbname (e.g. postgresql://me@localhost/shop)."
                          ) from None
    scheme = parsed.get_backend_name()
    backend = backend_named(scheme, backends)
    if backend is None:
        known = ", ".join(sorted({s for b in backends.values()
                                  for s in (b.name, *getattr(b, "url_schemes", ()))}))
        raise ConfigError(f"{where}: the url scheme '{scheme}' is not a known database type; "
                          f"use one of: {known}.")
    settings: dict[str, Any] = {"type": backend.name}
    if backend.file_based:
        if parsed.database:
            settings[backend.path_fields[0] if backend.path_fields else "path"] = parsed.database
    else:
        for name, value in (("host", parsed.host), ("port", parsed.port),
                            ("user", parsed.username), ("password", parsed.password),
                            ("dbname", parsed.database)):
            if value not in (None, ""):
                settings[name] = value
    for key, value in parsed.query.items():
        settings[key] = value if isinstance(value, str) else value[-1]
    return settings
