"""The database registry: dbs.yaml, loaded once, looked up by db_id.

Locations follow "flag > environment > file > default": the config file from the caller's flag,
then ``NL2SQL_CONFIG``, then ``./dbs.yaml``; data dir and workspace likewise (see
ARCHITECTURE.md, "Environment"). With no dbs.yaml at all the bundled ``bookstore`` SQLite sample
is still registered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from nl2sql.backends import BACKENDS, Backend, DatabaseType, get_backend  # noqa: F401 (re-export)
from nl2sql.config.agent_settings import AgentSettings
from nl2sql.config.dbs_yaml import (ENV_CONFIG, DbsDocument, config_file, interpolate,  # noqa: F401
                                    backend_named, mapping_entry, read_document, url_settings)
from nl2sql.errors import AccessDeniedError, ConfigError, UnknownDatabaseError, did_you_mean
from nl2sql.config import secrets
from nl2sql.config.server import ServerSettings, parse_server_settings
from nl2sql.config.bundled import bookstore_semantic_model_path

ENV_DATA_DIR = "NL2SQL_DATA_DIR"
ENV_WORKSPACE = "NL2SQL_WORKSPACE"
ENV_MODEL = "NL2SQL_MODEL"
ENV_AUTH_TOKEN = "NL2SQL_MCP_AUTH_TOKEN"  # nl2sql-mcp --transport http: the bearer token

#: A database id: letters, digits, ``_``, ``-`` and ``.``, not starting with ``-`` or ``.``.
DB_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\Z")

#: ``schema: "*"``: every schema that has tables or views.
ALL_SCHEMAS = "*"

SAMPLE_DB_ID = "bookstore"
SAMPLE_DESCRIPTION = "Bundled sample: a small bookstore (authors, books, customers, orders)."
SAMPLE_TYPE = DatabaseType.SQLITE  # the bundled sample is a SQLite file built from a script


CsvOptions = dict[str, str | int | bool | list[str] | dict[str, str]]


def check_csv_options(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """``read_csv``'s parameter names only (they are written into SQL as names)."""
    for name in value or {}:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"'csv_options' takes read_csv's parameter names; {name!r} "
                             f"is not one (e.g. decimal_separator, delim, types)")
    return value


