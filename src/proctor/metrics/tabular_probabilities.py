"""Metrics of predicted scores or class probabilities, as scikit-learn computes them.

``y_true`` is a 1-D array of labels; ``y_score`` is either 1-D (the score of the positive
class: the greater of two labels, as in scikit-learn) or 2-D with one column per class of
``y_true`` in sorted order. Each function equals its scikit-learn namesake on the same arrays
(``tests/metrics/test_metrics_tabular.py``):

- :func:`roc_auc_ovr_score` = ``roc_auc_score`` (binary; multiclass ``multi_class="ovr"``,
  ``average="macro"``: rows must sum to 1). NaN with a warning when ``y_true`` holds one class.
- :func:`average_precision_macro_score` = ``average_precision_score`` (binary; multiclass
  macro). With no positive row it is 0, with a warning (scikit-learn's value).
- :func:`log_loss` = ``sklearn.metrics.log_loss``: probabilities clipped to [eps, 1 - eps],
  rows used as given (not renormalized). An error when ``y_true`` holds a single class.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.classification import roc_auc_score, sorted_labels

FloatArray = npt.NDArray[np.float64]


def _inputs(y_true: npt.ArrayLike, y_score: npt.ArrayLike) -> tuple[np.ndarray, FloatArray]:
    """``y_true`` 1-D and ``y_score`` as finite float64, one row per label."""
    truth, score = np.asarray(y_true), np.asarray(y_score, dtype=np.float64)
    if truth.ndim != 1:
        raise MetricInputError(f"y_true: expected a 1-D array of labels, got shape {truth.shape}")
    if score.ndim not in (1, 2) or score.shape[0] != truth.size:
        raise MetricInputError(
            f"y_score has shape {score.shape} for {truth.size} labels: one row per label"
        )
    if truth.size == 0:
        raise MetricInputError("no rows: y_true is empty")
    if not np.all(np.isfinite(score)):
        raise MetricInputError("y_score: scores must be finite (found NaN or infinity)")
    return truth, score


def _classes(truth: np.ndarray, labels: npt.ArrayLike | None) -> np.ndarray:
    """The sorted classes the columns stand for: ``labels``, or those of ``y_true``."""
    present = sorted_labels(truth)
    if labels is None:
        return present
    classes = np.asarray(labels)
    if classes.ndim != 1 or not np.array_equal(np.unique(classes), classes):
        raise MetricInputError("labels must be sorted and unique")
    unknown = np.setdiff1d(present, classes)
    if unknown.size:
        raise MetricInputError(f"y_true holds labels not in labels: {unknown[:5].tolist()}")
    return classes


def _columns(classes: np.ndarray, score: FloatArray, name: str) -> None:
    if score.shape[1] != classes.size:
        raise MetricInputError(
            f"{name}: y_score has {score.shape[1]} columns for {classes.size} "
            "classes: one column per class, in sorted order"
        )


def roc_auc_ovr_score(
    y_true: npt.ArrayLike, y_score: npt.ArrayLike, *, labels: npt.ArrayLike | None = None
) -> float:
    """Area under the ROC curve; one-vs-rest macro mean over the classes of a 2-D ``y_score``.

    ``labels``: the classes of the columns when some are absent from ``y_true``; those are
    left out of the mean (they have no positive row), which scikit-learn would make NaN.
    """
    truth, score = _inputs(y_true, y_score)
    classes = _classes(truth, labels)
    if score.ndim == 1:
        if classes.size > 2:
            raise MetricInputError(
                f"ROC AUC: y_true holds {classes.size} classes: give one score column per class"
            )
        return roc_auc_score(truth == classes[-1], score)
    _columns(classes, score, "ROC AUC")
    if classes.size < 3:
        raise MetricInputError("ROC AUC: with two classes give one column, the positive score")
    if not np.allclose(1, score.sum(axis=1)):
        raise MetricInputError(
            "ROC AUC: each row of class probabilities must sum to 1 (one-vs-rest)"
        )
    values = [
        roc_auc_score(truth == label, score[:, index])
        for index, label in enumerate(classes)
        if np.any(truth == label)
    ]
    return float(np.average(values))


def _binary_average_precision(positive: np.ndarray, score: FloatArray) -> float:
    """Sum over thresholds of (recall step) × precision, scikit-learn's order of terms."""
    order = np.argsort(score)[::-1]  # counts at each tie group's end: any sort gives them
    ranked = score[order]
    ends = np.concatenate([np.flatnonzero(np.diff(ranked)), [ranked.size - 1]])
    tps = np.cumsum(positive[order], dtype=np.float64)[ends]
    fps = 1 + ends - tps
    precision = tps / (tps + fps)
    if tps[-1] == 0:
        warnings.warn(
            "average precision: no positive row in y_true; returning 0",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        recall = np.ones_like(tps)
    else:
        recall = tps / tps[-1]
    precision = np.concatenate([precision[::-1], [1.0]])
    recall = np.concatenate([recall[::-1], [0.0]])
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def average_precision_macro_score(
    y_true: npt.ArrayLike, y_score: npt.ArrayLike, *, labels: npt.ArrayLike | None = None
) -> float:
    """Average precision; macro mean over the classes of a 2-D ``y_score``.

    ``labels`` as for :func:`roc_auc_ovr_score`: absent classes are left out of the mean.
    """
    truth, score = _inputs(y_true, y_score)
    classes = _classes(truth, labels)
    if score.ndim == 1:
        if classes.size > 2:
            raise MetricInputError(
                f"average precision: y_true holds {classes.size} classes: give one score "
                "column per class"
            )
        positive = truth == classes[-1] if classes.size == 2 else _single_positive(truth)
        return _binary_average_precision(positive, score)
    _columns(classes, score, "average precision")
    if classes.size < 3:
        raise MetricInputError(
            "average precision: with two classes give one column, the positive score"
        )
    values = [
        _binary_average_precision(truth == label, score[:, index])
        for index, label in enumerate(classes)
        if np.any(truth == label)
    ]
    return float(np.average(values))


def _single_positive(truth: np.ndarray) -> np.ndarray:
    """One class only: it is the positive one when it is 1 or True (scikit-learn's pos_label)."""
    label = truth[0]
    return np.full(truth.size, bool(label == 1 and truth.dtype.kind in "biuf"))


def log_loss(
    y_true: npt.ArrayLike, y_prob: npt.ArrayLike, *, labels: npt.ArrayLike | None = None
) -> float:
    """Mean negative log-likelihood of the true class (natural log); lower is better.

    ``labels``: the sorted classes of the columns (scikit-learn's ``labels``), when some are
    absent from ``y_true``.
    """
    truth, prob = _inputs(y_true, y_prob)
    if prob.size and (prob.max() > 1 or prob.min() < 0):
        raise MetricInputError("log loss: probabilities must lie in [0, 1]")
    classes = _classes(truth, labels)
    codes = np.searchsorted(classes, truth)
    if classes.size < 2:
        raise MetricInputError(
            f"log loss: y_true holds a single class ({classes[0]!r}): it needs two or more"
        )
    if prob.ndim == 1:
        if classes.size > 2:
            raise MetricInputError(
                f"log loss: y_true holds {classes.size} classes: give one column per class"
            )
        prob = np.stack([1 - prob, prob], axis=1)
    _columns(classes, prob, "log loss")
    eps = np.finfo(np.float64).eps
    chosen = np.clip(prob[np.arange(truth.size), codes], eps, 1 - eps)
    return float(-np.mean(np.log(chosen)))
