"""A mergeable tally of calibration statistics, for test sets too large to hold at once.

The 2018 test set has about 5.4e9 samples: the Brier score and the expected calibration error
are accumulated record by record (per-bin counts, probability sums, positive counts and the
squared error) instead of concatenating every sample. The values equal
:func:`~proctor.metrics.classification.brier_score_loss` and
:func:`~proctor.metrics.classification.expected_calibration_error` on the concatenated arrays
(up to floating-point summation order), with the same bins.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError
from proctor.metrics.classification import (
    DEFAULT_CALIBRATION_BINS,
    _bin_ids,
    _probabilities,
    _undefined,
)


class CalibrationTally:
    """Accumulates outcomes (``positive``: booleans) and predicted probabilities chunk by chunk.

    Unlike the array functions, the positive class is given explicitly: a chunk holding only
    negatives is common (a record without arousals) and must not be read as "the larger label".
    """

    def __init__(self, *, n_bins: int = DEFAULT_CALIBRATION_BINS) -> None:
        _bin_ids(np.zeros(0), n_bins)  # validates n_bins
        self.n_bins = n_bins
        self.counts = np.zeros(n_bins, dtype=np.int64)
        self.prob_sums = np.zeros(n_bins, dtype=np.float64)
        self.hits = np.zeros(n_bins, dtype=np.int64)
        self.squared_error = 0.0

    def add(self, positive: npt.ArrayLike, y_prob: npt.ArrayLike) -> None:
        """Add one chunk: ``positive`` a boolean array, ``y_prob`` probabilities in [0, 1]."""
        truth = np.asarray(positive)
        if truth.dtype != np.bool_ or truth.ndim != 1:
            raise MetricInputError(
                f"positive: expected a 1-D boolean array, got {truth.dtype} of shape {truth.shape}"
            )
        prob = _probabilities(y_prob, truth.size)
        ids = _bin_ids(prob, self.n_bins)
        self.counts += np.bincount(ids, minlength=self.n_bins)
        self.prob_sums += np.bincount(ids, weights=prob, minlength=self.n_bins)
        self.hits += np.bincount(ids[truth], minlength=self.n_bins)
        self.squared_error += float(np.sum((prob - truth) ** 2))

    def merge(self, other: CalibrationTally) -> None:
        """Add another tally (same bins) into this one."""
        if other.n_bins != self.n_bins:
            raise MetricInputError(f"cannot merge {other.n_bins} bins into {self.n_bins}")
        self.counts += other.counts
        self.prob_sums += other.prob_sums
        self.hits += other.hits
        self.squared_error += other.squared_error

    @property
    def total(self) -> int:
        """Cases added so far."""
        return int(self.counts.sum())

    def brier_score_loss(self) -> float:
        """Mean squared difference between probability and outcome; NaN if empty."""
        if self.total == 0:
            return _undefined("Brier score", "no cases")
        return self.squared_error / self.total

    def expected_calibration_error(self) -> float:
        """Σ_bins (n_b / N)·|observed frequency − mean probability|; NaN if empty."""
        if self.total == 0:
            return _undefined("expected calibration error", "no cases")
        used = self.counts > 0
        counts = self.counts[used]
        gaps = np.abs(self.hits[used] / counts - self.prob_sums[used] / counts)
        return float(np.sum(counts * gaps) / self.total)
