"""Charts of query results: a chart chosen from the result's shape (``rules``), drawn from at
most a capped number of rows (``table``), with axis titles from the annotated schema
(``labels``), as PNG or SVG in-process with matplotlib (``render``, the ``charts`` extra).

``chart_csv(path, kind=None, x=None, y=None, colour=None)`` returns a ``Chart``; the faces are
``Answer.chart()``, ``nl2sql-ask --chart FILE`` and the MCP tool ``csv_chart``
(``nl2sql.operations.charts``). Importing this package does not import matplotlib.
"""

from nl2sql.charts.chart import Chart, chart_csv

__all__ = ["Chart", "chart_csv"]
