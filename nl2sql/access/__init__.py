"""Who is asking and what they may do: callers (OS account, user token, identity provider's JWT),
groups, and the one permission check ``can(caller, action, db_id)`` every face asks."""

from nl2sql.access.caller import FULL_ACCESS, Caller, Grants, member, os_caller
from nl2sql.access.users import local_caller
from nl2sql.access.permissions import Action, can, db_role, scope

__all__ = ["FULL_ACCESS", "Action", "Caller", "Grants", "can", "db_role", "local_caller",
           "member", "os_caller", "scope"]
