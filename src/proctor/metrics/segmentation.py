"""The 22 metrics of VISCERAL's EvaluateSegmentation, plus its counts and volumes.

``evaluate_segmentation(truth, segment)`` is the library entry point: two same-shape volumes
indexed ``[x, y, z]`` holding memberships in [0, 1] (binary masks or fuzzy maps), an optional
voxel size in mm, the tool codes to compute. Expensive intermediates are computed once per pair
(:class:`SegmentationPair`): the seven overlap sums in one pass, the surface distances once for
all distance metrics. :data:`METRICS` maps every tool code to its description (as the tool
prints it), its direction and its computation.

Conventions (the tool's): in fuzzy mode (no ``threshold``) the distance metrics use voxels with
membership > 0.5 and MAHLNBS voxels with membership > 0; with a ``threshold`` t every metric uses
the binary volumes membership > t (strictly). Without ``spacing`` distances are in voxels and
REFVOL/SEGVOL in voxels; with it, distances are in mm and REFVOL/SEGVOL in millilitres.
Undefined values are NaN with an :class:`UndefinedMetricWarning`. The tool's own loading (byte
rescaling, streaming), command line and fixed values for undefined cases are in
:mod:`proctor.metrics.segmentation_compat`.

>>> import numpy as np
>>> a = np.zeros((4, 4, 4), bool); a[1:3, 1:3, 1:3] = True
>>> evaluate_segmentation(a, a, codes=("DICE", "HDRFDST"))
{'DICE': 1.0, 'HDRFDST': 0.0}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import numpy.typing as npt

from proctor.metrics import segmentation_overlap as ov
from proctor.metrics._segmentation_arrays import (
    SegmentationInputError,
    as_volume,
    check_membership,
    check_pair,
    check_spacing,
    nonzero_box,
    union_box,
)
from proctor.metrics._validation import UndefinedMetricWarning
from proctor.metrics.segmentation_distance import SurfaceDistances, mahalanobis_distance
from proctor.metrics.segmentation_overlap import OverlapSums

__all__ = [
    "DEFAULT_CODES",
    "METRICS",
    "SegmentationInputError",
    "SegmentationMetric",
    "SegmentationPair",
    "SurfaceDistances",
    "UndefinedMetricWarning",
    "evaluate_segmentation",
    "parse_code",
]

Section = Literal["Similarity", "Distance", "Classic Measures"]
Unit = Literal["none", "length", "count", "volume"]


class SegmentationPair:
    """Two volumes to compare, with every expensive intermediate computed at most once.

    ``truth``/``segment`` hold memberships ``array / scale`` (``scale`` 255 for the tool's
    bytes). The arrays are kept as given (no copy); work happens inside the bounding box of
    their non-zero voxels.
    """

    def __init__(
        self,
        truth: np.ndarray,
        segment: np.ndarray,
        *,
        spacing: tuple[float, float, float] | None = None,
        threshold: float | None = None,
        scale: float = 1.0,
    ) -> None:
        self.truth, self.segment = truth, segment
        self.spacing, self.threshold, self.scale = spacing, threshold, scale
        self.size = int(truth.size)

    @cached_property
    def box(self) -> tuple[slice, ...] | None:
        """The bounding box of the non-zero voxels of both volumes (``None``: both all zero)."""
        return union_box(nonzero_box(self.truth), nonzero_box(self.segment))

    @cached_property
    def sums(self) -> OverlapSums:
        """The overlap sums (the fuzzy or binary contingency table and second moments)."""
        if self.box is None:
            return OverlapSums(self.size, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        t, s = self.truth[self.box], self.segment[self.box]
        return ov.overlap_sums(t, s, scale=self.scale, threshold=self.threshold, n=self.size)

    def masks(self, fuzzy_level: float) -> tuple[np.ndarray, np.ndarray]:
        """Binary masks inside :attr:`box`: membership > threshold, or > ``fuzzy_level``."""
        level = self.scale * (fuzzy_level if self.threshold is None else self.threshold)
        if self.box is None:
            empty = np.zeros((0, 0, 0), bool)
            return empty, empty
        return self.truth[self.box] > level, self.segment[self.box] > level

    @cached_property
    def distances(self) -> SurfaceDistances:
        """Surface distances between the masks at membership > 0.5 (or > threshold)."""
        truth, segment = self.masks(0.5)
        origin = tuple(s.start for s in self.box) if self.box is not None else (0, 0, 0)
        spacing = self.spacing or (1.0, 1.0, 1.0)
        return SurfaceDistances(truth, segment, spacing, origin=origin, shape=self.truth.shape)

    @cached_property
    def mahalanobis(self) -> float:
        """MAHLNBS between the masks at membership > 0 (or > threshold)."""
        truth, segment = self.masks(0.0)
        origin = tuple(s.start for s in self.box) if self.box is not None else (0, 0, 0)
        return mahalanobis_distance(truth, segment, origin=origin)

    def volume(self, voxels: float) -> float:
        """A voxel count as reported: voxels, or millilitres when a spacing is given."""
        if self.spacing is None:
            return voxels
        return voxels * math.prod(self.spacing) / 1000.0


Compute = Callable[[SegmentationPair, float | None], float]


@dataclass(frozen=True)
class SegmentationMetric:
    """One code of the tool: what it prints, which way is better, how it is computed."""

    code: str
    name: str  # the description the tool prints and writes as the XML ``name``
    similarity: bool  # the tool's ``type``: similarity (higher better) or distance
    section: Section
    unit: Unit
    compute: Compute
    help: str = ""

    @property
    def direction(self) -> Literal["higher", "lower"]:
        """``higher`` for similarities, ``lower`` for distances (counts are ``higher``)."""
        return "higher" if self.similarity else "lower"


def _sums(fn: Callable[[OverlapSums], float]) -> Compute:
    return lambda pair, _param: fn(pair.sums)


def _count(attribute: str) -> Compute:
    return lambda pair, _param: float(getattr(pair.sums, attribute))


_SIM: Section = "Similarity"
_DIST: Section = "Distance"
_CLASSIC: Section = "Classic Measures"
_TABLE: list[tuple[str, str, bool, Section, Unit, Compute]] = [
    ("DICE", "Dice Coefficient (F1-Measure)", True, _SIM, "none", _sums(ov.dice)),
    ("JACRD", "Jaccard Coefficient", True, _SIM, "none", _sums(ov.jaccard)),
    ("AUC", "Area under ROC Curve", True, _SIM, "none", _sums(ov.auc)),
    ("KAPPA", "Cohen Kappa", True, _SIM, "none", _sums(ov.kappa)),
    ("RNDIND", "Rand Index", True, _SIM, "none", _sums(ov.rand_index)),
    ("ADJRIND", "Adjusted Rand Index", True, _SIM, "none", _sums(ov.adjusted_rand_index)),
    ("ICCORR", "Interclass Correlation", True, _SIM, "none", _sums(ov.interclass_correlation)),
    ("VOLSMTY", "Volumetric Similarity Coefficient", True, _SIM, "none",
     _sums(ov.volume_similarity)),
    ("MUTINF", "Mutual Information", True, _SIM, "none", _sums(ov.mutual_information)),
    ("HDRFDST", "Hausdorff Distance", False, _DIST, "length",
     lambda p, q: SurfaceDistances.hausdorff(p.distances, 1.0 if q is None else q)),
    ("AVGDIST", "Average Hausdorff Distance", False, _DIST, "length",
     lambda p, _q: p.distances.average_distance()),
    ("bAVD", "Balanced Average Hausdorff Distance (new metric, publication submitted)",
     False, _DIST, "length", lambda p, _q: p.distances.balanced_average_distance()),
    ("MAHLNBS", "Mahanabolis Distance", False, _DIST, "none", lambda p, _q: p.mahalanobis),
    ("VARINFO", "Variation of Information", False, _DIST, "none",
     _sums(ov.variation_of_information)),
    ("GCOERR", "Global Consistency Error", False, _DIST, "none",
     _sums(ov.global_consistency_error)),
    ("PROBDST", "Probabilistic Distance", False, _DIST, "none", _sums(ov.probabilistic_distance)),
    ("SNSVTY", "Sensitivity (Recall, true positive rate)", True, _CLASSIC, "none",
     _sums(ov.sensitivity)),
    ("SPCFTY", "Specificity (true negative rate)", True, _CLASSIC, "none", _sums(ov.specificity)),
    ("PRCISON", "Precision (Confidence)", True, _CLASSIC, "none", _sums(ov.precision)),
    ("FMEASR", "F-Measure", True, _CLASSIC, "none",
     lambda p, b: ov.f_measure(p.sums, 1.0 if b is None else b)),
    ("ACURCY", "Accuracy", True, _CLASSIC, "none", _sums(ov.accuracy)),
    ("FALLOUT", "Fallout (false positive rate)", False, _CLASSIC, "none", _sums(ov.fallout)),
    ("TP", "true positive", True, _CLASSIC, "count", _count("tp")),
    ("FP", "false positive", True, _CLASSIC, "count", _count("fp")),
    ("TN", "true negative", True, _CLASSIC, "count", _count("tn")),
    ("FN", "false negative", True, _CLASSIC, "count", _count("fn")),
    ("REFVOL", "reference volume", True, _CLASSIC, "volume",
     lambda p, _q: p.volume(p.sums.tp + p.sums.fn)),
    ("SEGVOL", "segmented volume", True, _CLASSIC, "volume",
     lambda p, _q: p.volume(p.sums.tp + p.sums.fp)),
]  # fmt: skip
"""Code, description, larger is better, section, unit, computation: in the tool's order."""

