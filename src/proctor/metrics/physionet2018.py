"""PhysioNet/CinC Challenge 2018 arousal scores: gross AUPRC and AUROC, digit for digit.

The official scorer (``score2018.py`` of May 2018) histograms every record's predictions into
1001 equal bins over [-0.0005, 1.0005] (``numpy.histogram`` semantics, edges computed in the
predictions' dtype: float32 from a ``.vec`` file), separately for target samples (label > 0) and
non-target samples (label == 0 or NaN; label < 0 is not scored). The gross score sums those
histograms over all successfully scored records, including records without arousals, and sweeps
the 1001 thresholds once. This module keeps only the histograms, so tallies merge across workers
and a record costs one pass over its samples.

Bins: a value ``v`` falls in bin ``j`` when ``edges[j] <= v < edges[j+1]`` (the last bin is
closed), so an exact half-thousandth such as 0.0005 goes to the upper bin. Predictions must lie
within the outer edges (in the data's dtype: [0, 1] plus half a thousandth either side, which the
official scorer counts in the end bins) and be non-NaN; anything else raises
:class:`MetricInputError` (the official scorer rejected the record too). Undefined scores (no
target or no non-target sample) are NaN.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

N_BINS = 1001
"""Probability bins of the official scorer (three decimal digits, plus both ends)."""
HISTOGRAM_RANGE = (-0.0005, 1.0005)
"""Outer edges of the bins, as the official scorer passes them to ``numpy.histogram``."""
_CHUNK = 1 << 17
"""Samples per step of the histogram loops (keeps the temporaries in the CPU cache)."""
_CLASS_STRIDE = 1024
"""Code distance between the classes in :class:`ClassCounter` (a power of two above 1001)."""
_LANES = 4
"""Interleaved counter sets of :class:`ClassCounter`."""
_LANE_SPAN = 3 * _CLASS_STRIDE
"""Codes per counter set: three classes."""
_NEAR_EDGE = 1e-3
"""How close (in thousandths) to a bin edge a float32 value must be to get the exact check."""


@cache
def bin_edges(dtype: str = "float32") -> np.ndarray:
    """The 1002 bin edges ``numpy.histogram`` uses for data of ``dtype`` (read-only)."""
    edges = np.histogram_bin_edges(np.empty(0, dtype=dtype), bins=N_BINS, range=HISTOGRAM_RANGE)
    edges.flags.writeable = False
    return edges


@cache
def _lane_offsets() -> np.ndarray:
    """``3072·(i mod 4)`` for the positions of one chunk (uint16, read-only)."""
    lanes = np.arange(_CHUNK, dtype=np.uint16) % _LANES * np.uint16(_LANE_SPAN)
    lanes.flags.writeable = False
    return lanes


def _check_predictions(predictions: npt.ArrayLike) -> np.ndarray:
    values = np.asarray(predictions)
    if values.ndim != 1:
        raise MetricInputError(f"predictions: expected a 1-D array, got shape {values.shape}")
    if values.dtype.kind in "biu":
        values = values.astype(np.float64)
    if values.dtype not in (np.float32, np.float64):
        raise MetricInputError(f"predictions: expected float32 or float64, got {values.dtype}")
    edges = bin_edges(values.dtype.name)
    if values.size and not (values.min() >= edges[0] and values.max() <= edges[-1]):
        bad = np.flatnonzero(~((values >= edges[0]) & (values <= edges[-1])))[0]
        raise MetricInputError(
            f"predictions: sample {bad} is {values[bad]!r}; probabilities must lie in [0, 1] "
            "(no NaN; like the official scorer, half a thousandth beyond is tolerated)"
        )
    return values


def _exact_bins(values: np.ndarray) -> np.ndarray:
    """Bin of each value by comparison with the dtype's edges (the definition)."""
    edges = bin_edges(values.dtype.name)
    index = np.searchsorted(edges, values, side="right") - 1
    return np.minimum(index, N_BINS - 1).astype(np.uint16)


def _float32_bins(values: np.ndarray, out: np.ndarray) -> None:
    """Fast bins of float32 values in [0, 1]: round to thousandths, recheck values near an edge.

    The float32 edges are not exact half-thousandths, so a value within a rounding error of one
    is binned by comparison with the edges instead.
    """
    scaled = values.astype(np.float64) * 1000.0 + 0.5
    whole = np.floor(scaled)
    out[...] = whole
    frac = scaled - whole
    near = np.flatnonzero((frac < _NEAR_EDGE) | (frac > 1.0 - _NEAR_EDGE))
    if near.size:
        out[near] = _exact_bins(values[near])


