"""Benchmark: EvaluateSegmentation metrics on a CT-sized pair against importable peers.

A 512×512×300 uint8 pair (spacing 0.8×0.8×2.5 mm), two overlapping ellipsoids of ~1.8 M voxels
with a noisy surface. Times our ``-use all`` equivalent, our distances alone, our overlap pass,
and the peers that are importable (scikit-learn ARI + MI; a plain scipy EDT implementation of
DeepMind's surface-distance approach; MedPy if installed). Prints times, ratios, peak memory
relative to the two volumes, and checks equal values where definitions agree.

Run: ``.venv/bin/python bench/bench_segmentation.py`` (about a minute).
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import ndimage

from proctor.metrics.segmentation import DEFAULT_CODES, SegmentationPair
from proctor.metrics.segmentation_compat import ToolEvaluation

SHAPE = (512, 512, 300)
SPACING = (0.8, 0.8, 2.5)


def ellipsoid(centre: tuple[float, ...], radii: tuple[float, ...], seed: int) -> np.ndarray:
    """A byte volume (0/255) holding an ellipsoid whose surface is perturbed by noise."""
    rng = np.random.default_rng(seed)
    lo = [int(c - r - 3) for c, r in zip(centre, radii, strict=True)]
    hi = [int(c + r + 4) for c, r in zip(centre, radii, strict=True)]
    axes = np.ogrid[tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))]
    level = sum(((ax - c) / r) ** 2 for ax, c, r in zip(axes, centre, radii, strict=True))
    inside = level + rng.normal(0, 0.03, size=np.shape(level)) < 1
    out = np.zeros(SHAPE, np.uint8)
    out[tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))] = inside * np.uint8(255)
    return out


def timed(label: str, fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` runs, printed."""
    best, result = math.inf, None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    print(f"  {label:<52} {best:8.3f} s")
    return best, result


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated through numpy/python while running ``fn``."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def ours_all(truth: np.ndarray, segment: np.ndarray) -> dict[str, float]:
    evaluation = ToolEvaluation(truth, segment, spacing=SPACING, millimeter=True)
    values = {code: evaluation.value(code).value for code in DEFAULT_CODES}
    values["HDRFDST@0.95@"] = evaluation.value("HDRFDST", 0.95).value
    return values


def ours_distances(truth: np.ndarray, segment: np.ndarray) -> tuple[float, float, float]:
    pair = SegmentationPair(truth, segment, spacing=SPACING, scale=255.0)
    d = pair.distances
    return d.hausdorff(), d.hausdorff(0.95), d.average_distance()


def ours_overlap(truth: np.ndarray, segment: np.ndarray) -> tuple[float, float]:
    from proctor.metrics import segmentation_overlap as ov

    sums = SegmentationPair(truth, segment, scale=255.0).sums
    return ov.adjusted_rand_index(sums), ov.mutual_information(sums) * math.log(2)