class FileViewSetting(BaseModel):
    """A named DuckDB file view with ``read_csv`` parameters of its own (over the database's
    ``csv_options``): ``files: {ventes: {files: 'fr/*.csv', csv_options: {encoding:
    latin-1}}}``."""

    model_config = ConfigDict(extra="forbid")

    files: str | list[str]
    csv_options: CsvOptions | None = None

    @field_validator("csv_options")
    @classmethod
    def _check_csv_options(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_csv_options(value)


class DbConnectionConfig(BaseModel):
    """One entry under ``databases:`` in dbs.yaml."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    db_id: str
    type: DatabaseType
    description: str | None = None
    # file-based backends
    path: Path | None = None
    # server backends (the port defaults to the backend's)
    host: str = "localhost"
    port: int | None = Field(default=None, ge=1, le=65535)
    dbname: str | None = None
    user: str | None = None
    # Plain text, ``ENC:<fernet token>`` or absent; decrypted only when a connection is made.
    password: str | None = Field(default=None, repr=False)
    # Or the name of an environment variable holding it, read when a connection is made.
    password_env: str | None = None
    # One schema, a list of schemas, or ``*`` (every schema that has tables): see ``schemas``.
    schema_name: str | list[str] | None = Field(default=None, alias="schema")
    sslmode: str | None = None
    # spark: the Spark Connect URL (sc://host:port/;token=...), catalog and database (namespace)
    remote: str | None = None
    catalog: str | None = None
    database: str | None = None
    #: Other ``ssl_*`` keys of dbs.yaml (``ssl_ca``, ``ssl_cert``...), passed to the driver.
    ssl_options: dict[str, str | bool] | None = None
    # DuckDB: glob patterns of CSV/Parquet/JSON files, each file (or Hive-partitioned folder)
    # exposed as a view; or view name -> pattern(s), one view of every file they match, or
    # -> {files: pattern(s), csv_options: {...}} with read_csv parameters of its own
    files: list[str] | dict[str, str | list[str] | FileViewSetting] | None = None
    # DuckDB: named parameters of ``read_csv`` for every CSV file of ``files``
    # (``decimal_separator: ","``, ``delim: ";"``, ``types: {price: DOUBLE}``...)
    csv_options: CsvOptions | None = None
    # runtime bounds
    query_timeout_seconds: float = Field(default=30.0, gt=0)
    max_rows: int = Field(default=1_000_000, gt=0)
    # Largest single value (SQLite: SQLITE_LIMIT_LENGTH; Postgres: one row as sent), and the
    # byte budget of one result file (reached: the result is cut and marked truncated).
    max_value_bytes: int = Field(default=16 << 20, ge=1024)
    max_result_bytes: int = Field(default=1 << 30, ge=1024)
    # DuckDB runs inside nl2sql's process: its memory limit (DuckDB's syntax, e.g. "1GB") and
    # worker threads per database, instead of DuckDB's 80% of RAM and every core.
    memory_limit: str = "1GB"
    threads: int = Field(default_factory=lambda: min(4, os.cpu_count() or 1), ge=1)
    # User-defined functions a query may call (they are refused otherwise): names or
    # schema.name, as the database's catalogue lists them.
    allowed_functions: tuple[str, ...] = ()
    # Columns whose values annotation never reads, beside the built-in rule (passwords,
    # tokens, keys...): ``table.column`` or ``column`` patterns, ``!`` before one that is
    # not a secret (nl2sql.schema.secret_columns).
    secret_columns: tuple[str, ...] = ()
    # Refuse to use the database when its login can write or is privileged (it is reported
    # either way).
    require_read_only_login: bool = False
    # A governed semantic layer: a dbt (MetricFlow) or Cube file or folder (nl2sql.semantic).
    semantic_model: Path | None = None
    # True for the bundled sample, which is built from its SQL script when the file is missing.
    is_bundled_sample: bool = Field(default=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _defaults_and_ssl(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("port") is None and data.get("type") in BACKENDS:
            data = {**data, "port": BACKENDS[str(data["type"])].default_port}
        ssl = {key: data[key] for key in data if key.startswith("ssl_") and key != "ssl_options"}
        if ssl:
            data = {key: value for key, value in data.items() if key not in ssl}
            data["ssl_options"] = {**(data.get("ssl_options") or {}), **ssl}
        return data

    @field_validator("db_id")
    @classmethod
    def _check_db_id(cls, value: str) -> str:
        if not DB_ID.match(value):  # ids are folder names, URIs and words in shell hints
            example = re.sub(r"[^A-Za-z0-9_.-]+", "_", value).strip("_.-")[:64] or "db1"
            raise ValueError(f"a database id is 1 to 64 letters, digits, '_', '-' and '.' "
                             f"(not starting with '-' or '.'); rename it, e.g. {example!r}")
        return value

    @field_validator("csv_options")
    @classmethod
    def _check_csv_options(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_csv_options(value)

    @field_validator("schema_name")
    @classmethod
    def _check_schema(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            names = [str(name).strip() for name in value]
            if not names or not all(names) or ALL_SCHEMAS in names:
                raise ValueError("'schema' takes one name, a list of names or '*'")
            return names[0] if len(names) == 1 else list(dict.fromkeys(names))
        return value

    @model_validator(mode="after")
    def _check_backend_fields(self) -> DbConnectionConfig:
        if self.password is not None and self.password_env:
            raise ValueError("set either 'password' or 'password_env', not both")
        for required in self.backend.required_fields:
            names = (required,) if isinstance(required, str) else required
            if all(getattr(self, name) in (None, "", []) for name in names):
                wanted = " or ".join(f"'{name}'" for name in names)
                # ``database:`` is Spark's namespace; a server's database is ``dbname:``.
                hint = "; 'database' names a Spark namespace, write the database's name as " \
                       "'dbname'" if names == ("dbname",) and self.database else ""
                raise ValueError(f"field {wanted} is required for type {self.type}"
                                 f"{hint}")
        return self

    @property
    def backend(self) -> Backend:
        """The registry entry of this database's type."""
        return get_backend(self.type)

    @property
    def schemas(self) -> list[str] | None:
        """The schemas to inspect when several are configured (a list, or ``["*"]`` for every
        schema with tables); None for one schema (``effective_schema``)."""
        if isinstance(self.schema_name, list):
            return list(self.schema_name)
        return [ALL_SCHEMAS] if self.schema_name == ALL_SCHEMAS else None

    @property
    def effective_schema(self) -> str | None:
        """The schema to inspect and query (with several: the first, where unqualified names
        are looked up first): the configured one, else the backend's default."""
        first = self.schema_name[0] if isinstance(self.schema_name, list) else self.schema_name
        if first == ALL_SCHEMAS:
            first = None
        return first or self.backend.default_schema

    def resolve_password(self) -> str | None:
        """The password in plain text: ``password_env``'s variable, or ``password`` (an ``ENC:``
        value decrypted with the secrets key)."""
        value = self.password
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise ConfigError(f"Database '{self.db_id}': the environment variable "
                                  f"{self.password_env} named by 'password_env' is not set; "
                                  f"export it before connecting.", db_id=self.db_id)
        if value is None:
            return None

        return secrets.reveal(value, db_id=self.db_id)


def sample_database_path(data_dir: Path) -> Path:
    return data_dir / "bookstore" / "bookstore.db"


class DbConnectionConfigs:
    """The registry of configured databases plus the resolved data dir, workspace and model.

    ``scoped()`` makes the registry one caller sees: their databases only, their workspace;
    asking it for another configured database raises ``AccessDeniedError``."""

    def __init__(self, databases: dict[str, DbConnectionConfig], *, config_path: Path | None,
                 data_dir: Path, workspace: Path, model: str | None = None,
                 agent: AgentSettings | None = None,
                 server: ServerSettings | None = None, store: str | None = None) -> None:
        self.databases = databases
        self.config_path = config_path
        self.data_dir = data_dir
        self.workspace = workspace
        self.model = model
        self.agent = agent or AgentSettings()  # the 'agent:' block
        self.server = server or ServerSettings()  # the 'server:' settings: groups, oidc
        #: 'store:': the PostgreSQL URL of the shared store; None: SQLite files in the data dir.
        self.store = store
        #: Set on a scoped registry: the configured databases it hides, and for whom.
        self.hidden: frozenset[str] = frozenset()
        self.scoped_for: str | None = None

    def scoped(self, db_ids: list[str], *, who: str, workspace: Path) -> DbConnectionConfigs:
        """This registry as ``who`` sees it: only ``db_ids`` (in registry order), results in
        ``workspace``; the other databases are refused by ``get``, not reported unknown."""
        visible = {db_id: config for db_id, config in self.databases.items() if db_id in db_ids}
        scoped = DbConnectionConfigs(visible, config_path=self.config_path,
                                     data_dir=self.data_dir, workspace=workspace,
                                     model=self.model, agent=self.agent, server=self.server,
                                     store=self.store)
        scoped.hidden = frozenset(self.databases) - frozenset(visible) | self.hidden
        scoped.scoped_for = who
        return scoped

    # -- lookup ---------------------------------------------------------------------------
    def get(self, db_id: str) -> DbConnectionConfig:
        try:
            return self.databases[db_id]
        except KeyError:
            if db_id in self.hidden:
                yours = ", ".join(self.databases) or "none"
                raise AccessDeniedError(
                    f"Database '{db_id}' is not open to {self.scoped_for}; use one of your "
                    f"databases ({yours}), or ask an administrator to add it to one of your "
                    f"groups.", db_id=db_id) from None
            raise UnknownDatabaseError(self._unknown_message(db_id), db_id=db_id) from None

    def _unknown_message(self, db_id: str) -> str:
        known = ", ".join(sorted(self.databases)) or "none"
        hint = did_you_mean(db_id, self.databases)
        # A configured user's view names no server file (its folders are not theirs to know).
        where = f" in {self.config_path}" if self.config_path and self.scoped_for is None else ""
        return (f"Unknown database {db_id!r}{where}. {hint}"
                f"Known databases: {known}.")

    def ids(self) -> list[str]:
        return list(self.databases)

    def __iter__(self) -> Iterator[DbConnectionConfig]:
        return iter(self.databases.values())

    def __len__(self) -> int:
        return len(self.databases)

    def __contains__(self, db_id: object) -> bool:
        return db_id in self.databases

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def load(cls, config_path: str | Path | None = None, *, data_dir: str | Path | None = None,
             workspace: str | Path | None = None, model: str | None = None) -> DbConnectionConfigs:
        """Load the registry. Arguments are the command-line flags (None when not given)."""
        found, _ = config_file(config_path)
        path = found.resolve() if found.is_file() else None
        document, node = read_document(path) if path else (DbsDocument(), None)
        base = path.parent if path else Path.cwd()

        # Flags and environment are relative to the current folder, file values to the file.
        # Without a dbs.yaml the cache and the results go to the per-user data dir: never a
        # ./data or ./workspace in whatever folder a command (or an MCP client) starts in.
        resolved_data_dir = _first_path(data_dir, os.environ.get(ENV_DATA_DIR),
                                        document.data_dir, base=base,
                                        default=base / "data" if path else user_data_dir())
        resolved_workspace = _first_path(
            workspace, os.environ.get(ENV_WORKSPACE), document.workspace, base=base,
            default=Path.cwd() / "workspace" if path else user_data_dir() / "workspace")
        resolved_model = model or os.environ.get(ENV_MODEL) or document.model or None
        for folder, what, flag, env, key in (
                (resolved_data_dir, "data dir", "--data-dir", ENV_DATA_DIR, "data_dir"),
                (resolved_workspace, "workspace", "--workspace", ENV_WORKSPACE, "workspace")):
            if folder.exists() and not folder.is_dir():  # found now, not at the first result
                raise ConfigError(f"The {what} {folder} is a file, not a folder; point {flag}, "
                                  f"{env} or '{key}:' in dbs.yaml at a folder.")

        databases = _parse_databases(document.databases, node, path, base)
        sample_path = sample_database_path(resolved_data_dir)
        if SAMPLE_DB_ID not in databases:
            if document.include_sample:  # ``include_sample: false`` switches the sample off
                databases[SAMPLE_DB_ID] = DbConnectionConfig(
                    db_id=SAMPLE_DB_ID, type=SAMPLE_TYPE, path=sample_path,
                    description=SAMPLE_DESCRIPTION, is_bundled_sample=True,
                    semantic_model=bookstore_semantic_model_path())
        else:
            entry = databases[SAMPLE_DB_ID]
            if entry.type == SAMPLE_TYPE and entry.path == sample_path:
                databases[SAMPLE_DB_ID] = entry.model_copy(update={
                    "is_bundled_sample": True,
                    "semantic_model": entry.semantic_model or bookstore_semantic_model_path()})
        server = parse_server_settings(document.server, str(path), list(databases))
        return cls(databases, config_path=path, data_dir=resolved_data_dir,
                   workspace=resolved_workspace, model=resolved_model, agent=document.agent,
                   server=server, store=document.store)


def _parse_databases(entries: Any, node: yaml.Node | None, path: Path | None,
                     base: Path) -> dict[str, DbConnectionConfig]:
    entries = entries or {}
    if not isinstance(entries, dict):
        raise ConfigError(f"{path}: 'databases' must be a mapping of db_id to settings.")
    databases: dict[str, DbConnectionConfig] = {}
    for db_id, settings in entries.items():
        line = _line_of(node, "databases", str(db_id))
        where = f"{path}{f' line {line}' if line else ''}: database {str(db_id)!r}"
        if not isinstance(settings, dict):
            raise ConfigError(f"{where}: expected a mapping of settings (type, path, ...).")
        settings = {key: interpolate(value, where, key) for key, value in settings.items()}
        if "url" in settings:
            settings = _expand_url(settings, where)
        settings = _resolve_paths(settings, base)
        try:
            databases[str(db_id)] = DbConnectionConfig(db_id=str(db_id), **settings)
        except ValidationError as exc:
            raise ConfigError(_validation_message(exc, where, node, str(db_id), path)) from None
    return databases


def _expand_url(settings: dict[str, Any], where: str) -> dict[str, Any]:
    """``url:`` turned into the fields it stands for; a field given both ways is refused."""
    url = settings.pop("url")
    if not isinstance(url, str):
        raise ConfigError(f"{where}: field 'url' must be a string such as "
                          f"postgresql://user@host/dbname.")
    from_url = url_settings(url, where, BACKENDS)
    if "type" in settings and str(settings["type"]) != from_url["type"]:
        raise ConfigError(f"{where}: 'type: {settings['type']}' disagrees with the url scheme "
                          f"(type {from_url['type']}); keep one.")
    both = sorted(set(from_url) & set(settings) - {"type"})
    if both:
        raise ConfigError(f"{where}: field '{both[0]}' is given twice (in 'url' and as a "
                          f"field); keep one.")
    return {**from_url, **settings}


def user_data_dir() -> Path:
    """The per-user data dir used when there is no dbs.yaml: ``$XDG_DATA_HOME/nl2sql``, by
    default ``~/.local/share/nl2sql``."""
    base = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(base).expanduser() / "nl2sql"


#: Path fields of every database, whatever its backend.
_PATH_FIELDS = ("semantic_model",)


def _resolve_paths(settings: dict[str, Any], base: Path) -> dict[str, Any]:
    """The path fields (the backend's and ``semantic_model``) made absolute against ``base``
    (dbs.yaml's folder); a list value (glob patterns) is resolved item by item, keeping its
    wildcards, and a mapping's values (DuckDB's named ``files``) likewise."""
    backend = BACKENDS.get(str(settings.get("type")))
    for name in (*(backend.path_fields if backend else ()), *_PATH_FIELDS):
        value = settings.get(name)
        if isinstance(value, dict):  # view name -> pattern(s), or {files: pattern(s), ...}
            settings[name] = {key: _resolve_patterns(base, items) if not isinstance(items, dict)
                              else {**items, "files": _resolve_patterns(base, items.get("files"))}
                              for key, items in value.items()}
        elif isinstance(value, (list, tuple)):
            settings[name] = [_absolute(base, item) for item in value]
        elif value:
            settings[name] = Path(_absolute(base, value))
    return settings


def _resolve_patterns(base: Path, value: object) -> object:
    """One glob pattern or a list of them, made absolute (anything else is left to the
    validation to name)."""
    if isinstance(value, (list, tuple)):
        return [_absolute(base, item) for item in value]
    return _absolute(base, value) if isinstance(value, str) else value


def _absolute(base: Path, value: object) -> str:
    return str((base / Path(str(value)).expanduser()).resolve())


#: The forms a setting may take, as people say them (pydantic's tags for a union's members).
_FORMS = {"str": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
          "list[str]": "a list of text values"}


def _validation_message(exc: ValidationError, where: str, node: yaml.Node | None, db_id: str,
                        path: Path | None) -> str:
    error = exc.errors()[0]
    field = ".".join(str(p) for p in error["loc"] if p != "db_id")
    top = str(error["loc"][0]) if error["loc"] else ""
    # A value of none of a field's forms (a name or a list of names): an error per form,
    # each at "field.<form>"; said once, for the field.
    union = [e for e in exc.errors() if len(e["loc"]) > 1 and str(e["loc"][0]) == top]
    of_no_form = len({str(e["loc"][1]) for e in union}) > 1
    if of_no_form:
        field = top
    line = _line_of(node, "databases", db_id, field) if field else None
    if line:
        where = f"{path} line {line}: database {db_id!r}"
    match error["type"]:
        case "extra_forbidden":
            known = [info.alias or name for name, info in DbConnectionConfig.model_fields.items()]
            return (f"{where}: unknown field '{field}'; "
                    f"{did_you_mean(field, known, capitalize=False)}remove it or check its "
                    f"spelling.")
        case "missing":
            return f"{where}: field '{field}' is missing; add it."
        case "enum":
            allowed = ", ".join(t.value for t in DatabaseType)
            given = str(error.get("input"))
            return (f"{where}: unknown type '{given}'; {_type_meant(given)}use one of: "
                    f"{allowed}.")
        case _:
            if of_no_form:
                forms = dict.fromkeys(_FORMS.get(str(e["loc"][1]), str(e["msg"]).removeprefix(
                    "Input should be ")) for e in union)
                return f"{where}: field '{top}' should be {' or '.join(forms)}; fix it."
            message = str(error["msg"]).removeprefix("Value error, ")
            suffix = f" (field '{field}')" if field else ""
            return f"{where}: {message}{suffix}."


def _type_meant(given: str) -> str:
    """``"did you mean 'postgres'? "`` for a type written as ``url:`` schemes name it
    (``postgresql``, ``mariadb``: ``backend_named``) or spelled close to one."""
    name = given.strip().lower()
    backend = backend_named(name, BACKENDS)
    if backend is not None:
        return f"did you mean '{backend.name}'? "
    return did_you_mean(name, BACKENDS, capitalize=False)


def _line_of(node: yaml.Node | None, *keys: str) -> int | None:
    """1-based line of the deepest of ``keys`` found in the composed YAML node tree."""
    line = None
    for key in keys:
        entry = mapping_entry(node, key)
        if entry is None:
            break
        line, node = entry[0].start_mark.line + 1, entry[1]
    return line


def _first_path(flag: str | Path | None, env: str | None, file_value: str | None, *,
                base: Path, default: Path) -> Path:
    if flag or env:
        return Path(flag or env).expanduser().resolve()  # type: ignore[arg-type]
    if file_value:
        return (base / Path(file_value).expanduser()).resolve()
    return default.resolve()
