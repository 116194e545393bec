"""Binary classification metrics: ROC AUC, Brier score, calibration error, reliability curve.

Conventions (scikit-learn's): ``y_true`` first, options keyword-only; the larger of the two labels
in ``y_true`` is the positive class (0/1, -1/1, False/True all work); ``*_score`` is higher-is-
better, ``*_loss`` and ``*_error`` lower-is-better. An undefined value is NaN with an
:class:`UndefinedMetricWarning`, never a silent 0.

Calibration binning (:func:`expected_calibration_error`, :func:`reliability_curve`): ``n_bins``
equal-width bins over [0, 1] (default 10), closed on the right as in
``sklearn.calibration.calibration_curve``: bin 0 is [0, 1/n], bin i is (i/n, (i+1)/n]. The
calibrated quantity is the predicted probability of the positive class (not the top-label
confidence).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

DEFAULT_CALIBRATION_BINS = 10
"""Equal-width bins over [0, 1] used by the calibration metrics unless told otherwise."""


def _undefined(name: str, why: str) -> float:
    warnings.warn(
        f"{name} is undefined: {why}; returning NaN", UndefinedMetricWarning, stacklevel=3
    )
    return math.nan


def sorted_labels(labels: np.ndarray) -> np.ndarray:
    """``np.unique(labels)``; a boolean array is answered by ``any``/``all`` instead of a sort."""
    if labels.dtype != np.bool_:
        return np.unique(labels)
    present = [value for value in (False, True) if (labels == value).any()]
    return np.array(present, dtype=np.bool_)


def _binary_truth(y_true: npt.ArrayLike, name: str = "y_true") -> tuple[np.ndarray, int]:
    """``y_true`` as a boolean array (True = the larger label) and its number of classes."""
    truth = np.asarray(y_true)
    if truth.ndim != 1:
        raise MetricInputError(f"{name}: expected a 1-D array of labels, got shape {truth.shape}")
    if truth.dtype.kind not in "biuf":
        raise MetricInputError(f"{name}: expected numeric or boolean labels, got {truth.dtype}")
    if truth.dtype.kind == "f" and not np.all(np.isfinite(truth)):
        raise MetricInputError(f"{name}: labels must be finite (found NaN or infinity)")
    classes = sorted_labels(truth)
    if classes.size > 2:
        raise MetricInputError(
            f"{name}: expected two classes (binary labels), found {classes.size}: "
            f"{classes[:5].tolist()}"
        )
    if classes.size == 0:
        return truth.astype(bool), 0
    return truth == classes[-1], int(classes.size)


def _scores(y_score: npt.ArrayLike, n: int, name: str) -> np.ndarray:
    """``y_score`` as a finite 1-D array of length ``n``."""
    score = np.asarray(y_score)
    if score.ndim != 1:
        raise MetricInputError(f"{name}: expected a 1-D array, got shape {score.shape}")
    if score.dtype.kind not in "biuf":
        raise MetricInputError(f"{name}: expected numbers, got {score.dtype}")
    if score.shape[0] != n:
        raise MetricInputError(
            f"{name} has {score.shape[0]} values but y_true has {n}: one score per case"
        )
    if score.dtype.kind == "f" and not np.all(np.isfinite(score)):
        raise MetricInputError(f"{name}: scores must be finite (found NaN or infinity)")
    return score


def _probabilities(y_prob: npt.ArrayLike, n: int) -> np.ndarray:
    prob = _scores(y_prob, n, "y_prob").astype(np.float64)
    if prob.size and (prob.min() < 0 or prob.max() > 1):
        raise MetricInputError("y_prob: probabilities must lie in [0, 1]")
    return prob


def _roc_points(positive: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """False and true positive rates at every distinct threshold, collinear points dropped.

    The same steps as ``sklearn.metrics.roc_curve(drop_intermediate=True)``, so the trapezoid
    sum below adds the same terms in the same order.
    """
    # Ties collapse into one point at their group's end, where the counts do not depend on
    # the order within the group: the (faster) unstable sort gives the same curve.
    order = np.argsort(score)[::-1]
    ranked = score[order]
    hits = positive[order].astype(np.float64)
    # Where the (finite) score changes: ``!=`` is ``diff != 0`` without an array of floats.
    ends = np.concatenate([np.flatnonzero(ranked[1:] != ranked[:-1]), [ranked.size - 1]])
    tps = np.cumsum(hits)[ends]
    fps = 1 + ends - tps
    if fps.size > 2:
        keep = np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
        tps, fps = tps[keep], fps[keep]
    tps = np.concatenate([[0.0], tps])
    fps = np.concatenate([[0.0], fps])
    return fps / fps[-1], tps / tps[-1]


def roc_auc_score(y_true: npt.ArrayLike, y_score: npt.ArrayLike) -> float:
    """Area under the ROC curve, identical to ``sklearn.metrics.roc_auc_score`` (binary case).

    Ties in ``y_score`` count half (trapezoids); hard 0/1 predictions are accepted. Undefined
    (NaN with a warning) when ``y_true`` holds a single class.

    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    positive, n_classes = _binary_truth(y_true)
    score = _scores(y_score, positive.size, "y_score")
    if n_classes < 2:
        return _undefined("ROC AUC", "y_true holds a single class")
    fpr, tpr = _roc_points(positive, score)
    return float(np.sum((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1]) / 2.0))


