"""The one permission check, ``can(caller, action, db_id)``, and what follows from it: the
registry a caller sees (``scope``), and the database role their queries take (``db_role``).

Every face asks here (datasette's idea: one hook asked with actor, action and resource), never
re-deriving a rule: ``db_list``, every MCP tool, resource and prompt, ``nl2sql.context()``'s
ranking and the catalog agent's choice all read the registry ``scope`` returns, whose lookups
refuse the databases ``can`` denies; accepting an answer asks ``can(caller, "curate", db_id)``.

Actions:
- ``"query"``: see a database (``db_list``, its schema, its results) and run queries on it;
- ``"curate"``: an accept of an answer on it makes a verified answer (not a proposal).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

from nl2sql.access.caller import Caller
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.config.server import ALL_DATABASES

Action = Literal["query", "curate"]
#: Configured users' results: ``{workspace}/users/{name}/``, each user's own.
USERS_FOLDER = "users"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


def can(caller: Caller, action: Action, db_id: str) -> bool:
    """May ``caller`` do ``action`` on database ``db_id``?"""
    grants = caller.grants
    allowed = grants.databases if action == "query" else grants.curates
    return allowed is None or db_id in allowed


def db_role(caller: Caller, db_id: str) -> str | None:
    """The database role ``caller``'s queries on ``db_id`` take (``DbOperations.for_session``):
    the ``db_role`` of their first group in dbs.yaml that grants the database; None without."""
    for granted, role in caller.grants.roles:
        if granted in (db_id, ALL_DATABASES):
            return role
    return None


def scope(configs: DbConnectionConfigs, caller: Caller) -> DbConnectionConfigs:
    """The registry ``caller`` sees: the databases they may query, and for a configured user
    their own results folder. Full access: ``configs`` itself."""
    if not caller.configured:
        return configs
    visible = [db_id for db_id in configs.ids() if can(caller, "query", db_id)]
    return configs.scoped(visible, who=caller.describe(),
                          workspace=user_workspace(configs.workspace, caller.name))


def user_workspace(workspace: Path, name: str) -> Path:
    """``{workspace}/users/{name}``; a name that is not a plain file name (other characters,
    ``..``) becomes a safe one with a digest of the name after a ``+``, which no plain name
    has, so two names never share a folder."""
    if _SAFE_NAME.fullmatch(name) and ".." not in name:
        folder = name
    else:
        readable = re.sub(r"[^A-Za-z0-9._@-]+", "_", name).strip("._") or "user"
        folder = f"{readable[:40]}+{hashlib.sha256(name.encode()).hexdigest()[:12]}"
    return workspace / USERS_FOLDER / folder
