"""Execution accuracy of NL2SQL predictions on a question set (``nl2sql-eval``).

Inputs (``inputs.py``), the comparison rules (``compare.py``, ``ordering.py``), scoring through
the read-only query path (``scoring.py``), context recall (``context_recall.py``), the run
(``runner.py``), predictions from a model (``generate.py``), the report (``report.py``,
``html.py``).
"""

from nl2sql.workspace.result_compare import Comparison, OrderSpec, compare_results
from nl2sql.evaluation.inputs import (EvaluationInputError, Question, bundled_set_path,
                                      load_predictions, load_questions)
from nl2sql.evaluation.report import Report, Summary, wilson_interval
from nl2sql.evaluation.runner import EvalSettings, Generation, evaluate
from nl2sql.evaluation.scoring import QuestionResult, Scorer

__all__ = ["Comparison", "EvalSettings", "EvaluationInputError", "Generation", "OrderSpec",
           "Question", "QuestionResult", "Report", "Scorer", "Summary", "bundled_set_path",
           "compare_results", "evaluate", "load_predictions", "load_questions",
           "wilson_interval"]
