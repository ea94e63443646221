"""Verified answers: SQL a person marked right, kept per database in the data dir
(``{data_dir}/verified/{db_id}.sqlite``, which ``annotate-schema`` never overwrites), served
again for the same question, offered first as examples for similar ones, and marked stale when
schema drift breaks them. ``store`` keeps them, ``questions`` says when two questions are the
same and which tables an SQL reads. Checking and storing one is an operation
(``nl2sql.operations.verified_answers``, ``verified_api``, ``verified_serve``); re-checking them
after annotation is ``nl2sql.annotation.verified_drift``."""
