"""Use case: the AutoWSL per-dataset ROC AUC of a prediction CSV (``proctor score auc``).

The solution is a ``*.solution`` file or a folder holding exactly one; the prediction is the CSV
the ingestion wrote. Both have a ``label`` column and one row per test case, in order.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from proctor.errors import InputFileError
from proctor.formats.label_csv import find_solution, read_label_column
from proctor.metrics._validation import UndefinedMetricWarning
from proctor.metrics.classification import roc_auc_score
from proctor.services.local.input_errors import input_errors_as


def score_auc(solution: Path, prediction: Path) -> float:
    """ROC AUC of ``prediction`` against ``solution``; the larger solution label is positive.

    NaN, silently, when the solution holds a single class. An unreadable file, a row count
    that differs from the solution's, or labels the metric refuses (more than two classes)
    raise ``InputFileError``.
    """
    truth_file = find_solution(solution)
    truth = read_label_column(truth_file)
    scores = read_label_column(prediction)
    if truth.shape != scores.shape:
        raise InputFileError(
            f"{prediction} has {scores.size} rows but {truth_file} has {truth.size}: "
            "shapes must match (one prediction per test row, in order)"
        )
    with warnings.catch_warnings(), input_errors_as(InputFileError):
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return roc_auc_score(truth, scores)
