"""Overlap metrics of EvaluateSegmentation from one pass over the two volumes.

Every overlap metric (DICE … GCOERR, ICCORR, PROBDST and the counts) is a function of seven sums
over the voxels, computed once into :class:`OverlapSums`. Memberships ``x`` (truth) and ``y``
(segment) lie in [0, 1]; binary volumes are the special case x, y ∈ {0, 1}. The fuzzy
contingency table is TP = Σmin(x, y), FN = Σmax(x − y, 0), FP = Σmax(y − x, 0),
TN = Σmin(1 − x, 1 − y), in voxels.

Voxels outside the bounding box of both volumes' foreground are background in both and only
enter through the voxel count ``n``, so the pass reads the full volume once (for the box) and
then only the box. Undefined values are NaN with an :class:`UndefinedMetricWarning`; the values
the tool prints instead (PRCISON 0, ADJRIND 0, PROBDST −1) belong to ``segmentation_compat``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from proctor.metrics._segmentation_arrays import nonzero_box, undefined, union_box

BYTE = 255.0


@dataclass(frozen=True)
class OverlapSums:
    """Σx, Σy, Σmin(x, y), Σx², Σy², Σxy over ``n`` voxels (memberships in [0, 1])."""

    n: int
    sx: float
    sy: float
    smin: float
    sxx: float
    syy: float
    sxy: float

    @property
    def tp(self) -> float:
        """True positives Σmin(x, y), in voxels."""
        return self.smin

    @property
    def fn(self) -> float:
        """False negatives Σmax(x − y, 0), in voxels."""
        return self.sx - self.smin

    @property
    def fp(self) -> float:
        """False positives Σmax(y − x, 0), in voxels."""
        return self.sy - self.smin

    @property
    def tn(self) -> float:
        """True negatives Σmin(1 − x, 1 − y) = n − Σmax(x, y), in voxels."""
        return self.n - (self.sx + self.sy - self.smin)


def overlap_sums(
    truth: np.ndarray,
    segment: np.ndarray,
    *,
    scale: float = 1.0,
    threshold: float | None = None,
    n: int | None = None,
) -> OverlapSums:
    """Compute the sums of two same-shape volumes whose memberships are ``array / scale``.

    With ``threshold`` (≥ 0) the volumes are first binarised at ``array > threshold·scale``
    (strictly). ``uint8`` volumes with ``scale`` 255 (the tool's bytes) go through an exact joint
    histogram. The arrays may be crops that hold all non-zero voxels; ``n`` is then the voxel
    count of the whole volume (default: the arrays' size).
    """
    n = truth.size if n is None else n
    box = union_box(nonzero_box(truth), nonzero_box(segment))
    if box is None:
        return OverlapSums(n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    t, s = truth[box], segment[box]
    integral = t.dtype.kind in "biu" and s.dtype.kind in "biu"
    if threshold is not None or (integral and scale == 1):
        level = 0.0 if threshold is None else threshold * scale
        return _binary_sums(t > level, s > level, n)
    if t.dtype == np.uint8 and s.dtype == np.uint8 and scale == BYTE:
        return _byte_sums(t, s, n)
    return _float_sums(t, s, n, scale)


def _binary_sums(a: np.ndarray, b: np.ndarray, n: int) -> OverlapSums:
    na, nb = float(np.count_nonzero(a)), float(np.count_nonzero(b))
    nab = float(np.count_nonzero(np.logical_and(a, b)))
    return OverlapSums(n, na, nb, nab, na, nb, nab)


def _byte_sums(t: np.ndarray, s: np.ndarray, n: int) -> OverlapSums:
    index = t.astype(np.uint16) << 8
    index |= s
    joint = np.bincount(index.ravel(), minlength=65536).reshape(256, 256)
    levels = np.arange(256, dtype=np.int64)
    rows, cols = joint.sum(axis=1), joint.sum(axis=0)
    smin = int((np.minimum.outer(levels, levels) * joint).sum())
    sxy = int(levels @ joint @ levels)
    return OverlapSums(
        n,
        int(levels @ rows) / BYTE,
        int(levels @ cols) / BYTE,
        smin / BYTE,
        int(levels**2 @ rows) / BYTE**2,
        int(levels**2 @ cols) / BYTE**2,
        sxy / BYTE**2,
    )


def _float_sums(t: np.ndarray, s: np.ndarray, n: int, scale: float) -> OverlapSums:
    totals = np.zeros(6)
    step = max(1, 2_000_000 // max(1, t[0].size))
    for start in range(0, t.shape[0], step):
        x = t[start : start + step].astype(np.float64) / scale
        y = s[start : start + step].astype(np.float64) / scale
        totals[:5] += [x.sum(), y.sum(), np.minimum(x, y).sum(), (x * x).sum(), (y * y).sum()]
        totals[5] += float(np.vdot(x, y))
    sx, sy, smin, sxx, syy, sxy = (float(v) for v in totals)
    return OverlapSums(n, sx, sy, smin, sxx, syy, sxy)


def _ratio(code: str, numerator: float, denominator: float, why: str) -> float:
    return numerator / denominator if denominator != 0 else undefined(code, why)


def dice(o: OverlapSums) -> float:
    """DICE = 2TP / (2TP + FP + FN)."""
    return _ratio("DICE", 2 * o.tp, 2 * o.tp + o.fp + o.fn, "both volumes are empty")


def jaccard(o: OverlapSums) -> float:
    """JACRD = TP / (TP + FP + FN)."""
    return _ratio("JACRD", o.tp, o.tp + o.fp + o.fn, "both volumes are empty")


def sensitivity(o: OverlapSums) -> float:
    """SNSVTY (recall) = TP / (TP + FN)."""
    return _ratio("SNSVTY", o.tp, o.tp + o.fn, "the truth is empty")


def specificity(o: OverlapSums) -> float:
    """SPCFTY = TN / (TN + FP)."""
    return _ratio("SPCFTY", o.tn, o.tn + o.fp, "the truth has no background")


def fallout(o: OverlapSums) -> float:
    """FALLOUT (false positive rate) = 1 − SPCFTY."""
    return 1 - specificity(o)


def auc(o: OverlapSums) -> float:
    """AUC of the single operating point = (SNSVTY − FALLOUT + 1) / 2."""
    return (sensitivity(o) - fallout(o) + 1) / 2


def precision(o: OverlapSums) -> float:
    """PRCISON = TP / (TP + FP) (the tool prints 0 when the segment is empty)."""
    return _ratio("PRCISON", o.tp, o.tp + o.fp, "the segment is empty")


def f_measure(o: OverlapSums, beta: float = 1.0) -> float:
    """FMEASR = (1 + β²)·P·R / (β²·P + R), written as (1+β²)TP / ((1+β²)TP + β²FN + FP)."""
    b2 = beta * beta
    return _ratio("FMEASR", (1 + b2) * o.tp, (1 + b2) * o.tp + b2 * o.fn + o.fp, "both empty")


def accuracy(o: OverlapSums) -> float:
    """ACURCY = (TP + TN) / n."""
    return _ratio("ACURCY", o.tp + o.tn, o.n, "the volumes have no voxel")


def kappa(o: OverlapSums) -> float:
    """KAPPA (Cohen) = (TP + TN − chance) / (n − chance) with the tool's chance agreement."""
    n = o.tp + o.tn + o.fp + o.fn
    if n == 0:
        return undefined("KAPPA", "the volumes have no voxel")
    chance = ((o.tn + o.fn) * (o.tn + o.fp) + (o.fp + o.tp) * (o.fn + o.tp)) / n
    return _ratio("KAPPA", o.tp + o.tn - chance, n - chance, "agreement by chance is total")


def volume_similarity(o: OverlapSums) -> float:
    """VOLSMTY = 1 − |FN − FP| / (2TP + FN + FP)."""
    denominator = 2 * o.tp + o.fn + o.fp
    if denominator == 0:
        return undefined("VOLSMTY", "both volumes are empty")
    return 1 - abs(o.fn - o.fp) / denominator


def _pair_counts(o: OverlapSums) -> tuple[float, float, float, float]:
    """The Rand pair counts a, b, c, d of the tool (a: pairs together in both partitions)."""
    tp, tn, fp, fn, n = o.tp, o.tn, o.fp, o.fn, float(o.n)
    nis = (tn + fn) ** 2 + (fp + tp) ** 2
    njs = (tn + fp) ** 2 + (fn + tp) ** 2
    s = tp * tp + tn * tn + fp * fp + fn * fn
    a = (tn * (tn - 1) + fn * (fn - 1) + fp * (fp - 1) + tp * (tp - 1)) / 2
    return a, (njs - s) / 2, (nis - s) / 2, (n * n + s - nis - njs) / 2


def rand_index(o: OverlapSums) -> float:
    """RNDIND = (a + d) / (a + b + c + d)."""
    a, b, c, d = _pair_counts(o)
    return _ratio("RNDIND", a + d, a + b + c + d, "fewer than two voxels")


def adjusted_rand_index(o: OverlapSums) -> float:
    """ADJRIND (Hubert & Arabie); equals scikit-learn's ``adjusted_rand_score`` on binary data."""
    a, b, c, d = _pair_counts(o)
    total = a + b + c + d
    if total == 0:
        return undefined("ADJRIND", "fewer than two voxels")
    expected = (a + c) * (a + b) / total
    return _ratio("ADJRIND", a - expected, ((a + c) + (a + b)) / 2 - expected, "no variation")


def _entropy(*counts: float, n: float) -> float:
    """Entropy in bits of the distribution counts/n, with 0·log 0 = 0."""
    return -sum(c / n * math.log2(c / n) for c in counts if c > 0)


def mutual_information(o: OverlapSums) -> float:
    """MUTINF in bits = H(truth) + H(segment) − H(joint) (``mutual_info_score`` × 1/ln 2)."""
    if o.n == 0:
        return undefined("MUTINF", "the volumes have no voxel")
    h1 = _entropy(o.tn + o.fn, o.fp + o.tp, n=o.n)
    h2 = _entropy(o.tn + o.fp, o.fn + o.tp, n=o.n)
    return h1 + h2 - _entropy(o.tn, o.fn, o.fp, o.tp, n=o.n)


def variation_of_information(o: OverlapSums) -> float:
    """VARINFO in bits = H(truth) + H(segment) − 2·MUTINF."""
    if o.n == 0:
        return undefined("VARINFO", "the volumes have no voxel")
    h1 = _entropy(o.fn + o.tp, o.n - (o.fn + o.tp), n=o.n)
    h2 = _entropy(o.fp + o.tp, o.n - (o.fp + o.tp), n=o.n)
    return h1 + h2 - 2 * mutual_information(o)


def global_consistency_error(o: OverlapSums) -> float:
    """GCOERR (Martin 2001) = min(e1, e2)/n; a class without voxels adds no refinement error."""
    n = o.tp + o.tn + o.fp + o.fn
    if n == 0:
        return undefined("GCOERR", "the volumes have no voxel")

    def term(error: float, other: float, size: float) -> float:
        return error * (error + 2 * other) / size if size else 0.0

    e1 = term(o.fn, o.tp, o.tp + o.fn) + term(o.fp, o.tn, o.tn + o.fp)
    e2 = term(o.fp, o.tp, o.tp + o.fp) + term(o.fn, o.tn, o.tn + o.fn)
    return min(e1, e2) / n


def interclass_correlation(o: OverlapSums) -> float:
    """ICCORR exactly as the tool mixes its scales.

    Per-voxel values are bytes (f = 255x, m = 255y) but the grand mean is on the 0–1 scale:
    ssw = Σ[(f − μ)² + (m − μ)²]/n, ssb = 2·Σ(μ − g)²/(n − 1) with μ = (f + m)/2,
    g = (x̄ + ȳ)/2; ICC = (ssb − ssw)/(ssb + ssw).
    """
    n = o.n
    if n < 2:
        return undefined("ICCORR", "fewer than two voxels")
    g = (o.sx + o.sy) / (2 * n)
    ssw = BYTE**2 * (o.sxx + o.syy - 2 * o.sxy) / 2 / n
    mu2 = BYTE**2 * (o.sxx + o.syy + 2 * o.sxy) / 4
    ssb = 2 * (mu2 - 2 * g * BYTE * (o.sx + o.sy) / 2 + n * g * g) / (n - 1)
    return _ratio("ICCORR", ssb - ssw, ssb + ssw, "both volumes are constant and equal")


def probabilistic_distance(o: OverlapSums) -> float:
    """PROBDST = Σ|f − m| / (2Σf·m) on bytes, i.e. 1/255 of the textbook value (as the tool)."""
    difference = BYTE * (o.sx + o.sy - 2 * o.smin)
    joint = BYTE**2 * o.sxy
    return _ratio("PROBDST", difference, 2 * joint, "the volumes do not overlap")
