"""Schema inspection: structure extraction (here), enum screening and sample rows (siblings)."""

from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount
from nl2sql.inspection.extractor import DbSchemaExtractor
from nl2sql.inspection.base import create_inspector

__all__ = ["DbSchemaExtractor", "DbSchemaInspector", "ReflectedSchema", "RowCount",
           "create_inspector"]