def brier_score_loss(y_true: npt.ArrayLike, y_prob: npt.ArrayLike) -> float:
    """Mean squared difference between ``y_prob`` and the outcome (1 positive, 0 negative).

    Lower is better, 0 is perfect. Defined for a single class; undefined (NaN with a warning)
    only for empty input.
    """
    positive, _ = _binary_truth(y_true)
    prob = _probabilities(y_prob, positive.size)
    if prob.size == 0:
        return _undefined("Brier score", "no cases")
    return float(np.mean((prob - positive) ** 2))


@dataclass(frozen=True)
class ReliabilityCurve:
    """Points of a reliability diagram, one per non-empty bin, in bin order.

    ``mean_predicted``: mean predicted probability in the bin; ``fraction_positive``: observed
    frequency of the positive class; ``counts``: cases in the bin; ``bin_index``: which of the
    ``n_bins`` equal-width bins.
    """

    mean_predicted: np.ndarray
    fraction_positive: np.ndarray
    counts: np.ndarray
    bin_index: np.ndarray


def _bin_ids(prob: np.ndarray, n_bins: int) -> np.ndarray:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise MetricInputError(f"n_bins must be a positive integer, got {n_bins!r}")
    inner_edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    return np.searchsorted(inner_edges, prob)


def reliability_curve(
    y_true: npt.ArrayLike, y_prob: npt.ArrayLike, *, n_bins: int = DEFAULT_CALIBRATION_BINS
) -> ReliabilityCurve:
    """Reliability-diagram points (same bins as ``calibration_curve(strategy="uniform")``)."""
    positive, _ = _binary_truth(y_true)
    prob = _probabilities(y_prob, positive.size)
    ids = _bin_ids(prob, n_bins)
    counts = np.bincount(ids, minlength=n_bins)
    sums = np.bincount(ids, weights=prob, minlength=n_bins)
    hits = np.bincount(ids, weights=positive.astype(np.float64), minlength=n_bins)
    used = np.flatnonzero(counts)
    return ReliabilityCurve(
        mean_predicted=sums[used] / counts[used],
        fraction_positive=hits[used] / counts[used],
        counts=counts[used],
        bin_index=used,
    )


def expected_calibration_error(
    y_true: npt.ArrayLike, y_prob: npt.ArrayLike, *, n_bins: int = DEFAULT_CALIBRATION_BINS
) -> float:
    """Expected calibration error: Σ_bins (n_b / N)·|observed frequency − mean probability|.

    Bins as in :func:`reliability_curve` (``n_bins`` equal-width bins, default 10). Lower is
    better, 0 is perfectly calibrated. Undefined (NaN with a warning) only for empty input.
    """
    curve = reliability_curve(y_true, y_prob, n_bins=n_bins)
    total = int(curve.counts.sum())
    if total == 0:
        return _undefined("expected calibration error", "no cases")
    gaps = np.abs(curve.fraction_positive - curve.mean_predicted)
    return float(np.sum(curve.counts * gaps) / total)
