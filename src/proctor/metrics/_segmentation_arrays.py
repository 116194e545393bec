"""Shared plumbing of the segmentation metrics: input checks, warnings, bounding boxes.

Volumes are numpy arrays indexed ``[x, y, z]`` (as nibabel returns them); a 2-D array is a single
slice and gets a ``z`` axis of size 1. Every expensive step works inside the bounding box of the
voxels that matter, because organs fill a small part of a CT volume.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

Box = tuple[slice, ...]


class SegmentationInputError(MetricInputError):
    """Volumes that cannot be compared: wrong shape, values, spacing or option."""


def undefined(code: str, why: str) -> float:
    """Warn that ``code`` is undefined because ``why`` and return NaN."""
    warnings.warn(
        f"{code} is undefined: {why}; returning NaN", UndefinedMetricWarning, stacklevel=3
    )
    return math.nan


def as_volume(array: npt.ArrayLike, name: str) -> np.ndarray:
    """Return ``array`` as a 3-D array (2-D gets a z axis of size 1); refuse other ranks."""
    volume = np.asarray(array)
    if volume.ndim == 2:
        volume = volume[:, :, np.newaxis]
    if volume.ndim != 3:
        raise SegmentationInputError(
            f"{name}: expected a 2-D or 3-D volume, got shape {volume.shape}"
        )
    if volume.dtype.kind not in "biuf":
        raise SegmentationInputError(f"{name}: expected numbers or booleans, got {volume.dtype}")
    return volume


def check_pair(truth: np.ndarray, segment: np.ndarray) -> None:
    """Refuse volumes of different shapes (the metrics compare voxel by voxel)."""
    if truth.shape != segment.shape:
        raise SegmentationInputError(
            f"truth has shape {truth.shape} but segment has shape {segment.shape}: "
            "both must lie on the same voxel grid (resample the segmentation first)"
        )


def check_membership(volume: np.ndarray, name: str) -> None:
    """Refuse non-finite values and values outside [0, 1] (labels must be binarised first)."""
    if volume.dtype.kind == "b":
        return
    if volume.dtype.kind == "f" and not np.isfinite(volume).all():
        raise SegmentationInputError(f"{name}: holds NaN or infinite values")
    low, high = (volume.min(), volume.max()) if volume.size else (0, 0)
    if low < 0 or high > 1:
        raise SegmentationInputError(
            f"{name}: values must lie in [0, 1] (0 background, 1 foreground, fuzzy between), "
            f"found [{low}, {high}]; binarise label maps first (e.g. labels == organ_id)"
        )


def check_spacing(spacing: Sequence[float] | None, ndim: int = 3) -> tuple[float, float, float]:
    """Return the voxel size in mm (``None`` → 1, i.e. distances in voxels); refuse bad values."""
    if spacing is None:
        return (1.0, 1.0, 1.0)
    values = tuple(float(v) for v in spacing)
    if len(values) == 2 and ndim in (2, 3):
        values = (*values, 1.0)
    if len(values) != 3 or not all(math.isfinite(v) and v > 0 for v in values):
        raise SegmentationInputError(
            f"spacing must be three positive finite voxel sizes in mm, got {spacing!r}"
        )
    return (values[0], values[1], values[2])


def nonzero_box(volume: np.ndarray) -> Box | None:
    """The bounding box (slices) of the non-zero voxels, or ``None`` if there are none.

    One pass over the volume: the reduction runs over the axis with the largest stride, which is
    an element-wise maximum of whole slices (vectorised), then over a small 2-D projection.
    """
    if volume.size == 0:
        return None
    outer = int(np.argmax([abs(s) for s in volume.strides]))
    projection = volume.max(axis=outer)  # the other two axes, in order
    others = [axis for axis in range(3) if axis != outer]
    ranges: dict[int, tuple[int, int]] = {}
    for position, axis in enumerate(others):
        hits = np.flatnonzero(projection.max(axis=1 - position))
        if hits.size == 0:
            return None
        ranges[axis] = (int(hits[0]), int(hits[-1]) + 1)
    inner = tuple(slice(*ranges[a]) if a in ranges else slice(None) for a in range(3))
    hits = np.flatnonzero(volume[inner].max(axis=tuple(others)))
    ranges[outer] = (int(hits[0]), int(hits[-1]) + 1)
    return tuple(slice(*ranges[a]) for a in range(3))


def union_box(first: Box | None, second: Box | None) -> Box | None:
    """The smallest box holding both boxes (``None`` stands for an empty box)."""
    if first is None or second is None:
        return first if second is None else second
    return tuple(
        slice(min(a.start, b.start), max(a.stop, b.stop))
        for a, b in zip(first, second, strict=True)
    )
