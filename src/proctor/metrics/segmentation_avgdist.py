"""AVGDIST and bAVD as EvaluateSegmentation computes them: a bounded nearest-boundary search.

The tool does not use the true nearest boundary voxel. For a voxel ``a`` of A∖B it

1. casts a ray from ``a`` toward the centroid ``c`` of B's voxels (mean index, in double): the
   direction is ``(c − a) / L`` with ``L`` the spacing-scaled length of ``c − a``; step ``i``
   (1, 2, …) is the point ``a + i·direction``, truncated toward zero to an index; the ray stops
   at the first step whose voxel is in B (radius ``i``) or gives up when the point leaves
   ``[0, max index]`` on any axis;
2. with a radius, searches only the 6-boundary voxels of B lying in the cells of a grid of
   7-voxel cubes (anchored at index 0 of the whole volume) from cell ``trunc((a − i)/7)`` to
   ``trunc((a + i)/7)`` on each axis, clamped to the grid; without one, every boundary voxel;
3. adds the Euclidean distance (index differences scaled by the spacing) to a double sum, in
   ITK's raster order (x fastest).

The radius and the grid are in voxel indices even in millimetres, while the ray advances one
*millimetre* per step, so with spacings below 1 mm the box can be too small to hold the true
nearest voxel (0.2918 where the nearest gives 0.2917), and sometimes holds no boundary voxel at
all. The tool then keeps the ``closest`` voxel of the previous A∖B voxel (an uninitialised local
variable that, in the official unoptimised build, still holds the last value): reproduced here
as "the previous query's voxel" (the first query, with no previous voxel, uses the true nearest;
an optimised -O3 build of the tool gives the same numbers on our fixtures).

In voxels the box misses the nearest voxel only rarely, which is the 6th-decimal difference on
large volumes: truncating a ray point with negative direction components moves it away from
``a``, so the voxel hit at step ``i`` can lie up to about √3 beyond ``i`` and the nearest voxel
(no farther than the hit) just outside the searched cells. Sums and the centroid are exact in
double and play no part. A voxel exactly on the centroid has no direction (the tool crashes on
the NaN index); here it searches every boundary voxel.

Everything is vectorised: the rays advance together (the active set shrinks as they stop), the
true nearest boundary voxel (from a k-d tree, computed anyway for HDRFDST) settles every query
whose nearest lies inside its box, summed cell counts tell in O(1) which boxes hold no boundary
voxel, and only the rest search their box (:class:`~proctor.metrics._segmentation_boxes.BoxSearch`:
growing k-nearest lists, then the box's own voxels). The sums run left to right in raster order,
as the tool's ``AVD_SUM += d`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from proctor.metrics._segmentation_boxes import GRID, BoxSearch, Geometry, in_box, tool_distances

if TYPE_CHECKING:  # scipy.spatial takes 0.2 s to import: only when a tree is built
    from scipy.spatial import cKDTree

__all__ = ["GRID", "Geometry", "NearestSearch", "tool_directed_distances"]


@dataclass(frozen=True)
class NearestSearch:
    """The exact part of one direction (A∖B → B), reused by the tool's bounded search.

    ``queries``: indices (n × 3, crop coordinates, raster order) of A∖B; ``surface``: indices of
    B's 6-boundary voxels; ``nearest``: for each query the row of its nearest surface voxel;
    ``distances``: the exact nearest distances; ``tree``: the k-d tree of the surface in the
    spacing-scaled coordinates.
    """

    queries: np.ndarray
    surface: np.ndarray
    nearest: np.ndarray
    distances: np.ndarray
    tree: cKDTree | None


def raster_indices(mask: np.ndarray) -> np.ndarray:
    """Indices (n × 3) of the voxels of a mask ``[x, y, z]`` in ITK's order: x varies fastest."""
    indices: np.ndarray = np.argwhere(mask.T)[:, ::-1]
    return np.ascontiguousarray(indices, dtype=np.int64)


def centroid(mask: np.ndarray, origin: tuple[int, int, int]) -> np.ndarray:
    """Mean absolute index of the voxels of ``mask`` (exact integer sums, one division)."""
    count = int(np.count_nonzero(mask))
    mean = np.zeros(3)
    for axis in range(3):
        others = tuple(a for a in range(3) if a != axis)
        per_index = mask.sum(axis=others, dtype=np.int64)
        total = int(np.arange(per_index.size, dtype=np.int64) @ per_index)
        mean[axis] = float(total + origin[axis] * count) / float(count)
    return mean