_HELP_TEXTS = {
    "HDRFDST": "Hausdorff Distance, HDRFDST@0.95@ -> use 0.95 quantile to avoid outlier, "
    "default 1 (=exact distance)",
    "FMEASR": "F-Measure (FMEASR@0.5@ -> beta=0.5, defalut beta=1)",
    "bAVD": "Balanced Average Hausdorff Distance (new proposed metric, publication submitted)",
}
"""The tool's help lines where they differ from the description."""


def _entries() -> list[SegmentationMetric]:
    return [SegmentationMetric(*row, help=_HELP_TEXTS.get(row[0], row[1])) for row in _TABLE]


METRICS: Mapping[str, SegmentationMetric] = {m.code: m for m in _entries()}
"""Every tool code, in the order the tool prints them."""

DEFAULT_CODES: tuple[str, ...] = tuple(METRICS)


def parse_code(code: str) -> tuple[str, float | None]:
    """Split ``"HDRFDST@0.95@"`` into ``("HDRFDST", 0.95)``; refuse unknown codes and bad values."""
    name, _, rest = code.partition("@")
    if name not in METRICS:
        raise SegmentationInputError(
            f"unknown metric code {name!r}; known codes: {', '.join(METRICS)}"
        )
    if not rest:
        return name, None
    text = rest.split("@", 1)[0]
    try:
        value = float(text)
    except ValueError:
        raise SegmentationInputError(f"{code!r}: parameter {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise SegmentationInputError(f"{code!r}: parameter must be a finite number ≥ 0")
    return name, value


def prepare(
    truth: npt.ArrayLike,
    segment: npt.ArrayLike,
    *,
    spacing: Sequence[float] | None = None,
    threshold: float | None = None,
) -> SegmentationPair:
    """Check two volumes of memberships in [0, 1] and wrap them as a :class:`SegmentationPair`."""
    t, s = as_volume(truth, "truth"), as_volume(segment, "segment")
    check_pair(t, s)
    check_membership(t, "truth")
    check_membership(s, "segment")
    if threshold is not None and not (math.isfinite(threshold) and 0 <= threshold <= 1):
        raise SegmentationInputError(f"threshold must lie in [0, 1], got {threshold!r}")
    step = None if spacing is None else check_spacing(spacing)
    return SegmentationPair(t, s, spacing=step, threshold=threshold)


def evaluate_segmentation(
    truth: npt.ArrayLike,
    segment: npt.ArrayLike,
    *,
    spacing: Sequence[float] | None = None,
    codes: Iterable[str] = DEFAULT_CODES,
    threshold: float | None = None,
) -> dict[str, float]:
    """Compute the requested tool codes for a truth and a segmentation volume.

    ``truth``/``segment``: same-shape 2-D or 3-D arrays indexed ``[x, y, z]`` of memberships in
    [0, 1] (booleans, 0/1 labels or fuzzy maps). ``spacing``: voxel size (x, y, z) in mm; when
    given, distances are in mm and REFVOL/SEGVOL in millilitres, otherwise both in voxels.
    ``codes``: tool codes, parameters between ``@`` (``"HDRFDST@0.95@"``, ``"FMEASR@0.5@"``);
    the result is keyed by the codes as given. ``threshold``: binarise at membership > t first.
    """
    pair = prepare(truth, segment, spacing=spacing, threshold=threshold)
    results: dict[str, float] = {}
    for code in codes:
        name, param = parse_code(code)
        results[code] = METRICS[name].compute(pair, param)
    return results
