"""Metrics of predicted class labels against true ones, as scikit-learn computes them.

``y_true`` and ``y_pred`` are 1-D arrays of labels of one kind (numbers or strings), one per
row. The classes are every label found in either array, sorted; a class seen only in
``y_pred`` counts as a class (as ``sklearn.metrics`` does with ``labels=None``). Every function
equals its scikit-learn namesake on the same arrays (``tests/metrics/test_metrics_tabular.py``).

Undefined cases follow scikit-learn: a class never predicted has precision 0
(``zero_division=0``); Cohen's kappa is NaN with a warning when both arrays hold one same
class; MCC is 0 when either array holds a single class.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

FloatArray = npt.NDArray[np.float64]


def _pair(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    truth, pred = np.asarray(y_true), np.asarray(y_pred)
    if truth.ndim != 1 or pred.ndim != 1:
        raise MetricInputError("y_true and y_pred must be 1-D arrays of labels")
    if truth.shape != pred.shape:
        raise MetricInputError(f"y_true has {truth.size} labels but y_pred has {pred.size}")
    if truth.size == 0:
        raise MetricInputError("no labels: y_true and y_pred are empty")
    return truth, pred


def confusion(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> FloatArray:
    """The confusion matrix over the sorted union of classes: rows true, columns predicted."""
    truth, pred = _pair(y_true, y_pred)
    _, codes = np.unique(np.concatenate([truth, pred]), return_inverse=True)
    n_classes = int(codes.max()) + 1
    cells = codes[: truth.size] * n_classes + codes[truth.size :]
    counts = np.bincount(cells, minlength=n_classes * n_classes)
    return counts.reshape(n_classes, n_classes).astype(np.float64)


def accuracy_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Share of rows whose predicted label is the true one (``sklearn.metrics.accuracy_score``)."""
    truth, pred = _pair(y_true, y_pred)
    return float(np.average(truth == pred))


def balanced_accuracy_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Mean recall over the classes of ``y_true`` (classes only predicted are left out)."""
    matrix = confusion(y_true, y_pred)
    rows = matrix.sum(axis=1)
    present = rows > 0
    return float(np.mean(np.diag(matrix)[present] / rows[present]))


def _per_class(matrix: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """True positives, predicted counts and true counts of each class."""
    return np.diag(matrix), matrix.sum(axis=0), matrix.sum(axis=1)


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """``numerator / denominator``, 0 where the denominator is 0 (``zero_division=0``)."""
    safe = np.where(denominator == 0, 1.0, denominator)
    return np.where(denominator == 0, 0.0, numerator / safe)


def _f1_per_class(matrix: FloatArray) -> tuple[FloatArray, FloatArray]:
    tp, predicted, true = _per_class(matrix)
    return _ratio(2 * tp, predicted + true), true


def f1_macro_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Unweighted mean of each class's F1 (``f1_score(average="macro")``)."""
    f1, _ = _f1_per_class(confusion(y_true, y_pred))
    return float(np.mean(f1))


def f1_weighted_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Mean of each class's F1 weighted by its true count (``f1_score(average="weighted")``)."""
    f1, true = _f1_per_class(confusion(y_true, y_pred))
    return float(np.average(f1, weights=true))


def f1_micro_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """F1 of the pooled counts (``f1_score(average="micro")``; equals accuracy here)."""
    tp, predicted, true = _per_class(confusion(y_true, y_pred))
    return float(2 * tp.sum() / (predicted.sum() + true.sum()))


def precision_macro_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Unweighted mean of each class's precision; a class never predicted counts 0."""
    tp, predicted, _ = _per_class(confusion(y_true, y_pred))
    return float(np.mean(_ratio(tp, predicted)))


def recall_macro_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Unweighted mean of each class's recall; a class absent from ``y_true`` counts 0."""
    tp, _, true = _per_class(confusion(y_true, y_pred))
    return float(np.mean(_ratio(tp, true)))


def _kappa(matrix: FloatArray, weights: FloatArray) -> float:
    rows, columns = matrix.sum(axis=1), matrix.sum(axis=0)
    expected = np.outer(columns, rows) / columns.sum()
    denominator = np.sum(weights * expected)
    if denominator == 0:
        warnings.warn(
            "Cohen's kappa is undefined: both arrays hold one same class; returning NaN",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return math.nan
    return float(1 - np.sum(weights * matrix) / denominator)


def cohen_kappa_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Cohen's kappa: agreement beyond chance (``sklearn.metrics.cohen_kappa_score``)."""
    matrix = confusion(y_true, y_pred)
    return _kappa(matrix, 1.0 - np.eye(matrix.shape[0]))


def quadratic_weighted_kappa_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Cohen's kappa with quadratic weights (``cohen_kappa_score(weights="quadratic")``).

    The weight of a disagreement is the squared distance between the two classes' positions
    in the sorted list of classes present (scikit-learn's definition), not between their values.
    """
    matrix = confusion(y_true, y_pred)
    positions = np.arange(matrix.shape[0], dtype=np.float64)
    return _kappa(matrix, (positions[None, :] - positions[:, None]) ** 2)


def matthews_corrcoef_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Matthews correlation coefficient, multiclass (``sklearn.metrics.matthews_corrcoef``).

    0 when either array holds a single class (scikit-learn's convention).
    """
    matrix = confusion(y_true, y_pred)
    true, predicted = matrix.sum(axis=1), matrix.sum(axis=0)
    n_samples = predicted.sum()
    covariance = np.trace(matrix) * n_samples - np.dot(true, predicted)
    spread = (n_samples**2 - np.dot(predicted, predicted)) * (n_samples**2 - np.dot(true, true))
    if spread == 0:
        return 0.0
    return float(covariance / np.sqrt(spread))
