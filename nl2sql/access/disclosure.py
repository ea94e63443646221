"""What a configured user reads in an error: the server's own files named, never shown.

An error is worded where it happens, for whoever runs the server (``SQLite file /srv/nl2sql/
sales.db ... was deleted``, ``no schema cache yet (/srv/nl2sql/data/...)``). A configured user of
a team server (a user token, an identity provider's JWT) is not that person: the server's
folders are not theirs to know. ``shown_to`` rewrites such a message at the face's edge (the
MCP server, the web page, the agents' tool errors the model reads): each of the server's paths
(dbs.yaml and its folder, the data dir, the workspace root, each database's files) becomes a
name. The OS account and a local face see the message as it is."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from nl2sql.access.caller import Caller
    from nl2sql.config.registry import DbConnectionConfigs


class CallersView(Protocol):
    """What ``shown_to`` reads of a caller's view (an ``OpsContext``): who is asking and the
    server's whole registry."""

    caller: Caller
    registry: DbConnectionConfigs | None
    configs: DbConnectionConfigs


#: A path ends where no other path character follows (a sentence's final dot is not one).
_END = r"(?![\w.~-])|(?=\.(?:\s|$))"


def shown_to(ops: CallersView | None, message: str) -> str:
    """``message`` as ``ops``' caller may read it: unchanged for the OS account, the server's
    paths named for a configured user."""
    if ops is None or not ops.caller.configured:
        return message
    pattern, names = _server_paths_pattern(ops.registry or ops.configs)
    return pattern.sub(lambda match: names[match.group(1)], message)


def _server_paths(registry: DbConnectionConfigs) -> dict[str, str]:
    """Each server path (as written and resolved) and the name shown for it."""
    named: list[tuple[Path | None, str]] = [
        (registry.config_path, "dbs.yaml"),
        (registry.config_path.parent if registry.config_path else None,
         "the server's config folder"),
        (registry.data_dir, "the server's data folder"),
        (registry.workspace, "the workspace")]
    for config in registry:
        named += [(config.path, "the server's file"), (config.semantic_model, "the server's file")]
    paths: dict[str, str] = {}
    for path, name in named:
        if path is None:
            continue
        for spelling in {str(path), str(Path(path).expanduser().resolve())}:
            if len(Path(spelling).parts) > 2:  # never "/" or "/tmp" alone
                paths.setdefault(spelling, name)
    return paths


@lru_cache(maxsize=16)
def _server_paths_pattern(registry: DbConnectionConfigs) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern of every server path, the longest first, and each path's name."""
    names = _server_paths(registry)
    alternatives = "|".join(re.escape(path) for path in sorted(names, key=len, reverse=True))
    return re.compile(f"({alternatives or '(?!)'})(?:{_END})"), names
