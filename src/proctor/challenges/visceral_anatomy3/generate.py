"""Write the synthetic volumes of the ``visceral-anatomy3`` reference challenge.

Usage: ``python -m proctor.challenges.visceral_anatomy3.generate [OUTDIR]`` writes, for each
modality ``M`` (``CTce``, ``MRT1``):

- ``OUTDIR/M/training/``: ``CASE.nii.gz`` volumes and ``segmentations/CASE_RADLEXID.nii.gz``
  (one binary mask per annotated organ): public, as VISCERAL's training set;
- ``OUTDIR/M/test/``: ``CASE.nii.gz`` only (the hidden inputs);
- ``OUTDIR/M/test-reference/``: ``CASE.nii.gz`` label maps, one RadLex ID per voxel (the
  hidden references).

Cases are named as in VISCERAL, ``PATIENT_1_MODALITY_REGION`` (e.g. ``10000100_1_CTce_ThAb``).
Each patient draws from its own seeded generator, so the voxels are a pure function of the code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np

from proctor.challenges.visceral_anatomy3.phantom import CTCE, MRT1, Modality, draw_torso

DATA_DIR = Path(__file__).resolve().parent / "data"
SEED = 2015
SPLITS = (("training", 2, 100), ("test", 3, 200))
"""(split, patients, first patient number offset)."""
FIRST_PATIENT = {"CTce": 10000000, "MRT1": 10000050}


def _save(array: np.ndarray, affine: np.ndarray, path: Path) -> None:
    nifti: Any = nib  # nibabel's constructors are untyped
    image = nifti.Nifti1Image(array, affine)
    image.header.set_xyzt_units("mm")
    path.parent.mkdir(parents=True, exist_ok=True)
    nib.save(image, str(path))


def affine_of(modality: Modality) -> np.ndarray:
    """The voxel-to-world matrix: the spacing on the diagonal, the volume centred on 0."""
    affine = np.diag([*modality.spacing, 1.0])
    affine[:3, 3] = [
        -(n - 1) / 2 * s for n, s in zip(modality.shape, modality.spacing, strict=True)
    ]
    return affine


def write_case(modality: Modality, patient: int, split: str, outdir: Path) -> str:
    """Draw one patient and write its volume and references; returns the case name."""
    case = f"{patient}_1_{modality.name}_{modality.region}"
    image, labels = draw_torso(modality, np.random.default_rng([SEED, patient]))
    affine = affine_of(modality)
    low = -1024 if modality.name == "CTce" else 0
    volume = np.clip(np.rint(image), low, 4095).astype(np.int16)
    folder = outdir / modality.name
    _save(volume, affine, folder / split / f"{case}.nii.gz")
    if split == "training":
        for radlex in modality.organs:
            mask = (labels == radlex).astype(np.uint8)
            _save(mask, affine, folder / split / "segmentations" / f"{case}_{radlex}.nii.gz")
    else:
        _save(labels, affine, folder / f"{split}-reference" / f"{case}.nii.gz")
    return case


def generate(outdir: Path) -> list[str]:
    """Write every split of both modalities under ``outdir``; returns the case names."""
    cases = []
    for modality in (CTCE, MRT1):
        for split, count, offset in SPLITS:
            first = FIRST_PATIENT[modality.name] + offset
            cases += [write_case(modality, first + i, split, outdir) for i in range(count)]
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``python -m proctor.challenges.visceral_anatomy3.generate OUTDIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m proctor.challenges.visceral_anatomy3.generate",
        description="Write the synthetic visceral-anatomy3 volumes (training, test, references).",
    )
    parser.add_argument(
        "outdir", type=Path, nargs="?", default=DATA_DIR, help=f"default: {DATA_DIR}"
    )
    generate(parser.parse_args(argv).outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
