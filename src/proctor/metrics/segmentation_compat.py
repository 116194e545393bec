"""EvaluateSegmentation's own behaviour: byte rescaling, streaming, ``-use`` and fixed values.

The tool reads each image as float32, rescales it min–max to 0–255 and truncates to bytes
(:func:`tool_bytes`). With streaming (its default for volumes) the image is cut along its slowest
axis of size > 1 into pieces of ⌈n/10⌉ indices and every piece is rescaled on its own minimum and
maximum: fuzzy values are renormalised per slab and a slab that is all foreground becomes 0.
In a nibabel array indexed ``[x, y, z]`` ITK's slowest axis (z) is the *last* numpy axis.

:class:`ToolEvaluation` then computes the codes a ``-use`` string selects, as the tool does:
memberships are byte/255 (fuzzy) or byte > t·255 (``-thd t``, strictly), HDRFDST is 1e8 when one
side is empty at the 127.5 level, PRCISON/ADJRIND are 0 and PROBDST −1 where they are undefined,
NaN stays NaN (the tool prints ``-nan``), and a singular MAHLNBS covariance aborts the run
(:class:`SingularCovarianceError`; the tool exits 255 without XML).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from proctor.metrics._segmentation_arrays import SegmentationInputError
from proctor.metrics._validation import UndefinedMetricWarning
from proctor.metrics.segmentation import METRICS, SegmentationPair

HUGE_DISTANCE = 1e8  # the tool's distance when one side has no voxel above 127.5
VISCERAL_EXCLUDED = ("DICE", "AVGDIST", "MUTINF", "ADJRIND")  # what ``-use visceral`` leaves out
DISTANCE_CODES = ("HDRFDST", "AVGDIST", "bAVD")
COUNT_CODES = ("TP", "FP", "TN", "FN")


class SingularCovarianceError(SegmentationInputError):
    """MAHLNBS met a singular pooled covariance; the tool aborts (exit 255, no XML)."""


def slab_bounds(shape: tuple[int, ...], pieces: int = 10) -> tuple[int, list[tuple[int, int]]]:
    """The axis ITK's streaming splits (slowest of size > 1) and the index ranges of its pieces."""
    axis = next((a for a in reversed(range(len(shape))) if shape[a] > 1), len(shape) - 1)
    size = shape[axis]
    per_piece = max(1, math.ceil(size / pieces))
    return axis, [(start, min(size, start + per_piece)) for start in range(0, size, per_piece)]


def rescale_to_bytes(values: np.ndarray) -> np.ndarray:
    """ITK's RescaleIntensityImageFilter to 0–255 on float32, then a cast to bytes (truncation)."""
    data = np.asarray(values, dtype=np.float32)
    if data.size == 0:
        return np.zeros(data.shape, np.uint8)
    low, high = float(data.min()), float(data.max())
    if low != high:
        scale = 255.0 / (high - low)
    elif high != 0:
        scale = 255.0 / high
    else:
        scale = 0.0
    shift = 0.0 - low * scale
    scaled = (data.astype(np.float64) * scale + shift).astype(np.float32)
    np.clip(scaled, 0, 255, out=scaled)
    return scaled.astype(np.uint8)


def tool_bytes(volume: np.ndarray, *, streaming: bool = True) -> np.ndarray:
    """The bytes the tool computes on, from a volume indexed ``[x, y, z]``.

    ``streaming`` (the tool's default) rescales each slab along the slowest axis on its own.
    """
    data = np.asarray(volume)
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        raise SegmentationInputError("the volume holds NaN or infinite values")
    if not streaming:
        return rescale_to_bytes(data)
    axis, bounds = slab_bounds(data.shape)
    out = np.empty(data.shape, np.uint8)
    for start, stop in bounds:
        index = (slice(None),) * axis + (slice(start, stop),)
        out[index] = rescale_to_bytes(data[index])
    return out


