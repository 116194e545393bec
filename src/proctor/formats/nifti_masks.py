"""NIfTI segmentation masks as VISCERAL's format check saw them: same grid as the input, [0, 1].

An entry's mask must lie on its input volume's voxel grid: the same shape, the same affine
(voxel-to-world matrix, which carries the spacing) and a number type, with values binary or
fuzzy in [0, 1]. :func:`mask_problem` says what is wrong in words a participant can act on,
without host paths. Reference label maps hold one RadLex ID per voxel (0: background).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from proctor.formats.volumes import VolumeReadError

AFFINE_TOLERANCE = 1e-3
"""Largest difference (mm) between two affine entries still read as the same grid."""


@dataclass(frozen=True)
class Grid:
    """A volume's voxel grid: its shape and its voxel-to-world affine (4×4, mm)."""

    shape: tuple[int, ...]
    affine: np.ndarray

    @property
    def spacing(self) -> tuple[float, ...]:
        """Voxel size in mm along each array axis (the affine's column norms)."""
        return tuple(float(np.linalg.norm(self.affine[:3, axis])) for axis in range(3))


def _load(path: Path) -> Any:
    import nibabel as nib

    try:
        image = nib.load(str(path))
    except Exception as err:  # nibabel raises many types for a broken file
        raise VolumeReadError(f"not a readable NIfTI image ({type(err).__name__})") from err
    if not isinstance(image, (nib.Nifti1Image, nib.Nifti2Image)):
        raise VolumeReadError(f"not a NIfTI image but {type(image).__name__}")
    return image


def read_grid(path: Path) -> Grid:
    """The grid of the NIfTI file at ``path`` (its header only); ``VolumeReadError`` if broken."""
    image = _load(path)
    return Grid(tuple(int(n) for n in image.shape), np.asarray(image.affine, dtype=np.float64))


def mask_problem(path: Path, grid: Grid) -> str | None:
    """None when ``path`` is a NIfTI mask on ``grid`` with values in [0, 1], else why not."""
    try:
        image = _load(path)
        shape = tuple(int(n) for n in image.shape)
        if shape != grid.shape:
            return f"shape {shape} differs from the input volume's {grid.shape}: keep its grid"
        if not np.allclose(image.affine, grid.affine, atol=AFFINE_TOLERANCE, rtol=0):
            return (
                "header differs from the input volume's (affine: orientation, origin or "
                "spacing): copy the input's affine and header into the mask"
            )
        dtype = image.get_data_dtype()
        if dtype.kind not in "biuf" or dtype.fields is not None:
            return f"voxel type {dtype} is not a number type: write uint8 or float32"
        data = np.asanyarray(image.dataobj)
    except VolumeReadError as err:
        return str(err)
    except Exception as err:  # a truncated .gz fails only when its data is read
        return f"the voxel data cannot be read ({type(err).__name__}): write a complete file"
    return _value_problem(data)


def _value_problem(data: np.ndarray) -> str | None:
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        return "holds NaN or infinite values: write 0/1 or probabilities in [0, 1]"
    if data.size and (data.min() < 0 or data.max() > 1):
        low, high = float(data.min()), float(data.max())
        return (
            f"values range from {low:g} to {high:g}: write 0 (background) and 1 (organ), or "
            "probabilities in [0, 1]"
        )
    return None


def read_mask(path: Path) -> np.ndarray:
    """The memberships of a checked mask, as float32 indexed ``[x, y, z]``."""
    return np.asarray(np.asanyarray(_load(path).dataobj), dtype=np.float32)


def read_label_map(path: Path) -> tuple[np.ndarray, tuple[float, float, float]]:
    """A reference label map (one RadLex ID per voxel) and its voxel size in mm."""
    image = _load(path)
    labels = np.asarray(np.asanyarray(image.dataobj))
    if labels.dtype.kind not in "iu" or labels.ndim != 3:
        raise VolumeReadError(f"{path.name}: a label map must be a 3-D integer image")
    zooms = tuple(abs(float(z)) for z in image.header.get_zooms()[:3])
    return labels, (zooms[0], zooms[1], zooms[2])
