"""Distance metrics of EvaluateSegmentation, derived from one set of surface distances.

:class:`SurfaceDistances` is built once per pair of binary masks A (truth) and B (segment): the
distance of every voxel of A∖B to the nearest voxel of B, and of every voxel of B∖A to the
nearest voxel of A, in mm (or voxels). HDRFDST and its quantiles derive from these two arrays,
and so do the exact average distances (:meth:`SurfaceDistances.nearest_average_distance`,
:meth:`~SurfaceDistances.nearest_balanced_average_distance`). AVGDIST and bAVD are the tool's
own, from a bounded search that starts from the same nearest voxels
(:mod:`proctor.metrics.segmentation_avgdist`).

Why nearest *surface* voxels are enough: if q ∈ B is the voxel nearest to some p ∉ B, the
6-neighbour of q one step towards p is strictly nearer to p (for any axis where they differ, and
any spacing), so it is outside B and q is a 6-boundary voxel. The search therefore runs over
B's boundary voxels only, with a k-d tree (``scipy.spatial.cKDTree``) in physical coordinates.
This is exact, like a Euclidean distance transform, but costs time and memory in proportion to
the voxels involved instead of the bounding box: on a 512×512×300 CT pair it is several times
faster than two ``distance_transform_edt`` calls and needs no float64 volume.

MAHLNBS lives here too: it compares the two foregrounds as point clouds of voxel indices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from proctor.metrics._segmentation_arrays import nonzero_box, undefined, union_box
from proctor.metrics.segmentation_avgdist import (
    Geometry,
    NearestSearch,
    raster_indices,
    sequential_sum,
    tool_directed_distances,
)


def boundary(mask: np.ndarray) -> np.ndarray:
    """Voxels of ``mask`` with a 6-neighbour outside it (the volume's edge counts as outside)."""
    inner = mask.copy()
    for axis in range(mask.ndim):
        low = [slice(None)] * mask.ndim
        high = [slice(None)] * mask.ndim
        low[axis], high[axis] = slice(0, -1), slice(1, None)
        inner[tuple(low)] &= mask[tuple(high)]
        inner[tuple(high)] &= mask[tuple(low)]
        edge = [slice(None)] * mask.ndim
        for index in (0, -1):
            edge[axis] = slice(index, None) if index == -1 else slice(0, 1)
            inner[tuple(edge)] = False
    surface: np.ndarray = mask & ~inner
    return surface


def _directed(
    source: np.ndarray, target: np.ndarray, spacing: tuple[float, float, float]
) -> NearestSearch:
    """The exact nearest boundary voxel of ``target`` for every voxel of ``source`` ∖ ``target``."""
    queries = raster_indices(source & ~target)
    surface = raster_indices(boundary(target))
    if not queries.size:
        empty = np.zeros(0, np.int64)
        return NearestSearch(queries, surface, empty, np.zeros(0), None)
    from scipy.spatial import cKDTree  # 0.2 s to import: only when a distance is computed

    scale = np.asarray(spacing, dtype=np.float64)
    tree = cKDTree(surface * scale)
    distances, nearest = tree.query(queries * scale, k=1)
    return NearestSearch(
        queries, surface, np.asarray(nearest, np.int64), np.asarray(distances, np.float64), tree
    )


class SurfaceDistances:
    """The directed distances between two binary masks, computed once.

    ``truth_to_segment[i]`` is the exact distance from the i-th voxel of A∖B (raster order) to
    the nearest voxel of B and ``segment_to_truth`` likewise for B∖A, in the unit of
    ``spacing`` (mm; ``(1, 1, 1)`` for voxels). ``truth_count``/``segment_count`` are |A| and
    |B|. AVGDIST and bAVD use the tool's bounded search instead (:attr:`tool_sums`), which
    depends on where the masks lie in the whole volume: ``origin`` is the index of the masks'
    first voxel when they are crops, ``shape`` the shape of the whole volume.
    """

    def __init__(
        self,
        truth: np.ndarray,
        segment: np.ndarray,
        spacing: tuple[float, float, float],
        *,
        origin: Sequence[int] = (0, 0, 0),
        shape: Sequence[int] | None = None,
    ) -> None:
        self.truth_count = int(np.count_nonzero(truth))
        self.segment_count = int(np.count_nonzero(segment))
        self.spacing = (float(spacing[0]), float(spacing[1]), float(spacing[2]))
        whole = tuple(shape) if shape is not None else truth.shape
        self.truth_to_segment = np.zeros(0)
        self.segment_to_truth = np.zeros(0)
        self._searches: tuple[NearestSearch, NearestSearch] | None = None
        if self.truth_count == 0 or self.segment_count == 0:
            return
        box = union_box(nonzero_box(truth), nonzero_box(segment))
        if box is None:  # both counts are positive, so both masks have a box
            raise RuntimeError("non-empty masks without a bounding box")
        self._masks = truth[box], segment[box]
        start = tuple(int(o) + s.start for o, s in zip(origin, box, strict=True))
        self._geometry = Geometry((start[0], start[1], start[2]), (whole[0], whole[1], whole[2]))
        a, b = self._masks
        forward, backward = _directed(a, b, self.spacing), _directed(b, a, self.spacing)
        self._searches = forward, backward
        self.truth_to_segment = forward.distances
        self.segment_to_truth = backward.distances

    @property
    def empty(self) -> bool:
        """Whether either mask is empty (every distance metric is then undefined)."""
        return self.truth_count == 0 or self.segment_count == 0

    @cached_property
    def tool_sums(self) -> tuple[float, float]:
        """Σ_{A∖B} and Σ_{B∖A} of the tool's bounded-search distances, summed as the tool does.

        See :mod:`proctor.metrics.segmentation_avgdist`; each is ≥ the exact nearest sum.
        """
        if self._searches is None:
            return 0.0, 0.0
        a, b = self._masks
        forward = tool_directed_distances(self._searches[0], b, self.spacing, self._geometry)
        backward = tool_directed_distances(self._searches[1], a, self.spacing, self._geometry)
        return sequential_sum(forward), sequential_sum(backward)

    def hausdorff(self, quantile: float = 1.0) -> float:
        """HDRFDST: the largest distance of A∖B to B and of B∖A to A.

        With ``quantile`` q < 1 it is the true q-quantile of the pooled directed distances of
        A∖B and B∖A: element ⌊q·(len − 1)⌋ of the sorted list (voxels in A∩B, at distance 0, do
        not enter the list). This deliberately differs from EvaluateSegmentation, whose quantile
        comes from a time-seeded shuffle with an early stop that records upper bounds instead of
        nearest distances: it is random and too large (runs gave 19.13, 18.81, 18.57, 17.72 where
        the true 0.95-quantile was 6.40).
        """
        if self.empty:
            return undefined("HDRFDST", "a mask is empty")
        pooled = np.concatenate([self.truth_to_segment, self.segment_to_truth])
        if pooled.size == 0:
            return 0.0
        if quantile >= 1 or pooled.size == 1:
            return float(pooled.max())
        k = int(quantile * (pooled.size - 1))
        return float(np.partition(pooled, k)[k])

    def average_distance(self) -> float:
        """AVGDIST as the tool computes it: [Σ_{A∖B} d(a, B)/|A| + Σ_{B∖A} d(b, A)/|B|] / 2.

        d is the tool's bounded-search distance (:attr:`tool_sums`), not the exact nearest one
        (that is :meth:`nearest_average_distance`).
        """
        if self.empty:
            return undefined("AVGDIST", "a mask is empty")
        forward, backward = self.tool_sums
        return (forward / self.truth_count + backward / self.segment_count) / 2

    def balanced_average_distance(self) -> float:
        """BAVD as the tool computes it: [Σ_{A∖B} d(a, B)/|A| + Σ_{B∖A} d(b, A)/|A|] / 2."""
        if self.empty:
            return undefined("bAVD", "a mask is empty")
        forward, backward = self.tool_sums
        return (forward / self.truth_count + backward / self.truth_count) / 2

    def nearest_average_distance(self) -> float:
        """AVGDIST with the exact nearest distances (the textbook definition, not the tool's)."""
        if self.empty:
            return undefined("AVGDIST", "a mask is empty")
        forward = float(self.truth_to_segment.sum()) / self.truth_count
        backward = float(self.segment_to_truth.sum()) / self.segment_count
        return (forward + backward) / 2

    def nearest_balanced_average_distance(self) -> float:
        """BAVD with the exact nearest distances: [Σ_{A∖B} + Σ_{B∖A}] / (2|A|)."""
        if self.empty:
            return undefined("bAVD", "a mask is empty")
        total = float(self.truth_to_segment.sum()) + float(self.segment_to_truth.sum())
        return total / (2 * self.truth_count)


def _moments(mask: np.ndarray, dims: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Voxel count, centroid and population covariance of the first ``dims`` index axes.

    Exact integer first and second moments from the three 2-D projections of the mask, so no
    coordinate list of the foreground is ever built (indices are local to the crop: the
    centroid difference and the covariances do not depend on the origin).
    """
    first = np.zeros(3)
    second = np.zeros((3, 3))
    count = 0
    for i, j in ((0, 1), (0, 2), (1, 2)):
        other = 3 - i - j
        plane = mask.sum(axis=other, dtype=np.int64)
        xi = np.arange(plane.shape[0], dtype=np.int64)
        xj = np.arange(plane.shape[1], dtype=np.int64)
        ri, rj = plane.sum(axis=1), plane.sum(axis=0)
        count = int(ri.sum())
        first[i], first[j] = float(xi @ ri), float(xj @ rj)
        second[i, i], second[j, j] = float(xi**2 @ ri), float(xj**2 @ rj)
        second[i, j] = second[j, i] = float(xi @ plane @ xj)
    mean = first / count
    covariance = second / count - np.outer(mean, mean)
    return count, mean[:dims], covariance[:dims, :dims]


def mahalanobis_distance(
    truth: np.ndarray, segment: np.ndarray, *, origin: Sequence[int] = (0, 0, 0)
) -> float:
    """MAHLNBS between the two foregrounds as point clouds of voxel indices (no spacing).

    Centroids and population covariances of each foreground are pooled with the voxel counts as
    weights; the 2-D formula (x, y only) applies when all of the truth lies in the slice z = 0.
    A singular pooled covariance makes the distance undefined (NaN with a warning). ``origin``
    is the index of the masks' first voxel when they are crops of a larger volume.
    """
    box_a, box_b = nonzero_box(truth), nonzero_box(segment)
    if box_a is None or box_b is None:
        return undefined("MAHLNBS", "a mask is empty")
    box = union_box(box_a, box_b)
    if box is None:  # both boxes exist once the empty masks returned above
        raise RuntimeError("non-empty masks without a bounding box")
    dims = 2 if box_a[2].stop + origin[2] == 1 else 3
    n1, mean1, cov1 = _moments(truth[box], dims)
    n2, mean2, cov2 = _moments(segment[box], dims)
    pooled = (cov1 * n1 + cov2 * n2) / (n1 + n2)
    if not _invertible(pooled):
        return undefined("MAHLNBS", "the pooled covariance of the foregrounds is singular")
    delta = mean1 - mean2
    return math.sqrt(max(0.0, float(delta @ np.linalg.inv(pooled) @ delta)))


def _invertible(matrix: np.ndarray) -> bool:
    """Invertible as ITK decides (determinant ≠ 0), guarded against numerical rank loss."""
    if np.linalg.det(matrix) == 0.0:
        return False
    return bool(np.linalg.matrix_rank(matrix) == matrix.shape[0])
