"""Reading dbs.yaml: YAML problems as one line with the line number, and lookups in the composed
node tree (for line numbers). Shared by the registry (``config``) and the password tools
(``secrets``), so neither imports the other's module for them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from nl2sql.errors import ConfigError


def yaml_error(path: Path, exc: yaml.YAMLError) -> ConfigError:
    """Broken YAML in ``path`` as one line naming the line and the problem."""
    mark = getattr(exc, "problem_mark", None)
    line = f" line {mark.line + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or "invalid YAML"
    return ConfigError(f"{path}{line}: {problem}; fix the YAML syntax there.")


def not_a_mapping_error(path: Path) -> ConfigError:
    return ConfigError(f"{path}: expected a mapping with a 'databases:' key at the top.")


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
    except ArgumentError:
        raise ConfigError(f"{where}: field 'url' is not a database URL; write it as "
                          f"scheme://user@host:port/dbname (e.g. postgresql://me@localhost/shop)."
                          ) from None
    scheme = parsed.get_backend_name()
    # A type name wins over an alias, an alias over a SQLAlchemy dialect name (DuckDB's
    # dialect is Postgres'): ``postgresql://`` is Postgres, ``duckdb://`` DuckDB.
    ranked = [[b for b in backends.values() if scheme == b.name],
              [b for b in backends.values() if scheme in getattr(b, "url_schemes", ())],
              [b for b in backends.values() if scheme == b.sqlalchemy_dialect]]
    backend = next((found[0] for found in ranked if found), None)
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