def bin_indices(predictions: npt.ArrayLike) -> np.ndarray:
    """The official histogram bin (0..1000) of every prediction, as uint16.

    Float32 input uses float32 edges, float64 (or integer) input float64 edges, exactly as
    ``numpy.histogram`` does. Raises :class:`MetricInputError` for NaN or values outside [0, 1].
    """
    values = _check_predictions(predictions)
    if values.dtype != np.float32:
        return _exact_bins(values)
    bins = np.empty(values.size, dtype=np.uint16)
    for start in range(0, values.size, _CHUNK):
        stop = start + _CHUNK
        _float32_bins(values[start:stop], bins[start:stop])
    return bins


def check_labels(labels: npt.ArrayLike, n_samples: int) -> np.ndarray:
    """``labels`` as a 1-D numeric array of ``n_samples`` reference samples, or an error."""
    truth = np.asarray(labels)
    if truth.ndim != 1 or truth.dtype.kind not in "biuf":
        raise MetricInputError(
            f"labels: expected a 1-D numeric array, got {truth.dtype} of shape {truth.shape}"
        )
    if truth.shape[0] != n_samples:
        raise MetricInputError(
            f"predictions have {n_samples} samples but the reference has {truth.shape[0]}: "
            "one prediction per reference sample"
        )
    return truth


class ClassCounter:
    """Counts samples by (class, bin), chunk by chunk: the core of the histogram pass.

    Each sample gets the 16-bit code ``bin + 1024·class + 3072·(i mod 4)`` (class 0
    non-target, 1 target, 2 unscored; ``i`` the sample's position) and one ``bincount`` per
    chunk counts them. The position term sends neighbouring samples to different counters:
    predictions often repeat a value for long runs, and incrementing one counter over and over
    is several times slower than spreading the increments (each waits for the previous one).
    The scratch arrays are reused so every step stays in the CPU cache.
    """

    def __init__(self) -> None:
        self._counts = np.zeros(_LANES * _LANE_SPAN, dtype=np.int64)
        self._positive = np.empty(_CHUNK, dtype=bool)
        self._ignored = np.empty(_CHUNK, dtype=bool)
        self._class = np.empty(_CHUNK, dtype=np.uint8)
        self._code = np.empty(_CHUNK, dtype=np.uint16)

    def add(self, bins: np.ndarray, labels: np.ndarray) -> None:
        """Count samples with bins ``bins`` (uint16, < 1001) and labels ``labels`` (same size)."""
        for start in range(0, bins.shape[0], _CHUNK):
            self._add_chunk(bins[start : start + _CHUNK], labels[start : start + _CHUNK])

    def _add_chunk(self, bins: np.ndarray, labels: np.ndarray) -> None:
        n = bins.shape[0]
        positive, ignored = self._positive[:n], self._ignored[:n]
        klass, code = self._class[:n], self._code[:n]
        np.greater(labels, 0, out=positive)
        np.less(labels, 0, out=ignored)
        np.add(ignored.view(np.uint8), ignored.view(np.uint8), out=klass)
        np.add(klass, positive.view(np.uint8), out=klass)
        np.multiply(klass, np.uint16(_CLASS_STRIDE), out=code)
        np.add(code, bins, out=code)
        np.add(code, _lane_offsets()[:n], out=code)
        self._counts += np.bincount(code, minlength=self._counts.size)

    def histograms(self) -> tuple[np.ndarray, np.ndarray]:
        """(target, non-target) counts per bin so far, two int64 arrays of length 1001."""
        by_class = self._counts.reshape(_LANES, 3, _CLASS_STRIDE).sum(axis=0)[:, :N_BINS]
        return by_class[1].copy(), by_class[0].copy()


