"""How stable is a gross AUPRC? A bootstrap over records of the 2018 histograms.

The gross AUPRC pools every record's histograms, so a resample of records is a weighted sum of
their histograms: all resamples are computed at once as one matrix product, then one vectorised
threshold sweep. The point estimate is the exact official value; the interval is a percentile
bootstrap (records drawn with replacement), useful to tell which leaderboard gaps are real.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError
from proctor.metrics.physionet2018 import N_BINS, auc_from_histograms
from proctor.metrics.ranking import BootstrapInterval


def auprc_from_histograms_batch(positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Gross AUPRC of each row of per-bin counts (rows × N_BINS); NaN where a class is empty.

    Vectorised form of the official sweep: where no sample lies at or above a threshold the
    official code carries the previous precision forward, but its recall step is then 0, so
    such terms contribute nothing and precision may be taken as 0 there.
    """
    tp = np.cumsum(positive[:, ::-1], axis=1)[:, ::-1].astype(np.float64)
    fp = np.cumsum(negative[:, ::-1], axis=1)[:, ::-1].astype(np.float64)
    total_pos = tp[:, :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = tp / total_pos
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
    recall_next = np.concatenate([recall[:, 1:], np.zeros((recall.shape[0], 1))], axis=1)
    auprc = np.sum(precision * (recall - recall_next), axis=1)
    empty = (total_pos[:, 0] == 0) | (fp[:, 0] == 0)
    return np.where(empty, np.nan, auprc)


def resampled_histograms(
    draws: np.ndarray, positive: np.ndarray, negative: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin totals of each resample (row of ``draws``: the records drawn), exactly.

    The weights (times each record was drawn) come from one ``bincount``, and the weighted sums
    are one float64 matrix product (BLAS) instead of an int64 one (numpy's slow generic loop):
    every product and partial sum is an integer far below 2**53, so the result is exact in any
    summation order.
    """
    n_resamples, n_records = draws.shape
    flat = (np.arange(n_resamples)[:, None] * n_records + draws).ravel()
    weights = np.bincount(flat, minlength=n_resamples * n_records).reshape(n_resamples, -1)
    weights = weights.astype(np.float64)
    limit = float(max(int(positive.sum()), int(negative.sum()))) * n_records
    if limit >= 2.0**53:
        return weights.astype(np.int64) @ positive, weights.astype(np.int64) @ negative
    return weights @ positive.astype(np.float64), weights @ negative.astype(np.float64)


def bootstrap_gross_auprc(
    positive: npt.ArrayLike,
    negative: npt.ArrayLike,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapInterval:
    """Percentile bootstrap interval of the gross AUPRC, resampling records.

    ``positive``/``negative``: records × N_BINS per-record histograms (``class_histograms``).
    The estimate is the official gross AUPRC of all records. Deterministic for a ``seed``.
    """
    pos = np.asarray(positive, dtype=np.int64)
    neg = np.asarray(negative, dtype=np.int64)
    if pos.ndim != 2 or pos.shape != neg.shape or pos.shape[1] != N_BINS or pos.shape[0] == 0:
        raise MetricInputError(
            f"histograms: expected two records × {N_BINS} arrays of the same shape, "
            f"got {pos.shape} and {neg.shape}"
        )
    if not 0 < confidence < 1 or n_resamples < 1:
        raise MetricInputError("confidence must lie in (0, 1) and n_resamples be at least 1")
    estimate, _ = auc_from_histograms(pos.sum(axis=0), neg.sum(axis=0))
    rng = np.random.default_rng(seed)
    n_records = pos.shape[0]
    draws = rng.integers(0, n_records, size=(n_resamples, n_records))
    samples = auprc_from_histograms_batch(*resampled_histograms(draws, pos, neg))
    alpha = (1 - confidence) / 2
    bounds = np.full(2, np.nan)
    if np.isfinite(samples).any():
        bounds = np.nanquantile(samples, [alpha, 1 - alpha])
    return BootstrapInterval(
        np.array(estimate), np.array(bounds[0]), np.array(bounds[1]), confidence
    )
