"""A small ``command`` challenge built from the bundled CTce volumes, run on the host's root.

The entries of these tests are shell scripts (``/bin/sh`` and coreutils only): they copy NIfTI
files prepared here on the host into the output folder, so no Python package is needed inside
the sandbox. Every CTce volume shares one grid, so a mask made for one fits every case.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nibabel as nib
import numpy as np
import yaml

from proctor.challenges import bundled_root

DATA = bundled_root() / "visceral_anatomy3" / "data" / "CTce"
TRAINING = "10000100_1_CTce_ThAb"
SECRET = "NOTE-SECRET-4412"
IDS = ["58", "86"]


def make_command_challenge(root: Path, *, case_s: float = 20) -> Path:
    """One training volume, two hidden volumes with references, and a secret next to them."""
    (root / "public").mkdir(parents=True)
    shutil.copy(DATA / "training" / f"{TRAINING}.nii.gz", root / "public")
    shutil.copytree(DATA / "test", root / "hidden", ignore=_only_two)
    shutil.copytree(DATA / "test-reference", root / "refs", ignore=_only_two)
    (root / "refs" / f"{SECRET}.txt").write_text(SECRET)
    spec = {
        "name": "command-toy",
        "title": "A command challenge",
        "protocol": {"kind": "command", "task_ids": IDS, "case_s": case_s, "stage_s": 120},
        "tasks": [{"name": "CTce", "public_inputs": "public", "hidden_inputs": "hidden",
                   "hidden_references": "refs", "scorer": "visceral"}],
        "limits": {"memory_bytes": 512 * 2**20, "home_bytes": 64 * 2**20,
                   "output_bytes": 8 * 2**20},
        "parallelism": {"jobs": 2},
        "phases": [{"name": "final", "tasks": ["CTce"]}],
    }  # fmt: skip
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def _only_two(folder: str, names: list[str]) -> list[str]:
    kept = sorted(name for name in names if name.endswith(".nii.gz"))[:2]
    return [name for name in names if name not in kept]


def hidden_cases(challenge: Path) -> list[str]:
    """The case names of the hidden volumes."""
    return sorted(p.name.removesuffix(".nii.gz") for p in (challenge / "hidden").glob("*.nii.gz"))


def save(array: np.ndarray, path: Path, affine: np.ndarray | None = None) -> Path:
    """Write ``array`` as NIfTI on the CTce grid (or ``affine``)."""
    grid = nib.load(DATA / "training" / f"{TRAINING}.nii.gz")
    image = nib.Nifti1Image(array, grid.affine if affine is None else affine)
    nib.save(image, str(path))
    return path


def liver_mask() -> np.ndarray:
    """The training volume's liver annotation (a valid mask on the CTce grid)."""
    path = DATA / "training" / "segmentations" / f"{TRAINING}_58.nii.gz"
    return np.asarray(nib.load(path).dataobj, dtype=np.uint8)


SCRIPT_HEAD = """#!/bin/sh
set -e
in="$2"; out="$4"; case=$(basename "$in" .nii.gz)
"""


def make_command_entry(root: Path, body: str, files: dict[str, np.ndarray] | None = None) -> Path:
    """An entry whose ``execute_standard`` is ``SCRIPT_HEAD`` + ``body``, with NIfTI ``files``."""
    root.mkdir(parents=True)
    program = root / "execute_standard"
    program.write_text(SCRIPT_HEAD + body)
    program.chmod(0o755)
    for name, array in (files or {}).items():
        save(array, root / name)
    return root
