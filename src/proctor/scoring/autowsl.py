"""The AutoWSL scorer for the python_model protocol: ROC AUC of each dataset's prediction.

A case is a dataset; its stored output is the prediction CSV (header ``label``, one score
per test row) and its hidden reference ``DATASET.solution`` (header ``label``, 0/1, or -1/1:
the larger label is the positive class). Shapes must match. A dataset without a usable
prediction scores an AUC of 0, the worst value (ChaLearn AutoML's convention for a failed
dataset); the python_model driver fails such a task before scoring anyway.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from proctor.errors import InputFileError
from proctor.formats.label_csv import read_label_column
from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.classification import roc_auc_score
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.scorer import UNIT_INTERVAL, ScorerDeclaration, count_metric, metric_declarations
from proctor.types import Direction

FAILED_AUC = 0.0


def check_prediction(path: Path) -> str | None:
    """None when ``path`` is a CSV with a ``label`` column of finite numbers, else why not."""
    try:
        read_label_column(path)
    except InputFileError as err:
        return str(err).replace(str(path), "the prediction")
    return None


def dataset_auc(prediction: Path, solution: Path) -> float:
    """ROC AUC of one prediction against its solution (``ValueError`` on a shape mismatch).

    NaN when the solution holds a single class (the metric is undefined there).
    """
    truth = read_label_column(solution)
    scores = read_label_column(prediction)
    if truth.shape != scores.shape:
        raise ValueError(f"{scores.size} predictions for {truth.size} solution rows")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return float(roc_auc_score(truth, scores))


def score_task(
    outputs: Path, references: Path, datasets: Sequence[str], output_template: str
) -> TaskScores:
    """The mean ROC AUC over the task's datasets (one, in the bundled challenge)."""
    per_dataset: dict[str, dict[str, float]] = {}
    failed = []
    for dataset in datasets:
        prediction = outputs / output_template.format(record=dataset)
        solution = references / f"{dataset}.solution"
        if not solution.is_file():
            raise ValueError(f"the hidden reference {solution.name} is missing")
        try:
            auc = dataset_auc(prediction, solution) if prediction.is_file() else None
        except (InputFileError, MetricInputError, ValueError):
            auc = None
        if auc is None:
            failed.append(dataset)
            auc = FAILED_AUC
        per_dataset[dataset] = {"auc": auc}
    values = [row["auc"] for row in per_dataset.values()]
    summary = {
        "auc": float(np.mean(values)) if values else float("nan"),
        "datasets": float(len(datasets)),
        "datasets_failed": float(len(failed)),
    }
    return TaskScores(summary, per_dataset, tuple(failed))


SCORER = Scorer(
    ScorerDeclaration(
        name="autowsl",
        summary="AutoWSL 2019: ROC AUC of each dataset's prediction (label column)",
        reference="{record}.solution",
        cases="datasets",
        metrics=metric_declarations(
            (
                "auc",
                Direction.HIGHER,
                "area under the ROC curve of the dataset's prediction",
                UNIT_INTERVAL,
            ),
            count_metric("datasets", "hidden datasets scored"),
            count_metric("datasets_failed", "datasets without a usable prediction"),
        ),
    ),
    score_task,
    check_prediction,
)
"""The ``autowsl`` scorer: what it reports, how it scores, how one output is checked."""
