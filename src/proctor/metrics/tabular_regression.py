"""Metrics of predicted numbers against true ones, as scikit-learn and SciPy compute them.

``y_true`` and ``y_pred`` are 1-D arrays of finite numbers, one per row. Each function equals
its namesake on the same arrays (``tests/metrics/test_metrics_tabular.py``):
``root_mean_squared_error``, ``mean_absolute_error``, ``r2_score``,
``mean_absolute_percentage_error`` and ``root_mean_squared_log_error`` of ``sklearn.metrics``,
``scipy.stats.pearsonr`` and ``scipy.stats.spearmanr`` (their ``statistic``).

Undefined cases: R² of fewer than two rows is NaN with a warning; a constant ``y_true`` gives
R² 1 for a perfect prediction, else 0 (scikit-learn's ``force_finite``); a correlation with a
constant array is NaN with a warning; fewer than two rows for a correlation, or a value at or
below -1 for RMSLE, is an error.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

FloatArray = npt.NDArray[np.float64]


def _values(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    truth = np.asarray(y_true, dtype=np.float64)
    pred = np.asarray(y_pred, dtype=np.float64)
    if truth.ndim != 1 or truth.shape != pred.shape:
        raise MetricInputError(
            f"y_true {truth.shape} and y_pred {pred.shape} must be 1-D arrays of one length"
        )
    if truth.size == 0:
        raise MetricInputError("no rows: y_true and y_pred are empty")
    if not (np.all(np.isfinite(truth)) and np.all(np.isfinite(pred))):
        raise MetricInputError("values must be finite (found NaN or infinity)")
    return truth, pred


def root_mean_squared_error(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Square root of the mean squared difference (lower is better)."""
    truth, pred = _values(y_true, y_pred)
    return float(np.sqrt(np.average((truth - pred) ** 2)))


def mean_absolute_error(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Mean absolute difference (lower is better)."""
    truth, pred = _values(y_true, y_pred)
    return float(np.average(np.abs(pred - truth)))


def r2_score(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Coefficient of determination: 1 - residual sum of squares / total sum of squares."""
    truth, pred = _values(y_true, y_pred)
    if truth.size < 2:
        warnings.warn(
            "R² is undefined with fewer than two rows; returning NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return math.nan
    numerator = np.sum((truth - pred) ** 2)
    denominator = np.sum((truth - np.average(truth)) ** 2)
    if denominator == 0:
        return 1.0 if numerator == 0 else 0.0
    return float(1 - numerator / denominator)


def mean_absolute_percentage_error(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Mean of |pred - true| / |true| (a fraction, not %; |true| floored at machine epsilon)."""
    truth, pred = _values(y_true, y_pred)
    floor = np.finfo(np.float64).eps
    return float(np.average(np.abs(pred - truth) / np.maximum(np.abs(truth), floor)))


def root_mean_squared_log_error(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """RMSE of ``log(1 + value)``; every value must be above -1."""
    truth, pred = _values(y_true, y_pred)
    if truth.min() <= -1 or pred.min() <= -1:
        raise MetricInputError("RMSLE: every value must be greater than -1 (log(1 + value))")
    return root_mean_squared_error(np.log1p(truth), np.log1p(pred))


def _correlation(x: FloatArray, y: FloatArray, name: str) -> float:
    if x.size < 2:
        raise MetricInputError(f"{name}: needs at least two rows")
    if np.all(x == x[0]) or np.all(y == y[0]):
        warnings.warn(
            f"{name} is undefined: an array is constant; returning NaN",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    dx /= np.max(np.abs(dx))
    dy /= np.max(np.abs(dy))
    value = np.dot(dx / np.linalg.norm(dx), dy / np.linalg.norm(dy))
    return float(np.clip(value, -1.0, 1.0))


def pearson_correlation(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Pearson's correlation coefficient r (higher is better)."""
    truth, pred = _values(y_true, y_pred)
    return _correlation(truth, pred, "Pearson's r")


def spearman_correlation(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Spearman's rank correlation: Pearson's r of the ranks, ties ranked by their mean."""
    from scipy.stats import rankdata  # scipy.stats takes 0.4 s to import: only when used

    truth, pred = _values(y_true, y_pred)
    return _correlation(rankdata(truth), rankdata(pred), "Spearman's rho")
