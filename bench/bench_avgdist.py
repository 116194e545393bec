"""Benchmark: AVGDIST/bAVD as the tool computes them against the exact nearest-surface values.

The exact values (a k-d tree of the boundary, what Proctor computed before) are what HDRFDST
needs anyway; the tool's bounded search adds the rays toward the centroid and the box searches.
Three 256³ pairs: the CT-like fixture pair (large overlapping organs), the same in sub-mm
spacing (boxes that miss the nearest voxel or hold none), and scattered far-apart blobs (long
rays). Prints the time of each part and the ratio of the whole to the exact search alone.

Run: ``.venv/bin/python bench/bench_avgdist.py`` (under a minute).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import ndimage

from proctor.metrics.segmentation_distance import SurfaceDistances

SHAPE = (256, 256, 256)


def ellipsoid(centre: tuple[float, ...], radii: tuple[float, ...], seed: int) -> np.ndarray:
    """A boolean ellipsoid with a slightly noisy surface."""
    rng = np.random.default_rng(seed)
    grid = np.ogrid[tuple(slice(0, n) for n in SHAPE)]
    level = sum(((g - c) / r) ** 2 for g, c, r in zip(grid, centre, radii, strict=True))
    inside: np.ndarray = level + rng.normal(0, 0.01, size=SHAPE) < 1
    return inside


def scattered(seed: int) -> np.ndarray:
    """About a hundred small blobs spread over the volume."""
    rng = np.random.default_rng(seed)
    seeds = rng.random(SHAPE) < 1e-5
    grown: np.ndarray = ndimage.binary_dilation(seeds, iterations=3)
    return grown


def best_time(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` runs."""
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def measure(label: str, truth: np.ndarray, segment: np.ndarray, spacing: tuple[float, ...]) -> None:
    """Time the exact search alone and the tool's values on top of it."""
    step = (spacing[0], spacing[1], spacing[2])
    exact = best_time(lambda: SurfaceDistances(truth, segment, step).nearest_average_distance())

    def tool() -> tuple[float, float]:
        d = SurfaceDistances(truth, segment, step)
        return d.average_distance(), d.nearest_average_distance()

    whole = best_time(tool)
    tool_value, nearest = tool()
    times = f"exact {exact:5.2f} s  exact + tool {whole:5.2f} s  ratio {whole / exact:5.2f}×"
    print(f"{label:<36} {times}  AVGDIST {tool_value:.6f} (nearest {nearest:.6f})")


def main() -> None:
    organ_a = ellipsoid((128, 120, 130), (70, 55, 60), 1)
    organ_b = ellipsoid((131, 118, 127), (68, 57, 62), 2)
    measure("CT-like organs, 0.75×0.75×1.5 mm", organ_a, organ_b, (0.75, 0.75, 1.5))
    measure("CT-like organs, voxels", organ_a, organ_b, (1.0, 1.0, 1.0))
    measure("CT-like organs, 0.3×0.3×0.4 mm", organ_a, organ_b, (0.3, 0.3, 0.4))
    measure("scattered blobs, 0.3×0.3×0.4 mm", scattered(3), scattered(4), (0.3, 0.3, 0.4))
    measure("scattered blobs, voxels", scattered(3), scattered(4), (1.0, 1.0, 1.0))


if __name__ == "__main__":
    main()
