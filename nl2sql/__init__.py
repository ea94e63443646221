"""nl2sql: ask SQL databases questions in plain language."""

from nl2sql.errors import Nl2SqlError

__all__ = ["Nl2SqlError", "__version__"]
__version__ = "0.1.0"
