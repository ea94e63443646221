"""A database's schema as nl2sql knows it: the ``DbInfo``/``TableInfo`` models (the JSON cache
contract), the cache files, and the annotated schema SQL shown to people and models."""