def ray_radii(
    queries: np.ndarray,
    target: np.ndarray,
    spacing: tuple[float, float, float],
    geometry: Geometry,
) -> np.ndarray:
    """The tool's ray radius for every query (absolute indices), −1 where the ray gives up.

    A ray that leaves the crop can never hit the target (the crop holds the target and is
    convex, so the ray does not come back), which lets the march stop at the crop's edge.
    """
    origin = np.asarray(geometry.origin, np.int64)
    top = np.asarray(geometry.shape, np.float64) - 1
    crop_low, crop_high = origin, origin + np.asarray(target.shape, np.int64)
    start = queries.astype(np.float64)
    delta = centroid(target, geometry.origin) - start
    sx, sy, sz = spacing
    length = np.sqrt(
        delta[:, 0] * delta[:, 0] * sx * sx
        + delta[:, 1] * delta[:, 1] * sy * sy
        + delta[:, 2] * delta[:, 2] * sz * sz
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        direction = delta / length[:, None]
    radii = np.full(len(queries), -1, np.int64)
    active = np.flatnonzero(length > 0)  # a query on the centroid has no direction: no radius
    step = 0
    while active.size:
        step += 1
        point = start[active] + step * direction[active]
        inside = ((point >= 0) & (point <= top)).all(axis=1)
        index = point.astype(np.int64)  # truncation toward zero, as the tool's Index cast
        inside &= ((index >= crop_low) & (index < crop_high)).all(axis=1)
        active, index = active[inside], index[inside] - crop_low
        hit = target[index[:, 0], index[:, 1], index[:, 2]]
        radii[active[hit]] = step
        active = active[~hit]
    return radii


def cell_boxes(
    queries: np.ndarray, radii: np.ndarray, shape: tuple[int, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The index box (lowest, highest voxel, inclusive) of the grid cells each query searches."""
    cells = (np.asarray(shape, np.int64) - 1) // GRID + 1
    r = radii[:, None]
    low = np.maximum((queries - r) // GRID, 0)
    high = np.minimum((queries + r) // GRID, cells - 1)
    return low * GRID, high * GRID + GRID - 1


def tool_directed_distances(
    search: NearestSearch,
    target: np.ndarray,
    spacing: tuple[float, float, float],
    geometry: Geometry,
) -> np.ndarray:
    """The tool's distance of every query of ``search`` to ``target``, in raster order."""
    if not search.queries.size:
        return np.zeros(0)
    origin = np.asarray(geometry.origin, np.int64)
    radii = ray_radii(search.queries + origin, target, spacing, geometry)
    bounded = radii >= 0
    low, high = cell_boxes(search.queries + origin, np.maximum(radii, 0), geometry.shape)
    low, high = low - origin, high - origin  # back to crop coordinates
    index = BoxSearch(search.surface, search.tree, spacing, geometry)
    chosen = search.nearest.copy()
    nearest_outside = bounded & ~in_box(search.surface[search.nearest], low, high)
    holding = index.count(low, high) > 0
    todo = np.flatnonzero(nearest_outside & holding)
    if todo.size:
        chosen[todo] = index.nearest_in_boxes(search.queries[todo], low[todo], high[todo])
    missing = bounded & ~holding
    if missing.any():
        chosen = _keep_previous(index, search, chosen, missing, (low, high, bounded))
    return tool_distances(search.queries, search.surface[chosen], spacing)


def _keep_previous(
    index: BoxSearch,
    search: NearestSearch,
    chosen: np.ndarray,
    missing: np.ndarray,
    boxes: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """Queries whose box held no boundary voxel reuse the previous query's voxel (see above).

    The reused voxel is the one the tool kept among equally near ones, so the previous
    query's choice is redone with the tool's tie rule first (:meth:`BoxSearch.tool_choice`).
    """
    low, high, bounded = boxes
    starts = np.flatnonzero(missing & ~np.concatenate([[False], missing[:-1]]))
    for row in starts[starts > 0] - 1:
        box = (low[row], high[row]) if bounded[row] else None
        chosen[row] = index.tool_choice(search.queries[row], box)
    if missing[0]:  # nothing before it: the tool reads an uninitialised voxel; take the nearest
        missing = missing.copy()
        missing[0] = False
        chosen[0] = search.nearest[0]
    positions = np.where(missing, 0, np.arange(chosen.size))
    np.maximum.accumulate(positions, out=positions)
    filled: np.ndarray = chosen[positions]
    return filled


def sequential_sum(values: np.ndarray) -> float:
    """Left-to-right double sum, as the tool's ``AVD_SUM += d`` loop (not pairwise summation)."""
    if not values.size:
        return 0.0
    return float(np.cumsum(values, dtype=np.float64)[-1])
