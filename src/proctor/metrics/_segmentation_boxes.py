"""Nearest-voxel searches restricted to boxes of the tool's 7-voxel grid (for AVGDIST/bAVD).

:class:`BoxSearch` indexes one mask's boundary voxels three ways: a k-d tree (nearest overall,
k-nearest lists), a summed count of voxels per grid cell (whether a box holds any voxel, in
O(1) per query) and the voxels sorted by x (the voxels of one box without scanning them all).
Coordinates are crop indices; :class:`Geometry` places the crop in the whole volume, where the
grid is anchored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy.spatial takes 0.2 s to import: only when a tree is built
    from scipy.spatial import cKDTree

GRID = 7  # the tool's cell size, in voxel indices
_ROUNDS = (16, 128, 1024)  # k-nearest list sizes tried before searching a box voxel by voxel


@dataclass(frozen=True)
class Geometry:
    """Where a cropped mask lies in its volume: ``origin`` index of the crop, volume ``shape``."""

    origin: tuple[int, int, int]
    shape: tuple[int, int, int]


def in_box(points: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Which ``points`` lie inside the inclusive index box ``[low, high]``."""
    inside: np.ndarray = np.all((points >= low) & (points <= high), axis=-1)
    return inside


def tool_distances(
    queries: np.ndarray, chosen: np.ndarray, spacing: tuple[float, float, float]
) -> np.ndarray:
    """Distances from ``queries`` to ``chosen`` voxels with the tool's exact float operations."""
    delta = (chosen - queries).astype(np.float64)
    sx, sy, sz = spacing
    total = delta[:, 0] * delta[:, 0] * sx * sx + delta[:, 1] * delta[:, 1] * sy * sy
    total = total + delta[:, 2] * delta[:, 2] * sz * sz
    result: np.ndarray = np.sqrt(total)
    return result


class BoxSearch:
    """The boundary voxels of one mask, indexed for searches restricted to boxes."""

    def __init__(
        self,
        surface: np.ndarray,
        tree: cKDTree | None,
        spacing: tuple[float, float, float],
        geometry: Geometry,
    ) -> None:
        self.surface, self.tree, self.spacing = surface, tree, spacing
        self.origin = np.asarray(geometry.origin, np.int64)
        cells = (np.asarray(geometry.shape, np.int64) - 1) // GRID + 1
        counts = np.zeros(tuple(cells + 1), np.int64)
        where = (surface + self.origin) // GRID + 1
        np.add.at(counts, (where[:, 0], where[:, 1], where[:, 2]), 1)
        for axis in range(3):
            np.cumsum(counts, axis=axis, out=counts)
        self._prefix = counts
        self._by_x = np.argsort(surface[:, 0], kind="stable")
        self._xs = surface[self._by_x, 0]

    def count(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """How many boundary voxels lie in each grid-aligned box (crop coordinates)."""
        lo = (low + self.origin) // GRID
        hi = (high + self.origin) // GRID + 1
        total = np.zeros(len(low), np.int64)
        p = self._prefix
        for corner in range(8):
            pick = [hi[:, k] if corner >> k & 1 else lo[:, k] for k in range(3)]
            sign = 1 if (3 - bin(corner).count("1")) % 2 == 0 else -1
            total += sign * p[pick[0], pick[1], pick[2]]
        return total

    def rows_in(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Rows (ascending, so raster order) of the boundary voxels inside one box."""
        start, stop = np.searchsorted(self._xs, [low[0], high[0] + 1])
        rows = self._by_x[start:stop]
        rows = rows[in_box(self.surface[rows], low, high)]
        return np.sort(rows)

    def nearest_in_boxes(
        self, queries: np.ndarray, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        """Row of the nearest boundary voxel inside each query's box (each box holds one)."""
        chosen = np.full(len(queries), -1, np.int64)
        left = np.arange(len(queries))
        scale = np.asarray(self.spacing, np.float64)
        for k in _ROUNDS:
            if self.tree is None or not left.size or k >= len(self.surface):
                break
            _, candidates = self.tree.query(queries[left] * scale, k=k)
            inside = in_box(self.surface[candidates], low[left, None], high[left, None])
            found = inside.any(axis=1)
            first = candidates[np.arange(left.size), np.argmax(inside, axis=1)]
            chosen[left[found]] = first[found]
            left = left[~found]
        for row in left:
            rows = self.rows_in(low[row], high[row])
            gaps = (((self.surface[rows] - queries[row]) * scale) ** 2).sum(axis=1)
            chosen[row] = rows[int(np.argmin(gaps))]
        return chosen

    def tool_choice(self, query: np.ndarray, box: tuple[np.ndarray, np.ndarray] | None) -> int:
        """The row the tool keeps for ``query``: the first of the nearest in its visit order.

        The exhaustive search (``box`` None) visits the boundary in raster order; the grid
        search visits cells x, then y, then z outermost first, and each cell's voxels in raster
        order. Distances are compared with ``<``, so the first of equally near voxels stays.
        """
        rows = np.arange(len(self.surface)) if box is None else self.rows_in(*box)
        queries = np.broadcast_to(query, (rows.size, 3))
        distances = tool_distances(queries, self.surface[rows], self.spacing)
        rows = rows[distances == distances.min()]
        if box is None:
            return int(rows[0])
        cells = (self.surface[rows] + self.origin) // GRID
        order = np.lexsort((rows, cells[:, 2], cells[:, 1], cells[:, 0]))
        return int(rows[order[0]])
