"""Who a local face acts as: the operating-system account running it (CLI, Python, MCP over
stdio), with full access unless that account's name is a configured user (then its groups
apply)."""

from __future__ import annotations

from nl2sql.access.caller import Caller, os_user_name
from nl2sql.config.registry import DbConnectionConfigs


def local_caller(configs: DbConnectionConfigs) -> Caller:
    """The OS account as a caller of ``configs``' databases."""
    return Caller(name=os_user_name())