def selected_codes(use: str = "all") -> list[tuple[str, float | None]]:
    """The codes a ``-use`` string selects (the tool's substring rule) with their parameters.

    ``all`` selects everything, ``visceral`` everything but DICE, AVGDIST, MUTINF and ADJRIND; a
    code runs if it occurs in the string, its parameter between two ``@`` right after it.
    """
    if use == "all":
        return [(code, None) for code in METRICS]
    if use == "visceral":
        return [(code, None) for code in METRICS if code not in VISCERAL_EXCLUDED]
    chosen = [(code, _parameter(use, code)) for code in METRICS if code in use]
    if not chosen:
        raise SegmentationInputError(
            f"-use {use!r} names no metric; use 'all' or codes such as DICE,HDRFDST@0.95@ "
            f"(known: {', '.join(METRICS)})"
        )
    return chosen


def _parameter(use: str, code: str) -> float | None:
    start = use.find(code) + len(code)
    if not use.startswith("@", start) or "@" not in use[start + 1 :]:
        return None
    text = use[start + 1 : use.index("@", start + 1)]
    try:
        return float(text)
    except ValueError:
        raise SegmentationInputError(f"-use: {code}@{text}@: {text!r} is not a number") from None


@dataclass(frozen=True)
class ToolValue:
    """One printed metric: value, unit (``None``: none), integer format, run time in ms."""

    code: str
    value: float
    unit: str | None
    integer: bool = False
    milliseconds: float | None = None


@dataclass(frozen=True)
class ImageCounts:
    """Foreground voxels of each image and of both (the tool's XML ``nonzeropoints``)."""

    truth: int
    segment: int
    both: int


class ToolEvaluation:
    """The tool's computation on two byte volumes (see the module docstring)."""

    def __init__(
        self,
        truth: np.ndarray,
        segment: np.ndarray,
        *,
        spacing: tuple[float, float, float],
        threshold: float | None = None,
        millimeter: bool = False,
    ) -> None:
        if truth.shape != segment.shape:
            raise SegmentationInputError(
                f"truth has shape {truth.shape}, segment {segment.shape}: same voxel count but "
                "a different grid"
            )
        x, y, z = (v if v != 0 else 1.0 for v in spacing)
        self.spacing = step = (x, y, z)
        self.millimeter, self.threshold = millimeter, threshold
        self.pair = SegmentationPair(
            truth, segment, spacing=step if millimeter else None, threshold=threshold, scale=255.0
        )

    def counts(self) -> ImageCounts:
        """Voxels above the tool's level (0, or t·255 with ``-thd``) in each image and in both."""
        if self.pair.box is None:
            return ImageCounts(0, 0, 0)
        truth, segment = self.pair.masks(0.0)
        both = int(np.count_nonzero(truth & segment))
        return ImageCounts(int(np.count_nonzero(truth)), int(np.count_nonzero(segment)), both)

    def value(self, code: str, param: float | None = None) -> ToolValue:
        """Compute one code as the tool prints it."""
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            value = self._fixed(code, METRICS[code].compute(self.pair, param))
        elapsed = (time.perf_counter() - started) * 1000
        length = "millimeter" if self.millimeter else "voxel"
        if code in DISTANCE_CODES:
            return ToolValue(code, value, length, milliseconds=elapsed)
        if code in COUNT_CODES:
            return ToolValue(code, value, "voxel", integer=True)
        if code in ("REFVOL", "SEGVOL"):
            if self.millimeter:
                return ToolValue(code, value, "milliliter")
            return ToolValue(code, value, "voxel", integer=True)
        return ToolValue(code, value, None)

    def _fixed(self, code: str, value: float) -> float:
        """Replace an undefined value by the one the tool prints."""
        if not math.isnan(value):
            return value
        if code in ("PRCISON", "ADJRIND", "FMEASR"):
            return 0.0
        if code == "PROBDST":
            return -1.0
        if code == "MAHLNBS":
            raise SingularCovarianceError(
                "MAHLNBS: the pooled covariance of the two foregrounds is singular "
                "(EvaluateSegmentation aborts here with exit status 255 and writes no XML)"
            )
        distances = self.pair.distances
        both_empty = distances.truth_count == 0 and distances.segment_count == 0
        if code == "HDRFDST":
            return 0.0 if both_empty else HUGE_DISTANCE
        if code == "AVGDIST" and both_empty:
            return 0.0
        return value
