"""Verified answers: SQL a person marked right, served again for the same question, offered
first as examples for similar ones, and marked stale when schema drift breaks them; a model's
accept is only a proposal until a person confirms it. ``questions`` says when two questions are
the same and which tables an SQL reads. They are kept by the store (``nl2sql.store``: per
database in ``{data_dir}/verified/{db_id}.sqlite``, or the shared PostgreSQL store); checking and
storing one is an operation (``nl2sql.operations.verified_answers``, ``verified_api``,
``verified_serve``); re-checking them after annotation is ``nl2sql.annotation.verified_drift``."""
