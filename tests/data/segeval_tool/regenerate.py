"""Regenerate the pairs of this folder and the official EvaluateSegmentation output for each.

Run outside CI, by hand, when a pair is added or changed (the tests only read what it wrote)::

    .venv/bin/python tests/data/segeval_tool/regenerate.py --tool /path/to/EvaluateSegmentation

The tool is built from its public source (github.com/Visceral-Project/EvaluateSegmentation,
``source/``) against Debian's ITK outside this repository, never committed::

    apt-get install -y libinsighttoolkit5-dev cmake g++
    git clone https://github.com/Visceral-Project/EvaluateSegmentation /work/tools/evalseg-src
    mkdir /work/tools/evalseg && cd /work/tools/evalseg
    cmake /work/tools/evalseg-src/source && make      # no build type, as its Dockerfile does

For every pair ``NAME`` it writes ``NAME_truth.nii.gz`` and ``NAME_segment.nii.gz`` (generated
from fixed seeds, so a rerun rewrites the same voxels) and the tool's printed lines for
``-use all`` in voxels (``NAME.voxel.txt``) and with ``-unit millimeter``
(``NAME.millimeter.txt``), without the line of the run time. The tool is always given ``-xml``:
without it, it dereferences an unset XML node and crashes at random (about one run in two).
The 256³ pair takes the tool about a minute per unit; the folder stays well under 2 MB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import nibabel as nib
import numpy as np
from scipy import ndimage

HERE = Path(__file__).resolve().parent
Builder = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]


def ellipsoid(
    shape: tuple[int, ...],
    centre: np.ndarray,
    radii: np.ndarray,
    rng: np.random.Generator,
    noise: float = 0.0,
) -> np.ndarray:
    """A boolean ellipsoid whose surface is perturbed by Gaussian noise of the level set."""
    grid = np.ogrid[tuple(slice(0, n) for n in shape)]
    level = sum(((g - c) / r) ** 2 for g, c, r in zip(grid, centre, radii, strict=True))
    level = np.broadcast_to(level, shape)
    if noise:
        level = level + rng.normal(0, noise, size=shape)
    inside: np.ndarray = level < 1
    return inside


def blobs(shape: tuple[int, int, int], count: int) -> Builder:
    """Overlapping random ellipsoids; the segment misses a few voxels of the truth."""

    def build(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        truth, segment = np.zeros(shape, bool), np.zeros(shape, bool)
        for _ in range(count):
            centre = rng.uniform(0, 1, 3) * shape
            radii = rng.uniform(3, 10, 3)
            truth |= ellipsoid(shape, centre, radii, rng)
            moved = centre + rng.normal(0, 2, 3)
            segment |= ellipsoid(shape, moved, radii * rng.uniform(0.8, 1.2, 3), rng)
        segment &= rng.random(shape) >= 0.05
        return truth, segment

    return build


def apart(shape: tuple[int, int, int], count: int) -> Builder:
    """Independent random ellipsoids: far voxels, long rays, and in sub-mm spacing boxes that
    hold no boundary voxel at all (the tool then keeps the previous voxel's nearest)."""

    def build(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        masks = []
        for _ in range(2):
            mask = np.zeros(shape, bool)
            for _ in range(count):
                centre, radii = rng.uniform(0, 1, 3) * shape, rng.uniform(3, 10, 3)
                mask |= ellipsoid(shape, centre, radii, rng)
            masks.append(mask)
        return masks[0], masks[1]

    return build


def speckle(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Opened random textures: rays that end diagonally, where the box misses the nearest."""
    shape = (64, 64, 48)
    truth = ndimage.binary_opening(rng.random(shape) < rng.uniform(0.3, 0.6))
    segment = ndimage.binary_opening(rng.random(shape) < rng.uniform(0.3, 0.6))
    return truth, segment


def fuzzy(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Byte maps with soft edges: the tool rescales each slab and thresholds at 127.5."""
    shape = (48, 40, 32)
    truth = ellipsoid(shape, np.array([22.0, 20, 15]), np.array([12.0, 9, 8]), rng)
    segment = ellipsoid(shape, np.array([25.0, 18, 16]), np.array([11.0, 10, 7]), rng)
    soft = [ndimage.gaussian_filter(m.astype(np.float64), 1.5) for m in (truth, segment)]
    return tuple(np.round(s * 200).astype(np.uint8) for s in soft)  # type: ignore[return-value]


def ct_like(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A 256³ pair: a large and a small organ each, slightly displaced (sparse, compressible)."""
    shape = (256, 256, 256)
    truth = ellipsoid(shape, np.array([128.0, 120, 130]), np.array([70.0, 55, 60]), rng, 0.01)
    truth |= ellipsoid(shape, np.array([60.0, 200, 60]), np.array([15.0, 20, 12]), rng, 0.03)
    segment = ellipsoid(shape, np.array([131.0, 118, 127]), np.array([68.0, 57, 62]), rng, 0.01)
    segment |= ellipsoid(shape, np.array([200.0, 60, 200]), np.array([10.0, 12, 9]), rng, 0.03)
    return truth, segment


# name: (builder, spacing in mm, seed)
PAIRS: dict[str, tuple[Builder, tuple[float, float, float], int]] = {
    "blobs_40x30x20": (blobs((40, 30, 20), 3), (0.8, 0.8, 2.0), 1),
    "blobs_33x47x25": (blobs((33, 47, 25), 3), (0.5, 0.7, 1.5), 13),
    "blobs_64x64x32": (blobs((64, 64, 32), 4), (1.2, 0.6, 3.0), 21),
    "submm_50x50x50": (blobs((50, 50, 50), 3), (0.3, 0.4, 0.35), 30),
    "apart_50x50x50": (apart((50, 50, 50), 3), (0.3, 0.3, 0.4), 30),
    "slice_80x60x1": (blobs((80, 60, 1), 4), (0.6, 0.9, 3.0), 5),
    "speckle_64x64x48": (speckle, (1.2, 0.9, 2.5), 22),
    "fuzzy_48x40x32": (fuzzy, (0.9, 0.7, 1.8), 3),
    "ct_256x256x256": (ct_like, (0.75, 0.75, 1.5), 7),
}


def write_pair(name: str) -> tuple[Path, Path]:
    """Generate pair ``name`` and save it as two NIfTI files (uint8)."""
    build, spacing, seed = PAIRS[name]
    truth, segment = build(np.random.default_rng(seed))
    paths = HERE / f"{name}_truth.nii.gz", HERE / f"{name}_segment.nii.gz"
    for path, volume in zip(paths, (truth, segment), strict=True):
        image = nib.Nifti1Image(volume.astype(np.uint8), np.diag([*spacing, 1.0]))
        nib.save(image, str(path))
    return paths


def run_tool(tool: Path, truth: Path, segment: Path, millimeter: bool) -> str:
    """The tool's stdout for ``-use all`` (``-xml`` to a scratch file), minus the run time."""
    with tempfile.TemporaryDirectory() as scratch:
        args = [str(tool), str(truth), str(segment), "-use", "all", "-xml", f"{scratch}/out.xml"]
        if millimeter:
            args += ["-unit", "millimeter"]
        done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=3600)
    lines = [line for line in done.stdout.splitlines() if "execution time" not in line]
    return "\n".join(lines) + "\n"


def main() -> int:
    """Regenerate the pairs named on the command line (all by default) and the tool's lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", type=Path, required=True, help="the EvaluateSegmentation binary")
    parser.add_argument("names", nargs="*", default=list(PAIRS), help="pairs to regenerate")
    options = parser.parse_args()
    for name in options.names:
        truth, segment = write_pair(name)
        for unit, millimeter in (("voxel", False), ("millimeter", True)):
            output = run_tool(options.tool, truth, segment, millimeter)
            (HERE / f"{name}.{unit}.txt").write_text(output)
        print(f"{name}: written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