def sklearn_overlap(truth: np.ndarray, segment: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import adjusted_rand_score, mutual_info_score

    a, b = (truth > 127).ravel(), (segment > 127).ravel()
    return adjusted_rand_score(a, b), mutual_info_score(a, b)


def scipy_surface_distances(truth: np.ndarray, segment: np.ndarray) -> tuple[float, float, float]:
    """DeepMind's approach with scipy: crop, surfaces by erosion, two EDTs, HD/HD95/mean."""
    a, b = truth > 127, segment > 127
    box = ndimage.find_objects((a | b).astype(np.uint8))[0]
    box = tuple(slice(max(0, s.start - 1), s.stop + 1) for s in box)
    a, b = a[box], b[box]
    surf_a = a & ~ndimage.binary_erosion(a)
    surf_b = b & ~ndimage.binary_erosion(b)
    to_b = ndimage.distance_transform_edt(~surf_b, sampling=SPACING)[surf_a]
    to_a = ndimage.distance_transform_edt(~surf_a, sampling=SPACING)[surf_b]
    both = np.concatenate([to_b, to_a])
    return float(both.max()), float(np.percentile(both, 95)), float(both.mean())


def medpy_distances(truth: np.ndarray, segment: np.ndarray) -> tuple[float, float, float]:
    from medpy.metric.binary import assd, hd, hd95

    a, b = truth > 127, segment > 127
    return hd(b, a, SPACING), hd95(b, a, SPACING), assd(b, a, SPACING)


def main() -> None:
    print(f"building a {SHAPE} uint8 pair, spacing {SPACING} mm ...")
    truth = ellipsoid((256, 250, 150), (90, 70, 68), 1)
    segment = ellipsoid((262, 246, 153), (88, 72, 66), 2)
    volumes = truth.nbytes + segment.nbytes
    print(f"  foreground: {np.count_nonzero(truth):,} / {np.count_nonzero(segment):,} voxels; "
          f"two volumes = {volumes / 2**20:.0f} MiB")  # fmt: skip

    print("ours")
    t_all, values = timed("-use all (28 codes + HDRFDST@0.95@)", lambda: ours_all(truth, segment))
    t_dist, dist = timed("distances (HD, HD95, AVGDIST)", lambda: ours_distances(truth, segment))
    t_ov, overlap = timed("overlap pass (ARI + MI)", lambda: ours_overlap(truth, segment), 5)
    peak = peak_memory(lambda: ours_all(truth, segment))
    print(f"  peak memory of -use all: {peak / 2**20:.0f} MiB = {peak / volumes:.2f}× the volumes")

    print("peers")
    # scikit-learn needs ~80 s on the whole pair here; time it on every 10th slice (30 slices
    # with the same mix of organ and background as the whole pair) and compare with our pass
    # on the same slices.
    every = (slice(None), slice(None), slice(None, None, 10))
    truth_s, segment_s = np.ascontiguousarray(truth[every]), np.ascontiguousarray(segment[every])
    t_sk, sk = timed("scikit-learn ARI + MI (every 10th slice)",
                     lambda: sklearn_overlap(truth_s, segment_s), 1)  # fmt: skip
    t_ov_slab, overlap_slab = timed(
        "ours ARI + MI (same slices)", lambda: ours_overlap(truth_s, segment_s), 5
    )
    t_sp, sp = timed("scipy EDT surface distances (DeepMind's method)",
                     lambda: scipy_surface_distances(truth, segment), 1)  # fmt: skip
    box = ndimage.find_objects(((truth > 127) | (segment > 127)).astype(np.uint8))[0]
    box = tuple(slice(max(0, s.start - 1), s.stop + 1) for s in box)
    try:  # MedPy runs its EDTs on the whole volume (minutes here): give it the cropped pair
        t_mp, mp = timed("MedPy hd + hd95 + assd (on the bounding box)",
                         lambda: medpy_distances(truth[box], segment[box]), 1)  # fmt: skip
    except ImportError:
        t_mp, mp = math.nan, None
        print("  MedPy: not installed, skipped")
    print("  DeepMind surface-distance, MONAI: not installed, skipped (scipy row uses its method)")

    print("ratios (peer time / our time)")
    ratio = t_sk / t_ov_slab
    verdict = "met" if ratio >= 500 else "NOT met"
    print(f"  overlap vs scikit-learn:      {ratio:8.0f}×   (every 10th slice; ≥ 500×: {verdict})")
    print(f"  whole pair: ours {t_ov:.3f} s; scikit-learn took ~81 s when tried: ≈{81 / t_ov:.0f}×")
    print(f"  distances vs scipy/DeepMind:  {t_sp / t_dist:8.1f}×   (goal ≥ 3×)")
    if mp is not None:
        print(f"  distances vs MedPy:           {t_mp / t_dist:8.1f}×")
    print(f"  all metrics:                  {t_all:8.3f} s   (goal < 1.5 s)")

    print("agreement where definitions agree")
    print(
        f"  ARI   ours {overlap_slab[0]:.12f}  sklearn {sk[0]:.12f}  (whole pair: {overlap[0]:.6f})"
    )
    print(
        f"  MI    ours {overlap_slab[1]:.12f}  sklearn {sk[1]:.12f}  (whole pair: {overlap[1]:.6f})"
    )
    assert abs(overlap_slab[0] - sk[0]) < 1e-9 and abs(overlap_slab[1] - sk[1]) < 1e-9
    print(f"  HD    ours {dist[0]:.6f}  scipy-surface {sp[0]:.6f}"
          + (f"  medpy {mp[0]:.6f}" if mp else ""))  # fmt: skip
    print(f"  HD95  ours {dist[1]:.6f}  (pooled A∖B/B∖A voxels; surface peers {sp[1]:.6f})")
    print(f"  AVGDIST ours {values['AVGDIST']:.6f} (over all voxels; surface mean {sp[2]:.6f})")


if __name__ == "__main__":
    main()
