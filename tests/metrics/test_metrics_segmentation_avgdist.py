"""AVGDIST/bAVD's bounded search against a plain, voxel-by-voxel transcription of the tool's rule.

The reference below follows the rule of issue 10 ("AVGDIST as the official tool computes it")
one voxel at a time, with Python loops, as the C++ does; the vectorised implementation must give
the same sums on random masks placed anywhere in larger volumes, with any spacing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from proctor.metrics.segmentation import SegmentationPair, evaluate_segmentation
from proctor.metrics.segmentation_distance import SurfaceDistances, boundary

Spacing = tuple[float, float, float]


def _raster(mask: np.ndarray) -> list[tuple[int, int, int]]:
    nx, ny, nz = mask.shape
    return [(x, y, z) for z in range(nz) for y in range(ny) for x in range(nx) if mask[x, y, z]]


def _distance(a: tuple[int, ...], b: tuple[int, ...], s: Spacing) -> float:
    d = [float(b[k] - a[k]) for k in range(3)]
    return math.sqrt(
        d[0] * d[0] * s[0] * s[0] + d[1] * d[1] * s[1] * s[1] + d[2] * d[2] * s[2] * s[2]
    )


def _radius(a: tuple[int, int, int], target: np.ndarray, centre: list[float], s: Spacing) -> int:
    length = math.sqrt(sum((centre[k] - a[k]) * (centre[k] - a[k]) * s[k] * s[k] for k in range(3)))
    if length == 0:  # the tool crashes here (NaN direction); Proctor searches everything
        return -1
    step = [(centre[k] - a[k]) / length for k in range(3)]
    i = 1
    while True:
        point = [a[k] + i * step[k] for k in range(3)]
        if any(p < 0 or p > target.shape[k] - 1 for k, p in enumerate(point)):
            return -1
        if target[int(point[0]), int(point[1]), int(point[2])]:
            return i
        i += 1


def reference_sum(source: np.ndarray, target: np.ndarray, s: Spacing) -> float:
    """Σ over source∖target of the tool's distance to target, voxel by voxel, in raster order."""
    voxels = _raster(target)
    centre = [sum(v[k] for v in voxels) / len(voxels) for k in range(3)]
    surface = _raster(boundary(target))
    cells = [(n - 1) // 7 + 1 for n in target.shape]
    total, previous = 0.0, None
    for a in _raster(source & ~target):
        r = _radius(a, target, centre, s)
        if r == -1:
            visit = surface
        else:
            low = [max(0, int((a[k] - r) / 7)) for k in range(3)]
            high = [min(cells[k] - 1, int((a[k] + r) / 7)) for k in range(3)]
            visit = sorted(
                (v for v in surface if all(low[k] <= v[k] // 7 <= high[k] for k in range(3))),
                key=lambda v: (v[0] // 7, v[1] // 7, v[2] // 7, v[2], v[1], v[0]),
            )
        best, closest = math.inf, None
        for v in visit:
            if _distance(a, v, s) < best:
                best, closest = _distance(a, v, s), v
        if closest is None:  # an empty box: the tool keeps the previous voxel's choice
            closest = previous or min(surface, key=lambda v: _distance(a, v, s))
        previous = closest
        total += _distance(a, closest, s)
    return total


spacings = st.tuples(*[st.sampled_from([0.3, 0.5, 0.8, 1.0, 1.5, 2.5])] * 3)


@given(
    data=st.data(),
    spacing=spacings,
    place=st.tuples(*[st.integers(0, 9)] * 3),
    fill=st.floats(0.05, 0.6),
)
@settings(max_examples=80, deadline=None)
def test_vectorised_sums_equal_the_voxel_by_voxel_rule(
    data: st.DataObject, spacing: Spacing, place: tuple[int, int, int], fill: float
) -> None:
    shape = data.draw(st.tuples(*[st.integers(2, 9)] * 3))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a, b = rng.random(shape) < fill, rng.random(shape) < fill
    a.flat[0], b.flat[-1] = True, True
    whole = tuple(n + p + extra for n, p, extra in zip(shape, place, (0, 3, 1), strict=True))
    big_a, big_b = np.zeros(whole, bool), np.zeros(whole, bool)
    box = tuple(slice(p, p + n) for p, n in zip(place, shape, strict=True))
    big_a[box], big_b[box] = a, b
    forward, backward = SegmentationPair(big_a, big_b, spacing=spacing).distances.tool_sums
    assert forward == pytest.approx(reference_sum(big_a, big_b, spacing), rel=1e-12, abs=1e-12)
    assert backward == pytest.approx(reference_sum(big_b, big_a, spacing), rel=1e-12, abs=1e-12)


masks = hnp.arrays(np.bool_, st.tuples(*[st.integers(1, 7)] * 3), elements=st.booleans())


@given(data=st.data(), spacing=spacings)
@settings(max_examples=60, deadline=None)
def test_the_tools_distances_are_never_below_the_true_nearest(
    data: st.DataObject, spacing: Spacing
) -> None:
    a = data.draw(masks)
    b = data.draw(hnp.arrays(np.bool_, a.shape, elements=st.booleans()))
    a.flat[0], b.flat[-1] = True, True
    d = SurfaceDistances(a, b, spacing)
    assert d.average_distance() >= d.nearest_average_distance() - 1e-9
    assert d.balanced_average_distance() >= d.nearest_balanced_average_distance() - 1e-9
    values = evaluate_segmentation(a, b, spacing=spacing, codes=["AVGDIST", "bAVD"])
    assert values == {"AVGDIST": d.average_distance(), "bAVD": d.balanced_average_distance()}


def test_a_voxel_on_the_centroid_searches_every_boundary_voxel() -> None:
    """The tool crashes there (it casts a NaN index); Proctor takes the true nearest voxel."""
    truth, segment = np.zeros((9, 7, 6), bool), np.zeros((9, 7, 6), bool)
    truth[3, 2, 2] = truth[3, 3, 2] = True
    segment[1, 2, 2] = segment[5, 2, 2] = True
    d = SurfaceDistances(truth, segment, (1.0, 1.0, 1.0))
    assert d.tool_sums[0] == pytest.approx(2.0 + math.sqrt(5.0))
    assert d.average_distance() == d.nearest_average_distance()
