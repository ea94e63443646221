"""Reading dbs.yaml: YAML problems as one line with the line number, and lookups in the composed
node tree (for line numbers). Shared by the registry (``config``) and the password tools
(``secrets``), so neither imports the other's module for them.
"""

from __future__ import annotations

from pathlib import Path

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
