"""Use case: one table metric of a prediction CSV against a solution CSV (``proctor score table``).

The solution is ``id,TARGET`` (the reference); the prediction ``id,TARGET``, or ``id,SCORE``
/ ``id,CLASS1,CLASS2,...`` for roc_auc, average_precision and log_loss. Rows are matched by
id. Bad input (a file that does not read, ids that do not match, an unknown metric, an option
the metric does not take) raises ``InputFileError`` or ``UsageError`` naming the file.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from pydantic import ValidationError

from proctor.errors import InputFileError, UsageError
from proctor.metrics._validation import UndefinedMetricWarning
from proctor.scoring.table import TableOptions
from proctor.scoring.table_metrics import BUILTIN_TABLE_METRICS, TableScore, score_table
from proctor.services.local.input_errors import input_errors_as

__all__ = ["TABLE_METRICS", "TableScore", "score_table_files"]

TABLE_METRICS = tuple(metric.name for metric in BUILTIN_TABLE_METRICS)
"""The built-in table metrics' names (installed plug-ins add theirs)."""


def table_options(
    metric: str,
    *,
    id_column: str = "id",
    target: str = "target",
    positive: str | None = None,
    k: int | None = None,
) -> TableOptions:
    """The options as the ``table`` scorer takes them; ``UsageError`` naming the bad one."""
    try:
        return TableOptions(metric=metric, id=id_column, target=target, positive=positive, k=k)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'options'}: "
            f"{error['msg'].removeprefix('Value error, ')}"
            for error in err.errors()
        )
        raise UsageError(problems) from None


def score_table_files(
    solution: Path,
    prediction: Path,
    metric: str,
    *,
    id_column: str = "id",
    target: str = "target",
    positive: str | None = None,
    k: int | None = None,
) -> TableScore:
    """``metric`` of ``prediction`` against ``solution``; NaN (silently) where undefined."""
    options = table_options(metric, id_column=id_column, target=target, positive=positive, k=k)
    with warnings.catch_warnings(), input_errors_as(InputFileError):
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return score_table(solution, prediction, options)
