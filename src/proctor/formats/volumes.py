"""Reading segmentation volumes as EvaluateSegmentation does: array ``[x, y, z]`` + voxel size.

NIfTI (``.nii``, ``.nii.gz``) is read with nibabel; MHA/MHD/NRRD with SimpleITK when it is
installed (optional). Every failure raises :class:`VolumeReadError` naming the file and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from proctor.metrics._segmentation_arrays import SegmentationInputError
from proctor.metrics.segmentation_compat import tool_bytes

ITK_SUFFIXES = (".mha", ".mhd", ".nrrd", ".nhdr")


class VolumeReadError(SegmentationInputError):
    """A volume file is missing, unreadable or not a 2-D/3-D image."""


@dataclass(frozen=True)
class Volume:
    """An image as read: values indexed ``[x, y, z]`` and the voxel size in mm."""

    data: np.ndarray
    spacing: tuple[float, float, float]


def read_volume(path: str | Path) -> Volume:
    """Read one image file; 2-D images get a z axis of size 1, trailing axes of size 1 go."""
    file = Path(path)
    if not file.is_file():
        raise VolumeReadError(f"{file}: no such file (give the path of a NIfTI/MHA/NRRD image)")
    name = file.name.lower()
    if name.endswith(ITK_SUFFIXES):
        data, zooms = _read_with_simpleitk(file)
    else:
        data, zooms = _read_with_nibabel(file)
    while data.ndim > 3 and data.shape[-1] == 1:
        data = data[..., 0]
    if data.ndim == 2:
        data = data[:, :, np.newaxis]
    if data.ndim != 3:
        raise VolumeReadError(f"{file}: expected a 2-D or 3-D image, got shape {data.shape}")
    if data.dtype.kind not in "biuf":
        raise VolumeReadError(f"{file}: voxel type {data.dtype} is not a number type")
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        raise VolumeReadError(f"{file}: holds NaN or infinite voxel values")
    spacing = [abs(float(z)) for z in zooms[:3]] + [1.0] * (3 - len(zooms[:3]))
    return Volume(data, (spacing[0], spacing[1], spacing[2]))


def _read_with_nibabel(file: Path) -> tuple[np.ndarray, tuple[float, ...]]:
    import nibabel as nib

    try:
        image: Any = nib.load(str(file))
        data = np.asanyarray(image.dataobj)
        zooms = tuple(float(z) for z in image.header.get_zooms())
    except Exception as err:  # nibabel raises many types for a broken file
        raise VolumeReadError(
            f"{file}: cannot be read as a NIfTI image ({err}); check that the file is complete "
            "and in NIfTI-1/2 format (.nii or .nii.gz)"
        ) from err
    return np.asarray(data), zooms


def _read_with_simpleitk(file: Path) -> tuple[np.ndarray, tuple[float, ...]]:
    try:
        import SimpleITK as sitk  # noqa: N813
    except ImportError:
        raise VolumeReadError(
            f"{file}: MHA/NRRD images need SimpleITK (pip install SimpleITK), or convert to NIfTI"
        ) from None
    try:
        image = sitk.ReadImage(str(file))
    except Exception as err:
        raise VolumeReadError(f"{file}: cannot be read as an image ({err})") from err
    data = sitk.GetArrayFromImage(image)  # indexed [z, y, x]
    return np.asarray(data).transpose(), tuple(image.GetSpacing())


def read_tool_volume(path: str | Path, *, streaming: bool = True) -> Volume:
    """Read an image and turn it into the bytes EvaluateSegmentation computes on."""
    volume = read_volume(path)
    try:
        return Volume(tool_bytes(volume.data, streaming=streaming), volume.spacing)
    except SegmentationInputError as err:
        raise VolumeReadError(f"{path}: {err}") from err