def class_histograms(bins: np.ndarray, labels: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Histograms of target (label > 0) and non-target (label == 0 or NaN) samples by bin.

    ``bins`` holds the bin of each sample (see :func:`bin_indices`); samples with label < 0 are
    not scored. Returns two int64 arrays of length :data:`N_BINS`.
    """
    truth = check_labels(labels, bins.shape[0])
    if bins.size and int(bins.max()) >= N_BINS:
        raise MetricInputError(f"bins: indices must be below {N_BINS}")
    counter = ClassCounter()
    counter.add(bins, truth)
    return counter.histograms()


def auc_from_histograms(positive: np.ndarray, negative: np.ndarray) -> tuple[float, float]:
    """(AUPRC, AUROC) from per-bin counts, by the official threshold sweep.

    The loop repeats the official arithmetic operation by operation (same order, float64), so
    the result agrees to the last digit; bins holding no sample are skipped, since their terms
    are exactly zero. NaN for both when either class is empty.
    """
    tp = int(np.sum(positive))
    fp = int(np.sum(negative))
    if tp == 0 or fp == 0:
        return math.nan, math.nan
    fn = tn = 0
    tpr: float = 1
    tnr: float = 0
    ppv = float(tp) / (tp + fp)
    auroc: float = 0
    auprc: float = 0
    # an empty bin changes no count, so its terms add exactly 0.0: only occupied bins are swept
    occupied = np.flatnonzero((positive != 0) | (negative != 0))
    for n_pos, n_neg in zip(positive[occupied].tolist(), negative[occupied].tolist(), strict=True):
        tp -= n_pos
        fn += n_pos
        fp -= n_neg
        tn += n_neg
        tpr_prev, tnr_prev, ppv_prev = tpr, tnr, ppv
        tpr = float(tp) / (tp + fn)
        tnr = float(tn) / (tn + fp)
        ppv = float(tp) / (tp + fp) if tp + fp > 0 else ppv_prev
        auroc += (tpr_prev - tpr) * (tnr + tnr_prev) * 0.5
        auprc += (tpr_prev - tpr) * ppv_prev
    return auprc, auroc


@dataclass(frozen=True)
class RecordScore:
    """Scores of one record: AUPRC and AUROC (NaN when undefined) and its scored sample counts."""

    auprc: float
    auroc: float
    n_positive: int
    n_negative: int


class ArousalTally:
    """Mergeable accumulator of the official histograms; gross scores over everything added.

    >>> tally = ArousalTally()
    >>> _ = tally.add_record(np.array([0.9, 0.2], np.float32), np.array([1.0, 0.0]))
    >>> tally.gross_auprc()
    1.0
    """

    def __init__(self) -> None:
        self._positive = np.zeros(N_BINS, dtype=np.int64)
        self._negative = np.zeros(N_BINS, dtype=np.int64)
        self.records = 0

    def add_record(self, predictions: npt.ArrayLike, labels: npt.ArrayLike) -> RecordScore:
        """Score one record (predictions in [0, 1], usually float32) and add it to the totals."""
        return self.add_binned(bin_indices(predictions), labels)

    def add_binned(self, bins: np.ndarray, labels: npt.ArrayLike) -> RecordScore:
        """Like :meth:`add_record`, with the bins already known (``formats.vec.read_vec_bins``)."""
        return self.add_histograms(*class_histograms(bins, labels))

    def add_histograms(self, positive: np.ndarray, negative: np.ndarray) -> RecordScore:
        """Add one record given as per-bin target and non-target counts."""
        if positive.shape != (N_BINS,) or negative.shape != (N_BINS,):
            raise MetricInputError(f"histograms must have {N_BINS} bins")
        self._positive += positive
        self._negative += negative
        self.records += 1
        auprc, auroc = auc_from_histograms(positive, negative)
        return RecordScore(auprc, auroc, int(positive.sum()), int(negative.sum()))

    def merge(self, other: ArousalTally) -> None:
        """Add the totals of ``other`` (e.g. from another worker) to this tally."""
        self._positive += other._positive
        self._negative += other._negative
        self.records += other.records

    def gross_auprc(self) -> float:
        """Gross area under the precision-recall curve (NaN when a class is missing)."""
        return auc_from_histograms(self._positive, self._negative)[0]

    def gross_auroc(self) -> float:
        """Gross area under the ROC curve (NaN when a class is missing)."""
        return auc_from_histograms(self._positive, self._negative)[1]


def _warn_if_undefined(auprc: float, what: str) -> None:
    if math.isnan(auprc):
        warnings.warn(
            f"{what} AUPRC/AUROC are undefined: no target or no non-target sample; returning NaN",
            UndefinedMetricWarning,
            stacklevel=3,
        )


def record_auprc_auroc(predictions: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[float, float]:
    """(AUPRC, AUROC) of one record; NaN with a warning when a class is missing."""
    score = ArousalTally().add_record(predictions, labels)
    _warn_if_undefined(score.auprc, "record")
    return score.auprc, score.auroc


def gross_scores(pairs: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]]) -> tuple[float, float]:
    """Gross (AUPRC, AUROC) over ``(predictions, labels)`` pairs, one pair per record."""
    tally = ArousalTally()
    for predictions, labels in pairs:
        tally.add_record(predictions, labels)
    auprc, auroc = tally.gross_auprc(), tally.gross_auroc()
    _warn_if_undefined(auprc, "gross")
    return auprc, auroc
