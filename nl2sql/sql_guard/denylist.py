"""Functions a read-only query may not call, per dialect, grouped by what they would do.

A name is denied when it is in the dialect's exact set or starts with one of its prefixes
(families such as ``lo_*`` or ``pg_advisory_*`` keep growing between server versions).
Matching is case-insensitive; schema qualification is ignored (``pg_catalog.pg_sleep`` and
``public.pg_sleep`` are both ``pg_sleep``).
"""

from __future__ import annotations

from types import MappingProxyType

# Postgres functions grouped by effect; prefixes end with "_" or name a whole family.
_POSTGRES: dict[str, tuple[str, ...]] = {
    "sleep": ("pg_sleep", "pg_sleep_for", "pg_sleep_until"),
    "file": (
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir",
        "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_ls_logicalmapdir",
        "pg_ls_logicalsnapdir", "pg_ls_replslotdir", "pg_current_logfile",
        # adminpack
        "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync", "pg_file_read",
        "pg_file_length", "pg_logdir_ls",
    ),
    "large_object": (
        "lo_import", "lo_export", "lo_create", "lo_creat", "lo_unlink", "lo_open", "lo_close",
        "loread", "lowrite", "lo_lseek", "lo_lseek64", "lo_tell", "lo_tell64", "lo_truncate",
        "lo_truncate64", "lo_get", "lo_put", "lo_from_bytea", "lo_manage",
    ),
    # Functions that run SQL text the guard never sees.
    "remote_or_dynamic_sql": (
        "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_open",
        "dblink_fetch", "dblink_send_query", "query_to_xml", "query_to_xmlschema",
        "query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema", "ts_stat",
        "crosstab", "crosstab2", "crosstab3", "crosstab4", "connectby", "xpath_table",
        "postgres_fdw_disconnect", "postgres_fdw_disconnect_all",
        # pg_background runs SQL in a worker with its own (writable) transaction; aws_s3 and
        # aws_lambda (RDS/Aurora) export query results or call out of the database.
        "pg_background_launch", "pg_background_result", "query_export_to_s3",
        "table_import_from_s3", "invoke",
    ),
    "lock": (
        "pg_advisory_lock", "pg_advisory_lock_shared", "pg_advisory_xact_lock",
        "pg_advisory_xact_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
        "pg_try_advisory_xact_lock", "pg_try_advisory_xact_lock_shared", "pg_advisory_unlock",
        "pg_advisory_unlock_shared", "pg_advisory_unlock_all",
    ),
    "setting": ("set_config", "pg_reload_conf"),
    "write": (
        "nextval", "setval", "txid_current", "pg_current_xact_id", "pg_notify",
        "pg_logical_emit_message", "pg_import_system_collations", "pg_extension_config_dump",
        "pg_truncate_visibility_map", "pg_stat_statements_reset", "pg_set_relation_stats",
        "pg_clear_relation_stats", "pg_restore_relation_stats", "pg_set_attribute_stats",
        "pg_clear_attribute_stats", "pg_restore_attribute_stats",
    ),
    "admin": (
        "pg_terminate_backend", "pg_cancel_backend", "pg_rotate_logfile",
        "pg_rotate_logfile_old", "pg_switch_wal", "pg_switch_xlog", "pg_create_restore_point",
        "pg_promote", "pg_backup_start", "pg_backup_stop", "pg_start_backup", "pg_stop_backup",
        "pg_log_backend_memory_contexts", "pg_wal_replay_pause", "pg_wal_replay_resume",
        "pg_create_physical_replication_slot", "pg_create_logical_replication_slot",
        "pg_drop_replication_slot", "pg_copy_physical_replication_slot",
        "pg_copy_logical_replication_slot", "pg_replication_slot_advance",
        "pg_replication_origin_create", "pg_replication_origin_drop",
        "pg_replication_origin_advance", "pg_replication_origin_session_setup",
        "pg_logical_slot_get_changes", "pg_logical_slot_get_binary_changes",
        "pg_stat_reset", "pg_stat_reset_shared", "pg_stat_reset_single_table_counters",
        "pg_stat_reset_single_function_counters", "pg_stat_reset_slru",
        "pg_stat_reset_replication_slot", "pg_stat_reset_subscription_stats",
        "pg_sync_replication_slots", "pg_log_standby_snapshot",
    ),
}
_POSTGRES_PREFIXES = (
    "pg_sleep", "pg_read_", "pg_ls_", "pg_file_", "lo_", "dblink", "pg_advisory_",
    "pg_try_advisory_", "pg_replication_", "pg_logical_", "pg_stat_reset", "binary_upgrade_",
    "pg_create_", "pg_drop_", "pg_copy_", "pg_wal_replay_", "pg_backup_", "query_to_xml",
    "cursor_to_xml", "crosstab", "xpath_table", "postgres_fdw_", "pg_set_", "pg_clear_",
    "pg_restore_", "pg_background_",
)

# SQLite: most of these exist only when an extension or the sqlite3 shell is loaded, which is
# exactly when they are dangerous.
_SQLITE: dict[str, tuple[str, ...]] = {
    "extension": ("load_extension", "icu_load_collation", "define", "undefine", "eval"),
    "file": ("readfile", "writefile", "edit", "fsdir", "lsdir", "lsmode", "zipfile",
             "fileio_read", "fileio_write", "fileio_append", "fileio_ls", "fileio_mkdir",
             "fileio_symlink"),
    "write": ("fts3_tokenizer",),
}
_SQLITE_PREFIXES: tuple[str, ...] = ("fileio_",)

#: SQLite pragmas that only read the schema or the file: allowed as statements
#: (``PRAGMA table_info(t)``) and by the engine's authorizer (SQLAlchemy reflection needs them).
SQLITE_READ_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
    "foreign_key_list", "database_list", "collation_list", "function_list", "module_list",
    "pragma_list", "compile_options", "integrity_check", "quick_check", "foreign_key_check"})


def _flatten(groups: dict[str, tuple[str, ...]]) -> frozenset[str]:
    return frozenset(name for names in groups.values() for name in names)


DENIED_FUNCTIONS: MappingProxyType[str, frozenset[str]] = MappingProxyType({
    "postgres": _flatten(_POSTGRES),
    "sqlite": _flatten(_SQLITE),
})
DENIED_FUNCTION_PREFIXES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    "postgres": _POSTGRES_PREFIXES,
    "sqlite": _SQLITE_PREFIXES,
})
DENIED_FUNCTION_EFFECTS: MappingProxyType[str, MappingProxyType[str, str]] = MappingProxyType({
    dialect: MappingProxyType({name: effect for effect, names in groups.items() for name in names})
    for dialect, groups in (("postgres", _POSTGRES), ("sqlite", _SQLITE))
})


def _lists_for(dialect: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The exact names and prefixes for a dialect; an unknown dialect gets every list."""
    if dialect in DENIED_FUNCTIONS:
        return DENIED_FUNCTIONS[dialect], DENIED_FUNCTION_PREFIXES[dialect]
    names = frozenset().union(*DENIED_FUNCTIONS.values())
    prefixes = tuple(p for group in DENIED_FUNCTION_PREFIXES.values() for p in group)
    return names, prefixes


def is_denied_function(name: str, dialect: str) -> bool:
    """True when calling ``name`` (any case, optionally schema-qualified) has side effects."""
    bare = name.rsplit(".", 1)[-1].strip('"`[]').lower()
    names, prefixes = _lists_for(dialect)
    return bare in names or bare.startswith(prefixes)
